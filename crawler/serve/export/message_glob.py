"""A record's regex as a SQLite GLOB pattern, so a plain SQLite client (datasette without
plugins) matches runtime messages as exactly as the regex does.

The regexes the crawler writes are anchored literal text, lazy any-text groups
(`(?P<name>[\\s\\S]*?)`) and, for a `repr` display, a one-character set (`['"]`). Each has an
exact GLOB counterpart: a literal character (GLOB's `*`, `?` and `[` written as `[*]`, `[?]`,
`[[]`), `*`, and `[...]`; GLOB is case-sensitive, its `*` takes newlines and nothing too.
Anything else (a regex written by hand, a class like `\\d`) gets no pattern rather than an
approximate one. The literal runs come back too: the words full-text search indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:  # the regex parser behind `re`; `sre_parse` before Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

_ESCAPED = {"*": "[*]", "?": "[?]", "[": "[[]"}
_ANY_CHAR = [(_sre.CATEGORY, _sre.CATEGORY_SPACE), (_sre.CATEGORY, _sre.CATEGORY_NOT_SPACE)]


@dataclass(frozen=True)
class MessageGlob:
    """A regex's GLOB pattern and the literal runs between its other parts."""

    pattern: str
    runs: tuple[str, ...]


class _NotExact(Exception):
    """A part of the regex that GLOB cannot say exactly."""


def message_glob(regex: str) -> MessageGlob | None:
    """The GLOB pattern that fits exactly the messages `regex` fully matches, or None."""
    try:
        parsed = list(_sre.parse(regex))
    except Exception:  # noqa: BLE001 - whatever `re` refuses has no pattern here either
        return None
    if parsed[:1] != [(_sre.AT, _sre.AT_BEGINNING)] or parsed[-1:] != [(_sre.AT, _sre.AT_END)]:
        return None
    pieces: list[str] = []
    runs: list[str] = [""]
    try:
        for op, arg in parsed[1:-1]:
            _translate(op, arg, pieces, runs)
    except _NotExact:
        return None
    return MessageGlob("".join(pieces), tuple(runs))


def _translate(op: Any, arg: Any, pieces: list[str], runs: list[str]) -> None:
    if op is _sre.LITERAL:
        char = chr(arg)
        pieces.append(_ESCAPED.get(char, char))
        runs[-1] += char
    elif op is _sre.SUBPATTERN:
        for inner_op, inner_arg in arg[-1]:
            _translate(inner_op, inner_arg, pieces, runs)
    elif op in (_sre.MIN_REPEAT, _sre.MAX_REPEAT) and _any_text(arg):
        least = arg[0]
        pieces.append("?" * least + "*")
        runs.append("")
    elif op is _sre.IN:
        pieces.append(_set(arg))
        runs.append("")
    else:
        raise _NotExact


def _any_text(arg: Any) -> bool:
    """A repeat of `[\\s\\S]` with no upper bound: any text."""
    least, most, body = arg
    return most == _sre.MAXREPEAT and least < 8 and list(body) == [(_sre.IN, _ANY_CHAR)]


def _set(items: list[tuple[Any, Any]]) -> str:
    """`['"]` as GLOB's `[...]`: literal characters only, `]` first, `^` not first, `-` last."""
    if not items or any(op is not _sre.LITERAL for op, _ in items):
        raise _NotExact
    chars = sorted({chr(code) for _, code in items},
                   key=lambda c: (c != "]", c == "^", c == "-", c))
    if len(chars) == 1:
        return _ESCAPED.get(chars[0], chars[0])
    return "[" + "".join(chars) + "]"
