"""The runs a message is read into (`Piece`), and what is done to lists of them.

A piece is literal text or a placeholder. Pieces a loop adds carry a `group`: the consecutive
pieces of one group are what one pass of the loop may add, any number of times (a regex
`(?:...)*`), and their `choice` tells a pass's alternatives apart (`(?:a|b)*`). The template
shows each alternative once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from crawler.records import TextReading, TextRun

MAX_ALTERNATIVES = 8

_GROUP_IDS = itertools.count(1)  # group ids only need to differ within one message


@dataclass(frozen=True)
class Piece:
    """One run of a message: literal text, or a placeholder named by its expression's source."""

    text: str
    is_placeholder: bool = False
    plain: bool = True  # a placeholder shown as str() of its value: no conversion, no spec
    group: int = 0  # a loop's repeated pieces: their group (0: shown once)
    choice: int = 0  # which alternative of its group's pass


Alternative = tuple[str, list[Piece]]  # (kind, pieces)


class Unreadable(Exception):
    """The expression is not text that can be read off the source."""


def repeated(passes: Sequence[list[Piece]]) -> list[Piece]:
    """The pieces of a loop's passes as one group (each pass's pieces one choice)."""
    if any(piece.group for pieces in passes for piece in pieces):
        raise Unreadable  # a loop in a loop: not followed
    group = next(_GROUP_IDS)
    return [replace(piece, group=group, choice=index)
            for index, pieces in enumerate(passes) for piece in pieces]


def in_group_of(piece: Piece, pieces: list[Piece]) -> list[Piece]:
    """`pieces` standing where `piece` stood: in its group and choice, if it had one."""
    if not piece.group:
        return pieces
    if any(p.group for p in pieces):
        raise Unreadable
    return [replace(p, group=piece.group, choice=piece.choice) for p in pieces]


def grouped(pieces: Sequence[Piece]) -> bool:
    return any(piece.group for piece in pieces)


def trim_end(pieces: list[Piece], count: int) -> list[Piece]:
    """`text[:-count]`: the last `count` characters cut off, when they are literal text the same
    on every path; a trailing loop's pass then starts with them instead of ending with them."""
    if count <= 0 or not pieces:
        raise Unreadable
    last = pieces[-1]
    if not last.group:
        return _cut_literal(pieces, count)
    group = last.group
    start = next(i for i in range(len(pieces)) if pieces[i].group == group)
    before, passes = pieces[:start], _choices(pieces[start:])
    tail = _literal_tail(before, count)
    if any(_literal_tail(p, count) != tail for p in passes):
        raise Unreadable
    rotated = [[Piece(tail), *_cut_literal(p, count)] for p in passes]
    return merge_text([*_cut_literal(before, count), *repeated(rotated)])


def _choices(pieces: list[Piece]) -> list[list[Piece]]:
    found: dict[int, list[Piece]] = {}
    for piece in pieces:
        found.setdefault(piece.choice, []).append(replace(piece, group=0, choice=0))
    return list(found.values())


def _literal_tail(pieces: list[Piece], count: int) -> str:
    if not pieces or pieces[-1].is_placeholder or pieces[-1].group \
            or len(pieces[-1].text) < count:
        raise Unreadable
    return pieces[-1].text[-count:]


def _cut_literal(pieces: list[Piece], count: int) -> list[Piece]:
    _literal_tail(pieces, count)
    return merge_text([*pieces[:-1], Piece(pieces[-1].text[:-count])])


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
    if grouped(pieces):
        raise Unreadable  # what a loop repeats: not known where the function cuts
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
    return merge_text(result)


def merge_text(pieces: list[Piece]) -> list[Piece]:
    """Join adjacent literal runs (of one group and choice) so that equal templates have equal
    pieces."""
    merged: list[Piece] = []
    for piece in pieces:
        if merged and not piece.is_placeholder and not merged[-1].is_placeholder \
                and (piece.group, piece.choice) == (merged[-1].group, merged[-1].choice):
            merged[-1] = replace(piece, text=merged[-1].text + piece.text)
        elif piece.is_placeholder or piece.text:
            merged.append(piece)
    return merged


def reading(alternative: Alternative) -> TextReading:
    """An alternative as other modules read it. Its groups are numbered by their order in it
    (from _GROUP_BASE, past any a process counts to), so one text reads the same every time."""
    kind, pieces = alternative
    groups: dict[int, int] = {}
    for piece in pieces:
        if piece.group:
            groups.setdefault(piece.group, _GROUP_BASE + len(groups))
    return TextReading(kind, tuple(TextRun(p.text, p.is_placeholder, p.plain,
                                           groups.get(p.group, 0), p.choice) for p in pieces))


_GROUP_BASE = 1 << 40


def alternative(text: TextReading) -> Alternative:
    return text.kind, [Piece(run.text, run.placeholder, run.plain, run.group, run.choice)
                       for run in text.runs]
