"""Text built across statements, read for `reading.Reader`: what a loop adds, lists joined, cuts.

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

import re
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from crawler.parse.message import flow
from crawler.parse.message.flow import binds_in_test
from crawler.parse.message.pieces import (
    MAX_ALTERNATIVES,
    Alternative,
    Piece,
    Unreadable,
    _products,
    merge_text,
    repeated,
    trim_end,
)

if TYPE_CHECKING:
    from crawler.parse.message.reading import Reader


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


def _joined_entries(reader: Reader, separator: str, entries: list[_Entry]) -> list[Alternative]:
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
    if not any(kind != "dynamic" for reading in readings for kind, _ in reading):
        raise Unreadable
    alternatives = []
    for combination in _products(readings):
        kinds = {kind for kind, _ in combination} - {"dynamic", "literal"}
        kind = "literal" if not kinds else (kinds.pop() if len(kinds) == 1 else "concat")
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
    return [(kind, trim_end(pieces, count)) for kind, pieces in reader.read(node.value, position)]


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


# ---------------------------------------------------------------- `.format` of text


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
