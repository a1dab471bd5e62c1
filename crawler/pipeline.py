"""The stages in order: pin, select files, visit them (in worker processes), merge, store.

This module only wires the stages together; each stage lives in its own module. It prints
nothing: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path

from crawler import __version__
from crawler.catalogue import classes, factories, holdback
from crawler.catalogue.evidence import EvidenceStats
from crawler.catalogue.manifest import build_manifest
from crawler.catalogue.merge import MergeResult, PathMoves, SetAside, is_stale
from crawler.catalogue.regenerate import regenerate
from crawler.errors import CrawlerError, OutputError
from crawler.git.pin import PinnedRepo, default_cache_dir, pin
from crawler.parse import skeleton
from crawler.parse._forkserver import warm_up
from crawler.parse.assertions import FileAssertions, find_assertions
from crawler.parse.workers import FileOutcome, Limits, default_jobs, visit_all
from crawler.records import (
    REMOVED,
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
from crawler.selection import select_files, select_test_files
from crawler.store import repo_output
from crawler.store.cache import LoadCache, ResultCache
from crawler.store.context import StoreContext
from crawler.store.manifest_file import load_manifest, prime_manifest
from crawler.store.record_files import ERRORS_DIR, iter_record_paths, load_record
from crawler.store.render import SiteBlocks, manifest_text

Progress = Callable[[int, int], None]  # (files done, files in all)


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
    parsed: int = 0  # files visited (read from the cache or parsed) in this run
    pending: tuple[str, ...] = ()  # files whose text this run changes (or would, in a dry run)
    stale: tuple[ErrorRecord, ...] = ()  # live records whose annotation names another template
    evidence: EvidenceStats | None = None  # None when the tests were not read


# ---------------------------------------------------------------- visiting files


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
    """Every test file's assertions, in worker processes: a test file that crashes the parser
    costs the evidence still unread, never the run."""
    found: list[FileAssertions] = []
    if not files:
        return found
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        try:
            found.extend(pool.map(_assertions_packed, _read(repo, files), chunksize=8))
        except BrokenProcessPool:
            pass  # evidence is a help, not a record: what was read is kept
    return found


def visit_files(repo: PinnedRepo, files: list[SourceFile], jobs: int,
                progress: Progress | None, cache: ResultCache | None = None,
                limits: Limits | None = None, before: dict[str, str] | None = None,
                blocks: SiteBlocks | None = None) -> list[FileOutcome]:
    """Visit every file in worker processes (see `crawler.workers`); outcomes in file order.

    A file whose (path, blob) is in the cache is not read at all. The others are read as workers
    become free and taken as they finish, so what is held is the outcomes and one batch of bytes
    per worker, whatever the size of the repository; each is stored in the cache for the next
    run, of this repository or any other. `before` maps a path to its blob at the previous
    run: when the cache holds that version's results, only the file's changed functions are
    parsed (`crawler.skeleton`). `blocks` gets the new sites' record blocks, rendered while the
    workers parse on.
    """
    outcomes: list[FileOutcome | None] = [None] * len(files)
    misses: list[int] = []
    for index, entry in enumerate(files):
        cached = cache.get(entry.path, entry.blob) if cache is not None else None
        if cached is None:
            misses.append(index)
        else:
            outcomes[index] = cached
    hits, total = len(files) - len(misses), len(files)
    if progress and hits:
        progress(hits, total)
    report = (lambda done: progress(hits + done, total)) if progress else None
    # Largest first: the last files to finish are then small ones, and no worker waits long
    # on another's big file at the end. Outcomes still come back in the order of `files`.
    order = sorted(misses, key=lambda i: -files[i].size)
    if not order:
        return outcomes  # type: ignore[return-value]  # every file from the cache: no worker
    previous: dict[str, skeleton.Previous] = {}

    def jobs_in() -> Iterator[tuple[str, str, bytes, skeleton.Known | None]]:
        """Each job as a worker asks for it: its previous version looked up meanwhile."""
        for path, blob, data in _read(repo, [files[i] for i in order]):
            was = _previous_version(path, blob, before, cache)
            if was is not None:
                previous[path] = was
            yield path, blob, data, _known(was)

    for position, outcome in visit_all(jobs_in(), jobs, limits, report):
        sites: Iterable[RaiseSite] = outcome.sites
        if outcome.stubbed:
            was = previous[outcome.path]
            outcome = _filled(outcome, was)
            unchanged = set(was.sites)  # a site as it was: its record is not written again
            sites = [site for site in outcome.sites if site not in unchanged]
        outcomes[order[position]] = outcome
        if blocks is not None:
            blocks.render(sites)  # while the workers parse on
        if cache is not None:
            cache.put(outcome)
    if cache is not None:
        cache.flush()
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


def _previous_version(path: str, blob: str, before: dict[str, str] | None,
                      cache: ResultCache | None) -> skeleton.Previous | None:
    """The cached results of the file's previous version, if it can be read as a skeleton."""
    was = before.get(path) if before else None
    if was is None or was == blob or cache is None:
        return None
    cached = cache.get(path, was)
    if cached is None:
        return None
    if cached.failure is None and cached.regions and cached.context:
        return skeleton.Previous(cached.sites, cached.pending, cached.classes, cached.regions,
                                 cached.context)
    return None


