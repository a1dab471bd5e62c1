"""Lookup by the wordings records had in past releases (`history.templates`, `crawler history`).

A user pastes what their installed version printed, often several releases old. Each past
wording of a record becomes one more wording lookup tries (`ranking.wordings`): its template read
back into a regex of the crawler's own shape (literal text exact, each placeholder any text), so
it runs in linear time. A removed record is found by every wording it had and marked with the
release it was last in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crawler.records import REMOVED, ErrorRecord, TemplateSpan

_SPECIAL = frozenset("\\.^$*+?()[]{}|")
_ANY = "([\\s\\S]*?)"


@dataclass(frozen=True)
class PastWording:
    """A wording a record had, and the releases that printed it."""

    template: str
    first: str | None  # the first release that printed it
    last: str | None  # the last one; None: the site still has it (a removed one: never)
    removed: bool  # the record is removed: `last` is the last release it was in


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
            name = template[index + 1:end]
            # named as the crawler's own regexes name a placeholder, so a match shows its value
            parts.append(f"(?P<{name}>{_ANY[1:]}" if name.isidentifier() and name not in names
                         else _ANY)
            names.append(name)
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
