"""Regeneration: existing records and newly found sites in, the next records out.

Regenerating is merging, never overwriting. A new site takes over an existing record (its id,
annotation and history) only through a one-to-one match, tried in this order (the README's
"Regeneration" section; docs/guarantees.md says what it promises):

1. the same key `(path, qualname, exception, template)`; equal keys pair by their ordinals;
2. the same key with the record's path replaced by where its file went: git's rename, or a new
   path holding the very blob the record's file had;
3. the same `(path, exception, template)` under another qualname (a function renamed or moved),
   then the same `(qualname, exception, template)` in another file (a class moved to a file),
   then the same `(path, qualname, template)` with another exception class (`ValueError` made
   a subclass of its own: the message, which the annotation is bound to, is the same), then
   the same `(exception, template)` anywhere when exactly one vanished record and exactly one
   new site have it (a function renamed and moved in one commit);
4. a close template (`FUZZY_THRESHOLD`), the same exception, the same file: the record keeps its
   id and annotation but becomes `needs_review`, with `history.previous_template`.

Records set aside (`SetAside`: those of a file that no longer parses, and those in review in a
file not read again) take no part in matching and come out as they were, or cleared.

Removed records take part in steps 1 and 2 only: a site comes back to its record only when it
comes back exactly. An existing record left unmatched is kept as `removed`, with its annotation.
Nothing is ever deleted, and a record is never matched twice, so no two records share an
annotation.

`needs_review` is cleared by a person: setting `annotation.written_for` to the record's current
template says "this annotation was checked against this message". The next `update` then makes
the record `active` again and drops `history.previous_template`.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from crawler.catalogue.evidence import EvidenceStats
from crawler.catalogue.identity import Key, Ordinals, site_order
from crawler.git.permalink import permalink
from crawler.records import (
    ACTIVE,
    NEEDS_REVIEW,
    REMOVED,
    ErrorRecord,
    History,
    Manifest,
    Pin,
    RaiseSite,
    record_id,
)

K = TypeVar("K", bound=Hashable)

# Step 4 pairs a vanished record with a new site of the same exception in the same file when the
# word-level similarity of their templates (difflib ratio over words and punctuation marks, the
# words inside placeholders included) is at least this. Words, not characters: "invalid shape"
# and "invalid dtype" share most of their letters (0.77) but half their words (0.5), and are
# different errors; "x must be positive, got {x}" and "x must be strictly positive, got {x}"
# score 0.95. A short message loses more with each word: "bad magic" to "bad magic number
# found" scores 0.67, "bad magic" to "bad header" 0.5 (no match).
FUZZY_THRESHOLD = 0.6
CONTAINED_MIN = 4
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class PathMoves:
    """Where files went between the old pin and the new one."""

    renames: Mapping[str, str] = field(default_factory=dict)  # old path -> new path, from git
    same_blob: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # old -> new paths

    def new_path(self, path: str) -> str:
        """The path a file most likely has now: its rename, else the path itself."""
        return self.renames.get(path, path)

    def targets(self, path: str) -> list[str]:
        """Every other place the file may be now, git's rename first."""
        found = [self.renames[path]] if path in self.renames else []
        found += [p for p in sorted(self.same_blob.get(path, ())) if p not in found and p != path]
        return found

    @classmethod
    def between(cls, previous: Manifest | None, now: Mapping[str, str],
                renames: Mapping[str, str]) -> PathMoves:
        """Where the previous manifest's files went: git's `renames`, and paths in `now`
        (path -> blob, the files read this run) holding an old file's very blob."""
        if previous is None:
            return cls()
        by_blob: dict[str, list[str]] = {}
        for path, blob in sorted(now.items()):
            by_blob.setdefault(blob, []).append(path)
        same_blob = {entry.path: tuple(p for p in by_blob.get(entry.blob, ()) if p != entry.path)
                     for entry in previous.files if entry.blob in by_blob}
        return cls(renames=dict(renames), same_blob={k: v for k, v in same_blob.items() if v})


@dataclass(frozen=True)
class SetAside:
    """Records that take no part in the matching: each comes out as it was, or cleared."""

    failed_paths: frozenset[str] = frozenset()  # files that no longer parse: records kept as they were
    unread_paths: frozenset[str] = frozenset()  # files not read again this run
    in_review: frozenset[str] = frozenset()  # ids in review: in an unread file, a person may clear one

    def keeps(self, record: ErrorRecord) -> bool:
        return record.status != REMOVED and record.site.path in self.failed_paths

    def reviews(self, record: ErrorRecord) -> bool:
        return (record.status != REMOVED and record.id in self.in_review
                and record.site.path in self.unread_paths)


