"""Source text of a node exactly as the file has it, and the conditions a statement runs under.

`Module.code_for_node` writes a node's continuation lines without the indentation of the blocks
around it (LibCST keeps that indentation in the block, not in the expression), so a multi-line
`if` test or placeholder loses its lines' relative indentation. `exact` writes the node with
its block's indentation, which gives the file's text character for character.

A `Guard` is one `if` test on the way from a function's body to a statement, holding or not:
`condition` joins them with `and`, a test that fails as `not (test)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState


class _TextState(CodegenState):
    """LibCST's codegen state, for the text alone. Most nodes' codegen enters
    `record_syntactic_position`, a generator-based context manager that does nothing here
    (position providers override it); one shared null context writes the same tokens in three
    quarters of the time."""

    __slots__ = ()

    def record_syntactic_position(  # type: ignore[override]  # any context manager will do
            self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None) -> AbstractContextManager[None]:
        return _NO_POSITION


_NO_POSITION: AbstractContextManager[None] = nullcontext()  # reusable: it holds no state


def node_code(module: cst.Module, node: cst.CSTNode, indent: str = "") -> str:
    """`module.code_for_node(node)`; with `indent`, the node in a block indented by it."""
    state = _TextState(default_indent=module.default_indent, default_newline=module.default_newline,
                       indent_tokens=[indent] if indent else [])
    node._codegen(state)
    return "".join(state.tokens)


_ATOMS = (cst.Name, cst.SimpleString, cst.Integer)  # each written as its `value`, unparenthesized


def _plain_code(node: cst.CSTNode) -> str | None:
    """The text of a name, a literal, or a chain of `.name`s on one, with no parentheses and
    no space around its dots; None for any other node."""
    kind = type(node)
    if kind in _ATOMS:
        atom: cst.Name = node  # type: ignore[assignment]  # Name, SimpleString, Integer alike
        return None if atom.lpar or atom.rpar else atom.value
    if kind is not cst.Attribute:
        return None
    attribute: cst.Attribute = node  # type: ignore[assignment]
    dot = attribute.dot
    if attribute.lpar or attribute.rpar or not (_no_space(dot.whitespace_before)
                                                and _no_space(dot.whitespace_after)):
        return None
    owner, name = _plain_code(attribute.value), _plain_code(attribute.attr)
    return None if owner is None or name is None else f"{owner}.{name}"


def _no_space(whitespace: cst.BaseParenthesizableWhitespace) -> bool:
    return type(whitespace) is cst.SimpleWhitespace and not whitespace.value  # type: ignore[attr-defined]


def exact(module: cst.Module, node: cst.CSTNode, indent: str = "") -> str:
    """The node's source as the file has it, for a node in a block indented by `indent`
    (without it: `module.code_for_node(node)`).

    One codegen: the block's indentation goes only after a line break, so a node on one line
    is written the same with it or without. A bare or dotted name or a literal needs none: most
    of the nodes a read writes out are names (`self.x = x`, a placeholder `{path}`), and codegen
    costs tens of microseconds a node where their text is one attribute away."""
    text = _plain_code(node)
    return text if text is not None else node_code(module, node, indent)


@dataclass(frozen=True)
class Guard:
    """An `if` test (or a conditional expression's) that holds, or fails, for a statement to run."""

    test: cst.BaseExpression
    holds: bool
    indent: str  # the indentation of the block the test is written in


# A test joined to others by `and` keeps its meaning unless it binds more loosely than `and`.
_LOOSE = (cst.IfExp, cst.Lambda, cst.NamedExpr)


def condition(module: cst.Module, guards: Sequence[Guard],
              texts: dict[int, str] | None = None) -> str | None:
    """`a and not (b) and c`: the guards' tests joined by `and`, outermost first; None without.

    `texts` keeps each test's source by `id` across the calls for one module."""
    parts = []
    for guard in guards:
        key = id(guard.test)
        text = texts.get(key) if texts is not None else None
        if text is None:
            text = exact(module, guard.test, guard.indent)
            if texts is not None:
                texts[key] = text
        parenthesized = bool(guard.test.lpar)
        if not guard.holds:
            text = f"not {text}" if parenthesized else f"not ({text})"
        elif len(guards) > 1 and not parenthesized and _loose(guard.test):
            text = f"({text})"
        parts.append(text)
    return " and ".join(parts) if parts else None


def _loose(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.Or)
    return isinstance(test, _LOOSE)
