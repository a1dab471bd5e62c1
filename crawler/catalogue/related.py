"""Related errors, and the derived parts of records (`related`, `evidence`) set after a merge.

Two records are related when

- `same_scope`: they raise the same exception (by qualname when known, else as written) in the
  same class, or, outside classes, at module level or in module-level functions of the same file;
- `same_shape`: their templates differ only in placeholders (identical templates included), and
  the shared literal text is long enough to mean something (MIN_SHAPE_TEXT characters).

Each record lists at most MAX_PER_REASON of each, `same_shape` first; the order depends on
nothing but the records' sites: `same_scope` nearest line first, `same_shape` by path and
qualname, both then by line, column, exception and template (an id only between two records of
one site, which no folder holds), so a record's list moves only when its own file or its shape's
records do, and never with the ids: two folders of one repository under different names list the
same sites.
Removed records are neither given nor listed as related: their derived parts stay as they were
when they were last seen.

An update gives the lists a full run gives (`refresh`): a record's list reads only its shape's
records and its scope's (one file's), so the lists that can change are those of the records
whose read facts changed, came or went (`Touched`), and of the records sharing a shape or a
scope with one of them. Their shapes' and scopes' records are all taken part, the kept files'
ones loaded (found by the kept files' sites, which the run holds), so each of those lists is
made over the same records as a full run's; every other list is as it was. A record whose list
is the same is returned as it is (its file is not written).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from crawler.catalogue.globs import WILD, template_glob
from crawler.records import REMOVED, ErrorRecord, Evidence, RaiseSite, Related

MAX_PER_REASON = 10
MIN_SHAPE_TEXT = 12  # non-space literal characters a shape needs to relate records


def shape(record: ErrorRecord) -> str | None:
    """The template with every placeholder made `{}`; None when too little text is left."""
    return _shape(record.site.message.template, record.site.message.placeholders)


def site_shape(site: RaiseSite) -> str | None:
    """`shape` of the record a site makes."""
    return _shape(site.message.template, site.message.placeholders)


@lru_cache(maxsize=1 << 16)
def _shape(template: str, placeholders: tuple[str, ...]) -> str | None:
    glob = template_glob(template, placeholders)
    text = "".join("\0" if symbol is WILD else symbol for symbol in glob)
    if sum(1 for char in text if not char.isspace() and char != "\0") < MIN_SHAPE_TEXT:
        return None
    return text


def _exception_key(record: ErrorRecord) -> str:
    return record.site.exception_qualname or record.site.exception


def _scope_key(record: ErrorRecord) -> tuple[str, str, str]:
    return (record.site.path, record.site.class_name or "", _exception_key(record))


def _site_order(record: ErrorRecord) -> tuple[int, int, str, str, str]:
    """Between two records at one distance or of one file and function: by their sites' facts
    (the id only where two records share every one, as no two live records do)."""
    site = record.site
    return (site.line, site.column, _exception_key(record), site.message.template, record.id)


def related_records(records: Sequence[ErrorRecord]) -> dict[str, tuple[Related, ...]]:
    """Related records by id, for every record that is not removed."""
    live = [r for r in records if r.status != REMOVED]
    by_scope: dict[tuple[str, str, str], list[ErrorRecord]] = defaultdict(list)
    by_shape: dict[str, list[ErrorRecord]] = defaultdict(list)
    shapes = {record.id: shape(record) for record in live}
    for record in live:
        by_scope[_scope_key(record)].append(record)
        key = shapes[record.id]
        if key is not None:
            by_shape[key].append(record)
    for group in by_shape.values():
        group.sort(key=lambda r: (r.site.path, r.site.qualname, _site_order(r)))
    place: dict[str, int] = {}
    for group in by_scope.values():
        group.sort(key=_site_order)
        place.update((r.id, at) for at, r in enumerate(group))
    result: dict[str, tuple[Related, ...]] = {}
    for record in live:
        listed: list[Related] = []
        seen = {record.id}
        key = shapes[record.id]
        same_shape = [r for r in by_shape.get(key, ()) if r.id not in seen] if key is not None else []
        for other in same_shape[:MAX_PER_REASON]:
            listed.append(Related(other.id, "same_shape"))
            seen.add(other.id)
        neighbours = _nearest(by_scope[_scope_key(record)], place[record.id], seen)
        listed.extend(Related(other.id, "same_scope") for other in neighbours)
        result[record.id] = tuple(listed)
    return result


def _nearest(group: list[ErrorRecord], at: int, seen: set[str], most: int = MAX_PER_REASON
             ) -> list[ErrorRecord]:
    """The first `most` of `group` not `seen`, by distance in lines from `group[at]`, then site.

    `group` is sorted by `_site_order` (line first). As sorting it all, but looking near `at` only: past
    `most + len(seen)` records on one side, and past the line those end on, a record is
    farther than enough nearer ones to never be listed.
    """
    line = group[at].site.line
    enough = most + len(seen)
    low, high = max(0, at - enough), min(len(group), at + 1 + enough)
    while low > 0 and group[low - 1].site.line == group[low].site.line:
        low -= 1
    while high < len(group) and group[high].site.line == group[high - 1].site.line:
        high += 1
    return heapq.nsmallest(most, (r for r in group[low:high] if r.id not in seen),
                           key=lambda r: (abs(r.site.line - line), _site_order(r)))


def with_derived(records: Sequence[ErrorRecord], related: Mapping[str, tuple[Related, ...]],
                 evidence: Mapping[str, tuple[Evidence, ...]] | None) -> list[ErrorRecord]:
    """Records with their `related` and (when tests were read, `evidence` not None) `evidence`
    set; removed records and records whose derived parts did not change are returned as they are.
    """
    out: list[ErrorRecord] = []
    for record in records:
        if record.status == REMOVED:
            out.append(record)
            continue
        new_related = related.get(record.id, ())
        new_evidence = record.evidence if evidence is None else evidence.get(record.id, ())
        if new_related == record.related and new_evidence == record.evidence:
            out.append(record)
        else:
            out.append(replace(record, related=new_related, evidence=new_evidence))
    return out


def _read_facts(record: ErrorRecord) -> tuple[object, ...]:
    """What the lists read of a record: its id, and its site's facts they group and order by."""
    site = record.site
    return (record.id, site.path, site.qualname, site.class_name, _exception_key(record),
            site.line, site.column, site.message.template, site.message.placeholders)


