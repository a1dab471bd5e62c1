"""Regexes written by others, run with a bound: a record's `message.regex`, a test's `match=`.

Python's `re` backtracks: `^(?P<a>[\\s\\S]*?) (?P<b>[\\s\\S]*?) ... !$` with eight groups takes
over a second on one 65-character message, and `(a|aa)+$` doubles with each character. Nothing
here runs a pattern that way:

- The shape `crawler.parse.message.templates` writes (literal text, `(?P<name>[\\s\\S]*?)` or
  `([\\s\\S]*?)` groups, anchored by `^` and `$`) is matched as literal runs found in order with
  `str.find`: linear, no backtracking, and the same groups `re.fullmatch` gives (each lazy group
  is as short as the rest allows, which is the first place its next run occurs).
- A pattern whose shape bounds `re`'s backtracking (repeats, none nested, each of a body that
  consumes text one way only, and no repeated alternation: `_Cost`) runs in `re` itself when
  that bound, for this text, is under FAST_STEPS: most tests' `match=` patterns, at `re`'s speed.
- Any other pattern runs in the `regex` module (`re`'s syntax, version 0) with a timeout; its
  few constructs that `re` reads otherwise (`{e<=1}` fuzzy matching, `[[:alpha:]]` classes) are
  escaped first, so both read the same pattern. A timeout raises `RegexTimeout`, never blocks.
  (The timeout costs about 15 microseconds a call, ten times a small `re` search: hence the
  paths above.) A timeout depends on the machine's load, so only what is never written may use
  it (a lookup's answer); what decides output runs under a `StepBudget`: counted in `re` steps
  as the pattern's shape bounds them, the same on any machine (`OverBound` when it would pass).

What `re` refuses to compile is refused here too.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded by the first pattern that needs it: a lookup seldom does
    import regex

try:  # the regex parser behind `re`; `sre_parse` before Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

PER_CALL_SECONDS = 0.05  # one match of one backtracking pattern
FAST_STEPS = 2_000_000  # a bound on `re`'s steps under which it runs itself (a few ms)
_GROUP = re.compile(r"\((?:\?P<([^>]*)>)?\[\\s\\S\]\*\?\)")  # a placeholder group
_SPECIAL = frozenset("\\.^$*+?()[]{}|")
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")  # what `re` reads as a repeat after `{`


_STEP = frozenset({_sre.LITERAL, _sre.NOT_LITERAL, _sre.IN, _sre.ANY, _sre.AT, _sre.CATEGORY})
_REPEATS = frozenset({_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)})


class RegexTimeout(Exception):
    """A pattern ran past its time bound: its answer is unknown, not "no match"."""


class OverBound(Exception):
    """A pattern not run: its shape bounds no number of steps (nested repeats, a repeated
    alternation, a back reference), or its bound on this text passed the steps left. Its answer
    is unknown, not "no match"; the same pattern and texts give it on any machine."""


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
    """One pattern, compiled once; `compile` gives None for a pattern `re` refuses.

    Three ways to run it, the first that applies: the linear path for the generated shape;
    `re` itself where the pattern's shape bounds its steps on this text (`_Cost`); else the
    `regex` module with a timeout.
    """

    def __init__(self, pattern: str, shape: _Runs | None, compiled: re.Pattern[str] | None,
                 cost: _Cost | None) -> None:
        self.pattern = pattern
        self.shape = shape
        self._re = compiled
        self._cost = cost
        # the longest texts `re` may run on by itself: its steps proved under FAST_STEPS
        self._full_upto = cost.longest(len(pattern), search=False) if cost else -1
        self._search_upto = cost.longest(len(pattern), search=True) if cost else -1
        self._slow: regex.Pattern[str] | None = None

    @classmethod
    def compile(cls, pattern: str) -> BoundedRegex | None:
        shape = literal_shape(pattern)  # `re` takes every pattern of this shape
        if shape is not None:
            return cls(pattern, shape, None, None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = re.compile(pattern)  # what `re` refuses is refused: the two never differ
                cost = _Cost.of(_sre.parse(pattern))
        except (re.error, RecursionError, OverflowError, ValueError):
            return None
        return cls(pattern, None, compiled, cost)

    @property
    def linear(self) -> bool:
        """True when matching takes time linear in the text, whatever the text."""
        return self.shape is not None

    def fullmatch(self, text: str, timeout: float = PER_CALL_SECONDS) -> Found | None:
        """What `re.fullmatch(pattern, text)` finds; `RegexTimeout` past `timeout` seconds."""
        if self.shape is not None:
            return self.shape.fullmatch(text)
        if self._re is not None and len(text) <= self._full_upto:
            return _found(self._re.fullmatch(text))
        return _found(self._run("fullmatch", text, timeout))

    def search(self, text: str, timeout: float = PER_CALL_SECONDS) -> bool:
        """Whether `re.search(pattern, text)` finds anything; `RegexTimeout` past `timeout`."""
        if self.shape is not None:  # `^` and `$` anchor it: `$` also before a final newline
            return self.shape.fullmatch(text) is not None or (
                text.endswith("\n") and self.shape.fullmatch(text[:-1]) is not None)
        if self._re is not None and len(text) <= self._search_upto:
            return self._re.search(text) is not None
        return self._run("search", text, timeout) is not None

    def search_steps(self, text: str) -> int | None:
        """A bound on the steps a search of `text` takes, read off the pattern's shape and the
        text's length alone (never measured); None where the shape bounds nothing."""
        if self.shape is not None:
            return len(text) + 1  # linear: the runs found in order
        if self._cost is None:
            return None
        return self._cost.steps(len(text), len(self.pattern), search=True)

    def search_within_bound(self, text: str) -> bool:
        """What `re.search(pattern, text)` finds, with no time bound: only for a caller that has
        bounded the steps (`search_steps`, `StepBudget`)."""
        if self._re is None:
            return self.search(text)  # the linear shape
        return self._re.search(text) is not None

    def _run(self, how: str, text: str, timeout: float) -> re.Match[str] | regex.Match[str] | None:
        if timeout <= 0:
            raise RegexTimeout(self.pattern)
        if self._slow is None:
            import regex

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._slow = regex.compile(as_re_reads(self.pattern), flags=regex.VERSION0)
        try:
            return getattr(self._slow, how)(text, timeout=timeout)  # type: ignore[no-any-return]
        except TimeoutError:
            raise RegexTimeout(self.pattern) from None


