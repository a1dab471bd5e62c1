"""Lookup by the wordings records had in past releases (`history.templates`, `crawler history`).

A user pastes what their installed version printed, often several releases old. Each past
wording of a record becomes one more wording lookup tries (`ranking.wordings`): its template read
back into a regex as the crawler builds any (`releases.wording_template`), so it runs in linear
time. A removed record is found by every wording it had and marked with the
release it was last in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from crawler.records import REMOVED, ErrorRecord, TemplateSpan

if TYPE_CHECKING:
    from crawler.serve.lookup.ranking import Wording


@dataclass(frozen=True)
class PastWording:
    """A wording a record had, and the releases that printed it."""

    template: str
    first: str | None  # the first release that printed it
    last: str | None  # the last one; None: the site still has it (a removed one: never)
    removed: bool  # the record is removed: `last` is the last release it was in


def past_wordings(record: ErrorRecord) -> list[PastWording]:
    """A record's wordings, each with the releases that printed it (spans of one template
    joined: the first release of the first, the last of the last); a live record's own one is
    still printed (no last release)."""
    spans: Sequence[TemplateSpan] = record.history.templates if record.history else ()
    return past_wordings_of(spans, record.status == REMOVED, record.site.message.template)


def past_wordings_of(spans: Sequence[TemplateSpan], removed: bool, current: str
                     ) -> list[PastWording]:
    """`past_wordings` of a record's spans, its status and its template, wherever they are
    read from (a record file, the SQLite export's `wordings` table)."""
    joined: dict[str, PastWording] = {}
    for span in spans:
        if not removed and span.template == current:
            # today's wording: the release it was first printed in (`with_past_wordings`)
            span = replace(span, last=None)
        if span.first is None and span.last is None and not removed:
            continue  # a wording no release printed
        held = joined.get(span.template)
        first = held.first if held is not None and held.first is not None else span.first
        joined[span.template] = PastWording(span.template, first, span.last, removed)
    return list(joined.values())


def with_past_wordings(now: Wording, past: Sequence[PastWording]) -> list[Wording]:
    """The wordings lookup tries for a record: `now`, its current template, then each past
    wording read back into a regex of the crawler's own linear shape. A removed record's last
    wording is its current one: `now` gains the releases that printed it."""
    from crawler.catalogue.releases import wording_template

    found = [now]
    for old in past:
        if old.template == now.template:
            found[0] = replace(now, first_release=old.first, last_release=old.last)
            continue
        read = wording_template(old.template)
        if read is None:
            continue  # braces that do not pair: a hand-edited record
        found.append(replace(now, template=old.template, placeholders=read.placeholders,
                             regex=read.regex, past=True, first_release=old.first,
                             last_release=old.last, today=None if old.removed else now.template))
    return found
