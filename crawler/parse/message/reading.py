"""Message expressions to pieces: the text a raise's message is built from, read off the source.

`Reader.read` knows literals, f-strings, `.format`, `%`, `+`, `a if c else b`, the gettext and
text wrappers and `" ".join([...])`, and variables (through `flow.definitions`); with a
`follower` (`crawler.parse.message.calls`), the module's own helpers and constants too. It returns one
or more alternatives, each a kind and a list of `Piece`s, or raises `Unreadable`; `message`
turns an unreadable expression into one `dynamic` alternative named by its source.

Text built across statements, read for `reading.Reader`: what a loop adds, lists joined, cuts.

- a loop's passes (`flow.Repeated`) read as one group of pieces, repeated any number of times;
- `sep.join(items)` where `items` is a list or tuple display, a list built by `append`,
  `extend` and `+=` (over branches and loops: `flow.definitions(..., items=True)`), or such
  lists added together: the items' text with `sep` between them; a list added whose items are
  not known (a parameter, a call) is one placeholder for its text and the separator before it;
- `text[:-n]` with `n` a literal: the last `n` characters cut, when they are literal text the
  same on every path (`pieces.trim_end`).

Anything else is `Unreadable`: the message keeps a placeholder, never a guess.
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import libcst as cst

from crawler.parse._source import exact
from crawler.parse.message import flow, rules
from crawler.parse.message.flow import binds_in_test
from crawler.parse.message.pieces import (
    MAX_ALTERNATIVES,
    Alternative,
    Piece,
    Unreadable,
    _product,
    _products,
    _transform,
    merge_text,
    repeated,
    trim_end,
)


class Follows(Protocol):
    """What a reader asks of the follower that reads past its module's names and calls
    (`calls.Follower`, which sets itself as `Reader.follower`). A protocol here, so that the
    reader does not import the follower that imports it."""

    def finish(self, reader: Reader, alternatives: list[Alternative]) -> list[Alternative]: ...

    def name(self, reader: Reader, name: str, position: flow.Position) -> list[Alternative]: ...

    def call(self, reader: Reader, node: cst.Call, position: flow.Position) -> list[Alternative]: ...

    def constant(self, reader: Reader, name: str
                 ) -> tuple[cst.BaseExpression, flow.Position] | None: ...

    def note_constant(self, reader: Reader, name: str, at: int | None = None) -> None: ...


# Wrappers that hand back their (first) argument's text: gettext and friends. `__` is sphinx's
# console translation (`__ = get_translation('sphinx', 'console')` in sphinx.locale), imported
# by sphinx and by its extensions (`from sphinx.locale import __`).
GETTEXT = frozenset({"_", "__", "gettext", "ugettext", "gettext_lazy", "ugettext_lazy",
                     "lazy_gettext", "gettext_noop", "N_", "_lazy"})


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


class Reader:
    """Reads message expressions of one module; names resolve through `flow.definitions`."""

    def __init__(self, module: cst.Module, assigned: set[str] | None = None) -> None:
        self.module = module
        self.assigned = assigned
        self._depth = 0
        # Set by `crawler.parse.message.calls.Follower.reader`: what names and calls that are not local
        # text are followed into, the indentation of each block, and where this reader reads.
        self.follower: Follows | None = None
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
        marked = rules.mark()
        try:
            alternatives = self.read(expression, position)
        except (Unreadable, RecursionError) as error:
            alternatives = []
            self.unread = str(error) if isinstance(error, Unreadable) else ""
        if not alternatives or len(alternatives) > MAX_ALTERNATIVES:
            rules.drop(marked)  # no rule gave this message's text
            return [("dynamic", [Piece(self.source_at(expression, position), True)])]
        return alternatives

    def read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """The alternatives of an expression that is text in the source, or raise Unreadable."""
        self._depth += 1
        outer = self._position
        self._position = position
        marked = rules.mark()
        try:
            if self._depth > 40:
                raise Unreadable
            found = self._read(node, position)
            if self._depth == 1 and self.follower is not None:
                found = self.follower.finish(self, found)
            return found
        except Unreadable:
            rules.drop(marked)  # what a failed read went through gave no text
            raise
        finally:
            self._depth -= 1
            self._position = outer

    def _read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        # by `type`: LibCST's concrete nodes have no subclasses, and a failing isinstance on
        # its ABCs is a Python call; `isinstance` below only narrows the type, at no cost
        node_type = type(node)
        if node_type is cst.SimpleString and isinstance(node, cst.SimpleString):
            found = [("literal", [Piece(_string_value(node))])]
            rules.note("text.literal")
            return found
        if node_type is cst.ConcatenatedString and isinstance(node, cst.ConcatenatedString):
            alternatives = []
            for (lk, left), (rk, right) in _product(self.read(node.left, position),
                                                    self.read(node.right, position)):
                kind = "fstring" if "fstring" in (lk, rk) else lk
                alternatives.append((kind, merge_text(left + right)))
            return alternatives
        if node_type is cst.FormattedString and isinstance(node, cst.FormattedString):
            found = [("fstring", merge_text(self._fstring(node, position)))]
            rules.note("text.fstring")
            return found
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
                return _noted("text.concat", self._concat(node, position))
            if operator is cst.Modulo:
                return _noted("text.percent", self._percent(node, position))
            if operator is cst.Multiply:
                return _noted("text.repeat", _repeated_literal(node))
        if node_type is cst.IfExp and isinstance(node, cst.IfExp):
            return _noted("text.conditional",
                          self.read(node.body, position) + self.read(node.orelse, position))
        if node_type is cst.Call and isinstance(node, cst.Call):
            return self._call(node, position)
        if node_type is cst.Subscript and isinstance(node, cst.Subscript):
            return sliced(self, node, position)
        raise Unreadable

    # ------------------------------------------------ names

    def _variable(self, name: str, position: flow.Position) -> list[Alternative]:
        if not position or (self.assigned is not None and name not in self.assigned
                            and not binds_in_test(name, position)):
            raise Unreadable
        found = flow.definitions(name, position, limit=MAX_PATHS)
        if not found:
            raise Unreadable
        if len(found) > MAX_ALTERNATIVES:
            return _noted_paths(found, merged_paths(self, found), merged=True)
        try:
            return _noted_paths(found, self._definitions(found))
        except Unreadable:
            if len(found) < 2:
                raise
            return _noted_paths(found, merged_paths(self, found), merged=True)

    def definition_texts(self, definition: flow.Definition) -> list[Alternative]:
        """The alternatives of one definition of a name: each way its parts read."""
        return self._definitions([definition])

    def _definitions(self, found: list[flow.Definition]) -> list[Alternative]:
        """One alternative per path and way each part reads."""
        alternatives: list[Alternative] = []
        for definition in found:
            readings: list[list[Alternative]] = []
            for expression, where in definition:
                readings.append(part_reading(self, expression, where))
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
            if plain and isinstance(inner, cst.Name):
                # a local whose one reaching text is known (`error = f"invalid config: {ex.name}."`,
                # then `raise ValueError(f"{error}\n{summary}")`): its text in place, as a
                # message that is the variable itself is read
                known = self._one_text(inner.value, position)
                if known is not None:
                    rules.note("flow.fstring-local")
                    pieces.extend(known)
                    continue
            pieces.append(Piece(self.source(inner), True, plain))
        return pieces

    def _one_text(self, name: str, position: flow.Position) -> list[Piece] | None:
        """The pieces of the one text a local has where it is read, or None: no definition
        read, several (a placeholder stands for any of them), a value that is not text where
        it is made (`i = int(i)`, `i += M`, `shape = a + (N,) + b`: a number's or a tuple's
        `+` is no concatenation), or none of its text known."""
        if not position or (self.assigned is not None and name not in self.assigned
                            and not binds_in_test(name, position)):
            return None
        found = flow.definitions(name, position, limit=MAX_PATHS)
        if not found or len(found) != 1 \
                or not all(_made_as_text(expression) for expression, _ in found[0]):
            return None
        try:  # the one definition found above, read as `_variable` reads a name's
            read = _noted_paths(found, self._definitions(found))
        except Unreadable:
            return None
        if len(read) != 1 or read[0][0] == "dynamic":
            return None
        return list(read[0][1])

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
        for text in self.plain_texts(node.left, position):
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
            return _noted("text.format", formatted(self, func.value, node, position))
        bound = bound_format(self, func, position)
        if bound is not None:  # `msg = "... {}".format` then `msg(x)`
            return _noted("text.bound-format", formatted(self, bound, node, position))
        if isinstance(func, cst.Attribute) and name == "join" and len(node.args) == 1:
            return self._join(func.value, node.args[0].value, position)
        if isinstance(func, cst.Attribute) and name in TEXT_METHODS and not node.args:
            return _noted("text.whitespace", [(kind, _transform(pieces, TEXT_METHODS[name]))
                                              for kind, pieces in self.read(func.value, position)])
        if name in GETTEXT and args:
            return _noted("text.gettext", self.read(args[0].value, position))
        if name == "pgettext" and len(args) >= 2:
            return _noted("text.gettext", self.read(args[1].value, position))
        if name in NGETTEXT and len(args) >= 2:
            return _noted("text.ngettext",
                          self.read(args[0].value, position) + self.read(args[1].value, position))
        if name in TEXT_FUNCTIONS and len(args) == 1:
            return _noted("text.whitespace", [(kind, _transform(pieces, TEXT_FUNCTIONS[name]))
                                              for kind, pieces in self.read(args[0].value, position)])
        if self.follower is not None:
            return self.follower.call(self, node, position)
        raise Unreadable

    def plain_texts(self, node: cst.BaseExpression, position: flow.Position) -> list[str]:
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
            texts = self.plain_texts(separator, position)
            if len(texts) != 1:
                raise Unreadable
            return _noted("text.join-built", joined(self, texts[0], items, position))
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
        rules.note("text.join-display")
        return alternatives


def _noted(rule: str, alternatives: list[Alternative]) -> list[Alternative]:
    """`alternatives`, read by `rule` (noted while a trace is open)."""
    rules.note(rule)
    return alternatives


def _noted_paths(found: list[flow.Definition], alternatives: list[Alternative],
                 merged: bool = False) -> list[Alternative]:
    """`alternatives` read off a name's definitions: while a trace is open, the `flow` rules
    their shape shows (`flow.definitions`'s parts: an assignment's value, what `+=` adds, a
    loop's passes, a walrus test's value, the name itself where it is bound opaquely)."""
    if not rules.active():
        return alternatives
    if len(found) > 1:
        rules.note("flow.branches")
    if merged:
        rules.note("flow.merged-paths")
    for definition in found:
        for value, where in definition:
            if isinstance(value, flow.Repeated):
                rules.note("flow.loop")
                continue
            if not where:
                rules.note("flow.opaque-binding")
                continue
            statements, index, _ = where[-1]
            statement = statements[index]
            if type(statement) is cst.AugAssign:
                rules.note("flow.augmented-assignment")
            elif type(statement) is cst.If:
                rules.note("flow.walrus-test")
            elif getattr(statement, "value", None) is value:
                rules.note("flow.assignment")  # else the name's own value from before
    return alternatives


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


def _made_as_text(node: object) -> bool:
    """Whether an expression makes a string as written: a string, an f-string, a string's `%`
    or `.format(...)`, a `+` with a string, a `.join(...)` or `str(...)`, or a conditional of
    two such (a definition's list element or a loop's passes, `flow.Element`, `flow.Repeated`:
    no)."""
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Modulo):
            return _made_as_text(node.left)
        if isinstance(node.operator, cst.Add):
            return _made_as_text(node.left) or _made_as_text(node.right)
        return False
    if isinstance(node, cst.IfExp):
        return _made_as_text(node.body) and _made_as_text(node.orelse)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name):
            return func.value == "str"
        return isinstance(func, cst.Attribute) and (
            func.attr.value == "join" or func.attr.value == "format" and _made_as_text(func.value))
    return False


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


@dataclass(frozen=True)
class _Loop:
    """Items a loop's passes add to a list: each pass's items, one list per alternative."""

    passes: tuple[tuple[tuple[cst.BaseExpression, flow.Position], ...], ...]


@dataclass(frozen=True)
class _Opaque:
    """A list whose items are not known (a parameter, a call): its joined text, with the
    separator before it, is one placeholder."""

    value: cst.BaseExpression
    position: flow.Position


_Entry = tuple[cst.BaseExpression, flow.Position] | _Loop | _Opaque


def loop_pieces(reader: Reader, loop: flow.Repeated) -> list[Alternative]:
    """What a loop adds to a text: every pass's alternatives in one repeated group."""
    passes: list[list[Piece]] = []
    for passed in loop.passes:
        readings = [part_reading(reader, value, where) for value, where in passed]
        for combination in _products(readings):
            passes.append(merge_text([p for _, part in combination for p in part]))
    if len(passes) > MAX_ALTERNATIVES:
        raise Unreadable
    return [("variable", repeated(passes))]