@dataclass(frozen=True)
class Touched:
    """The records whose read facts an update changed, made or removed (by id), and the shapes
    and scopes they had or have: the lists that can differ from before are those of these
    records and of the records sharing one of these shapes or scopes."""

    ids: frozenset[str]
    shapes: frozenset[str]
    scopes: frozenset[tuple[str, str, str]]

    def concerns(self, record: ErrorRecord) -> bool:
        return record.status != REMOVED and (
            record.id in self.ids or _scope_key(record) in self.scopes
            or shape(record) in self.shapes)


def touched(before: Iterable[ErrorRecord], after: Iterable[ErrorRecord]) -> Touched:
    """What changed between the old forms of the records a run merged and the merge's records."""
    old = {r.id: r for r in before if r.status != REMOVED}
    new = {r.id: r for r in after if r.status != REMOVED}
    ids = {i for i in old.keys() | new.keys()
           if i not in old or i not in new or _read_facts(old[i]) != _read_facts(new[i])}
    shapes: set[str] = set()
    scopes: set[tuple[str, str, str]] = set()
    for i in ids:
        for record in (old.get(i), new.get(i)):
            if record is not None:
                scopes.add(_scope_key(record))
                found = shape(record)
                if found is not None:
                    shapes.add(found)
    return Touched(frozenset(ids), frozenset(shapes), frozenset(scopes))


def refresh(merged: Sequence[ErrorRecord], before: Iterable[ErrorRecord],
            others: Sequence[ErrorRecord], kept_sites: Mapping[str, Sequence[RaiseSite]],
            kept_ids: Mapping[str, Collection[str]],
            load: Callable[[set[str]], Sequence[ErrorRecord]]
            ) -> tuple[list[ErrorRecord], tuple[ErrorRecord, ...]]:
    """An update's lists: the merge's records with their lists made as a full run makes them,
    and the records outside the merge whose lists changed, added to `others` (records outside
    the merge an earlier stage changed, whose forms are the latest).

    `before`: the old forms of the records the run loaded; `kept_sites`: the sites of each file
    not read again, by path, and `kept_ids` its records' ids (the manifest's), which `load`
    loads. A kept file whose sites are not as many as its records is loaded whenever anything
    changed: its shapes are not known."""
    change = touched(before, merged)
    if not change.ids:
        return list(merged), tuple(others)
    by_id = {r.id: r for r in merged}
    concerned = [r for r in (*merged, *others) if change.concerns(r)]
    needed = change.shapes | {found for r in concerned if (found := shape(r)) is not None}
    paths = {r.site.path for r in concerned} | {
        path for path, sites in kept_sites.items()
        if len(sites) != len(kept_ids.get(path, ())) or any(site_shape(s) in needed for s in sites)}
    paths |= kept_ids.keys() - kept_sites.keys()
    latest = {r.id: r for r in others}
    wanted = {i for path in paths for i in kept_ids.get(path, ())} - by_id.keys()
    kept = [latest.get(r.id, r) for r in load(wanted - latest.keys())]
    kept += [latest[i] for i in wanted & latest.keys()]
    lists = related_records([*merged, *kept])
    records = [_listed(r, lists, change) for r in merged]
    changed = {}
    for record in kept:
        new = _listed(record, lists, change)
        if new is not record:
            changed[new.id] = new
    out = [changed.pop(r.id, r) for r in others]
    return records, (*out, *(changed[i] for i in sorted(changed)))  # in one order, whatever loads


def _listed(record: ErrorRecord, lists: Mapping[str, tuple[Related, ...]],
            change: Touched) -> ErrorRecord:
    """The record with its new list, where it is concerned and the list differs."""
    if not change.concerns(record):
        return record
    new = lists.get(record.id, ())
    return record if new == record.related else replace(record, related=new)
