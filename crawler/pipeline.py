"""The stages in order: pin, select files, visit them (in worker processes), merge, emit.

This module only wires the stages together; each stage lives in its own module. It prints
nothing: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

from crawler import __version__, emit
from crawler.merge import MergeResult, merge
from crawler.pin import PinnedRepo, pin
from crawler.records import (
    REMOVED,
    Counts,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    Manifest,
    Pin,
    Skipped,
    SourceFile,
)
from crawler.urls import permalink
from crawler.workers import FileOutcome, Job, Limits, default_jobs, module_name, visit_all, visit_file

__all__ = ["FileOutcome", "module_name", "visit_file"]  # re-exported: they lived here first

Progress = Callable[[int, int], None]  # (files done, files in all)

SYMLINK, SUBMODULE = "120000", "160000"
TEST_DIRS = frozenset({"test", "tests"})


@dataclass(frozen=True)
class RunResult:
    """One extraction's outcome: where it wrote, the manifest, and what changed."""

    pin: Pin
    folder: Path
    manifest: Manifest
    merged: MergeResult
    files_written: int
    seconds: float


# ---------------------------------------------------------------- selecting files


def is_test_path(path: str) -> bool:
    """Files of a test suite: under a test folder, or named like a test module."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        any(part in TEST_DIRS for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def select_files(files: Iterable[SourceFile], options: ExtractOptions
                 ) -> tuple[list[SourceFile], list[Skipped], int]:
    """The .py files to parse, the ones passed over with the reason, and how many .py there are."""
    chosen: list[SourceFile] = []
    skipped: list[Skipped] = []
    total = 0
    for entry in files:
        if not entry.path.endswith(".py"):
            continue
        total += 1
        reason = _skip_reason(entry, options)
        if reason is None:
            chosen.append(entry)
        else:
            skipped.append(Skipped(entry.path, *reason))
    return chosen, skipped, total


def _skip_reason(entry: SourceFile, options: ExtractOptions) -> tuple[str, str | None] | None:
    if entry.mode == SYMLINK:
        return "symlink", "a link is recorded, never followed"
    if entry.mode == SUBMODULE:
        return "submodule", f"gitlink to {entry.blob}; submodules are not followed"
    if options.include and not any(fnmatch.fnmatchcase(entry.path, g) for g in options.include):
        return "not_included", None
    if any(fnmatch.fnmatchcase(entry.path, glob) for glob in options.exclude):
        return "excluded", None
    if not options.include_tests and is_test_path(entry.path):
        return "test_file", None
    if entry.size < 0:
        return "too_large", "left out of the fetch by its size"
    if entry.size > options.max_file_bytes:
        return "too_large", f"{entry.size} bytes, over the cap of {options.max_file_bytes}"
    return None


# ---------------------------------------------------------------- visiting files


def visit_files(repo: PinnedRepo, files: list[SourceFile], jobs: int,
                progress: Progress | None, limits: Limits | None = None,
                each: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Visit every file in worker processes (see `crawler.workers`); outcomes in file order.

    Blobs are read as workers become free and outcomes are taken as they finish, so what is held
    is the outcomes and one batch of bytes per worker, whatever the size of the repository.
    `each` is called with every outcome as it arrives, while the workers go on parsing.
    """
    outcomes: list[FileOutcome | None] = [None] * len(files)
    if not files:
        return []
    total = len(files)
    report = (lambda done: progress(done, total)) if progress else None
    # Largest first: the last files to finish are then small ones, and no worker waits long
    # on another's big file at the end. Outcomes still come back in the order of `files`.
    order = sorted(range(total), key=lambda i: -files[i].size)
    ordered = [files[i] for i in order]
    for position, outcome in visit_all(_read(repo, ordered), jobs, limits, report):
        index = order[position]
        outcomes[index] = outcome
        if each is not None:
            each(outcome)
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


def _read(repo: PinnedRepo, files: list[SourceFile]) -> Iterator[Job]:
    """(path, blob, bytes) in file order, read lazily; a blob shared by two paths is read per path."""
    shas = [f.blob for f in files]
    for entry, (sha, data) in zip(files, repo.read_blobs(shas)):
        if sha != entry.blob:
            raise AssertionError(f"{entry.path}: read blob {sha}, expected {entry.blob}")
        yield entry.path, entry.blob, data


# ---------------------------------------------------------------- the whole run