def _known(previous: skeleton.Previous | None) -> skeleton.Known | None:
    if previous is None:
        return None
    return skeleton.Known(previous.context, previous.regions)


def _filled(outcome: FileOutcome, previous: skeleton.Previous) -> FileOutcome:
    """A skeleton's outcome with its stubbed functions' results taken from the previous version."""
    filled = skeleton.fill(outcome.sites, outcome.pending, outcome.classes, outcome.regions,
                           outcome.stubbed, previous)
    return replace(outcome, sites=filled.sites, pending=filled.pending, classes=filled.classes,
                   regions=filled.regions, stubbed=(), counts=outcome.counts + filled.counts)


def _read(repo: PinnedRepo, files: list[SourceFile]) -> Iterator[tuple[str, str, bytes]]:
    """(path, blob, bytes) in file order, read lazily; a blob shared by two paths is read per path."""
    if not files:
        return
    shas = [f.blob for f in files]
    for entry, (sha, data) in zip(files, repo.read_blobs(shas)):
        if sha != entry.blob:
            raise AssertionError(f"{entry.path}: read blob {sha}, expected {entry.blob}")
        yield entry.path, entry.blob, data


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
    outcomes: tuple[FileOutcome, ...]  # the files visited (all of them, for a full run)
    seconds: float
    kept: tuple[FileEntry, ...] = ()  # files not read again: the same blob as in the manifest
    renames: tuple[tuple[str, str], ...] = ()  # old path -> new path, from git
    context: tuple[FileOutcome, ...] = ()  # kept files' visits, for the repository-wide class pass
    assertions: tuple[TestAssertion, ...] = ()  # from the test files, for evidence
    tests_read: bool = False  # False: keep the records' evidence as it is


def result_cache(cache_dir: Path | None) -> ResultCache:
    return ResultCache(cache_dir if cache_dir is not None else default_cache_dir())


def load_cache(cache_dir: Path | None) -> LoadCache:
    """The checked loads of record files, beside the result cache: what `apply` is given."""
    return LoadCache(cache_dir if cache_dir is not None else default_cache_dir())


def collect(source: str, *, ref: str = "HEAD", options: ExtractOptions = ExtractOptions(),
            cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
            progress: Progress | None = None, evidence: bool = True,
            blocks: SiteBlocks | None = None) -> Collected:
    """Pin `source` at `ref` and visit its files: the part of a run that may happen elsewhere.

    With `evidence`, the repository's test files are parsed too, for the assertions that name
    an error: often more code than the library itself, so it can be left out. `blocks`, where
    the records are written in this process, gets the sites' blocks rendered ahead.
    """
    started = time.perf_counter()
    warm_up()  # while the commit is pinned and the cache asked
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        entries = repo.list_files()
        chosen, skipped, total = select_files(entries, options)
        workers = jobs or default_jobs()
        outcomes = visit_files(repo, chosen, workers, progress, result_cache(cache_dir),
                               blocks=blocks)
        tests = (read_test_files(repo, select_test_files(entries, options), workers)
                 if evidence else [])
    assertions = tuple(a for found in tests for a in found.assertions)
    return Collected(repo.pin, options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started, assertions=assertions, tests_read=evidence)