def part_reading(reader: Reader, value: object, where: flow.Position) -> list[Alternative]:
    """One part of a definition: an expression (a placeholder when it is not text) or a loop."""
    if isinstance(value, flow.Repeated):
        return loop_pieces(reader, value)
    if not isinstance(value, cst.BaseExpression):
        raise Unreadable  # an appended item outside a list
    return reader._read_or_placeholder(value, where)


def joined(reader: Reader, separator: str, items: cst.BaseExpression,
           position: flow.Position) -> list[Alternative]:
    """`separator.join(items)`: one alternative per way the list is built."""
    alternatives: list[Alternative] = []
    for entries in _entry_lists(items, position, 0):
        alternatives.extend(_joined_entries(reader, separator, entries))
        if len(alternatives) > MAX_ALTERNATIVES:
            raise Unreadable
    return alternatives


def joined_definition(reader: Reader, separator: str, definition: flow.Definition
                      ) -> list[Alternative]:
    """`separator.join(name)` over one definition of the list `name`: one alternative per way
    it is built, an empty list the empty text."""
    alternatives: list[Alternative] = []
    for entries in _definition_entries(definition, 0):
        alternatives.extend(_joined_entries(reader, separator, entries, placeholders=True)
                            if entries else [("literal", [])])
        if len(alternatives) > MAX_ALTERNATIVES:
            raise Unreadable
    return alternatives


