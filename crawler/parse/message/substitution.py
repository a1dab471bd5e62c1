"""A callee's text in its caller's terms: each parameter replaced by the argument bound to it.

`Binding` is a parameter bound to the caller's argument (its source, and its text if it is text);
`substitute` puts a callee's pieces in the caller's terms: a placeholder that is a parameter
becomes the argument's text (when shown by `str()`) or a placeholder named by its source, and a
parameter inside a placeholder's expression is renamed to the argument's source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import libcst as cst

from crawler.parse._source import node_code
from crawler.parse.message.pieces import Alternative, Piece, _products, in_group_of, merge_text


@dataclass(frozen=True)
class Binding:
    """A callee's parameter, bound to the caller's argument: its source, and its text if any."""

    source: str
    alternatives: tuple[Alternative, ...] | None  # None: not text



def substitute(pieces: list[Piece], kind: str, bindings: Mapping[str, Binding]
               ) -> list[Alternative]:
    """A callee's pieces in the caller's terms: each parameter replaced by its argument."""
    readings: list[list[Alternative]] = []
    for piece in pieces:
        binding = bindings.get(piece.text) if piece.is_placeholder else None
        if binding is not None and binding.alternatives is not None and piece.plain:
            readings.append([(k, in_group_of(piece, list(p))) for k, p in binding.alternatives])
        elif binding is not None:
            readings.append([("dynamic", [replace(piece, text=binding.source)])])
        elif piece.is_placeholder:
            readings.append([("dynamic", [replace(piece, text=_renamed(piece.text, bindings))])])
        else:
            readings.append([(kind, [piece])])
    alternatives = []
    for combination in _products(readings):
        joined = merge_text([p for _, part in combination for p in part])
        whole = len(pieces) == 1 and pieces[0].is_placeholder
        alternatives.append((combination[0][0] if whole and combination else kind, joined))
    return alternatives


def _reads_none(pieces: list[Piece]) -> bool:
    """A placeholder that reads an attribute or item of `None`, or calls it: it always raises."""
    return any(p.is_placeholder and p.text.startswith(("None.", "None[", "None(")) for p in pieces)


class _Rename(cst.CSTTransformer):
    """Parameter names in an expression to the caller's argument sources."""

    def __init__(self, bindings: Mapping[str, Binding]) -> None:
        super().__init__()
        self.bindings = bindings
        self.binds = False  # the expression binds names of its own (lambda, comprehension)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.binds = True
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        self.binds = True
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `x.shape`: `shape` is an attribute, never a parameter
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute
                        ) -> cst.BaseExpression:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return True

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # `f(shape=...)`: a keyword

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        binding = self.bindings.get(original.value)
        if binding is None:
            return updated
        return cst.parse_expression(_atom(binding.source))


def _renamed(text: str, bindings: Mapping[str, Binding]) -> str:
    """A callee's placeholder expression with its parameters renamed; as it was when unsafe."""
    if not any(name in text for name in bindings):
        return text
    try:
        expression = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return text
    rename = _Rename(bindings)
    renamed = expression.visit(rename)
    if rename.binds or not isinstance(renamed, cst.BaseExpression):
        return text
    return node_code(cst.Module([]), renamed)


def _atom(source: str) -> str:
    """An argument's source, parenthesised unless it is a name, attribute, call or literal."""
    try:
        expression = cst.parse_expression(source)
    except cst.ParserSyntaxError:
        return f"({source})"
    if isinstance(expression, (cst.Name, cst.Attribute, cst.Call, cst.Subscript,
                               cst.SimpleString, cst.Integer, cst.Float)) or expression.lpar:
        return source
    return f"({source})"
