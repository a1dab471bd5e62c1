"""How lookup answers a message: what a user pasted, each record's wording tried on it, the order.

A `Wording` is one template of one record with what lookup shows of the record: the same type
whether it was read from record files, from the stored index (`lookup_index`) or from an SQLite
export, so the three rank alike and print the same keys. A `Query` is what the user pasted, read
once (`read_query`): a traceback's last exception, its name, and the texts to try. `rank` asks a
`Source` for its candidates (the wordings whose longest literal run is in a text; when none
matches exactly, those sharing the most words with it) and orders them:

- exact matches first (the record's regex matches the whole text), then, only when there is none,
  the closest templates (marked `exact=False`); `limit` bounds each list;
- one score for both, the share of the message the template's literal text accounts for, in
  [0, 1]: for an exact match the characters its placeholders did not capture, over the message's
  length; for a close one difflib's ratio of the two literal texts;
- a record raising the exception the traceback line names comes before one raising another, at
  any score; then the higher score, a live record before a removed one, fewer placeholders.

A prefix like `ValueError: ` is the exception's name when it is a builtin exception or one a
record raises: then only the text after it is tried (`KeyError: 'k'` is never the template
`{state}: {value}` with `state = 'KeyError'`). Any other `word: text` is tried both ways.

Every regex runs bounded (`crawler.regexes`): the queries' backtracking patterns share
LOOKUP_SECONDS, and one that runs out is counted (`Answer.timed_out`), never waited for.
"""

from __future__ import annotations

import builtins
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from crawler.regexes import BoundedRegex, Budget, RegexTimeout

if TYPE_CHECKING:  # records' 28 dataclasses cost a lookup more than its answer: not loaded
    from crawler.records import ErrorRecord

# `ValueError: text`, `pkg.errors.BadThing: text`: the first line of an exception's report.
_EXCEPTION_LINE = re.compile(r"(?P<exception>[A-Za-z_][\w.]*)(?:: (?P<message>.*))?\Z", re.DOTALL)
_TRACEBACK_HEAD = re.compile(r"^\s*(?:\+ )?(?:Exception Group )?Traceback \(most recent call last\):\s*$")
_WORD = re.compile(r"\w+")
_PLACEHOLDER = re.compile(r"(?<!\{)\{(?!\{)[^{}]*\}")
BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))
CLOSEST_CANDIDATES = 50
# Characters of a message and a template compared for closeness: difflib's cost grows with
# the cube of repetitive text (50 candidates of 200 characters "a a a ...": 0.67 s; of 100: 0.14 s).
CLOSEST_TEXT = 100
LOOKUP_SECONDS = 0.5  # the backtracking regexes of one query, together
REMOVED = "removed"  # `records.REMOVED`


@dataclass(frozen=True)
class Wording:
    """One template of one record, with what lookup shows of the record."""

    record_id: str
    repo: str
    status: str
    removed_in: str | None  # the commit the site left in, while removed
    exception: str  # as written at the raise
    exception_qualname: str | None
    path: str
    line: int
    qualname: str
    kind: str
    template: str
    placeholders: tuple[str, ...]
    regex: str
    url: str | None
    # A wording the record had in past releases (`crawler history`), not the one it has now:
    past: bool = False
    first_release: str | None = None  # the first release that printed it
    last_release: str | None = None  # the last; None: still printed (never for a removed record)
    today: str | None = None  # what a live record's message reads now

    exception_name: str = field(init=False, compare=False)
    required: str = field(init=False, compare=False)
    literal_text: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        # Worked out once: every query tests `required` against each candidate.
        runs = literal_runs(self.regex)
        derived = {
            # the class's own name, which a traceback line shows (`KeyError`, `BadThing`)
            "exception_name": (self.exception_qualname or self.exception).rpartition(".")[2],
            # the longest literal run of the regex: in every message it matches ("" if unknown)
            "required": max(runs, key=len) if runs else "",
            # the template without its placeholders, for closeness
            "literal_text": _PLACEHOLDER.sub(" ", self.template).replace("{{", "{").replace("}}", "}"),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)