def _entry_lists(items: cst.BaseExpression, position: flow.Position, depth: int
                 ) -> list[list[_Entry]]:
    """The items of a list expression, one list per way it is built."""
    if depth > 4:
        raise Unreadable
    if isinstance(items, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in items.elements):
            raise Unreadable
        return [[(e.value, position) for e in items.elements]]
    if isinstance(items, cst.BinaryOperation) and isinstance(items.operator, cst.Add):
        return [left + right for left in _entry_lists(items.left, position, depth + 1)
                for right in _entry_lists(items.right, position, depth + 1)]
    found = flow.definitions(items.value, position, items=True) \
        if isinstance(items, cst.Name) and position else None
    if not found:
        return [[_Opaque(items, position)]]
    ways: list[list[_Entry]] = []
    for definition in found:
        ways.extend(_definition_entries(definition, depth))
    return ways


def _definition_entries(definition: flow.Definition, depth: int) -> list[list[_Entry]]:
    ways: list[list[_Entry]] = [[]]
    for value, where in definition:
        if isinstance(value, flow.Element):
            added: list[list[_Entry]] = [[(value.value, where)]]
        elif isinstance(value, flow.Repeated):
            passes = [items for passed in value.passes for items in _pass_items(passed, depth)]
            added = [[_Loop(tuple(passes))]]
        else:
            added = _entry_lists(value, where, depth + 1)
        ways = [way + more for way in ways for more in added]
        if len(ways) > MAX_ALTERNATIVES:
            raise Unreadable
    return ways