@dataclass(frozen=True)
class MergeResult:
    """The records after a merge, and what happened to them by id."""

    records: tuple[ErrorRecord, ...]
    added: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # same template, new line, place or code around
    changed: tuple[str, ...] = ()  # the template changed: needs review
    removed: tuple[str, ...] = ()
    revived: tuple[str, ...] = ()
    cleared: tuple[str, ...] = ()  # needs_review made active by a person's check
    unchanged: tuple[str, ...] = ()
    matched_by: Mapping[str, int] = field(default_factory=dict)  # id -> the step (1-4) that matched it
    evidence: EvidenceStats | None = None  # set when related errors and test evidence were derived


@dataclass
class _Tally:
    """A merge under way: the records so far, and what happened to them by id."""

    records: list[ErrorRecord] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    revived: list[str] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    matched_by: dict[str, int] = field(default_factory=dict)

    def result(self) -> MergeResult:
        return MergeResult(tuple(sorted(self.records, key=lambda r: r.id)), tuple(self.added),
                           tuple(self.moved), tuple(self.changed), tuple(self.removed),
                           tuple(self.revived), tuple(self.cleared), tuple(self.unchanged),
                           dict(self.matched_by))


Pair = tuple[RaiseSite, ErrorRecord]


def merge(pin: Pin, existing: Sequence[ErrorRecord], sites: Sequence[RaiseSite], *,
          moves: PathMoves = PathMoves(), taken_ids: Iterable[str] = (),
          aside: SetAside = SetAside()) -> MergeResult:
    """Match new sites to existing records one-to-one; keep every annotation with its site.

    `taken_ids` are ids used anywhere in the output folder (also by records not passed in), so
    a new record never reuses one. Records `aside` are not matched: they come out as they were.
    """
    result = _Tally()
    taken = {record.id for record in existing} | set(taken_ids)
    kept = [r for r in existing if aside.keeps(r)]
    in_review = [r for r in existing if aside.reviews(r) and not aside.keeps(r)]
    sites_left = sorted(sites, key=site_order)
    records_left = sorted((r for r in existing if not (aside.keeps(r) or aside.reviews(r))),
                          key=record_order)
    steps: list[tuple[int, Callable[[list[RaiseSite], list[ErrorRecord]], list[Pair]]]] = [
        (1, lambda s, r: pair_by(s, r, RaiseSite.key, lambda rec: rec.site.key())),
    ]
    for rank in range(max((len(moves.targets(r.site.path)) for r in existing), default=0)):
        steps.append((2, _moved_file_step(moves, rank)))
    steps += [
        (3, lambda s, r: pair_by(s, _live(r), lambda x: (x.path, x.exception, x.message.template),
                                 lambda rec: (moves.new_path(rec.site.path), rec.site.exception,
                                              rec.site.message.template))),
        (3, lambda s, r: pair_by(s, _live(r), lambda x: (x.qualname, x.exception, x.message.template),
                                 lambda rec: (rec.site.qualname, rec.site.exception,
                                              rec.site.message.template))),
        (3, lambda s, r: pair_by(s, _live(r), lambda x: (x.path, x.qualname, x.message.template),
                                 lambda rec: (moves.new_path(rec.site.path), rec.site.qualname,
                                              rec.site.message.template))),
        (3, lambda s, r: pair_unique(s, _live(r))),
        (4, lambda s, r: pair_fuzzy(s, _live(r), moves)),
    ]
    for step, match in steps:
        pairs = match(sites_left, records_left)
        for site, record in pairs:
            result.matched_by[record.id] = step
            result.records.append(_carry(pin, record, site, result))
        used_sites = {id(site) for site, _ in pairs}
        used_records = {id(record) for _, record in pairs}
        sites_left = [s for s in sites_left if id(s) not in used_sites]
        records_left = [r for r in records_left if id(r) not in used_records]

    ordinals = Ordinals.of(sites)
    for site in sites_left:
        new = _new_record(pin, site, ordinals[site], taken)
        taken.add(new.id)
        result.added.append(new.id)
        result.records.append(new)

    for record in records_left:
        result.records.append(_retire(pin, record, result))
    for record in kept:  # a file that no longer parses keeps its records as they were
        result.unchanged.append(record.id)
        result.records.append(record)
    for record in in_review:  # an unread file's record in review: a person may have cleared it
        reviewed = clear_review(record)
        (result.cleared if reviewed is not record else result.unchanged).append(record.id)
        result.records.append(reviewed)
    return result.result()


