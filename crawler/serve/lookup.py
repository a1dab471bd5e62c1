"""A runtime message back to its records: which templates' regexes match what a user saw.

`LookupIndex` notes each record's longest literal run; a query only compiles (once, cached) and
runs the regexes whose literal run is in the message, so it costs a substring test per record
and a handful of regex matches. Matches come best first: the most literal characters
matched (the message less what the placeholders captured). When none matches, the templates
sharing the most words with the message, by similarity, come back marked `exact=False`.

Every regex is bounded (`crawler.regexes`): the crawler's own shape is matched in linear time,
and the regexes a person edited share LOOKUP_SECONDS per query; one that runs out is counted
in the answer (`Answer.timed_out`), never waited for. A broken record file costs itself only:
`load_records` names it and serves the others.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from crawler.records import REMOVED, ErrorRecord
from crawler.regexes import BoundedRegex, Budget, RegexTimeout
from crawler.serve.old_wordings import OldWordings, PastWording
from crawler.serve.review import load_output_folders

# `ValueError: text`, `pkg.errors.BadThing: text`: a traceback's last line.
_TRACEBACK_LINE = re.compile(r"(?P<exception>[A-Za-z_][\w.]*): (?P<message>.*)\Z", re.DOTALL)
_WORD = re.compile(r"\w+")
_PLACEHOLDER = re.compile(r"(?<!\{)\{(?!\{)[^{}]*\}")
CLOSEST_CANDIDATES = 50
# Characters of a message and a template compared for closeness: difflib's cost grows with
# the cube of repetitive text (50 candidates of 200 characters "a a a ...": 0.67 s; of 100: 0.14 s).
CLOSEST_TEXT = 100
LOOKUP_SECONDS = 0.5  # the backtracking regexes of one query, together


@dataclass(frozen=True)
class Match:
    """One record for a message: exact (its regex matched) or only close."""

    record: ErrorRecord
    score: float  # literal characters matched; for a close one, similarity in [0, 1]
    exact: bool
    captures: dict[str, str] = field(default_factory=dict)
    wording: PastWording | None = None  # set when a past wording matched, not today's


@dataclass(frozen=True)
class _Entry:
    record: ErrorRecord
    regex: str
    required: str  # the longest literal run of the regex: in every message it matches
    text: str  # the template's literal text, for closeness


@dataclass(frozen=True)
class Answer:
    """The records for a message, and those whose regex ran out of time (by id)."""

    matches: tuple[Match, ...]
    timed_out: tuple[str, ...] = ()


_COMPILED: dict[str, BoundedRegex | None] = {}


def _compiled(regex: str) -> BoundedRegex | None:
    """Compiled once per process, only when a message gets past the literal prefilter."""
    if regex not in _COMPILED:
        _COMPILED[regex] = BoundedRegex.compile(regex)
    return _COMPILED[regex]


class LookupIndex:
    """Records made ready for many lookups: regexes compiled, literal runs and words indexed."""

    def __init__(self, records: Iterable[ErrorRecord], include_removed: bool = False) -> None:
        records = list(records)
        self.old_wordings = OldWordings(records)  # past releases' wordings, removed records'
        self.entries: list[_Entry] = []
        self._words: dict[str, list[int]] = {}
        for record in records:
            if record.status == REMOVED and not include_removed:
                continue
            message = record.site.message
            runs = literal_runs(message.regex)
            required = max(runs, key=len) if runs else ""
            text = _PLACEHOLDER.sub(" ", message.template).replace("{{", "{").replace("}}", "}")
            self.entries.append(_Entry(record, message.regex, required, text))
            for word in {w.lower() for w in _WORD.findall(text)}:
                self._words.setdefault(word, []).append(len(self.entries) - 1)

    def lookup(self, message: str, limit: int = 10, closest: int = 5) -> list[Match]:
        """Records matching `message` best first; else up to `closest` close ones, marked."""
        return list(self.answer(message, limit, closest).matches)

    def answer(self, message: str, limit: int = 10, closest: int = 5) -> Answer:
        """`lookup`'s matches, with the records whose regex ran out of time."""
        exception, texts = parse_message(message)
        best: dict[int, Match] = {}
        budget = Budget(LOOKUP_SECONDS)
        timed_out: dict[str, None] = {}
        for text in texts:
            for number, entry in enumerate(self.entries):
                if entry.required not in text:
                    continue
                pattern = _compiled(entry.regex)
                try:
                    found = pattern.fullmatch(text, budget.left()) if pattern is not None else None
                except RegexTimeout:
                    timed_out[entry.record.id] = None
                    continue
                if found is None:
                    continue
                score = len(text) - sum(end - start for start, end in found.spans if start >= 0)
                if score > 0 and (number not in best or best[number].score < score):
                    best[number] = Match(entry.record, score, True, dict(found.captures))
        every = [*best.values(), *self._past(texts, budget, {m.record.id for m in best.values()})]
        if every:
            ranked = sorted(every, key=lambda m: _order(m, exception))
            return Answer(tuple(ranked[:limit]), tuple(timed_out))
        return Answer(tuple(self._closest(texts[0][:CLOSEST_TEXT], exception, closest)),
                      tuple(timed_out))

    def _past(self, texts: Sequence[str], budget: Budget, matched: set[str]) -> list[Match]:
        """Records a past wording matches, that today's did not."""
        return [Match(m.record, m.score, True, m.captures, wording=m.wording)
                for m in self.old_wordings.matches(texts, budget) if m.record.id not in matched]

    def _closest(self, text: str, exception: str | None, limit: int) -> list[Match]:
        shared: Counter[int] = Counter()
        for word in {w.lower() for w in _WORD.findall(text)}:
            shared.update(self._words.get(word, ()))
        matches = []
        for number, _ in shared.most_common(CLOSEST_CANDIDATES):
            entry = self.entries[number]
            ratio = difflib.SequenceMatcher(None, entry.text[:CLOSEST_TEXT], text,
                                            autojunk=False).ratio()
            matches.append(Match(entry.record, round(ratio, 3), False))
        matches.sort(key=lambda m: _order(m, exception))
        return matches[:limit]