def _pass_items(passed: tuple[flow.Part, ...], depth: int
                ) -> list[tuple[tuple[cst.BaseExpression, flow.Position], ...]]:
    """The items one pass of a loop adds, one tuple per way the pass runs."""
    ways = []
    for items in _definition_entries(passed, depth + 1):
        plain = tuple(item for item in items if isinstance(item, tuple))
        if len(plain) < len(items):
            raise Unreadable  # a loop in a loop, or items not known
        ways.append(plain)
    return ways


def _joined_entries(reader: Reader, separator: str, entries: list[_Entry],
                    placeholders: bool = False) -> list[Alternative]:
    """The alternatives of one way a list is built, joined; `placeholders`: a way of
    placeholders alone is `dynamic` text (a message method's `self.x`, which the class pass
    fills), not unreadable."""
    readings: list[list[Alternative]] = []
    for index, entry in enumerate(entries):
        if isinstance(entry, _Opaque):
            if index == 0:
                raise Unreadable  # whether a separator follows it is not known
            source = reader.source_at(entry.value, entry.position)
            readings.append([("dynamic", [Piece(source, True)])])
            continue
        if isinstance(entry, _Loop):
            if index == 0 and separator:
                raise Unreadable  # the first pass would have no separator before it
            readings.append(_loop_items(reader, separator, entry))
            continue
        if index:
            readings.append([("literal", [Piece(separator)])])
        readings.append(reader._read_or_placeholder(*entry))
    alone = not any(kind != "dynamic" for reading in readings for kind, _ in reading)
    if alone and not placeholders:
        raise Unreadable
    alternatives = []
    for combination in _products(readings):
        kinds = {kind for kind, _ in combination} - {"dynamic", "literal"}
        kind = "literal" if not kinds else (kinds.pop() if len(kinds) == 1 else "concat")
        kind = "dynamic" if alone else kind
        alternatives.append((kind, merge_text([p for _, part in combination for p in part])))
    return alternatives