def _live(records: list[ErrorRecord]) -> list[ErrorRecord]:
    return [r for r in records if r.status != REMOVED]


def _moved_file_step(moves: PathMoves, rank: int
                     ) -> Callable[[list[RaiseSite], list[ErrorRecord]], list[Pair]]:
    """Step 2 for the `rank`-th place a file may have gone to."""

    def key(record: ErrorRecord) -> Key | None:
        targets = moves.targets(record.site.path)
        if rank >= len(targets):
            return None
        _, qualname, exception, template = record.site.key()
        return (targets[rank], qualname, exception, template)

    return lambda sites, records: pair_by(sites, records, RaiseSite.key, key)


# ---------------------------------------------------------------- pairing, one-to-one


def record_order(record: ErrorRecord) -> tuple[int, str, int, int, str]:
    # Removed records come after live ones, so a site pairs with its live record first.
    site = record.site
    return (1 if record.status == REMOVED else 0, site.path, site.line, site.column, record.id)


def pair_by(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord],
            site_key: Callable[[RaiseSite], K], record_key: Callable[[ErrorRecord], K | None]
            ) -> list[Pair]:
    """Pair sites and records of equal keys, one-to-one.

    Both come in source order. A group with as many sites as records pairs them in that order
    (their ordinals); otherwise the closest pairs go first (`_closeness`), so that when one of
    two identical raises goes, the record of the one that stayed follows it.
    """
    by_key: dict[K, list[ErrorRecord]] = defaultdict(list)
    for record in records:
        key = record_key(record)
        if key is not None:
            by_key[key].append(record)
    site_groups: dict[K, list[RaiseSite]] = defaultdict(list)
    for site in sites:
        site_groups[site_key(site)].append(site)
    pairs: list[Pair] = []
    for key, group in site_groups.items():
        candidates = by_key.get(key)
        if not candidates:
            continue
        live = [r for r in candidates if r.status != REMOVED]
        if len(live) == len(group):
            pairs.extend(zip(group, live))
        elif len(candidates) == len(group):  # all of them back: in their old source order
            pairs.extend(zip(group, sorted(candidates, key=lambda r: record_order(r)[1:])))
        else:
            pairs.extend(_closest_pairs(group, candidates))
    return pairs


def pair_unique(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord]) -> list[Pair]:
    """Pair a site and a record when each is the only one left with its (exception, template)."""
    site_groups: dict[tuple[str, str], list[RaiseSite]] = defaultdict(list)
    for site in sites:
        site_groups[(site.exception, site.message.template)].append(site)
    record_groups: dict[tuple[str, str], list[ErrorRecord]] = defaultdict(list)
    for record in records:
        record_groups[(record.site.exception, record.site.message.template)].append(record)
    return [(group[0], record_groups[key][0]) for key, group in site_groups.items()
            if len(group) == 1 and len(record_groups.get(key, ())) == 1]


def _closest_pairs(sites: list[RaiseSite], records: list[ErrorRecord]) -> list[Pair]:
    scored = [
        (_closeness(site, record), i, j)
        for j, record in enumerate(records)
        for i, site in enumerate(sites)
    ]
    scored.sort()
    return _greedy([(sites[i], records[j]) for _, i, j in scored])


def _closeness(site: RaiseSite, record: ErrorRecord) -> tuple[int, int, int, int, int]:
    """Smaller is closer: live first, same guard, same cause, same place in its function."""
    old = record.site
    return (
        1 if record.status == REMOVED else 0,
        0 if site.condition == old.condition else 1,
        0 if site.cause == old.cause else 1,
        abs((site.line - site.snippet_line) - (old.line - old.snippet_line)),
        abs(site.line - old.line),
    )


def _greedy(ordered: Iterable[Pair]) -> list[Pair]:
    """Take pairs best first, skipping any whose site or record is already taken."""
    pairs: list[Pair] = []
    used_sites: set[int] = set()
    used_records: set[int] = set()
    for site, record in ordered:
        if id(site) in used_sites or id(record) in used_records:
            continue
        used_sites.add(id(site))
        used_records.add(id(record))
        pairs.append((site, record))
    return pairs


def tokens(template: str) -> list[str]:
    """Words and punctuation marks of a template, placeholders' own words included."""
    return _TOKEN.findall(template)


