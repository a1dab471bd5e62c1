"""Message expressions to `Template`s: literal text and placeholders read off the source, exactly.

A placeholder is named by the exact source of its expression (`f'{disallowed}'` gives
`disallowed`), conversions and format specs kept out of the name. Whatever cannot be read as
text is still a template: kind `dynamic`, the expression's source as its only placeholder.

An expression may read as several alternatives (a variable assigned in both branches of an `if`,
`ngettext`, `a if c else b`): each gives its own template, never a single guess. The regex
matches `str(exc)` as Python prints it: the message itself for one argument, its repr for a
`KeyError`, the repr of the args tuple for several arguments, `[Errno n] text` for `OSError`.
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from crawler import flow
from crawler.records import Template

# Keyword arguments that carry the message when there is no positional one.
MESSAGE_KEYWORDS = ("message", "msg", "detail", "reason", "text", "description")

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

# Builtin exceptions whose str() is `[Errno n] strerror` (and `: 'filename'`) for 2 or 3 args.
OSERROR_FAMILY = frozenset(
    f"builtins.{name}" for name in (
        "OSError", "IOError", "EnvironmentError", "BlockingIOError", "ChildProcessError",
        "ConnectionError", "BrokenPipeError", "ConnectionAbortedError", "ConnectionRefusedError",
        "ConnectionResetError", "FileExistsError", "FileNotFoundError", "InterruptedError",
        "IsADirectoryError", "NotADirectoryError", "PermissionError", "ProcessLookupError",
        "TimeoutError",
    )
)

SYNTAX_ERRORS = frozenset({"builtins.SyntaxError", "builtins.IndentationError", "builtins.TabError"})
CODEC_ERRORS = {"builtins.UnicodeDecodeError": 5, "builtins.UnicodeEncodeError": 5,
                "builtins.UnicodeTranslateError": 4}  # their argument counts

MAX_ALTERNATIVES = 8
ANY = "[\\s\\S]*?"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?[hlL]?"
    r"(?P<conversion>[diouxXeEfFgGcrsa%])"
)


@dataclass(frozen=True)
class Piece:
    """One run of a message: literal text, or a placeholder named by its expression's source."""

    text: str
    is_placeholder: bool = False


Alternative = tuple[str, list[Piece]]  # (kind, pieces)


class Unreadable(Exception):
    """The expression is not text that can be read off the source."""


# ---------------------------------------------------------------- a raise's call to templates