def wordings(record: ErrorRecord) -> list[Wording]:
    """The wordings lookup tries for a record: its current template, then each wording it had
    in past releases (`history.templates`, written by `crawler history`), read back into a
    regex of the crawler's own linear shape."""
    from crawler.catalogue.releases import wording_template
    from crawler.serve.old_wordings import past_wordings

    site = record.site
    removed_in = record.history.removed_in if record.history else None
    now = Wording(record.id, record.repo, record.status, removed_in, site.exception,
                  site.exception_qualname, site.path, site.line, site.qualname,
                  site.message.kind, site.message.template, site.message.placeholders,
                  site.message.regex, record.url)
    found = [now]
    for old in past_wordings(record):
        if old.template == site.message.template:  # a removed record's last wording
            found[0] = replace(now, first_release=old.first, last_release=old.last)
            continue
        read = wording_template(old.template)
        if read is None:
            continue  # braces that do not pair: a hand-edited record
        found.append(replace(now, template=old.template, placeholders=read.placeholders,
                             regex=read.regex, past=True, first_release=old.first,
                             last_release=old.last,
                             today=None if old.removed else site.message.template))
    return found


@dataclass(frozen=True)
class Match:
    """One record for a message: exact (its regex matched the whole text) or only close."""

    wording: Wording
    score: float  # the share of the message the template's literal text accounts for, in [0, 1]
    exact: bool
    same_exception: bool  # the record raises what the traceback line names
    captures: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """The records for a message, and those whose regex ran out of time (by id)."""

    matches: tuple[Match, ...]
    timed_out: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        """Some template matches the message exactly."""
        return any(match.exact for match in self.matches)


@dataclass(frozen=True)
class Query:
    """What a user pasted, read: the exception a traceback line names and the texts to try."""

    exception: str | None  # the last part of the name: `BadThing` for `pkg.errors.BadThing`
    texts: tuple[str, ...]  # the message first; the whole line too when the name may be text


class Source(Protocol):
    """Where the wordings come from: record files, the stored index, an SQLite export."""

    def exception_names(self) -> frozenset[str]: ...

    def containing(self, texts: Sequence[str]) -> Iterable[Wording]:
        """Every wording whose required literal run is in one of `texts` (a superset is fine)."""
        ...

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        """The `limit` wordings whose literal text shares the most of `words` (lowercase)."""
        ...


def last_exception(pasted: str) -> str:
    """The report of the last exception in a pasted traceback; any other text as it is."""
    text = pasted.strip("\r\n")
    lines = text.splitlines()
    heads = [number for number, line in enumerate(lines) if _TRACEBACK_HEAD.match(line)]
    if not heads:
        return text
    after = lines[heads[-1] + 1:]
    # Frames are indented (`  File ...`, the source line, `^^^` marks); the report is not.
    report = next((number for number, line in enumerate(after) if line and not line[0].isspace()),
                  None)
    return "\n".join(after[report:]) if report is not None else text


def read_query(pasted: str, known: frozenset[str]) -> Query:
    """The exception and the texts to try for what a user pasted: a message, a line
    `ValueError: message` or a whole traceback (its last exception). `known`: the exception
    names records raise; with the builtin ones, a prefix naming one is never message text."""
    text = last_exception(pasted)
    found = _EXCEPTION_LINE.match(text)
    if found is None:
        return Query(None, (text,))
    name = found["exception"].rpartition(".")[2]
    is_exception = name in known or name in BUILTIN_EXCEPTIONS
    if found["message"] is None:  # a bare name: an exception raised without a message
        return Query(name if is_exception else None, (text,))
    if is_exception:
        return Query(name, (found["message"],))
    return Query(name, (found["message"], text))


