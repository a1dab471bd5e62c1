"""Message expressions to `Template`s: literal text and placeholders read off the source, exactly.

A placeholder is named by the exact source of its expression (`f'{disallowed}'` gives
`disallowed`), conversions and format specs kept out of the name. Whatever cannot be read as
text is still a template: kind `dynamic`, the expression's source as its only placeholder.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from crawler.records import Template

# Keyword arguments that carry the message when there is no positional one.
MESSAGE_KEYWORDS = ("message", "msg", "detail", "reason", "text", "description")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Piece:
    """One run of a message: literal text, or a placeholder named by its expression's source."""

    text: str
    is_placeholder: bool = False


class Unreadable(Exception):
    """The expression is not text that can be read off the source."""


def message_argument(call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
    """The argument of an exception call that carries its message, and which one it is."""
    for index, arg in enumerate(call.args):
        if arg.keyword is None and not arg.star:
            return str(index), arg.value
        if arg.star:
            return f"{arg.star}{index}", arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS:
            return arg.keyword.value, arg.value
    return None


def template_for(expression: cst.BaseExpression, module: cst.Module, argument: str) -> Template:
    """The template of a message expression; `dynamic` when it cannot be read."""
    try:
        kind, pieces = _read(expression, module)
    except Unreadable:
        kind, pieces = "dynamic", [Piece(_source(expression, module), is_placeholder=True)]
    if argument.startswith("*"):
        kind, pieces = "dynamic", [Piece(argument[: argument.count("*")] + _source(expression, module), True)]
    return build_template(kind, pieces, argument=argument)


def build_template(
    kind: str, pieces: Sequence[Piece], *, argument: str | None = None, defined_at: str | None = None
) -> Template:
    """Join pieces into the template text, its placeholder list and its anchored regex."""
    text: list[str] = []
    pattern: list[str] = []
    placeholders: list[str] = []
    for piece in pieces:
        if piece.is_placeholder:
            text.append("{" + piece.text + "}")
            pattern.append(_group(piece.text, placeholders))
            placeholders.append(piece.text)
        else:
            text.append(piece.text.replace("{", "{{").replace("}", "}}"))
            pattern.append(escape_regex(piece.text))
    return Template(
        kind=kind,
        template="".join(text),
        placeholders=tuple(placeholders),
        regex="^" + "".join(pattern) + "$",
        argument=argument,
        defined_at=defined_at,
    )


_REGEX_SPECIAL = frozenset("\\.^$*+?()[]{}|")


def escape_regex(text: str) -> str:
    """Escape only what is special in a regex, so the pattern stays readable and portable."""
    return "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)


def _group(name: str, seen: list[str]) -> str:
    """A regex group for a placeholder: named after it when it is a fresh identifier."""
    if _IDENTIFIER.match(name) and name not in seen:
        return f"(?P<{name}>[\\s\\S]*?)"
    return "([\\s\\S]*?)"


def _read(expression: cst.BaseExpression, module: cst.Module) -> tuple[str, list[Piece]]:
    """The kind and pieces of an expression that is text in the source, or raise Unreadable."""
    if isinstance(expression, cst.SimpleString):
        return "literal", [Piece(_string_value(expression))]
    if isinstance(expression, cst.ConcatenatedString):
        left_kind, left = _read(expression.left, module)
        right_kind, right = _read(expression.right, module)
        kind = "fstring" if "fstring" in (left_kind, right_kind) else "literal"
        return kind, _merge_text(left + right)
    if isinstance(expression, cst.FormattedString):
        return "fstring", _merge_text(_fstring_pieces(expression, module))
    raise Unreadable


def _string_value(node: cst.SimpleString) -> str:
    value = node.evaluated_value
    if isinstance(value, bytes):
        raise Unreadable  # a bytes message shows as its repr; left to `dynamic`
    return value


def _fstring_pieces(node: cst.FormattedString, module: cst.Module) -> list[Piece]:
    prefix = node.prefix.lower().replace("f", "")
    pieces: list[Piece] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            pieces.append(Piece(_fstring_text(part.value, prefix)))
            continue
        if not isinstance(part, cst.FormattedStringExpression):
            raise Unreadable
        expression_source = _source(part.expression, module)
        if part.equal is not None:
            # `{x=}` shows the expression's own source, then its value.
            pieces.append(Piece(_equal_label(part, module)))
        pieces.append(Piece(expression_source, is_placeholder=True))
    return pieces


def _equal_label(part: cst.FormattedStringExpression, module: cst.Module) -> str:
    """The literal text that an `=` specifier prints: the expression as written, and `=`."""
    assert part.equal is not None
    before = module.code_for_node(part.whitespace_before_expression)
    after_expr = module.code_for_node(part.whitespace_after_expression)
    equal = module.code_for_node(part.equal)
    return before + _source(part.expression, module) + after_expr + equal


def _fstring_text(raw: str, prefix: str) -> str:
    """The runtime text of an f-string's literal run: escapes decoded, `{{` made `{`."""
    text = raw.replace("{{", "{").replace("}}", "}")
    if "r" in prefix or "\\" not in text:
        return text
    try:
        value = ast.literal_eval(_quote_for_eval(text))
    except (SyntaxError, ValueError) as error:
        raise Unreadable from error
    assert isinstance(value, str)
    return value


def _quote_for_eval(text: str) -> str:
    """Wrap literal text in quotes that cannot clash with it, for escape decoding."""
    for quote in ('"""', "'''"):
        if quote not in text and not text.endswith(quote[0]):
            return quote + text + quote
    raise Unreadable


def _merge_text(pieces: list[Piece]) -> list[Piece]:
    """Join adjacent literal runs so that equal templates have equal pieces."""
    merged: list[Piece] = []
    for piece in pieces:
        if merged and not piece.is_placeholder and not merged[-1].is_placeholder:
            merged[-1] = Piece(merged[-1].text + piece.text)
        elif piece.is_placeholder or piece.text:
            merged.append(piece)
    return merged


def _source(node: cst.CSTNode, module: cst.Module) -> str:
    return module.code_for_node(node)
