"""Regeneration: existing records and newly found sites in, the next records out.

Regenerating is merging, never overwriting. A new site takes over an existing record (its id,
annotation and history) only through a one-to-one match, tried in this order (the README's
"Regeneration" section; docs/guarantees.md says what it promises):

0. git's diff between the two commits (`LineMap`): a record whose lines the diff left untouched
   keeps them, at their new place, whatever was inserted beside them; keys decide only among
   the sites the diff touched (without the old commit, every site is compared by key);
1. the same key `(path, qualname, exception, template)`; equal keys pair by their ordinals;
2. the same key with the record's path replaced by where its file went: git's rename, or a new
   path holding the very blob the record's file had;
3. the same `(path, exception, template)` under another qualname (a function renamed or moved),
   then the same `(qualname, exception, template)` in another file (a class moved to a file),
   then the same `(path, qualname, template)` with another exception class, then the same
   `(exception, template)` anywhere when exactly one vanished record and exactly one new site
   have it (a function renamed and moved in one commit);
4. the best assignment overall (`best_pairs`): candidate pairs scored on the template, the code
   around the raise, the qualname, the guard and the exception, across files where the function
   or its code moved, and the one-to-one assignment of greatest total score taken.

A pair that is not exact waits for a person: `needs_review`, with `history.previous_template`
(and `previous_exception`, `previous_path`, `previous_qualname` where they changed) and
`history.paired_by`, the signal and score that made it. An exception class change is a change,
whatever step paired it. How each step pairs is `pairing`'s and `best_pairs`' part; a site's key
and ordinal are `identity`'s.

Records set aside (`SetAside`: those of a file that no longer parses, and those in review in a
file not read again) take no part in matching and come out as they were, or cleared.

Removed records take part in steps 1 and 2 only: a site comes back to its record only when it
comes back exactly. An existing record left unmatched is kept as `removed`, with its annotation.
Nothing is ever deleted, and a record is never matched twice, so no two records share an
annotation.

`needs_review` is cleared by a person: setting `annotation.written_for` to the record's current
template (and, after an exception change, `annotation.written_for_exception` to its exception
class) says "this annotation was checked against this message". The next `update` then makes
the record `active` again and drops what the review was about from `history`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crawler.catalogue.best_pairs import pair_best
from crawler.catalogue.evidence import EvidenceStats
from crawler.catalogue.identity import Key, Ordinals, site_order
from crawler.catalogue.pairing import Pair, pair_by, pair_by_diff, pair_unique, record_order
from crawler.git.diff import LineMap
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
    matched_by: Mapping[str, int] = field(default_factory=dict)  # id -> the step (0-4) that matched it
    evidence: EvidenceStats | None = None  # set when related errors and test evidence were derived
    paired_by: Mapping[str, str] = field(default_factory=dict)  # id -> why, for pairs that moved
    diff_used: bool = False  # git's diff placed the untouched sites (step 0)


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
    paired_by: dict[str, str] = field(default_factory=dict)

    def result(self, diff_used: bool) -> MergeResult:
        unchanged = set(self.unchanged)
        return MergeResult(tuple(sorted(self.records, key=lambda r: r.id)), tuple(self.added),
                           tuple(self.moved), tuple(self.changed), tuple(self.removed),
                           tuple(self.revived), tuple(self.cleared), tuple(self.unchanged),
                           dict(self.matched_by),
                           paired_by={i: why for i, why in sorted(self.paired_by.items())
                                      if i not in unchanged},
                           diff_used=diff_used)


# Why each exact step pairs, as `MergeResult.paired_by` and `history.paired_by` name it.
STEP_SIGNALS = {0: "git_diff: the diff left the raise's lines untouched",
                1: "same_key", 2: "file_moved: the same key where git says the file went",
                3: "same_text: the same message elsewhere"}


def merge(pin: Pin, existing: Sequence[ErrorRecord], sites: Sequence[RaiseSite], *,
          moves: PathMoves = PathMoves(), taken_ids: Iterable[str] = (),
          aside: SetAside = SetAside(), lines: LineMap | None = None) -> MergeResult:
    """Match new sites to existing records one-to-one; keep every annotation with its site.

    `taken_ids` are ids used anywhere in the output folder (also by records not passed in), so
    a new record never reuses one. Records `aside` are not matched: they come out as they were.
    `lines` is git's diff from the previous pin to `pin`; None: every site is compared by key.
    """
    result = _Tally()
    taken = {record.id for record in existing} | set(taken_ids)
    kept = [r for r in existing if aside.keeps(r)]
    in_review = [r for r in existing if aside.reviews(r) and not aside.keeps(r)]
    sites_left = sorted(sites, key=site_order)
    records_left = sorted((r for r in existing if not (aside.keeps(r) or aside.reviews(r))),
                          key=record_order)

    def moved_to(path: str) -> tuple[str, ...]:
        found = [*moves.targets(path), *(lines.moved_to(path) if lines is not None else ())]
        return tuple(dict.fromkeys(p for p in found if p != path))

    steps: list[tuple[int, Callable[[list[RaiseSite], list[ErrorRecord]], list[Pair]]]] = []
    if lines is not None:
        steps.append((0, lambda s, r: pair_by_diff(s, r, lines, pin)))
    steps.append((1, lambda s, r: pair_by(s, r, RaiseSite.key, lambda rec: rec.site.key())))
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
    ]
    for step, match in steps:
        pairs = match(sites_left, records_left)
        for site, record in pairs:
            result.matched_by[record.id] = step
            result.records.append(_carry(pin, record, site, result, STEP_SIGNALS[step]))
        sites_left, records_left = _left(sites_left, records_left, pairs)
    best = pair_best(sites_left, records_left, moved_to)
    for pair in best:
        result.matched_by[pair.record.id] = 4
        result.records.append(_carry(pin, pair.record, pair.site, result, pair.score.describe(),
                                     exact=False))
    sites_left, records_left = _left(sites_left, records_left, [(p.site, p.record) for p in best])

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
    return result.result(diff_used=lines is not None)


def _left(sites: list[RaiseSite], records: list[ErrorRecord], pairs: Sequence[Pair]
          ) -> tuple[list[RaiseSite], list[ErrorRecord]]:
    """The sites and records no pair took."""
    used_sites = {id(site) for site, _ in pairs}
    used_records = {id(record) for _, record in pairs}
    return ([s for s in sites if id(s) not in used_sites],
            [r for r in records if id(r) not in used_records])


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


# ---------------------------------------------------------------- the records that come out


def review_done(record: ErrorRecord) -> bool:
    """A person has checked the annotation against the current template (and exception class,
    when the review is about a change of class)."""
    if record.status != NEEDS_REVIEW or record.annotation.written_for != record.site.message.template:
        return False
    history = record.history
    if history is not None and history.previous_exception is not None:
        return record.annotation.data.get("written_for_exception") == record.site.exception
    return True


def clear_review(record: ErrorRecord) -> ErrorRecord:
    """`needs_review` back to `active` once the annotation names what the record now is."""
    if not review_done(record):
        return record
    history = replace(record.history or History(first_seen=record.commit), previous_template=None,
                      previous_exception=None, previous_path=None, previous_qualname=None,
                      paired_by=None)
    return replace(record, status=ACTIVE, history=history)


def is_stale(record: ErrorRecord) -> bool:
    """The annotation says it was written for another template than the record's."""
    written_for = record.annotation.written_for
    return written_for is not None and written_for != record.site.message.template


