"""Holding back: what a run may touch when some record files in the output folder are broken.

A record file that cannot be loaded is never written, and the source files it may belong to are
not merged this run, so that its annotation is neither dropped nor shadowed by a new record for
the same site. `plan` decides which, before the merge; the store loads and writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from crawler.catalogue.identity import Ordinals
from crawler.records import BrokenFile, ErrorRecord, FileEntry, Manifest, Pin, RaiseSite, Skipped

HELD_BACK = "held_back"  # the Skipped reason of a source file whose record could not be loaded


class Loaded(Protocol):
    """What the output folder holds (`store.repo_output.Loaded`), as far as planning needs."""

    @property
    def records(self) -> tuple[ErrorRecord, ...]: ...  # the records that load
    @property
    def broken(self) -> tuple[BrokenFile, ...]: ...  # the files in errors/ that do not
    @property
    def manifest(self) -> Manifest | None: ...


@dataclass(frozen=True)
class Plan:
    """What a run may touch when some record files are broken."""

    existing: tuple[ErrorRecord, ...]  # records to merge
    sites: tuple[RaiseSite, ...]  # sites to merge
    kept: tuple[ErrorRecord, ...]  # records of held-back source files: listed, never written
    held: frozenset[str]  # source paths held back
    hold_all: bool  # a broken record could not be placed: nothing may be written
    reserved: frozenset[str]  # ids no new record may take: every broken file's and every kept one's
    held_entries: tuple[FileEntry, ...] = ()  # the previous manifest's entries of held files

    def files_with_held(self, files: Sequence[FileEntry]) -> tuple[FileEntry, ...]:
        """A new manifest's files, with each held file's old entry (old blob, old ids) kept.

        The old blob makes the next run read the file again; the old ids keep the broken record
        placed in it, so the next run holds back the same file and no more.
        """
        fresh = [entry for entry in files if entry.path not in self.held]
        return tuple(sorted([*fresh, *self.held_entries], key=lambda entry: entry.path))

    def skipped(self) -> list[Skipped]:
        return [Skipped(path, HELD_BACK, "a record of this file could not be loaded; it was "
                        "left as it is and the file was not updated") for path in sorted(self.held)]


# Greedy to the line's end, then stripped: a lazy run followed by `\s*$` backtracks over a
# long line quadratically (8,000 spaces took 2.5 s; the 1 MiB head a file may have, hours).
_PATH_LINE = re.compile(r"^  path: ([^\s\"'#{\[&*!|>][^#\n]*)$", re.MULTILINE)


def plan(loaded: Loaded, pin: Pin, sites: Sequence[RaiseSite]) -> Plan:
    """Hold back every source file that a broken record may belong to.

    A broken record is placed by three hints, each of which can only hold back more: the
    previous manifest lists it under a file; its text still has a plain `  path:` line; or its
    id is the one that a site of this run would be given. A broken record placed by none of
    them could belong to any file: then nothing is written.
    """
    taken = {b.id for b in loaded.broken if b.id is not None}
    if not taken:
        return Plan(loaded.records, tuple(sites), (), frozenset(), False, frozenset())
    held: set[str] = set()
    placed: set[str] = set()
    if loaded.manifest is not None:
        for entry in loaded.manifest.files:
            hit = taken.intersection(entry.records)
            if hit:
                held.add(entry.path)
                placed.update(hit)
    for broken in loaded.broken:
        if broken.id is None:
            continue
        hint = _path_hint(broken.head)
        if hint is not None:
            held.add(hint)
            placed.add(broken.id)
    ordinals = Ordinals.of(sites)
    for site in sites:
        natural = ordinals.natural_id(pin.repo, site)
        if natural in taken:
            held.add(site.path)
            placed.add(natural)
    hold_all = bool(taken - placed)
    kept = tuple(r for r in loaded.records if hold_all or r.site.path in held)
    existing = tuple(r for r in loaded.records if not (hold_all or r.site.path in held))
    free_sites = () if hold_all else tuple(s for s in sites if s.path not in held)
    reserved = frozenset(taken | {r.id for r in kept})
    entries = tuple(e for e in loaded.manifest.files if e.path in held) if loaded.manifest else ()
    return Plan(existing, free_sites, kept, frozenset(held), hold_all, reserved, entries)


def _path_hint(head: str | None) -> str | None:
    """The `extracted.path` of a broken record, read off its text (never as YAML).

    The store reads the text (`BrokenFile.head`), of plain files only: a link or a FIFO that
    stands in for a record gives no hint.
    """
    match = _PATH_LINE.search(head) if head is not None else None
    return match.group(1).rstrip() if match else None