def _loop_items(reader: Reader, separator: str, loop: _Loop) -> list[Alternative]:
    """A loop's items, each with the separator before it, as one repeated group."""
    passes: list[list[Piece]] = []
    for items in loop.passes:
        readings: list[list[Alternative]] = []
        for item in items:
            readings.append([("literal", [Piece(separator)])])
            readings.append(reader._read_or_placeholder(*item))
        for combination in _products(readings):
            passes.append(merge_text([p for _, part in combination for p in part]))
    if not passes or len(passes) > MAX_ALTERNATIVES:
        raise Unreadable
    return [("variable", repeated(passes))]


def bound_format(reader: Reader, func: cst.BaseExpression, position: flow.Position
                 ) -> cst.BaseExpression | None:
    """`text` when the name called is a local, or a module constant, bound to `text.format`
    alone (then `msg(x)` is `text.format(x)`)."""
    if not isinstance(func, cst.Name) or not position:
        return None
    if reader.assigned is not None and func.value not in reader.assigned:
        follower = reader.follower
        constant = follower.constant(reader, func.value) if follower is not None else None
        text = _format_of(constant[0]) if constant is not None else None
        if follower is not None and text is not None:
            follower.note_constant(reader, func.value)
        return text
    found = flow.definitions(func.value, position)
    if not found or len(found) != 1 or len(found[0]) != 1:
        return None
    value = found[0][0][0]
    return _format_of(value) if isinstance(value, cst.BaseExpression) else None


