"""A parameter renamed inside a placeholder's expression: `x.shape[0]` in a helper that takes `x`
reads `arr.shape[0]` in a caller that passes `arr`. LibCST parses the expression and writes it back
exactly; only `crawler.parse.message.substitution` calls this, when a placeholder names a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from crawler.parse._source import node_code


class _Rename(cst.CSTTransformer):
    """Parameter names in an expression to the caller's argument sources."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        super().__init__()
        self.sources = sources
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
        source = self.sources.get(original.value)
        if source is None:
            return updated
        return cst.parse_expression(_atom(source))


def renamed(text: str, sources: Mapping[str, str]) -> str:
    """A callee's placeholder expression with its parameters renamed; as it was when unsafe
    (it binds names of its own, or does not parse). `sources`: each parameter's argument source."""
    try:
        expression = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return text
    rename = _Rename(sources)
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