def lookup(message: str, records: Iterable[ErrorRecord], limit: int = 10) -> list[Match]:
    """The records whose regex matches a runtime message, best first; else the closest, marked."""
    return LookupIndex(records).lookup(message, limit=limit)


def parse_message(message: str) -> tuple[str | None, list[str]]:
    """The exception a traceback line names (if any) and the texts to try, the message first."""
    text = message.strip("\r\n")
    lines = text.splitlines()
    if len(lines) > 1 and lines[0].startswith("Traceback"):
        text = next((line for line in reversed(lines) if _TRACEBACK_LINE.match(line)), lines[-1])
    found = _TRACEBACK_LINE.match(text)
    if found is None:
        bare = text.strip()
        return (bare, [text]) if re.fullmatch(r"[A-Za-z_][\w.]*", bare) else (None, [text])
    return found["exception"], [found["message"], text]


def _order(match: Match, exception: str | None) -> tuple[float, int, int, str, int]:
    site = match.record.site
    same = exception is not None and exception.rpartition(".")[2] in (
        site.exception.rpartition(".")[2], (site.exception_qualname or "").rpartition(".")[2])
    return (-match.score, 0 if same else 1, len(site.message.placeholders), site.path, site.line)


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


def load_records(folder: Path) -> tuple[list[ErrorRecord], list[str]]:
    """Every record under `folder` (a repository folder or the output root), read quickly
    (`record_files.read_record`), and one line for
    each file in an errors/ folder that is not one (broken, renamed, stray): skipped, never
    in the way of the others."""
    records: list[ErrorRecord] = []
    problems: list[str] = []
    for _, loaded in load_output_folders(folder, quick=True):
        records.extend(loaded.records)
        problems.extend(broken.problem for broken in loaded.broken)
    return records, problems


def describe(matches: Sequence[Match]) -> list[dict[str, object]]:
    """Matches as plain data, for `--json`."""
    return [
        {
            "id": m.record.id,
            "exact": m.exact,
            "score": m.score,
            "exception": m.record.site.exception,
            "exception_qualname": m.record.site.exception_qualname,
            "path": m.record.site.path,
            "line": m.record.site.line,
            "qualname": m.record.site.qualname,
            "kind": m.record.site.message.kind,
            "template": m.record.site.message.template,
            "captures": m.captures,
            "url": m.record.url,
            **({"wording": asdict(m.wording)} if m.wording is not None else {}),
        }
        for m in matches
    ]
