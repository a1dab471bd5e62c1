"""Regexes written by others, run with a bound: a record's `message.regex`, a test's `match=`.

Python's `re` backtracks: `^(?P<a>[\\s\\S]*?) (?P<b>[\\s\\S]*?) ... !$` with eight groups takes
over a second on one 65-character message, and `(a|aa)+$` doubles with each character. Nothing
here runs a pattern that way:

- The shape `crawler.parse.messages` writes (literal text, `(?P<name>[\\s\\S]*?)` or
  `([\\s\\S]*?)` groups, anchored by `^` and `$`) is matched as literal runs found in order with
  `str.find`: linear, no backtracking, and the same groups `re.fullmatch` gives (each lazy group
  is as short as the rest allows, which is the first place its next run occurs).
- Any other pattern runs in the `regex` module (`re`'s syntax, version 0) with a timeout; its
  few constructs that `re` reads otherwise (`{e<=1}` fuzzy matching, `[[:alpha:]]` classes) are
  escaped first, so both read the same pattern. A timeout raises `RegexTimeout`, never blocks.

What `re` refuses to compile is refused here too.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import regex

PER_CALL_SECONDS = 0.05  # one match of one backtracking pattern
_GROUP = re.compile(r"\((?:\?P<([^>]*)>)?\[\\s\\S\]\*\?\)")  # a placeholder group
_SPECIAL = frozenset("\\.^$*+?()[]{}|")
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")  # what `re` reads as a repeat after `{`


class RegexTimeout(Exception):
    """A pattern ran past its time bound: its answer is unknown, not "no match"."""


@dataclass(frozen=True)
class Found:
    """A match: each group's span (-1, -1 when it took no part) and the named groups' text."""

    spans: tuple[tuple[int, int], ...]
    captures: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Runs:
    """The generated shape: literal runs with one lazy any-text group between each two."""

    runs: tuple[str, ...]  # len(groups) + 1 of them
    groups: tuple[str | None, ...]  # each group's name, None when unnamed

    def fullmatch(self, text: str) -> Found | None:
        first, last = self.runs[0], self.runs[-1]
        if not self.groups:
            return Found(()) if text == first else None
        end = len(text) - len(last)
        if end < len(first) or not text.startswith(first) or not text.endswith(last):
            return None
        spans = []
        start = len(first)
        for run in self.runs[1:-1]:
            at = text.find(run, start, end)
            if at < 0:
                return None
            spans.append((start, at))
            start = at + len(run)
        spans.append((start, end))
        captures = {name: text[a:b] for name, (a, b) in zip(self.groups, spans) if name}
        return Found(tuple(spans), captures)


def literal_shape(pattern: str) -> _Runs | None:
    """The runs and groups of a pattern of the generated shape; None for any other pattern."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        return None
    body, index = pattern[1:-1], 0
    runs: list[str] = []
    groups: list[str | None] = []
    run: list[str] = []
    while index < len(body):
        char = body[index]
        if char == "\\":
            if index + 1 >= len(body) or (body[index + 1].isascii() and body[index + 1].isalnum()):
                return None  # a class, a back reference or an escape like \n: not literal text
            run.append(body[index + 1])
            index += 2
        elif char == "(":
            group = _GROUP.match(body, index)
            if group is None:
                return None
            name = group.group(1)
            if name is not None and (not name.isidentifier() or name in groups):
                return None
            runs.append("".join(run))
            groups.append(name)
            run = []
            index = group.end()
        elif char in _SPECIAL:
            return None
        else:
            run.append(char)
            index += 1
    runs.append("".join(run))
    return _Runs(tuple(runs), tuple(groups))


def as_re_reads(pattern: str) -> str:
    """The pattern with what `regex` reads otherwise than `re` escaped: a `{` that is no repeat
    (`regex` reads `{e<=1}` as fuzzy matching), and a `[` inside a set (a POSIX class there)."""
    out: list[str] = []
    index, in_set, set_start = 0, False, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index:index + 2])
            index += 2
            set_start = False
            continue
        if in_set:
            if char == "[":
                char = "\\["
            elif char == "]" and not set_start:
                in_set = False
            set_start = False
        elif char == "[":
            in_set, set_start = True, True
            if pattern.startswith("^", index + 1):
                out.append("[^")
                index += 2
                continue
        elif char == "{" and (_QUANTIFIER.match(pattern, index) is None
                              or pattern.startswith("{}", index)):
            char = "\\{"
        out.append(char)
        index += 1
    return "".join(out)


class BoundedRegex:
    """One pattern, compiled once: the linear path for the generated shape, else `regex` with a
    timeout. `compile` gives None for a pattern `re` refuses."""

    def __init__(self, pattern: str, shape: _Runs | None, slow: regex.Pattern[str] | None) -> None:
        self.pattern = pattern
        self.shape = shape
        self._slow = slow

    @classmethod
    def compile(cls, pattern: str) -> BoundedRegex | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                re.compile(pattern)  # what `re` refuses is refused: the two never disagree on it
        except (re.error, RecursionError, OverflowError, ValueError):
            return None
        shape = literal_shape(pattern)
        if shape is not None:
            return cls(pattern, shape, None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                slow = regex.compile(as_re_reads(pattern), flags=regex.VERSION0)
        except (regex.error, RecursionError, OverflowError, ValueError):
            return None  # pragma: no cover - `re` took it, so `regex` does
        return cls(pattern, None, slow)

    @property
    def linear(self) -> bool:
        """True when matching takes time linear in the text, whatever the text."""
        return self.shape is not None

    def fullmatch(self, text: str, timeout: float = PER_CALL_SECONDS) -> Found | None:
        """What `re.fullmatch(pattern, text)` finds; `RegexTimeout` past `timeout` seconds."""
        if self.shape is not None:
            return self.shape.fullmatch(text)
        return _found(self._run("fullmatch", text, timeout))

    def search(self, text: str, timeout: float = PER_CALL_SECONDS) -> bool:
        """Whether `re.search(pattern, text)` finds anything; `RegexTimeout` past `timeout`."""
        if self.shape is not None:  # `^` and `$` anchor it: `$` also before a final newline
            return self.shape.fullmatch(text) is not None or (
                text.endswith("\n") and self.shape.fullmatch(text[:-1]) is not None)
        return self._run("search", text, timeout) is not None

    def _run(self, how: str, text: str, timeout: float) -> regex.Match[str] | None:
        assert self._slow is not None
        if timeout <= 0:
            raise RegexTimeout(self.pattern)
        try:
            return getattr(self._slow, how)(text, timeout=timeout)  # type: ignore[no-any-return]
        except TimeoutError:
            raise RegexTimeout(self.pattern) from None


def _found(match: regex.Match[str] | None) -> Found | None:
    if match is None:
        return None
    spans = tuple(match.span(i) for i in range(1, (match.re.groups or 0) + 1))
    captures = {k: v for k, v in match.groupdict().items() if v is not None}
    return Found(spans, captures)


class Budget:
    """A time bound shared by many matches (one lookup, one test pattern): each call gets what
    is left, at most PER_CALL_SECONDS, and the patterns that ran out are counted."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.timed_out: list[str] = []

    def left(self) -> float:
        return min(PER_CALL_SECONDS, self.deadline - time.monotonic())

    def fullmatch(self, pattern: BoundedRegex, text: str) -> Found | None:
        """The match, or None when there is none or the bound ran out (then it is counted)."""
        try:
            return pattern.fullmatch(text, self.left())  # a linear one needs no bound
        except RegexTimeout:
            self.timed_out.append(pattern.pattern)
            return None
