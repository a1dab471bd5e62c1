"""Lookup by the wordings records had in past releases (`history.templates`, `crawler history`).

A user pastes what their installed version printed, often several releases old. Each past
wording of a record becomes a candidate: its template read back into a regex of the crawler's
own shape (literal text exact, each placeholder any text), so it runs in linear time. A live
record's current wording is lookup's own business and is left out here; a removed record is
found by every wording it had, its last one included, and marked with the release it was last in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from crawler.records import REMOVED, ErrorRecord, TemplateSpan
from crawler.regexes import BoundedRegex, Budget

_SPECIAL = frozenset("\\.^$*+?()[]{}|")
_ANY = "([\\s\\S]*?)"


@dataclass(frozen=True)
class PastWording:
    """A wording a record had, and the releases that printed it."""

    template: str
    first: str | None  # the first release that printed it
    last: str | None  # the last one; None: the site still has it (a removed one: never)
    removed: bool  # the record is removed: `last` is the last release it was in


@dataclass(frozen=True)
class WordingMatch:
    """A message that a past wording of a record matches: literal characters matched, captures."""

    record: ErrorRecord
    wording: PastWording
    score: float
    captures: dict[str, str]


@dataclass(frozen=True)
class _Candidate:
    record: ErrorRecord
    wording: PastWording
    pattern: BoundedRegex
    names: tuple[str, ...]  # the placeholders, in group order
    required: str  # the longest literal run: in every message it matches


class OldWordings:
    """The past wordings of records, made ready for many lookups."""

    def __init__(self, records: Iterable[ErrorRecord]) -> None:
        self.candidates: list[_Candidate] = []
        for record in records:
            for wording in past_wordings(record):
                parsed = template_regex(wording.template)
                if parsed is None:
                    continue
                regex, names, literals = parsed
                pattern = BoundedRegex.compile(regex)
                if pattern is not None:
                    self.candidates.append(_Candidate(record, wording, pattern, names,
                                                      max(literals, key=len, default="")))

    def matches(self, texts: Sequence[str], budget: Budget) -> list[WordingMatch]:
        """Each record's best past wording that matches one of `texts` in full, best first."""
        best: dict[str, WordingMatch] = {}
        for text in texts:
            for candidate in self.candidates:
                if candidate.required not in text:
                    continue
                found = budget.fullmatch(candidate.pattern, text)
                if found is None:
                    continue
                score = len(text) - sum(end - start for start, end in found.spans if start >= 0)
                held = best.get(candidate.record.id)
                if score > 0 and (held is None or held.score < score):
                    captures = {name: text[start:end] for name, (start, end)
                                in zip(candidate.names, found.spans) if start >= 0}
                    best[candidate.record.id] = WordingMatch(candidate.record, candidate.wording,
                                                             score, captures)
        return sorted(best.values(), key=lambda m: (-m.score, m.record.id))


def past_wordings(record: ErrorRecord) -> list[PastWording]:
    """A record's wordings other than its live one, each with the releases that printed it
    (spans of one template joined: the first release of the first, the last of the last)."""
    spans: Sequence[TemplateSpan] = record.history.templates if record.history else ()
    removed = record.status == REMOVED
    current = record.site.message.template
    joined: dict[str, PastWording] = {}
    for span in spans:
        if not removed and span.template == current:
            continue
        if span.first is None and span.last is None and not removed:
            continue  # a wording no release printed
        held = joined.get(span.template)
        first = held.first if held is not None and held.first is not None else span.first
        joined[span.template] = PastWording(span.template, first, span.last, removed)
    return list(joined.values())


def template_regex(template: str) -> tuple[str, tuple[str, ...], list[str]] | None:
    """A template's anchored regex, its placeholders in order and its literal runs; None when
    its braces do not pair (a hand-edited record)."""
    parts: list[str] = []
    names: list[str] = []
    literals: list[str] = [""]
    index = 0
    while index < len(template):
        pair = template[index:index + 2]
        if pair in ("{{", "}}"):
            parts.append("\\" + pair[0])
            literals[-1] += pair[0]
            index += 2
        elif template[index] == "{":
            end = _closing(template, index)
            if end is None:
                return None
            names.append(template[index + 1:end])
            parts.append(_ANY)
            literals.append("")
            index = end + 1
        elif template[index] == "}":
            return None
        else:
            char = template[index]
            parts.append("\\" + char if char in _SPECIAL else char)
            literals[-1] += char
            index += 1
    return "^" + "".join(parts) + "$", tuple(names), [run for run in literals if run]


def _closing(template: str, start: int) -> int | None:
    """The index of the `}` that closes the placeholder opened at `start` (nested braces of
    the expression count)."""
    depth = 0
    for index in range(start, len(template)):
        if template[index] == "{":
            depth += 1
        elif template[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return None
