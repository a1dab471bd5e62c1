"""Message expressions to pieces: the text a raise's message is built from, read off the source.

`Reader.read` knows literals, f-strings, `.format`, `%`, `+`, `a if c else b`, the gettext and
text wrappers and `" ".join([...])`, and variables (through `flow.definitions`); with a
`follower` (`crawler.parse.message.calls`), the module's own helpers and constants too. It returns one
or more alternatives, each a kind and a list of `Piece`s, or raises `Unreadable`; `message`
turns an unreadable expression into one `dynamic` alternative named by its source.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import libcst as cst

from crawler.parse._source import exact
from crawler.parse.message import built, flow
from crawler.parse.message.if_tests import binds_in_test
from crawler.parse.message.pieces import (
    MAX_ALTERNATIVES,
    Alternative,
    Piece,
    Unreadable,
    _product,
    _products,
    _transform,
    merge_text,
)

if TYPE_CHECKING:
    from crawler.parse.message.calls import Follower

# Wrappers that hand back their (first) argument's text: gettext and friends.
GETTEXT = frozenset({"_", "gettext", "ugettext", "gettext_lazy", "ugettext_lazy", "lazy_gettext",
                     "gettext_noop", "N_", "_lazy"})
NGETTEXT = frozenset({"ngettext", "ungettext", "ngettext_lazy", "ungettext_lazy"})
TEXT_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "dedent": textwrap.dedent,
    "cleandoc": inspect.cleandoc,
}
TEXT_METHODS: dict[str, Callable[[str], str]] = {
    "strip": str.strip, "lstrip": str.lstrip, "rstrip": str.rstrip,
}

_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?[hlL]?"
    r"(?P<conversion>[diouxXeEfFgGcrsa%])"
)


# ---------------------------------------------------------------- expressions to pieces


class Reader:
    """Reads message expressions of one module; names resolve through `flow.definitions`."""

    def __init__(self, module: cst.Module, assigned: set[str] | None = None) -> None:
        self.module = module
        self.assigned = assigned
        self._depth = 0
        # Set by `crawler.parse.message.calls.Follower.reader`: what names and calls that are not local
        # text are followed into, the indentation of each block, and where this reader reads.
        self.follower: Follower | None = None
        self.indents: Mapping[int, str] = {}
        self.context: Any = None
        self._position: flow.Position = ()
        self.unread = ""  # why `message` last read an expression as `dynamic`, when it is known

    def source(self, node: cst.CSTNode) -> str:
        """The node's exact source, in the block being read."""
        return self.source_at(node, self._position)

    def source_at(self, node: cst.CSTNode, position: flow.Position) -> str:
        """The exact source of a node of the statement at `position`."""
        if not self.indents:
            return exact(self.module, node)
        return exact(self.module, node, self._indent_at(position))

    @property
    def nested(self) -> bool:
        """Whether this reader is inside a read (whose end puts a callee's text in caller terms)."""
        return self._depth > 0

    def _indent_at(self, position: flow.Position) -> str:
        for statements, _, _ in reversed(position):
            indent = self.indents.get(id(statements))
            if indent is not None:
                return indent
        return ""

    def message(self, expression: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """Every alternative of a message; one `dynamic` alternative when it cannot be read."""
        self.unread = ""
        try:
            alternatives = self.read(expression, position)
        except (Unreadable, RecursionError) as error:
            alternatives = []
            self.unread = str(error) if isinstance(error, Unreadable) else ""
        if not alternatives or len(alternatives) > MAX_ALTERNATIVES:
            return [("dynamic", [Piece(self.source_at(expression, position), True)])]
        return alternatives

    def read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """The alternatives of an expression that is text in the source, or raise Unreadable."""
        self._depth += 1
        outer = self._position
        self._position = position
        try:
            if self._depth > 40:
                raise Unreadable
            found = self._read(node, position)
            if self._depth == 1 and self.follower is not None:
                found = self.follower.finish(self, found)
            return found
        finally:
            self._depth -= 1
            self._position = outer

    def _read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        # by `type`: LibCST's concrete nodes have no subclasses, and a failing isinstance on
        # its ABCs is a Python call; `isinstance` below only narrows the type, at no cost
        node_type = type(node)
        if node_type is cst.SimpleString and isinstance(node, cst.SimpleString):
            return [("literal", [Piece(_string_value(node))])]
        if node_type is cst.ConcatenatedString and isinstance(node, cst.ConcatenatedString):
            alternatives = []
            for (lk, left), (rk, right) in _product(self.read(node.left, position),
                                                    self.read(node.right, position)):
                kind = "fstring" if "fstring" in (lk, rk) else lk
                alternatives.append((kind, merge_text(left + right)))
            return alternatives
        if node_type is cst.FormattedString and isinstance(node, cst.FormattedString):
            return [("fstring", merge_text(self._fstring(node, position)))]
        if node_type is cst.Name and isinstance(node, cst.Name):
            try:
                return self._variable(node.value, position)
            except Unreadable:
                if self.follower is None:
                    raise
                return self.follower.name(self, node.value, position)
        if node_type is cst.BinaryOperation and isinstance(node, cst.BinaryOperation):
            operator = type(node.operator)
            if operator is cst.Add:
                return self._concat(node, position)
            if operator is cst.Modulo:
                return self._percent(node, position)
            if operator is cst.Multiply:
                return _repeated_literal(node)
        if node_type is cst.IfExp and isinstance(node, cst.IfExp):
            return self.read(node.body, position) + self.read(node.orelse, position)
        if node_type is cst.Call and isinstance(node, cst.Call):
            return self._call(node, position)
        if node_type is cst.Subscript and isinstance(node, cst.Subscript):
            return built.sliced(self, node, position)
        raise Unreadable

    # ------------------------------------------------ names

    def _variable(self, name: str, position: flow.Position) -> list[Alternative]:
        if not position or (self.assigned is not None and name not in self.assigned
                            and not binds_in_test(name, position)):
            raise Unreadable
        found = flow.definitions(name, position, limit=built.MAX_PATHS)
        if not found:
            raise Unreadable
        if len(found) > MAX_ALTERNATIVES:
            return built.merged_paths(self, found)
        try:
            return self._definitions(found)
        except Unreadable:
            if len(found) < 2:
                raise
            return built.merged_paths(self, found)

    def _definitions(self, found: list[flow.Definition]) -> list[Alternative]:
        """One alternative per path and way each part reads."""
        alternatives: list[Alternative] = []
        for definition in found:
            readings: list[list[Alternative]] = []
            for expression, where in definition:
                readings.append(built.part_reading(self, expression, where))
            for combination in _products(readings):
                pieces = [piece for _, part in combination for piece in part]
                kinds = {kind for kind, _ in combination}
                kind = "dynamic" if kinds == {"dynamic"} else "variable"
                alternatives.append((kind, merge_text(pieces)))
        if all(kind == "dynamic" for kind, _ in alternatives):
            raise Unreadable
        return alternatives

    def _read_or_placeholder(self, node: cst.BaseExpression, position: flow.Position
                             ) -> list[Alternative]:
        try:
            return self.read(node, position)
        except Unreadable:
            return [("dynamic", [Piece(self.source_at(node, position), True)])]

    # ------------------------------------------------ f-strings

    def _fstring(self, node: cst.FormattedString, position: flow.Position) -> list[Piece]:
        prefix = node.prefix.lower().replace("f", "")
        pieces: list[Piece] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                pieces.append(Piece(_fstring_text(part.value, prefix)))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            if part.equal is not None:
                # `{x=}` shows the expression's own source, then its value.
                pieces.append(Piece(self._equal_label(part)))
            inner = part.expression
            if (isinstance(inner, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString))
                    and part.conversion in (None, "s") and not part.format_spec
                    and part.equal is None):
                nested = self.read(inner, position)
                if len(nested) == 1:
                    pieces.extend(nested[0][1])
                    continue
            plain = part.conversion in (None, "s") and not part.format_spec and part.equal is None
            pieces.append(Piece(self.source(inner), True, plain))
        return pieces

    def _equal_label(self, part: cst.FormattedStringExpression) -> str:
        """The literal text that an `=` specifier prints: the expression as written, and `=`."""
        assert part.equal is not None
        return (self.source(part.whitespace_before_expression) + self.source(part.expression)
                + self.source(part.whitespace_after_expression) + self.source(part.equal))

    # ------------------------------------------------ operators

    def _concat(self, node: cst.BinaryOperation, position: flow.Position) -> list[Alternative]:
        operands: list[cst.BaseExpression] = []
        stack: list[cst.BaseExpression] = [node.right, node.left]  # the top node is always split
        while stack:
            current = stack.pop()
            if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.Add) \
                    and not current.lpar:
                stack.extend((current.right, current.left))
            else:
                operands.append(current)
        readings: list[list[Alternative]] = []
        textual = False
        for operand in operands:
            shown = _str_or_repr_argument(operand)
            if shown is not None:
                plain = isinstance(operand, cst.Call) and isinstance(operand.func, cst.Name) \
                    and operand.func.value == "str"
                readings.append([("dynamic", [Piece(self.source(shown), True, plain)])])
                continue
            try:
                readings.append(self.read(operand, position))
                textual = True
            except Unreadable:
                readings.append([("dynamic", [Piece(self.source(operand), True)])])
        if not textual:
            raise Unreadable
        return [("concat", merge_text([p for _, part in combo for p in part]))
                for combo in _products(readings)]

    def _percent(self, node: cst.BinaryOperation, position: flow.Position) -> list[Alternative]:
        alternatives = []
        for text in self._plain_texts(node.left, position):
            values = node.right
            positional: list[cst.BaseExpression] | None = None
            mapping: dict[str, cst.BaseExpression] | None = None
            if isinstance(values, cst.Tuple):
                if any(isinstance(e, cst.StarredElement) for e in values.elements):
                    raise Unreadable
                positional = [e.value for e in values.elements]
            elif isinstance(values, cst.Dict):
                mapping = {}
                for element in values.elements:
                    if not isinstance(element, cst.DictElement):
                        raise Unreadable
                    key = element.key
                    if not isinstance(key, cst.SimpleString) or not isinstance(
                            key.evaluated_value, str):
                        raise Unreadable
                    mapping[key.evaluated_value] = element.value
            elif self._is_dict_call(values):
                assert isinstance(values, cst.Call)
                mapping = {arg.keyword.value: arg.value for arg in values.args
                           if arg.keyword is not None}
            alternatives.append(("percent", self._percent_pieces(text, values, positional, mapping)))
        return alternatives

    def _is_dict_call(self, node: cst.BaseExpression) -> bool:
        """`dict(key=value, ...)`, keywords only, with `dict` the builtin (argparse's `__str__`)."""
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                and node.func.value == "dict" and "dict" not in (self.assigned or ())
                and bool(node.args)
                and all(arg.keyword is not None and not arg.star for arg in node.args))

    def _percent_pieces(self, text: str, values: cst.BaseExpression,
                        positional: list[cst.BaseExpression] | None,
                        mapping: dict[str, cst.BaseExpression] | None) -> list[Piece]:
        pieces: list[Piece] = []
        matches = list(_PERCENT.finditer(text))
        end = 0
        slots = [m for m in matches if m["conversion"] != "%"]
        takes = sum(1 + (m["width"] == "*") + (m["precision"] == "*") for m in slots
                    if m["key"] is None)
        index = 0
        for match in matches:
            literal = text[end:match.start()]
            if "%" in literal:
                raise Unreadable  # a stray `%`: the runtime formatting would fail
            pieces.append(Piece(literal))
            end = match.end()
            if match["conversion"] == "%":
                pieces.append(Piece("%"))
                continue
            key = match["key"]
            if key is not None:
                if mapping is not None:
                    if key not in mapping:
                        raise Unreadable
                    pieces.append(self._value_piece(mapping[key], match.group(0) == f"%({key})s"))
                else:
                    pieces.append(Piece(key, True, match.group(0) == f"%({key})s"))
                continue
            index += (match["width"] == "*") + (match["precision"] == "*")
            if positional is not None:
                if index >= len(positional):
                    raise Unreadable
                pieces.append(self._value_piece(positional[index], match.group(0) == "%s"))
            elif takes == 1:
                pieces.append(self._value_piece(values, match.group(0) == "%s"))
            else:
                pieces.append(Piece(f"{self.source(values)}[{index}]", True, False))
            index += 1
        if "%" in text[end:]:
            raise Unreadable
        pieces.append(Piece(text[end:]))
        return merge_text(pieces)

    def _text_value(self, value: cst.BaseExpression) -> list[Piece]:
        """A value shown by str(): an f-string's own pieces when it reads one way."""
        if isinstance(value, (cst.FormattedString, cst.ConcatenatedString)):
            try:
                found = self.read(value, self._position)
            except Unreadable:
                found = []
            if len(found) == 1:
                return found[0][1]
        return [self._value_piece(value, True)]

    def _value_piece(self, value: cst.BaseExpression, plain: bool) -> Piece:
        """A formatted value: its text when it is a plain string literal shown as is."""
        if plain and isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
            return Piece(value.evaluated_value)
        return Piece(self.source(value), True, plain)

    # ------------------------------------------------ calls: .format, wrappers, join

    def _call(self, node: cst.Call, position: flow.Position) -> list[Alternative]:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        args = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and name == "format":
            return built.formatted(self, func.value, node, position)
        bound_format = built.bound_format(self, func, position)
        if bound_format is not None:  # `msg = "... {}".format` then `msg(x)`
            return built.formatted(self, bound_format, node, position)
        if isinstance(func, cst.Attribute) and name == "join" and len(node.args) == 1:
            return self._join(func.value, node.args[0].value, position)
        if isinstance(func, cst.Attribute) and name in TEXT_METHODS and not node.args:
            return [(kind, _transform(pieces, TEXT_METHODS[name]))
                    for kind, pieces in self.read(func.value, position)]
        if name in GETTEXT and args:
            return self.read(args[0].value, position)
        if name == "pgettext" and len(args) >= 2:
            return self.read(args[1].value, position)
        if name in NGETTEXT and len(args) >= 2:
            return self.read(args[0].value, position) + self.read(args[1].value, position)
        if name in TEXT_FUNCTIONS and len(args) == 1:
            return [(kind, _transform(pieces, TEXT_FUNCTIONS[name]))
                    for kind, pieces in self.read(args[0].value, position)]
        if self.follower is not None:
            return self.follower.call(self, node, position)
        raise Unreadable

    def _plain_texts(self, node: cst.BaseExpression, position: flow.Position) -> list[str]:
        """Every alternative of an expression that is literal text only (a format string)."""
        texts = []
        for _, pieces in self.read(node, position):
            if any(p.is_placeholder for p in pieces):
                raise Unreadable
            texts.append("".join(p.text for p in pieces))
        return texts

    def _choices(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """Each alternative of `a if c else b` (a branch not read is its placeholder), or the
        expression's own: `os.linesep if multiline else ' '` is a placeholder or a space."""
        if isinstance(node, cst.IfExp):
            return self._choices(node.body, position) + self._choices(node.orelse, position)
        if isinstance(node, cst.Name) and position and (
                self.assigned is None or node.value in self.assigned):
            found = flow.definitions(node.value, position)  # `sep = a if c else b` once
            if found and len(found) == 1 and len(found[0]) == 1 \
                    and isinstance(found[0][0][0], cst.IfExp):
                return self._choices(found[0][0][0], found[0][0][1])
        return self._read_or_placeholder(node, position)

    def _join(self, separator: cst.BaseExpression, items: cst.BaseExpression,
              position: flow.Position) -> list[Alternative]:
        if not isinstance(items, (cst.List, cst.Tuple)):
            texts = self._plain_texts(separator, position)
            if len(texts) != 1:
                raise Unreadable
            return built.joined(self, texts[0], items, position)
        readings = []
        for element in items.elements:
            if isinstance(element, cst.StarredElement):
                raise Unreadable
            readings.append(self._read_or_placeholder(element.value, position))
        if all(r[0][0] == "dynamic" for r in readings):
            raise Unreadable
        alternatives = []
        for (_, sep), *combo in _products([self._choices(separator, position), *readings]):
            pieces: list[Piece] = []
            for index, (_, part) in enumerate(combo):
                if index:
                    pieces.extend(sep)
                pieces.extend(part)
            kinds = {k for k, _ in combo} - {"dynamic"}
            alternatives.append((kinds.pop() if len(kinds) == 1 else "concat", merge_text(pieces)))
        return alternatives


# ---------------------------------------------------------------- helpers


def _str_or_repr_argument(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`str(x)` or `repr(x)`: the placeholder is named by `x`."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            and node.func.value in ("str", "repr") and len(node.args) == 1
            and node.args[0].keyword is None and not node.args[0].star):
        return node.args[0].value
    return None


def _string_value(node: cst.SimpleString) -> str:
    value = node.evaluated_value
    if isinstance(value, bytes):
        raise Unreadable  # a bytes message shows as its repr; left to `dynamic`
    return value


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


def _repeated_literal(node: cst.BinaryOperation) -> list[Alternative]:
    """`'-' * 30` (or `30 * '-'`): a plain string literal repeated a literal number of times."""
    text, count = node.left, node.right
    if isinstance(text, cst.Integer):
        text, count = count, text
    if not isinstance(text, cst.SimpleString) or not isinstance(count, cst.Integer) \
            or "f" in text.prefix.lower() or "b" in text.prefix.lower():
        raise Unreadable
    times = int(count.value.replace("_", ""), 0)
    if not 0 <= times <= 200:
        raise Unreadable
    return [("literal", [Piece(_string_value(text) * times)])]
