"""The stages in order: pin, select files, visit them (in worker processes), merge, emit.

This module only wires the stages together; each stage lives in its own module. It prints
nothing: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from crawler import __version__, emit
from crawler.evidence import FileAssertions, find_assertions
from crawler.fit import EvidenceStats, match_evidence
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
    RaiseSite,
    Skipped,
    SourceFile,
    TestAssertion,
)
from crawler.related import related_records, with_derived
from crawler.visitor import RaiseCounts, find_raise_sites

Progress = Callable[[int, int], None]  # (files done, files in all)

SYMLINK, SUBMODULE = "120000", "160000"
TEST_DIRS = frozenset({"test", "tests"})


@dataclass(frozen=True)
class FileOutcome:
    """What visiting one file gave: its sites, or why it could not be read."""

    path: str
    blob: str
    sites: tuple[RaiseSite, ...] = ()
    counts: RaiseCounts = field(default_factory=RaiseCounts)
    failure: Skipped | None = None


@dataclass(frozen=True)
class RunResult:
    """One extraction's outcome: where it wrote, the manifest, and what changed."""

    pin: Pin
    folder: Path
    manifest: Manifest
    merged: MergeResult
    files_written: int
    seconds: float
    evidence: EvidenceStats | None = None  # None when the tests were not read


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


def select_test_files(files: Iterable[SourceFile], options: ExtractOptions) -> list[SourceFile]:
    """The test files read for evidence: skipped for cataloguing (unless asked for), read anyway.

    `--exclude` globs apply (a suite can be left out); `--include` does not, since it narrows the
    catalogue to library code and the tests that exercise it live elsewhere.
    """
    return [
        entry for entry in files
        if entry.path.endswith(".py") and is_test_path(entry.path)
        and entry.mode not in (SYMLINK, SUBMODULE) and 0 <= entry.size <= options.max_file_bytes
        and not any(fnmatch.fnmatchcase(entry.path, glob) for glob in options.exclude)
    ]


def module_name(path: str) -> str:
    """The dotted module a file defines: `src/pkg/mod.py` gives `pkg.mod`."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


# ---------------------------------------------------------------- visiting files


def visit_file(path: str, blob: str, data: bytes) -> FileOutcome:
    """Parse one file and find its sites; a file that cannot be parsed becomes a reason."""
    try:
        found = find_raise_sites(path, data, module_name(path))
    except RecursionError:
        return FileOutcome(path, blob, failure=Skipped(path, "parse_failed", "nested too deeply"))
    except Exception as error:  # noqa: BLE001 - any parser failure is this file's, not the run's
        return FileOutcome(path, blob, failure=Skipped(path, "parse_failed", _describe(error)))
    return FileOutcome(path, blob, tuple(found.sites), found.counts)


def _describe(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    detail = lines[0] if lines else ""
    if hasattr(error, "raw_line"):  # libcst's ParserSyntaxError
        detail = f"line {error.raw_line}: {getattr(error, 'message', detail)}"
    return f"{type(error).__name__}: {detail}"[:300]


def _visit_packed(item: tuple[str, str, bytes]) -> FileOutcome:
    return visit_file(*item)


def read_assertions(path: str, blob: str, data: bytes) -> FileAssertions:
    """One test file's assertions; a file that cannot be parsed gives none (it is no record)."""
    try:
        return find_assertions(path, data)
    except RecursionError:
        return FileAssertions(path, ())
    except Exception:  # noqa: BLE001 - a test file we cannot parse only costs its evidence
        return FileAssertions(path, ())


def _assertions_packed(item: tuple[str, str, bytes]) -> FileAssertions:
    return read_assertions(*item)


def read_test_files(repo: PinnedRepo, files: list[SourceFile], jobs: int) -> list[FileAssertions]:
    """Every test file's assertions, in the order of `files`, in worker processes when jobs > 1."""
    by_blob = {f.blob: f for f in files}
    items = ((f.path, f.blob, data) for f, data in _read(repo, files, by_blob))
    if jobs <= 1 or len(files) < 2:
        return list(map(_assertions_packed, items))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_assertions_packed, items, chunksize=8))


def visit_files(repo: PinnedRepo, files: list[SourceFile], jobs: int,
                progress: Progress | None) -> list[FileOutcome]:
    """Visit every file, in worker processes when jobs > 1; outcomes in the order of `files`."""
    by_blob = {f.blob: f for f in files}
    items = ((f.path, f.blob, data) for f, data in _read(repo, files, by_blob))
    outcomes: list[FileOutcome] = []
    if jobs <= 1 or len(files) < 2:
        results: Iterator[FileOutcome] = map(_visit_packed, items)
        for outcome in results:
            outcomes.append(outcome)
            if progress:
                progress(len(outcomes), len(files))
        return outcomes
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for outcome in pool.map(_visit_packed, items, chunksize=8):
            outcomes.append(outcome)
            if progress:
                progress(len(outcomes), len(files))
    return outcomes


def _read(repo: PinnedRepo, files: list[SourceFile], by_blob: dict[str, SourceFile]
          ) -> Iterator[tuple[SourceFile, bytes]]:
    """Blob bytes in file order; a blob shared by two paths is read once per path."""
    shas = [f.blob for f in files]
    for entry, (sha, data) in zip(files, repo.read_blobs(shas)):
        assert sha == entry.blob, (sha, entry.blob)
        yield entry, data


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
    assertions: tuple[TestAssertion, ...] = ()  # from the test files, for evidence
    tests_read: bool = False  # False: keep the records' evidence as it is


def collect(source: str, *, ref: str = "HEAD", options: ExtractOptions = ExtractOptions(),
            cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
            progress: Progress | None = None) -> Collected:
    """Pin `source` at `ref` and visit its files: the part of a run that may happen elsewhere."""
    started = time.perf_counter()
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        entries = repo.list_files()
        chosen, skipped, total = select_files(entries, options)
        workers = jobs or os.cpu_count() or 1
        outcomes = visit_files(repo, chosen, workers, progress)
        tests = read_test_files(repo, select_test_files(entries, options), workers)
    assertions = tuple(a for found in tests for a in found.assertions)
    return Collected(repo.pin, options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started, assertions, tests_read=True)


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part."""
    started = time.perf_counter()
    folder = output_folder(output_root, collected.pin)
    existing = load_existing(folder)
    sites = [site for outcome in collected.outcomes for site in outcome.sites]
    merged = merge(collected.pin, existing, sites)
    stats = EvidenceStats() if collected.tests_read else None
    evidence = match_evidence(merged.records, collected.assertions, stats) if stats else None
    merged.records = with_derived(merged.records, related_records(merged.records), evidence)
    manifest = build_manifest(collected.pin, collected.options, collected.total,
                              list(collected.skipped), list(collected.outcomes), merged.records)
    written = 0 if dry_run else write_output(folder, merged.records, manifest)
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(collected.pin, folder, manifest, merged, written, seconds, stats)


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
    written = sum(1 for record in records if emit.write_record(folder, record))
    emit.sync_folder(folder / emit.ERRORS_DIR)
    written += emit.write_manifest(folder, manifest)
    emit.sync_folder(folder)
    return written
