"""Lookup by the wordings records had in past releases (`history.templates`, `crawler history`).

A user pastes what their installed version printed, often several releases old. Each past
wording of a record becomes one more wording lookup tries (`ranking.wordings`): its template read
back into a regex as the crawler builds any (`releases.wording_template`), so it runs in linear
time. A removed record is found by every wording it had and marked with the
release it was last in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crawler.records import REMOVED, ErrorRecord, TemplateSpan


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