def collect_changes(repo: PinnedRepo, previous: Manifest, *, cache: ResultCache | None = None,
                    jobs: int | None = None, progress: Progress | None = None,
                    blocks: SiteBlocks | None = None) -> Collected:
    """Visit only the files whose blob differs from the manifest's, with the manifest's options.

    The files not read again still take part in the repository-wide class pass: their classes
    and bindings come from the result cache (or a visit, when the cache lost them).
    """
    started = time.perf_counter()
    chosen, skipped, total = select_files(repo.list_files(), previous.options)
    old = {entry.path: entry for entry in previous.files}
    same_crawler = previous.crawler_version == __version__
    kept = [old[f.path] for f in chosen
            if same_crawler and f.path in old and old[f.path].blob == f.blob]
    kept_paths = {entry.path for entry in kept}
    todo = [f for f in chosen if f.path not in kept_paths]
    if todo:
        warm_up()  # while the cache is asked for what it holds
    before = {entry.path: entry.blob for entry in previous.files}
    outcomes = visit_files(repo, todo, jobs or os.cpu_count() or 1, progress, cache,
                           before=before, blocks=blocks)
    context: tuple[FileOutcome, ...] = ()
    if todo:  # nothing changed: no class can have changed either
        unchanged = [f for f in chosen if f.path in kept_paths]
        context = tuple(visit_files(repo, unchanged, jobs or os.cpu_count() or 1, None, cache))
    renames: dict[str, str] = {}
    if set(old) - {f.path for f in chosen} and previous.pin.sha != repo.pin.sha:
        try:
            renames, _ = repo.changed_paths(previous.pin.sha)
        except CrawlerError:
            renames = {}  # the old commit is not at hand: identical blobs still find moved files
    return Collected(repo.pin, previous.options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started, tuple(kept), tuple(sorted(renames.items())),
                     context)


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False,
          previous: Manifest | None = None, wait: float = 0.0,
          store: StoreContext | None = None) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part.

    The whole read-merge-write runs under the folder's lock (shared for a dry run). A full run
    (nothing `kept`) loads every record; an update loads only the records the manifest lists for
    files that changed, went or came, and those in review, unless the repository's exception
    classes changed (a class default reaches into other files): then it merges everything.
    Records are the truth: leftovers of a killed run are removed, and a record file that cannot
    be loaded is left as it is, with its source file held back. The `store` context's loads keep
    the checked loads of record files across runs, and learn the files this run writes (see
    `load_cache`); its blocks hold the sites rendered ahead (see `collect`).
    """
    started = time.perf_counter()
    store = store if store is not None else StoreContext()
    loads = store.loads
    folder = output_folder(output_root, collected.pin)
    with repo_output.lock(folder, wait=wait, shared=dry_run):
        removed_temp = [] if dry_run else repo_output.clean_temp_files(folder)
        notes = [f"{folder}: removed {len(removed_temp)} temp files left by an interrupted run"
                 ] if removed_temp else []
        if previous is None:
            previous, problem = _manifest_or_note(folder, loads)
            notes.extend([problem] if problem else [])
        if previous is not None and previous.pin.sha == collected.pin.sha:
            # The same commit, maybe under another name or source spelling: nothing moved, so the
            # manifest keeps the pin it has and a re-run rewrites nothing.
            collected = replace(collected, pin=previous.pin)
        pinned = collected.pin
        resolved = _class_pass(collected, previous)
        if collected.kept and collected.outcomes:
            collected = _reach_of_class_changes(collected, previous, resolved)
        full = not collected.kept
        visited = {o.path for o in collected.outcomes}
        sites = [s for s in resolved.sites if s.path in visited]
        if full or previous is None:
            loaded = repo_output.load_folder(folder, manifest=previous, loads=loads)
            taken: set[str] = set()
        else:
            taken = _ids_in(folder, previous)
            # Records on disk that the manifest does not list were written by a run that stopped
            # before its manifest: they take part, so their sites do not get second records.
            orphans = taken - _ids_listed(previous)
            loaded = repo_output.load_folder(folder, ids=_ids_to_load(previous, collected) | orphans,
                                        manifest=previous, loads=loads)
        plan = holdback.plan(loaded, pinned, sites)
        merged = regenerate(pinned, plan, moves=_moves(previous, collected), taken_ids=taken,
                            aside=_set_aside(collected, previous), full=full,
                            assertions=collected.assertions if collected.tests_read else None)
        manifest = build_manifest(collected, previous, [*merged.records, *plan.kept], resolved,
                                  loaded={r.id for r in loaded.records},
                                  extra_skipped=plan.skipped())
        if plan.held:
            manifest = replace(manifest, files=plan.files_with_held(manifest.files))
        unchanged = set() if full else set(merged.unchanged)
        changes = [r for r in merged.records if r.id not in unchanged]
        # Only the records whose text changes, each rendered once and its file read once.
        writes = repo_output.pending_writes(folder, changes, manifest_text(manifest), store.blocks)
        pending = writes.names()
        written = 0
        if not dry_run and not plan.hold_all:
            written = repo_output.write_folder(folder, writes, plan.reserved, loads)
            if writes.manifest is not None and loads is not None:
                prime_manifest(loads, manifest, writes.manifest)  # the next update's first read
    problems = [broken.problem for broken in loaded.broken]
    if plan.hold_all:
        problems.append(f"{folder}: a broken record could not be placed in a source file, so "
                        "nothing was written; fix it and run again")
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(pinned, folder, manifest, merged, written, seconds, tuple(problems),
                     tuple(notes), parsed=len(collected.outcomes), pending=tuple(pending),
                     stale=tuple(r for r in merged.records if is_stale(r) and r.status != REMOVED),
                     evidence=merged.evidence)


def _reach_of_class_changes(collected: Collected, previous: Manifest | None,
                            resolved: classes.Resolved) -> Collected:
    """Files not read again whose sites a changed exception class reaches, read as if changed.

    A class's entry holds what its raises take from it (its template, inherited through its
    bases, and its bases); a kept file that raises a class whose entry changed, by qualified or
    plain name (a re-export may spell it otherwise), is merged again with the changed files.
    """
    if previous is None:
        return replace(collected, outcomes=(*collected.outcomes, *collected.context), kept=(),
                       context=())
    before = {entry.get("qualname"): entry for entry in previous.exception_classes}
    after = {entry.get("qualname"): entry for entry in resolved.exception_classes}
    changed = {q for q in before.keys() | after.keys() if before.get(q) != after.get(q)}
    if not changed:
        return collected
    names = {str(q) for q in changed} | {str(q).rsplit(".", 1)[-1] for q in changed}

    def reached(outcome: FileOutcome) -> bool:
        for site in (*outcome.sites, *outcome.pending):
            written = site.exception_qualname or site.exception
            if written in names or written.rsplit(".", 1)[-1] in names:
                return True
        return False

    moved = [o for o in collected.context if reached(o)]
    if not moved:
        return collected
    paths = {o.path for o in moved}
    return replace(collected, outcomes=(*collected.outcomes, *moved),
                   kept=tuple(e for e in collected.kept if e.path not in paths),
                   context=tuple(o for o in collected.context if o.path not in paths))


def _class_pass(collected: Collected, previous: Manifest | None) -> classes.Resolved:
    """The repository-wide class pass; with nothing read again, what the manifest says of it."""
    if collected.outcomes or not collected.kept or previous is None:
        return classes.resolve(factories.settled_files(
            [o for o in (*collected.outcomes, *collected.context) if o.failure is None]))
    raw = sum(entry.raises.without_message for entry in previous.files)
    return classes.Resolved(sites=[], exception_classes=list(previous.exception_classes),
                            from_pending=raw - previous.counts.raises.without_message)


def _manifest_or_note(folder: Path, loads: LoadCache | None = None
                      ) -> tuple[Manifest | None, str | None]:
    """The folder's manifest; a broken one is only a note, since records are the truth."""
    try:
        return load_manifest(folder, loads), None
    except OutputError as error:
        return None, f"{error}; it will be rebuilt from the records"