def rank(pasted: str, source: Source, limit: int = 10) -> Answer:
    """The records matching what a user pasted, best first, at most `limit`; when none matches,
    the `limit` closest, marked `exact=False`."""
    query = read_query(pasted, source.exception_names())
    best: dict[str, Match] = {}
    timed_out: dict[str, None] = {}
    budget = Budget(LOOKUP_SECONDS)
    for wording in source.containing(query.texts):
        for number, text in enumerate(query.texts):
            try:
                match = _exact(wording, text, query, budget, whole_line=number > 0)
            except RegexTimeout:
                timed_out[wording.record_id] = None
                continue
            if match is not None and _better(match, best.get(wording.record_id)):
                best[wording.record_id] = match
    if best:
        return Answer(tuple(sorted(best.values(), key=order)[:limit]), tuple(timed_out))
    return Answer(tuple(_closest(query, source, limit)), tuple(timed_out))


_COMPILED: dict[str, BoundedRegex | None] = {}


def _compiled(regex: str) -> BoundedRegex | None:
    """Compiled once per process, only when a message gets past the literal prefilter."""
    if regex not in _COMPILED:
        _COMPILED[regex] = BoundedRegex.compile(regex)
    return _COMPILED[regex]


def _exact(wording: Wording, text: str, query: Query, budget: Budget,
           whole_line: bool) -> Match | None:
    """The wording's match on `text`, if its regex takes all of it and some literal text."""
    if wording.required not in text:
        return None
    pattern = _compiled(wording.regex)
    found = pattern.fullmatch(text, budget.left()) if pattern is not None else None
    if found is None:
        return None
    literal = len(text) - sum(end - start for start, end in found.spans if start >= 0)
    if literal <= 0:  # `{message}` fits every text and says nothing
        return None
    # Read as a whole line, the name before `: ` was message text, not the exception raised.
    same = not whole_line and query.exception == wording.exception_name
    return Match(wording, round(literal / len(text), 3), True, same, dict(found.captures))


def _better(match: Match, held: Match | None) -> bool:
    return held is None or order(match) < order(held)


def _closest(query: Query, source: Source, limit: int) -> list[Match]:
    text = query.texts[0][:CLOSEST_TEXT]
    words = frozenset(word.lower() for word in _WORD.findall(text))
    best: dict[str, Match] = {}
    for wording in source.sharing_words(words, CLOSEST_CANDIDATES):
        ratio = difflib.SequenceMatcher(None, wording.literal_text[:CLOSEST_TEXT], text,
                                        autojunk=False).ratio()
        match = Match(wording, round(ratio, 3), False, query.exception == wording.exception_name)
        if _better(match, best.get(wording.record_id)):
            best[wording.record_id] = match
    return sorted(best.values(), key=order)[:limit]


def order(match: Match) -> tuple[bool, bool, float, bool, int, str, str, int]:
    """Exact first; the named exception's records, then the higher score; live before removed."""
    wording = match.wording
    return (not match.exact, not match.same_exception, -match.score, wording.status == REMOVED,
            len(wording.placeholders), wording.repo, wording.path, wording.line)


def shared_words(text: str) -> frozenset[str]:
    """The lowercase words closeness counts in a template's literal text."""
    return frozenset(word.lower() for word in _WORD.findall(text))


def literal_runs(regex: str) -> list[str]:
    """The runs of literal text a crawler regex requires, outside its groups and classes."""
    body = regex[1:] if regex.startswith("^") else regex
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    runs: list[str] = []
    run: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            if body[index + 1].isalnum():
                return []  # a class escape like \d: not our format, no prefilter
            run.append(body[index + 1])
            index += 2
            continue
        if char in "?*+":
            if run:
                run.pop()
            runs.append("".join(run))
            run = []
        elif char in "([":
            runs.append("".join(run))
            run = []
            index = _skip(body, index)
            continue
        elif char in ".|^$)]{}":
            return []
        else:
            run.append(char)
        index += 1
    runs.append("".join(run))
    return [r for r in runs if r]


def _skip(body: str, index: int) -> int:
    """The index after the group or class that opens at `index`."""
    depth = 0
    in_class = False
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if depth == 0 and not in_class:
            return index + 1
        index += 1
    return index
