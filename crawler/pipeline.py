"""The stages in order: pin, select files, visit them (in worker processes), merge, emit.

This module only wires the stages together; each stage lives in its own module. It prints
nothing: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from crawler import __version__, classes, output
from crawler.errors import OutputError
from crawler.merge import MergeResult, merge
from crawler.names import module_name
from crawler.pin import PinnedRepo, pin
from crawler.records import (
    REMOVED,
    ClassDef,
    Counts,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    Manifest,
    Pin,
    RaiseSite,
    Skipped,
    SourceFile,
)
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
    pending: tuple[RaiseSite, ...] = ()  # message-less raises that may take a class default
    classes: tuple[ClassDef, ...] = ()
    exports: dict[str, str] = field(default_factory=dict)  # module-level names: qualified names


@dataclass(frozen=True)
class RunResult:
    """One extraction's outcome: where it wrote, the manifest, and what changed."""

    pin: Pin
    folder: Path
    manifest: Manifest
    merged: MergeResult
    files_written: int
    seconds: float
    problems: tuple[str, ...] = ()  # files in the folder that could not be loaded: left as they are
    notes: tuple[str, ...] = ()  # what the run healed: temp files removed, a manifest rebuilt


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


def visit_file(path: str, blob: str, data: bytes) -> FileOutcome:
    """Parse one file and find its sites; a file that cannot be parsed becomes a reason."""
    try:
        found = find_raise_sites(path, data, module_name(path))
    except RecursionError:
        return FileOutcome(path, blob, failure=Skipped(path, "parse_failed", "nested too deeply"))
    except Exception as error:  # noqa: BLE001 - any parser failure is this file's, not the run's
        return FileOutcome(path, blob, failure=Skipped(path, "parse_failed", _describe(error)))
    return FileOutcome(path, blob, tuple(found.sites), found.counts, pending=tuple(found.pending),
                       classes=tuple(found.classes), exports=found.exports)


def _describe(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    detail = lines[0] if lines else ""
    if hasattr(error, "raw_line"):  # libcst's ParserSyntaxError
        detail = f"line {error.raw_line}: {getattr(error, 'message', detail)}"
    return f"{type(error).__name__}: {detail}"[:300]


def _visit_packed(item: tuple[str, str, bytes]) -> FileOutcome:
    return visit_file(*item)


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


_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")


def output_folder(root: Path, pinned: Pin) -> Path:
    """Where one repository's records live: root/host/owner/name, each part checked first."""
    parts = [pinned.host, *pinned.owner.split("/"), pinned.name]
    for part in parts:
        if _SEGMENT.fullmatch(part) is None or part in (".", ".."):
            raise OutputError(f"[{pinned.source}] refused output folder name {part!r}: names are "
                              "letters, digits, '.', '_' and '-', and not '.' or '..'; "
                              "pass --name OWNER/NAME")
    return root.joinpath(*parts)


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
        outcomes = visit_files(repo, chosen, jobs or os.cpu_count() or 1, progress)
    return Collected(repo.pin, options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started)


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False, wait: float = 0.0
          ) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part.

    The whole read-merge-write runs under the folder's lock (shared for a dry run). Records are
    the truth: leftovers of a killed run are removed, the manifest is rebuilt from the records,
    and a record file that cannot be loaded is left as it is, with its source file held back.
    """
    started = time.perf_counter()
    pinned = collected.pin
    folder = output_folder(output_root, pinned)
    with output.lock(folder, wait=wait, shared=dry_run):
        removed = [] if dry_run else output.clean_temp_files(folder)
        notes = [f"{folder}: removed {len(removed)} temp files left by an interrupted run"
                 ] if removed else []
        loaded = output.load_folder(folder)
        if loaded.manifest_problem:
            notes.append(loaded.manifest_problem)
        resolved = classes.resolve([o for o in collected.outcomes if o.failure is None])
        sites = resolved.sites
        plan = output.plan(loaded, pinned, sites)
        merged = merge(pinned, plan.existing, plan.sites, reserved=plan.reserved)
        records = sorted([*merged.records, *plan.kept], key=lambda r: r.id)
        outcomes = [o for o in collected.outcomes if o.path not in plan.held]
        manifest = build_manifest(pinned, collected.options, collected.total,
                                  [*collected.skipped, *plan.skipped()], outcomes, records,
                                  resolved)
        if plan.held:
            manifest = replace(manifest, files=plan.files_with_held(manifest.files))
        written = 0
        if not dry_run and not plan.hold_all:
            written = output.write_folder(folder, merged.records, manifest, plan.reserved)
    problems = [broken.problem for broken in loaded.broken]
    if plan.hold_all:
        problems.append(f"{folder}: a broken record could not be placed in a source file, so "
                        "nothing was written; fix it and run again")
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(pinned, folder, manifest, merged, written, seconds, tuple(problems),
                     tuple(notes))


def extract(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
            options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
            name: str | None = None, jobs: int | None = None, progress: Progress | None = None,
            dry_run: bool = False, wait: float = 0.0) -> RunResult:
    """Pin `source` at `ref`, catalogue its raise sites, and merge them into the output folder."""
    collected = collect(source, ref=ref, options=options, cache_dir=cache_dir, name=name,
                        jobs=jobs, progress=progress)
    return apply(collected, output_root, dry_run=dry_run, wait=wait)


def build_manifest(pinned: Pin, options: ExtractOptions, total: int, skipped: list[Skipped],
                   outcomes: list[FileOutcome], records: list[ErrorRecord],
                   resolved: classes.Resolved | None = None) -> Manifest:
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
        without_message=sum(o.counts.without_message for o in outcomes)
        - (resolved.from_pending if resolved else 0),
    )
    exception_classes = tuple(resolved.exception_classes) if resolved else ()
    return Manifest(pinned, __version__, options, counts, files, all_skipped, exception_classes)

