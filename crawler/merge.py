"""Regeneration: existing records and newly found sites in, the next records out.

Regenerating is merging, never overwriting. A new site takes over an existing record (its id,
annotation and history) only through a one-to-one match; an existing record left unmatched is
kept as `removed`, with its annotation. Nothing is ever deleted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

from crawler.records import (
    ACTIVE,
    REMOVED,
    ErrorRecord,
    History,
    Pin,
    RaiseSite,
    record_id,
)
from crawler.urls import permalink

Key = tuple[str, str, str, str]


@dataclass
class MergeResult:
    """The records after a merge, and what happened to them by id."""

    records: list[ErrorRecord]
    added: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)  # same site, new line or place
    changed: list[str] = field(default_factory=list)  # needs review: the template changed
    removed: list[str] = field(default_factory=list)
    revived: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def merge(pin: Pin, existing: Sequence[ErrorRecord], sites: Sequence[RaiseSite],
          reserved: Collection[str] = ()) -> MergeResult:
    """Match new sites to existing records one-to-one; keep every annotation with its site.

    `reserved` ids are taken by files outside this merge (records that could not be loaded):
    no new record gets one of them.
    """
    result = MergeResult(records=[])
    taken_ids = {record.id for record in existing} | set(reserved)
    unmatched_sites = list(sites)
    unmatched_records = list(existing)

    pairs, unmatched_sites, unmatched_records = match_same_key(unmatched_sites, unmatched_records)
    for site, record in pairs:
        result.records.append(_carry(pin, record, site, result))

    ordinals = compute_ordinals(sites)
    for site in sorted(unmatched_sites, key=_site_order):
        new = _new_record(pin, site, ordinals[id(site)], taken_ids)
        taken_ids.add(new.id)
        result.added.append(new.id)
        result.records.append(new)

    for record in unmatched_records:
        result.records.append(_retire(pin, record, result))
    result.records.sort(key=lambda r: r.id)
    return result


def match_same_key(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord]
                   ) -> tuple[list[tuple[RaiseSite, ErrorRecord]], list[RaiseSite], list[ErrorRecord]]:
    """Step 1: the same key; equal keys pair up in source order (their ordinals)."""
    by_key: dict[Key, list[ErrorRecord]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (_order_of_record(r), r.id)):
        by_key[record.site.key()].append(record)
    pairs: list[tuple[RaiseSite, ErrorRecord]] = []
    left: list[RaiseSite] = []
    for site in sorted(sites, key=_site_order):
        candidates = by_key.get(site.key())
        if candidates:
            pairs.append((site, candidates.pop(0)))
        else:
            left.append(site)
    matched = {id(record) for _, record in pairs}
    return pairs, left, [r for r in records if id(r) not in matched]


def _order_of_record(record: ErrorRecord) -> tuple[int, int]:
    # Removed records come after active ones, so a site pairs with its live record first.
    return (1 if record.status == REMOVED else 0, record.site.line)


def _site_order(site: RaiseSite) -> tuple[str, int, int]:
    return (site.path, site.line, site.column)


def compute_ordinals(sites: Iterable[RaiseSite]) -> dict[int, int]:
    """For each site (by object id), how many sites of the same key stand before it."""
    seen: dict[Key, int] = defaultdict(int)
    ordinals: dict[int, int] = {}
    for site in sorted(sites, key=_site_order):
        ordinals[id(site)] = seen[site.key()]
        seen[site.key()] += 1
    return ordinals


def _carry(pin: Pin, record: ErrorRecord, site: RaiseSite, result: MergeResult) -> ErrorRecord:
    """An existing record following its site: same id and annotation, facts from the code."""
    status = ACTIVE if record.status == REMOVED else record.status
    history = record.history or History(first_seen=pin.sha)
    if record.status == REMOVED:
        result.revived.append(record.id)
        history = replace(history, removed_in=None)
    if site == record.site and record.status != REMOVED:
        result.unchanged.append(record.id)
        return record  # untouched: the old commit still shows exactly these lines
    if record.status != REMOVED:
        result.moved.append(record.id)
    return replace(record, status=status, repo=pin.repo, commit=pin.sha,
                   url=permalink(pin, site.path, site.line, site.end_line), site=site,
                   history=history)


def _new_record(pin: Pin, site: RaiseSite, number: int, taken: set[str]) -> ErrorRecord:
    salt = 0
    new_id = record_id(pin.repo, site.key(), number)
    while new_id in taken:  # the same key was used before: keep ids unique, never reuse one
        salt += 1
        new_id = record_id(pin.repo, site.key(), number, salt)
    return ErrorRecord(id=new_id, status=ACTIVE, repo=pin.repo, commit=pin.sha,
                       url=permalink(pin, site.path, site.line, site.end_line), site=site,
                       history=History(first_seen=pin.sha))


def _retire(pin: Pin, record: ErrorRecord, result: MergeResult) -> ErrorRecord:
    """A record whose site is gone: kept, with its annotation, as `removed`."""
    if record.status == REMOVED:
        result.unchanged.append(record.id)
        return record
    result.removed.append(record.id)
    history = record.history or History(first_seen=record.commit)
    return replace(record, status=REMOVED, history=replace(history, removed_in=pin.sha))