def message_argument(call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
    """The argument of an exception call that carries its message (the first), and which one."""
    for index, arg in enumerate(call.args):
        if arg.keyword is None and not arg.star:
            return str(index), arg.value
        if arg.star:
            return f"{arg.star}{index}", arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS:
            return arg.keyword.value, arg.value
    return None


def call_templates(call: cst.Call, module: cst.Module, position: flow.Position = (),
                   exception_qualname: str | None = None,
                   assigned: set[str] | None = None) -> list[Template] | None:
    """The templates of an exception call's message, one per alternative; None without one.

    `assigned` (when known) holds the names the enclosing function assigns: any other name
    cannot be resolved, and is not searched for.
    """
    reader = Reader(module, assigned)
    positional = [arg for arg in call.args if arg.keyword is None]
    if positional and positional[0].star:
        star = positional[0]
        source = star.star + reader.source(star.value)
        return [build_template("dynamic", [Piece(source, True)], argument=f"{star.star}0")]
    plain = [arg.value for arg in positional if not arg.star]
    starred = len(plain) < len(positional)
    if not plain:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS:
                alternatives = reader.message(arg.value, position)
                return [build_template(kind, pieces, argument=arg.keyword.value)
                        for kind, pieces in alternatives]
        return None
    readings = [reader.message(value, position) for value in plain]
    display, chosen = _display(exception_qualname, len(plain), starred)
    if chosen is None:
        chosen = next((i for i, r in enumerate(readings) if r[0][0] != "dynamic"), 0)
    templates = []
    for kind, pieces in readings[chosen]:
        seen: list[str] = []
        pattern = _display_pattern(display, readings, chosen, pieces, kind, seen, starred)
        templates.append(build_template(kind, pieces, argument=str(chosen), display=display,
                                        regex="^" + pattern + "$"))
    return _unique(templates)


def _display(exception_qualname: str | None, count: int, starred: bool) -> tuple[str, int | None]:
    """How str(exc) shows the arguments, and which one is the message (None: first textual)."""
    if starred:
        return ("varargs", 0) if count == 1 else ("args", None)
    if exception_qualname in OSERROR_FAMILY and count in (2, 3):
        return "errno", 1
    if exception_qualname in ("builtins.ExceptionGroup", "builtins.BaseExceptionGroup") \
            and count == 2:
        return "group", 0
    if exception_qualname in SYNTAX_ERRORS and count == 2:
        return "syntax", 0
    if CODEC_ERRORS.get(exception_qualname or "") == count:
        return "codec", count - 1
    if count > 1:
        return "args", None
    return ("repr" if exception_qualname == "builtins.KeyError" else "str"), None


def redisplay(template: Template, display: str) -> Template:
    """The same template shown another way (`str` or `repr`), when its class says so."""
    pieces = pieces_of(template)
    if pieces is None or template.display == display:
        return template
    seen: list[str] = []
    if display == "repr" and template.kind != "dynamic":
        pattern = _repr_pattern(pieces, seen)
    else:
        pattern = _pattern(pieces, seen)
    return replace(template, display=display, regex="^" + pattern + "$")


def pieces_of(template: Template) -> list[Piece] | None:
    """A template's pieces read back from its text and placeholder list; None if they disagree."""
    text = template.template
    pieces: list[Piece] = []
    literal: list[str] = []
    queue = list(template.placeholders)
    index = 0
    while index < len(text):
        pair = text[index:index + 2]
        if pair in ("{{", "}}"):
            literal.append(pair[0])
            index += 2
            continue
        if text[index] == "{":
            if not queue:
                return None
            name = queue.pop(0)
            if text[index + 1:index + 2 + len(name)] != name + "}":
                return None
            pieces.extend([Piece("".join(literal)), Piece(name, True)])
            literal = []
            index += len(name) + 2
            continue
        literal.append(text[index])
        index += 1
    pieces.append(Piece("".join(literal)))
    return _merge_text(pieces) if not queue else None


def _display_pattern(display: str, readings: list[list[Alternative]], chosen: int,
                     pieces: list[Piece], kind: str, seen: list[str], starred: bool = False) -> str:
    textual = kind != "dynamic"
    if display == "str":
        return _pattern(pieces, seen)
    if display == "repr":
        return _repr_pattern(pieces, seen) if textual else _pattern(pieces, seen)
    if display == "errno":
        pattern = f"\\[Errno ({ANY})\\] {_pattern(pieces, seen)}"
        if len(readings) == 3:
            pattern += f": {_other_arg_pattern(readings[2])}"
        return pattern
    if display == "group":
        return f"{_pattern(pieces, seen)} \\(({ANY}) sub-exceptions?\\)"
    if display == "syntax":
        return f"{_pattern(pieces, seen)}(?: \\(({ANY})\\))?"
    if display == "codec":
        return f"({ANY}): {_pattern(pieces, seen)}"
    if display == "varargs":  # E(msg, *args): the message alone, or the args tuple
        shown = _pattern(pieces, seen)
        quoted = _repr_pattern(pieces, seen) if textual else f"({ANY})"
        return f"(?:{shown}|\\({quoted}(?:, ({ANY}))?,?\\))"
    parts = []
    for index, reading in enumerate(readings):
        if index == chosen:
            parts.append(_repr_pattern(pieces, seen) if textual else f"({ANY})")
        else:
            parts.append(_other_arg_pattern(reading))
    tail = f"(?:, ({ANY}))?" if starred else ""
    return "\\(" + ", ".join(parts) + tail + "\\)"


def _other_arg_pattern(reading: list[Alternative]) -> str:
    """An argument that is not the message, as its repr shows: exact when it is a plain literal."""
    if len(reading) == 1 and reading[0][0] == "literal":
        return escape_regex(repr("".join(p.text for p in reading[0][1])))
    return f"({ANY})"


def _unique(templates: list[Template]) -> list[Template]:
    seen: set[str] = set()
    unique = []
    for template in templates:
        if template.template not in seen:
            seen.add(template.template)
            unique.append(template)
    return unique


# ---------------------------------------------------------------- pieces to a template


def build_template(kind: str, pieces: Sequence[Piece], *, argument: str | None = None,
                   defined_at: str | None = None, display: str = "str",
                   regex: str | None = None) -> Template:
    """Join pieces into the template text, its placeholder list and its anchored regex."""
    text: list[str] = []
    placeholders: list[str] = []
    for piece in pieces:
        if piece.is_placeholder:
            text.append("{" + piece.text + "}")
            placeholders.append(piece.text)
        else:
            text.append(piece.text.replace("{", "{{").replace("}", "}}"))
    return Template(
        kind=kind,
        template="".join(text),
        placeholders=tuple(placeholders),
        regex=regex if regex is not None else "^" + _pattern(pieces, []) + "$",
        argument=argument,
        defined_at=defined_at,
        display=display,
    )


_REGEX_SPECIAL = frozenset("\\.^$*+?()[]{}|")


def escape_regex(text: str) -> str:
    """Escape only what is special in a regex, so the pattern stays readable and portable."""
    return "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)


def _pattern(pieces: Sequence[Piece], seen: list[str]) -> str:
    return "".join(_group(p.text, seen) if p.is_placeholder else escape_regex(p.text)
                   for p in pieces)


def _repr_pattern(pieces: Sequence[Piece], seen: list[str]) -> str:
    """The repr of a str built from pieces: exact for pure text, else either quote style."""
    if not any(p.is_placeholder for p in pieces):
        return escape_regex(repr("".join(p.text for p in pieces)))
    body = "".join(_group(p.text, seen) if p.is_placeholder else _repr_body(p.text) for p in pieces)
    return f"['\"]{body}['\"]"


def _repr_body(text: str) -> str:
    """Literal text as it stands inside a str's repr, as a regex; `'` may or may not be escaped."""
    parts = []
    for char in text:
        if char == "'":
            parts.append("\\\\?'")
        elif char == '"':
            parts.append('"')
        else:
            parts.append(escape_regex(repr(char)[1:-1]))
    return "".join(parts)


def _group(name: str, seen: list[str]) -> str:
    """A regex group for a placeholder: named after it when it is a fresh identifier."""
    group = f"(?P<{name}>{ANY})" if _IDENTIFIER.match(name) and name not in seen else f"({ANY})"
    seen.append(name)
    return group


# ---------------------------------------------------------------- expressions to pieces


class Reader:
    """Reads message expressions of one module; names resolve through `flow.definitions`."""

    def __init__(self, module: cst.Module, assigned: set[str] | None = None) -> None:
        self.module = module
        self.assigned = assigned
        self._depth = 0

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def message(self, expression: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """Every alternative of a message; one `dynamic` alternative when it cannot be read."""
        try:
            alternatives = self.read(expression, position)
        except (Unreadable, RecursionError):
            alternatives = []
        if not alternatives or len(alternatives) > MAX_ALTERNATIVES:
            return [("dynamic", [Piece(self.source(expression), True)])]
        return alternatives

    def read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        """The alternatives of an expression that is text in the source, or raise Unreadable."""
        self._depth += 1
        try:
            if self._depth > 40:
                raise Unreadable
            return self._read(node, position)
        finally:
            self._depth -= 1

    def _read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        if isinstance(node, cst.SimpleString):
            return [("literal", [Piece(_string_value(node))])]
        if isinstance(node, cst.ConcatenatedString):
            alternatives = []
            for (lk, left), (rk, right) in _product(self.read(node.left, position),
                                                    self.read(node.right, position)):
                kind = "fstring" if "fstring" in (lk, rk) else lk
                alternatives.append((kind, _merge_text(left + right)))
            return alternatives
        if isinstance(node, cst.FormattedString):
            return [("fstring", _merge_text(self._fstring(node, position)))]
        if isinstance(node, cst.Name):
            return self._variable(node.value, position)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Add):
                return self._concat(node, position)
            if isinstance(node.operator, cst.Modulo):
                return self._percent(node, position)
        if isinstance(node, cst.IfExp):
            return self.read(node.body, position) + self.read(node.orelse, position)
        if isinstance(node, cst.Call):
            return self._call(node, position)
        raise Unreadable

    # ------------------------------------------------ names

    def _variable(self, name: str, position: flow.Position) -> list[Alternative]:
        if not position or (self.assigned is not None and name not in self.assigned):
            raise Unreadable
        found = flow.definitions(name, position)
        if not found:
            raise Unreadable
        alternatives: list[Alternative] = []
        for definition in found:
            readings: list[list[Alternative]] = []
            for expression, where in definition:
                readings.append(self._read_or_placeholder(expression, where))
            for combination in _products(readings):
                pieces = [piece for _, part in combination for piece in part]
                kinds = {kind for kind, _ in combination}
                kind = "dynamic" if kinds == {"dynamic"} else "variable"
                alternatives.append((kind, _merge_text(pieces)))
        if all(kind == "dynamic" for kind, _ in alternatives):
            raise Unreadable
        return alternatives

    def _read_or_placeholder(self, node: cst.BaseExpression, position: flow.Position
                             ) -> list[Alternative]:
        try:
            return self.read(node, position)
        except Unreadable:
            return [("dynamic", [Piece(self.source(node), True)])]

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
            pieces.append(Piece(self.source(inner), is_placeholder=True))
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
                readings.append([("dynamic", [Piece(self.source(shown), True)])])
                continue
            try:
                readings.append(self.read(operand, position))
                textual = True
            except Unreadable:
                readings.append([("dynamic", [Piece(self.source(operand), True)])])
        if not textual:
            raise Unreadable
        return [("concat", _merge_text([p for _, part in combo for p in part]))
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
            alternatives.append(("percent", self._percent_pieces(text, values, positional, mapping)))
        return alternatives

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
                    pieces.append(Piece(key, True))
                continue
            index += (match["width"] == "*") + (match["precision"] == "*")
            if positional is not None:
                if index >= len(positional):
                    raise Unreadable
                pieces.append(self._value_piece(positional[index], match.group(0) == "%s"))
            elif takes == 1:
                pieces.append(self._value_piece(values, match.group(0) == "%s"))
            else:
                pieces.append(Piece(f"{self.source(values)}[{index}]", True))
            index += 1
        if "%" in text[end:]:
            raise Unreadable
        pieces.append(Piece(text[end:]))
        return _merge_text(pieces)

    def _value_piece(self, value: cst.BaseExpression, plain: bool) -> Piece:
        """A formatted value: its text when it is a plain string literal shown as is."""
        if plain and isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
            return Piece(value.evaluated_value)
        return Piece(self.source(value), True)

    # ------------------------------------------------ calls: .format, wrappers, join

    def _call(self, node: cst.Call, position: flow.Position) -> list[Alternative]:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else (
            func.attr.value if isinstance(func, cst.Attribute) else None)
        args = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and name == "format":
            return [("format", self._format(text, node))
                    for text in self._plain_texts(func.value, position)]
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
        raise Unreadable

    def _plain_texts(self, node: cst.BaseExpression, position: flow.Position) -> list[str]:
        """Every alternative of an expression that is literal text only (a format string)."""
        texts = []
        for _, pieces in self.read(node, position):
            if any(p.is_placeholder for p in pieces):
                raise Unreadable
            texts.append("".join(p.text for p in pieces))
        return texts

    def _format(self, text: str, call: cst.Call) -> list[Piece]:
        positional: list[cst.BaseExpression] = []
        keywords: dict[str, cst.BaseExpression] = {}
        star_mapping = star_args = False
        for arg in call.args:
            if arg.star == "**":
                star_mapping = True
            elif arg.star == "*":
                star_args = True
            elif arg.keyword is not None:
                keywords[arg.keyword.value] = arg.value
            elif not star_args:
                positional.append(arg.value)
        pieces: list[Piece] = []
        auto = 0
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as error:
            raise Unreadable from error
        for literal, field, spec, conversion in parsed:
            pieces.append(Piece(literal))
            if field is None:
                continue
            head_match = re.match(r"[^.\[]*", field)
            assert head_match is not None
            head, rest = head_match.group(0), field[head_match.end():]
            if head == "":
                head, auto = str(auto), auto + 1
            value: cst.BaseExpression | None = None
            if head.isdigit():
                if int(head) < len(positional):
                    value = positional[int(head)]
                elif not star_args:
                    raise Unreadable
            elif head in keywords:
                value = keywords[head]
            elif not star_mapping:
                raise Unreadable
            auto += sum(1 for _, f, _, _ in string.Formatter().parse(spec or "") if f == "")
            if value is None:
                pieces.append(Piece(head + rest, True))
            elif not rest and not spec and conversion in (None, "s"):
                pieces.append(self._value_piece(value, True))
            else:
                pieces.append(Piece(self.source(value) + rest, True))
        return _merge_text(pieces)

    def _join(self, separator: cst.BaseExpression, items: cst.BaseExpression,
              position: flow.Position) -> list[Alternative]:
        if not isinstance(items, (cst.List, cst.Tuple)):
            raise Unreadable
        (sep,) = self._plain_texts(separator, position) or [""]
        readings = []
        for element in items.elements:
            if isinstance(element, cst.StarredElement):
                raise Unreadable
            readings.append(self._read_or_placeholder(element.value, position))
        if all(r[0][0] == "dynamic" for r in readings):
            raise Unreadable
        alternatives = []
        for combo in _products(readings):
            pieces: list[Piece] = []
            for index, (_, part) in enumerate(combo):
                if index:
                    pieces.append(Piece(sep))
                pieces.extend(part)
            kinds = {k for k, _ in combo} - {"dynamic"}
            alternatives.append((kinds.pop() if len(kinds) == 1 else "concat", _merge_text(pieces)))
        return alternatives


# ---------------------------------------------------------------- helpers


def _str_or_repr_argument(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`str(x)` or `repr(x)`: the placeholder is named by `x`."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            and node.func.value in ("str", "repr") and len(node.args) == 1
            and node.args[0].keyword is None and not node.args[0].star):
        return node.args[0].value
    return None


def _product(left: list[Alternative], right: list[Alternative]
             ) -> list[tuple[Alternative, Alternative]]:
    pairs = [(a, b) for a in left for b in right]
    if len(pairs) > MAX_ALTERNATIVES:
        raise Unreadable
    return pairs


def _products(readings: list[list[Alternative]]) -> list[list[Alternative]]:
    combos: list[list[Alternative]] = [[]]
    for reading in readings:
        combos = [combo + [alt] for combo in combos for alt in reading]
        if len(combos) > MAX_ALTERNATIVES:
            raise Unreadable
    return combos


def _transform(pieces: list[Piece], function: Callable[[str], str]) -> list[Piece]:
    """Apply a text function (dedent, strip) with placeholders standing in as private characters."""
    marks = {chr(0xE000 + i): p for i, p in enumerate(pieces) if p.is_placeholder}
    if len(marks) > 0x1000:
        raise Unreadable
    joined = "".join(
        chr(0xE000 + i) if p.is_placeholder else p.text for i, p in enumerate(pieces))
    if any(p.text and any(0xE000 <= ord(c) < 0xF000 for c in p.text)
           for p in pieces if not p.is_placeholder):
        raise Unreadable
    result: list[Piece] = []
    for char in function(joined):
        result.append(marks[char] if char in marks else Piece(char))
    return _merge_text(result)


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


def _merge_text(pieces: list[Piece]) -> list[Piece]:
    """Join adjacent literal runs so that equal templates have equal pieces."""
    merged: list[Piece] = []
    for piece in pieces:
        if merged and not piece.is_placeholder and not merged[-1].is_placeholder:
            merged[-1] = Piece(merged[-1].text + piece.text)
        elif piece.is_placeholder or piece.text:
            merged.append(piece)
    return merged