def _format_of(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`text` of `text.format`, `text` a string literal."""
    if isinstance(value, cst.Attribute) and value.attr.value == "format" \
            and isinstance(value.value, (cst.SimpleString, cst.ConcatenatedString)):
        return value.value
    return None


def sliced(reader: Reader, node: cst.Subscript, position: flow.Position) -> list[Alternative]:
    """`text[:-n]`, `n` a literal integer: each alternative with its last `n` characters cut."""
    count = _cut_from_end(node)
    if count is None:
        raise Unreadable
    return _noted("text.cut-tail", [(kind, trim_end(pieces, count))
                                    for kind, pieces in reader.read(node.value, position)])


def _cut_from_end(node: cst.Subscript) -> int | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
        return None
    cut = node.slice[0].slice
    upper = cut.upper
    if cut.lower is not None or cut.step is not None or not isinstance(upper, cst.UnaryOperation) \
            or not isinstance(upper.operator, cst.Minus) \
            or not isinstance(upper.expression, cst.Integer):
        return None
    return int(upper.expression.value)


def why_dynamic(reader: Reader, node: cst.BaseExpression, position: flow.Position) -> str:
    """Why a message expression was not read as text, in one line."""
    source = " ".join(reader.source_at(node, position).split())
    if isinstance(node, cst.Name):
        if reader.assigned is not None and node.value not in reader.assigned \
                and not (position and binds_in_test(node.value, position)):
            return f"`{source}` is not built in this function (a parameter or a global)"
        if position and flow.definitions(node.value, position) is None:
            return (f"`{source}` is built in a way not followed (a loop that assigns it anew "
                    "or may `break`, a list passed to a call, a `try` body, `match`)")
        return f"`{source}` holds no text read off the source"
    if isinstance(node, cst.Call) and reader.unread:
        return f"`{source}`: {reader.unread}"
    if isinstance(node, cst.Call) and not _builtin_value(node):
        return f"`{source}` is a call whose text is not read off the source"
    return f"the message is the str() of a value (`{source}`), not text"


_VALUE_BUILTINS = frozenset({"type", "len", "id", "int", "float", "tuple", "list", "dict"})


def _builtin_value(node: cst.Call) -> bool:
    """`type(x)`, `len(x)`: a builtin that gives a value, never text."""
    return isinstance(node.func, cst.Name) and node.func.value in _VALUE_BUILTINS


_MARK = 0xE000  # placeholders stand in as private characters while the format string is parsed


def formatted(reader: Reader, text: cst.BaseExpression, call: cst.Call,
              position: flow.Position) -> list[Alternative]:
    """`text.format(...)`, one alternative per way `text` reads. Text that already holds
    placeholders (an f-string's values, `msg += f"..."`) is formatted around them: a value an
    f-string put in is taken to hold no braces, as an f-string's own placeholder is taken to
    hold any text; a field that would take its name or spec from such a value is not read."""
    written = _written_strings(text, position)
    alternatives = []
    for _, pieces in reader.read(text, position):
        if any(piece.group for piece in pieces) or not written and any(
                piece.is_placeholder for piece in pieces):
            raise Unreadable  # a loop's fields numbered per pass; text of unknown braces
        alternatives.append(("format", format_pieces(reader, pieces, call)))
    return alternatives


_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _written_strings(text: cst.BaseExpression, position: flow.Position) -> bool:
    """Whether the text is string literals and f-strings alone, written in place or added to a
    local (`msg = "..."; msg += f"..."`): then its placeholders are an f-string's values."""
    if isinstance(text, _STRINGS):
        return True
    if not isinstance(text, cst.Name) or not position:
        return False
    found = flow.definitions(text.value, position)
    return found is not None and bool(found) and all(isinstance(value, _STRINGS) and where
                               for definition in found for value, where in definition)


def format_pieces(reader: Reader, pieces: list[Piece], call: cst.Call) -> list[Piece]:
    """The pieces `str.format` prints, each field filled with the call's argument for it."""
    marks = {chr(_MARK + i): p for i, p in enumerate(pieces) if p.is_placeholder}
    if len(marks) > 0x1000 or any(0xE000 <= ord(c) < 0xF000 for p in pieces
                                  if not p.is_placeholder for c in p.text):
        raise Unreadable
    joined = "".join(chr(_MARK + i) if p.is_placeholder else p.text
                     for i, p in enumerate(pieces))
    arguments = _FormatArguments(call)
    try:
        parsed = list(string.Formatter().parse(joined))
    except ValueError as error:
        raise Unreadable(f"the format string does not parse ({error})") from error
    result: list[Piece] = []
    auto = 0
    for literal, field, spec, conversion in parsed:
        result.extend(marks[c] if c in marks else Piece(c) for c in literal)
        if field is None:
            continue
        if any(c in marks for c in field + (spec or "")):
            raise Unreadable  # a field named or specified by a value
        auto, filled = _fill(reader, arguments, field, spec, conversion, auto)
        result.extend(filled)
    return merge_text(result)


class _FormatArguments:
    """What a `.format(...)` call passes: positional values, keywords, and whether it unpacks."""

    def __init__(self, call: cst.Call) -> None:
        self.positional: list[cst.BaseExpression] = []
        self.keywords: dict[str, cst.BaseExpression] = {}
        self.star_mapping = self.star_args = False
        for arg in call.args:
            if arg.star == "**":
                self.star_mapping = True
            elif arg.star == "*":
                self.star_args = True
            elif arg.keyword is not None:
                self.keywords[arg.keyword.value] = arg.value
            elif not self.star_args:
                self.positional.append(arg.value)


def _fill(reader: Reader, arguments: _FormatArguments, field: str, spec: str | None,
          conversion: str | None, auto: int) -> tuple[int, list[Piece]]:
    """One replacement field's pieces, and the next automatic field number."""
    head_match = re.match(r"[^.\[]*", field)
    assert head_match is not None
    head, rest = head_match.group(0), field[head_match.end():]
    if head == "":
        head, auto = str(auto), auto + 1
    value: cst.BaseExpression | None = None
    if head.isdigit():
        if int(head) < len(arguments.positional):
            value = arguments.positional[int(head)]
        elif not arguments.star_args:
            # `str.format` raises IndexError: this raise never prints its message
            raise Unreadable("the format string has more fields than the call passes values")
    elif head in arguments.keywords:
        value = arguments.keywords[head]
    elif not arguments.star_mapping:
        raise Unreadable("a field of the format string names no argument of the call (KeyError)")
    auto += sum(1 for _, f, _, _ in string.Formatter().parse(spec or "") if f == "")
    plain = not spec and conversion in (None, "s")
    if value is None:
        return auto, [Piece(head + rest, True, plain)]
    if not rest and plain:
        return auto, reader._text_value(value)
    return auto, [Piece(reader.source(value) + rest, True, plain)]


# Paths one text may take through `if`s that each add a piece: past MAX_ALTERNATIVES, the
# pieces only some paths add are read as optional (`merged_paths`), up to this many paths.
MAX_PATHS = 64


def merged_paths(reader: Reader, found: list[flow.Definition]) -> list[Alternative]:
    """Too many paths to read one alternative each (`if c: msg += piece`, over and over): one
    reading where each part that every path adds is required, and each part only some paths
    add is optional: a group repeated any number of times, as a loop's pass (the regex allows
    what no path prints, never refuses what one does). Every path starts from the same
    assignment; the parts keep their order in the code."""
    first = found[0][0][0]
    if any(path[0][0] is not first for path in found):
        raise Unreadable  # assigned anew on some path: alternatives, not pieces added
    order = _part_order(found)
    everywhere = set.intersection(*({id(value) for value, _ in path} for path in found))
    readings: list[list[Alternative]] = []
    for value, where in order:
        reading = part_reading(reader, value, where)
        if id(value) in everywhere:
            readings.append(reading)
            continue
        passes = [pieces for _, pieces in reading]
        if any(piece.group for pieces in passes for piece in pieces):
            raise Unreadable  # a loop's group made optional: a group in a group
        readings.append([("variable", repeated(passes))])
    alternatives: list[Alternative] = []
    for combination in _products(readings):
        kinds = {kind for kind, _ in combination}
        kind = "dynamic" if kinds == {"dynamic"} else "variable"
        alternatives.append((kind, merge_text([p for _, part in combination for p in part])))
    if all(kind == "dynamic" for kind, _ in alternatives):
        raise Unreadable
    return alternatives


def _part_order(found: list[flow.Definition]) -> list[flow.Part]:
    """Every part of the paths once, each after the parts any path adds before it."""
    parts: dict[int, flow.Part] = {}
    after: dict[int, set[int]] = {}
    for path in found:
        for index, part in enumerate(path):
            key = id(part[0])
            parts.setdefault(key, part)
            after.setdefault(key, set())
            if index:
                after[key].add(id(path[index - 1][0]))
    order: list[flow.Part] = []
    placed: set[int] = set()
    while len(order) < len(parts):
        ready = [key for key in parts if key not in placed and after[key] <= placed]
        if not ready:
            raise Unreadable  # the paths add the same parts in different orders
        placed.add(ready[0])
        order.append(parts[ready[0]])
    return order