@dataclass(frozen=True)
class _Cost:
    """What bounds `re`'s backtracking on a pattern: its choices. A repeat of a body that
    consumes text one way only (no repeat or alternation inside) chooses among at most n + 1
    counts; alternatives multiply the paths. With r such repeats one attempt takes at most
    (n + 1) ** r * paths paths of at most n + m steps each: polynomial in n, whatever r."""

    repeats: int
    paths: int

    @classmethod
    def of(cls, items: Iterable[tuple[Any, Any]]) -> _Cost | None:
        """The cost of a parsed pattern; None when its shape bounds nothing (back references,
        nested repeats, a repeated alternation: exponential in the text's length)."""
        repeats, paths = 0, 1
        for op, arg in items:
            if op in _STEP:
                continue
            if op is _sre.SUBPATTERN:
                inner = cls.of(arg[-1])
            elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
                inner = cls.of(arg[1])
            elif op is _sre.BRANCH:
                branches = [cls.of(branch) for branch in arg[1]]
                if any(b is None for b in branches):
                    return None
                inner = cls(max(b.repeats for b in branches if b is not None),
                            sum(b.paths for b in branches if b is not None))
            elif op in _REPEATS:
                low, high, body = arg
                if cls.of(body) != cls(0, 1):
                    return None
                inner = cls(0, 1) if low == high else cls(1, 1)
            else:
                return None
            if inner is None:
                return None
            repeats, paths = repeats + inner.repeats, paths * inner.paths
        return cls(repeats, paths)

    def steps(self, n: int, m: int, search: bool) -> int:
        """A bound on `re`'s steps on a text of n characters, for a pattern of m."""
        starts = n + 1 if search else 1
        return starts * (n + 1) ** self.repeats * self.paths * (n + m + 1)

    def longest(self, m: int, search: bool) -> int:
        """The longest text whose bound is under FAST_STEPS (-1: none)."""
        low, high = -1, FAST_STEPS
        while low < high:
            middle = (low + high + 1) // 2
            if self.steps(middle, m, search) <= FAST_STEPS:
                low = middle
            else:
                high = middle - 1
        return low


def _found(match: re.Match[str] | regex.Match[str] | None) -> Found | None:
    if match is None:
        return None
    spans = tuple(match.span(i) for i in range(1, (match.re.groups or 0) + 1))
    captures = {k: v for k, v in match.groupdict().items() if v is not None}
    return Found(spans, captures)


class StepBudget:
    """What one pattern may spend over many texts, in steps: each search is charged its shape's
    bound on that text (`BoundedRegex.search_steps`) before it runs, and refused (`OverBound`)
    when the bound passes what is left. Counted, never timed: whether a pattern is cut depends
    on the pattern and the texts only, never on the machine or its load."""

    def __init__(self, steps: int) -> None:
        self.left = steps

    def search(self, pattern: BoundedRegex, text: str) -> bool:
        bound = pattern.search_steps(text)
        if bound is None or bound > self.left:
            raise OverBound(pattern.pattern)
        self.left -= bound
        return pattern.search_within_bound(text)


class Budget:
    """A time bound shared by many matches (one lookup): each call gets what is left, at most
    PER_CALL_SECONDS, and the patterns that ran out are counted. Only for answers never written
    to disk: a timeout depends on the machine's load (output uses `StepBudget`)."""

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