def output_folder(root: Path, pinned: Pin) -> Path:
    """Where one repository's records live: root/host/owner/name."""
    return root.joinpath(pinned.host, *pinned.owner.split("/"), pinned.name)


@dataclass(frozen=True)
class Collected:
    """Everything read off the repository at the pin: small, picklable, no output touched."""

    pin: Pin
    options: ExtractOptions
    total: int  # .py files at the commit
    skipped: tuple[Skipped, ...]
    outcomes: tuple[FileOutcome, ...]
    seconds: float


def collect(source: str, *, ref: str = "HEAD", options: ExtractOptions = ExtractOptions(),
            cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
            progress: Progress | None = None) -> Collected:
    """Pin `source` at `ref` and visit its files: the part of a run that may happen elsewhere."""
    started = time.perf_counter()
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        entries = repo.list_files()
        chosen, skipped, total = select_files(entries, options)
        outcomes = visit_files(repo, chosen, jobs or default_jobs(), progress,
                               each=partial(_prerender, repo.pin))
    return Collected(repo.pin, options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started)


def _prerender(pinned: Pin, outcome: FileOutcome) -> None:
    """Render the records of new sites while the workers parse (see `emit.prerender_extracted`)."""
    for site in outcome.sites:
        emit.prerender_extracted(pinned.repo, pinned.sha,
                                 permalink(pinned, site.path, site.line, site.end_line), site)


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part."""
    started = time.perf_counter()
    folder = output_folder(output_root, collected.pin)
    existing = load_existing(folder)
    sites = [site for outcome in collected.outcomes for site in outcome.sites]
    merged = merge(collected.pin, existing, sites)
    manifest = build_manifest(collected.pin, collected.options, collected.total,
                              list(collected.skipped), list(collected.outcomes), merged.records)
    try:
        written = 0 if dry_run else write_output(folder, merged.records, manifest)
    finally:
        emit.forget_prerendered()
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(collected.pin, folder, manifest, merged, written, seconds)


def extract(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
            options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
            name: str | None = None, jobs: int | None = None, progress: Progress | None = None,
            dry_run: bool = False) -> RunResult:
    """Pin `source` at `ref`, catalogue its raise sites, and merge them into the output folder."""
    collected = collect(source, ref=ref, options=options, cache_dir=cache_dir, name=name,
                        jobs=jobs, progress=progress)
    return apply(collected, output_root, dry_run=dry_run)


def load_existing(folder: Path) -> list[ErrorRecord]:
    """Every record already in the folder; a file that cannot be loaded stops the run."""
    return [emit.load_record(path) for path in emit.iter_record_paths(folder)]


def build_manifest(pinned: Pin, options: ExtractOptions, total: int, skipped: list[Skipped],
                   outcomes: list[FileOutcome], records: list[ErrorRecord]) -> Manifest:
    failures = [o.failure for o in outcomes if o.failure is not None]
    ids_by_path: dict[str, list[str]] = {}
    for record in records:
        if record.status != REMOVED:
            ids_by_path.setdefault(record.site.path, []).append(record.id)
    parsed = [o for o in outcomes if o.failure is None]
    files = tuple(
        FileEntry(o.path, o.blob, tuple(sorted(ids_by_path.get(o.path, ()))))
        for o in sorted(parsed, key=lambda o: o.path)
    )
    all_skipped = tuple(sorted(skipped + failures, key=lambda s: (s.path, s.reason)))
    counts = Counts(
        files=total,
        parsed=len(parsed),
        skipped=len(all_skipped),
        raise_statements=sum(o.counts.raise_statements for o in outcomes),
        records=sum(1 for r in records if r.status != REMOVED),
        removed=sum(1 for r in records if r.status == REMOVED),
        bare_raise=sum(o.counts.bare_raise for o in outcomes),
        reraise=sum(o.counts.reraise for o in outcomes),
        without_message=sum(o.counts.without_message for o in outcomes),
    )
    return Manifest(pinned, __version__, options, counts, files, all_skipped)


def write_output(folder: Path, records: list[ErrorRecord], manifest: Manifest) -> int:
    """Write the records whose text changed, then the manifest last (it marks the run done)."""
    written = emit.write_records(folder, records)
    emit.sync_folder(folder / emit.ERRORS_DIR)
    written += emit.write_manifest(folder, manifest)
    emit.sync_folder(folder)
    return written
