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
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState


def exact(module: cst.Module, node: cst.CSTNode, indent: str = "") -> str:
    """The node's source as the file has it, for a node in a block indented by `indent`."""
    text = module.code_for_node(node)
    if not indent or "\n" not in text and "\r" not in text:
        return text  # on one line, the block's indentation is not part of it
    state = CodegenState(default_indent=module.default_indent,
                         default_newline=module.default_newline, indent_tokens=[indent])
    node._codegen(state)
    return "".join(state.tokens)


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