def _set_aside(collected: Collected, previous: Manifest | None) -> SetAside:
    """Records the merge carries as they are: of files that failed, and in review unread."""
    return SetAside(failed_paths=frozenset(o.path for o in collected.outcomes if o.failure is not None),
                    unread_paths=frozenset(entry.path for entry in collected.kept),
                    in_review=frozenset(previous.needs_review if previous is not None else ()))


def extract(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
            options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
            name: str | None = None, jobs: int | None = None, progress: Progress | None = None,
            dry_run: bool = False, wait: float = 0.0, evidence: bool = True) -> RunResult:
    """Pin `source` at `ref`, catalogue its raise sites, and merge them into the output folder."""
    started = time.perf_counter()
    warm_up()  # the workers' imports overlap the pin
    store = StoreContext(load_cache(cache_dir))
    collected = collect(source, ref=ref, options=options, cache_dir=cache_dir, name=name,
                        jobs=jobs, progress=progress, evidence=evidence, blocks=store.blocks)
    result = apply(collected, output_root, dry_run=dry_run, wait=wait, store=store)
    return replace(result, seconds=time.perf_counter() - started)


def update(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
           cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
           progress: Progress | None = None, dry_run: bool = False, wait: float = 0.0
           ) -> RunResult:
    """Move an existing output folder to `ref`, reading again only the files that changed."""
    started = time.perf_counter()
    warm_up()  # the workers' imports overlap the pin and the manifest's load
    store = StoreContext(load_cache(cache_dir))
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        folder = output_folder(output_root, repo.pin)
        previous = load_manifest(folder, store.loads)
        if previous is None:
            raise OutputError(f"[{repo.pin.repo}] no records in {folder}: run `crawler extract` "
                              "first (with the same --name, if it was given one)")
        collected = collect_changes(repo, previous, cache=result_cache(cache_dir), jobs=jobs,
                                    progress=progress, blocks=store.blocks)
    result = apply(collected, output_root, dry_run=dry_run, previous=previous, wait=wait,
                   store=store)
    return replace(result, seconds=time.perf_counter() - started)  # pinning and loading too