def similarity(old: str, new: str) -> float:
    """Word-level difflib ratio of two templates, 0 to 1.

    A message extended or cut by a clause ("get not supported yet" and "get not supported yet
    for block shape {b}") keeps every word of the shorter one: that counts as close (exactly
    the threshold, so any closer candidate goes first) when the shorter has `CONTAINED_MIN`
    words or more; shorter ones ("{msg}", "not supported") are in too many messages.
    """
    a, b = tokens(old), tokens(new)
    if not a and not b:
        return 1.0 if old == new else 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ratio = matcher.ratio()
    shorter = min(len(a), len(b))
    if shorter >= CONTAINED_MIN and sum(m.size for m in matcher.get_matching_blocks()) == shorter:
        return max(ratio, FUZZY_THRESHOLD)
    return ratio


def pair_fuzzy(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord],
               moves: PathMoves = PathMoves()) -> list[Pair]:
    """Step 4: close templates, same exception, same file; best pairs first, one-to-one.

    Ties go to the same qualname, then the nearer place in the function, then source order.
    """
    by_place: dict[tuple[str, str], list[RaiseSite]] = defaultdict(list)
    for site in sites:
        by_place[(site.path, site.exception)].append(site)
    scored: list[tuple[tuple[float, int, int, int, int], RaiseSite, ErrorRecord]] = []
    for j, record in enumerate(records):
        old = record.site
        for i, site in enumerate(by_place.get((moves.new_path(old.path), old.exception), ())):
            score = similarity(old.message.template, site.message.template)
            if score < FUZZY_THRESHOLD:
                continue
            offset = abs((site.line - site.snippet_line) - (old.line - old.snippet_line))
            rank = (-score, 0 if site.qualname == old.qualname else 1, offset, j, i)
            scored.append((rank, site, record))
    scored.sort(key=lambda item: item[0])
    return _greedy((site, record) for _, site, record in scored)


# ---------------------------------------------------------------- the records that come out


def review_done(record: ErrorRecord) -> bool:
    """A person has checked the annotation against the current template."""
    return record.status == NEEDS_REVIEW and record.annotation.written_for == record.site.message.template


def clear_review(record: ErrorRecord) -> ErrorRecord:
    """`needs_review` back to `active` once `written_for` names the current template."""
    if not review_done(record):
        return record
    history = replace(record.history or History(first_seen=record.commit), previous_template=None)
    return replace(record, status=ACTIVE, history=history)


def is_stale(record: ErrorRecord) -> bool:
    """The annotation says it was written for another template than the record's."""
    written_for = record.annotation.written_for
    return written_for is not None and written_for != record.site.message.template


def _carry(pin: Pin, record: ErrorRecord, site: RaiseSite, result: _Tally) -> ErrorRecord:
    """An existing record following its site: same id and annotation, facts from the code."""
    history = record.history or History(first_seen=record.commit)
    # A record in review stays in review until a person clears it, through removal and revival.
    in_review = record.status == NEEDS_REVIEW or history.previous_template is not None
    status = NEEDS_REVIEW if in_review else ACTIVE
    if record.status == REMOVED:
        result.revived.append(record.id)
        history = replace(history, removed_in=None)
    old_template = record.site.message.template
    if site.message.template != old_template:
        result.changed.append(record.id)
        if history.previous_template is None:  # the first template stays: the one annotated
            history = replace(history, previous_template=old_template)
        status = NEEDS_REVIEW
    elif site != record.site and record.status != REMOVED:
        result.moved.append(record.id)
    if site == record.site and record.status != REMOVED:
        carried = record  # untouched: the old commit still shows exactly these lines
    else:
        carried = replace(record, status=status, repo=pin.repo, commit=pin.sha,
                          url=permalink(pin, site.path, site.line, site.end_line), site=site,
                          history=history)
    if review_done(carried):
        result.cleared.append(record.id)
        carried = clear_review(carried)
    if carried is record:
        result.unchanged.append(record.id)
    return carried


def _new_record(pin: Pin, site: RaiseSite, number: int, taken: set[str]) -> ErrorRecord:
    salt = 0
    new_id = record_id(pin.repo, site.key(), number)
    while new_id in taken:  # the same key was used before: keep ids unique, never reuse one
        salt += 1
        new_id = record_id(pin.repo, site.key(), number, salt)
    return ErrorRecord(id=new_id, status=ACTIVE, repo=pin.repo, commit=pin.sha,
                       url=permalink(pin, site.path, site.line, site.end_line), site=site,
                       history=History(first_seen=pin.sha))


def _retire(pin: Pin, record: ErrorRecord, result: _Tally) -> ErrorRecord:
    """A record whose site is gone: kept, with its annotation, as `removed`."""
    if record.status == REMOVED:
        result.unchanged.append(record.id)
        return record
    result.removed.append(record.id)
    history = record.history or History(first_seen=record.commit)
    return replace(record, status=REMOVED, history=replace(history, removed_in=pin.sha))
