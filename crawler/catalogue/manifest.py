"""A repository's manifest: what a run read, skipped and counted, built from the merged records.

Files not read again keep their entries as they were; visited files get entries from this run's
records (a message-less raise that became a record is not counted as one without a message);
counts are summed over the entries, so a manifest always agrees with its records. The
manifest's pin also says which repository the folder holds (`check_same_repository`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Protocol

from crawler import __version__
from crawler.catalogue.classes import Resolved
from crawler.errors import OutputError
from crawler.parse.outcomes import FileOutcome
from crawler.records import (
    NEEDS_REVIEW,
    REMOVED,
    Counts,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    Manifest,
    Pin,
    RaiseCounts,
    Skipped,
)


class Collected(Protocol):
    """What a run read off the repository (`pipeline.Collected`), as far as the manifest needs."""

    @property
    def pin(self) -> Pin: ...
    @property
    def options(self) -> ExtractOptions: ...
    @property
    def total(self) -> int: ...  # .py files at the commit
    @property
    def skipped(self) -> tuple[Skipped, ...]: ...
    @property
    def outcomes(self) -> tuple[FileOutcome, ...]: ...  # the files visited this run
    @property
    def kept(self) -> tuple[FileEntry, ...]: ...  # files not read again: entries as they were


def build_manifest(collected: Collected, previous: Manifest | None, records: Sequence[ErrorRecord],
                   resolved: Resolved, *, loaded: Collection[str] = (),
                   extra_skipped: Sequence[Skipped] = ()) -> Manifest:
    """The new catalogue: kept files as they were, visited ones from the merged records."""
    outcomes = list(collected.outcomes)
    failures = [o.failure for o in outcomes if o.failure is not None]
    old = {entry.path: entry for entry in previous.files} if previous else {}
    ids_by_path: dict[str, list[str]] = {}
    removed: dict[str, list[str]] = {}
    for record in records:
        target = removed if record.status == REMOVED else ids_by_path
        target.setdefault(record.site.path, []).append(record.id)
    entries = {entry.path: entry for entry in collected.kept}
    for o in outcomes:
        if o.failure is None:
            entries[o.path] = FileEntry(o.path, o.blob, tuple(sorted(ids_by_path.get(o.path, ()))),
                                        _counted(o.counts, resolved.from_pending_by_path.get(o.path)))
        elif o.path in old and ids_by_path.get(o.path):
            entries[o.path] = old[o.path]  # records kept from the last good read
    if previous is not None:  # removed records this run did not load stay listed where they were
        for path, ids in previous.removed.items():
            left = [i for i in ids if i not in loaded]
            if left:
                removed.setdefault(path, []).extend(left)
    files = tuple(entries[path] for path in sorted(entries))
    all_skipped = tuple(sorted([*collected.skipped, *failures, *resolved.faults, *extra_skipped],
                               key=lambda s: (s.path, s.reason)))
    review = {r.id for r in records if r.status == NEEDS_REVIEW}
    raises = sum((e.raises for e in files), RaiseCounts())
    counts = Counts(
        files=collected.total,
        parsed=len(collected.kept) + sum(1 for o in outcomes if o.failure is None),
        skipped=len(all_skipped),
        records=sum(len(e.records) for e in files),
        removed=sum(len(ids) for ids in removed.values()),
        raises=raises,
    )
    # The manifest names its source as files may: never a path of the extracting machine.
    pin = replace(collected.pin, source=collected.pin.public_source)
    return Manifest(pin, __version__, collected.options, counts, files, all_skipped,
                    exception_classes=tuple(resolved.exception_classes),
                    removed={path: tuple(sorted(ids)) for path, ids in removed.items()},
                    needs_review=tuple(sorted(review)))


def _counted(counts: RaiseCounts, became_records: int | None) -> RaiseCounts:
    """A file's raise counts, less the message-less raises that became records (a class with a
    default message): the totals are the files' sums."""
    if not became_records:
        return counts
    return replace(counts, without_message=counts.without_message - became_records)


def is_other_repository(held: Pin, pin: Pin) -> bool:
    """Are the records of a folder pinned as `held` another repository's than `pin`'s?

    A forge identity decides first (two clones of one repository are one, whatever branch
    each pins); else the first commit of the history. A manifest older than the `root` field,
    or a shallow fetch beside a local run, cannot tell: it is taken for the same.
    """
    if held.web_url and pin.web_url:
        return held.web_url.lower() != pin.web_url.lower()
    if held.root and pin.root:
        return held.root != pin.root
    return False


def check_same_repository(folder: str, previous: Manifest | None, pin: Pin) -> None:
    """Refuse, before anything is read or written, a folder holding another repository's records."""
    if previous is None or not is_other_repository(previous.pin, pin):
        return
    raise OutputError(f"{folder}: holds the records of another repository, "
                      f"{_described(previous.pin)}, not of {_described(pin)}; its records are "
                      "left as they are: give this one another --name, or another -o")


def _described(pin: Pin) -> str:
    first = f" (first commit {pin.root[:12]})" if pin.root else ""
    return f"{pin.web_url or pin.source}{first}"