# ---------------------------------------------------------------- loading what an update needs


def load_existing(folder: Path) -> list[ErrorRecord]:
    """Every record already in the folder; a file that cannot be loaded stops the run."""
    return [load_record(path) for path in iter_record_paths(folder)]


def _ids_to_load(previous: Manifest, collected: Collected) -> set[str]:
    """Records that this update may change: of files changed, gone or come, and in review."""
    kept = {entry.path for entry in collected.kept}
    touched = {o.path for o in collected.outcomes} | ({e.path for e in previous.files} - kept)
    ids = {i for entry in previous.files if entry.path in touched for i in entry.records}
    ids.update(i for path in touched for i in previous.removed.get(path, ()))
    ids.update(previous.needs_review)
    return ids


def _ids_listed(previous: Manifest) -> set[str]:
    ids = {i for entry in previous.files for i in entry.records}
    ids.update(i for found in previous.removed.values() for i in found)
    ids.update(previous.needs_review)
    return ids


def _ids_in(folder: Path, previous: Manifest) -> set[str]:
    """Every id in use: in the manifest and as a file name, so no new record takes one."""
    ids = _ids_listed(previous)
    errors = folder / ERRORS_DIR
    if errors.is_dir():
        ids.update(name[:-5] for name in os.listdir(errors) if name.endswith(".yaml"))
    return ids


def _moves(previous: Manifest | None, collected: Collected) -> PathMoves:
    """Where the old files went: git's renames, and new paths holding an old file's blob."""
    return PathMoves.between(previous, {o.path: o.blob for o in collected.outcomes},
                             dict(collected.renames))