def in_review(history: History) -> bool:
    """The history holds what a pending review is about."""
    return (history.previous_template is not None or history.previous_exception is not None
            or history.paired_by is not None)


def _carry(pin: Pin, record: ErrorRecord, site: RaiseSite, result: _Tally, why: str,
           exact: bool = True) -> ErrorRecord:
    """An existing record following its site: same id and annotation, facts from the code.

    `why` the pair was made; `exact`: a step of equal text made it, not the best assignment.
    """
    history = record.history or History(first_seen=record.commit)
    # A record in review stays in review until a person clears it, through removal and revival.
    status = NEEDS_REVIEW if record.status == NEEDS_REVIEW or in_review(history) else ACTIVE
    if record.status == REMOVED:
        result.revived.append(record.id)
        history = replace(history, removed_in=None)
    flagged = _flags(record.site, site, exact)
    if flagged:
        # The first values stay: the ones the annotation was written for.
        first_values: dict[str, Any] = {k: v for k, v in flagged.items()
                                         if getattr(history, k) is None}
        history = replace(history, **first_values, paired_by=why)
        status = NEEDS_REVIEW
    if site.message.template != record.site.message.template:
        result.changed.append(record.id)
    elif site != record.site and record.status != REMOVED:
        result.moved.append(record.id)
    if site == record.site and record.status != REMOVED and record.repo == pin.repo:
        carried = record  # untouched: the old commit still shows exactly these lines
    else:
        result.paired_by[record.id] = why
        carried = replace(record, status=status, repo=pin.repo, commit=pin.sha,
                          url=permalink(pin, site.path, site.line, site.end_line), site=site,
                          history=history)
    if review_done(carried):
        result.cleared.append(record.id)
        carried = clear_review(carried)
    if carried is record:
        result.unchanged.append(record.id)
    return carried


def exception_changed(old: RaiseSite, new: RaiseSite) -> bool:
    """Another exception class: by qualified name where both are known, else by the name as
    written without its module (`errors.Bad` and `Bad` after an import change are one class)."""
    if old.exception_qualname and new.exception_qualname:
        return old.exception_qualname != new.exception_qualname
    return old.exception.rsplit(".", 1)[-1] != new.exception.rsplit(".", 1)[-1]


def _flags(old: RaiseSite, new: RaiseSite, exact: bool) -> dict[str, str]:
    """What a person must look at again: the old values of what changed.

    A changed template or exception class always counts; a changed path or qualname only when
    the pair was not exact (the same message moved is the same error).
    """
    flags = {}
    if new.message.template != old.message.template:
        flags["previous_template"] = old.message.template
    if exception_changed(old, new):
        flags["previous_exception"] = old.exception
    if not exact and flags:
        if new.path != old.path:
            flags["previous_path"] = old.path
        if new.qualname != old.qualname:
            flags["previous_qualname"] = old.qualname
    return flags


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
    if record.status == REMOVED and record.repo == pin.repo:
        result.unchanged.append(record.id)
        return record
    if record.status == REMOVED:  # the repository's identity changed (an older folder's form)
        result.unchanged.append(record.id)  # not an event of this update: only its names change
        site, at = record.site, replace(pin, sha=record.commit)
        return replace(record, repo=pin.repo, url=permalink(at, site.path, site.line, site.end_line))
    result.removed.append(record.id)
    history = record.history or History(first_seen=record.commit)
    return replace(record, status=REMOVED, history=replace(history, removed_in=pin.sha))
