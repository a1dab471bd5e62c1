"""Which existing records a run loads, and what it says of those it cannot find."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.catalogue.merge import PathMoves
from crawler.records import (
    ErrorRecord,
    Manifest,
)
from crawler.store import record_files, repo_output
from crawler.store.cache import LoadCache
from crawler.store.record_files import ERRORS_DIR, iter_record_paths, load_record

if TYPE_CHECKING:  # collecting imports this module
    from crawler.pipeline.collecting import Collected


def load_existing(folder: Path) -> list[ErrorRecord]:
    """Every record already in the folder; a file that cannot be loaded stops the run."""
    return [load_record(path) for path in iter_record_paths(folder)]


def ids_to_load(previous: Manifest, collected: Collected) -> set[str]:
    """Records that this update may change: of files changed, gone or come, and in review."""
    kept = {entry.path for entry in collected.kept}
    touched = {o.path for o in collected.outcomes} | ({e.path for e in previous.files} - kept)
    ids = {i for entry in previous.files if entry.path in touched for i in entry.records}
    ids.update(i for path in touched for i in previous.removed.get(path, ()))
    ids.update(previous.needs_review)
    return ids


def ids_listed(previous: Manifest) -> set[str]:
    ids = {i for entry in previous.files for i in entry.records}
    ids.update(i for found in previous.removed.values() for i in found)
    ids.update(previous.needs_review)
    return ids


def ids_in(folder: Path, previous: Manifest) -> set[str]:
    """Every id in use: in the manifest and as a file name, so no new record takes one."""
    ids = ids_listed(previous)
    errors = folder / ERRORS_DIR
    if errors.is_dir():
        ids.update(name[:-5] for name in os.listdir(errors) if name.endswith(".yaml"))
    return ids


def verify_rest(folder: Path, loaded: repo_output.Loaded, loads: LoadCache | None
                 ) -> tuple[repo_output.Loaded, record_files.Verified]:
    """The folder as loaded, with the record files it did not load checked too."""
    seen = {Path(b.path).name for b in loaded.broken} | {f"{r.id}.yaml" for r in loaded.records}
    verified = record_files.verify_records(folder, seen, loads)
    broken = sorted((*loaded.broken, *verified.broken), key=lambda b: b.path)  # as a full load
    return replace(loaded, broken=tuple(broken)), verified


def missing_ids(folder: Path, previous: Manifest | None) -> set[str]:
    """Ids the manifest lists under a source file that have no file in errors/ (deleted by
    hand, or renamed: a renamed one holds its id back, see `record_files.other_file`)."""
    if previous is None:
        return set()
    listed = {i for entry in previous.files for i in entry.records}
    errors = folder / ERRORS_DIR
    present = {name[:-5] for name in os.listdir(errors)} if errors.is_dir() else set()
    return listed - present


def unreleased(previous: Manifest, release: str | None) -> set[str]:
    """At a release step, the records whose wording came after the last release: their files
    are merged again (from the cache), so that the step gives them their first release."""
    if release is None or previous.releases is None:
        return set()
    return set(previous.releases.unreleased)


def paths_of(previous: Manifest | None, ids: set[str]) -> frozenset[str]:
    """The source files the manifest lists these ids under."""
    if previous is None or not ids:
        return frozenset()
    return frozenset(entry.path for entry in previous.files if ids.intersection(entry.records))


def missing_notes(folder: Path, missing: set[str], added: Iterable[str],
                   reserved: frozenset[str], dry_run: bool) -> list[str]:
    """What became of records the manifest lists that were missing from errors/."""
    remade = sorted(missing.intersection(added))
    gone = sorted(missing - set(remade) - reserved)
    verb = "would be remade" if dry_run else "remade"
    notes = [f"{folder}: record {i} was missing from {ERRORS_DIR}/; {verb} from its site"
             for i in remade]
    notes += [f"{folder}: record {i} was missing from {ERRORS_DIR}/ and could not be remade with "
              "its id (its site changed or is gone); restore the file from version control to "
              "keep its annotation" for i in gone]
    return notes


def moves(previous: Manifest | None, collected: Collected) -> PathMoves:
    """Where the old files went: git's renames, and new paths holding an old file's blob."""
    return PathMoves.between(previous, {o.path: o.blob for o in collected.outcomes},
                             dict(collected.renames))
