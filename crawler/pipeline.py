"""The stages in order: pin, select files, visit them (in worker processes), merge, store.

This module only wires the stages together; each stage lives in its own module. It prints
nothing: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Protocol

from crawler import __version__, cyclic_gc, entry_stage, evidence_stage
from crawler.catalogue import classes, factories, holdback, releases
from crawler.catalogue.evidence import EvidenceStats
from crawler.catalogue.manifest import build_manifest, check_same_repository, is_other_repository
from crawler.catalogue.merge import MergeResult, PathMoves, SetAside, is_stale
from crawler.catalogue.regenerate import regenerate
from crawler.errors import CrawlerError, OutputError
from crawler.git.diff import LineMap, line_map
from crawler.git.pin import PinnedRepo, default_cache_dir, pin
from crawler.git.source import LOCAL
from crawler.parse import exposed, skeleton
from crawler.parse._forkserver import warm_up
from crawler.parse.call_edges import CallFacts
from crawler.parse.workers import FileOutcome, Limits, WorkerPool, default_jobs, visit_all
from crawler.records import (
    REMOVED,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    Manifest,
    Pin,
    RaiseSite,
    Releases,
    Skipped,
    SourceFile,
    TestAssertion,
)
from crawler.selection import select_files, select_test_files
from crawler.serve import lookup_index
from crawler.store import record_files, repo_output
from crawler.store.cache import EvidenceCache, LoadCache, ResultCache, split_cached
from crawler.store.context import StoreContext
from crawler.store.held_folder import HeldFolder, write_checkpoint
from crawler.store.manifest_file import MANIFEST, load_manifest, prime_manifest
from crawler.store.record_files import ERRORS_DIR, iter_record_paths, load_record
from crawler.store.render import SiteBlocks, manifest_text

# The stages a run reports progress on, in the order they run.
PARSING, EVIDENCE, CLASSES, MATCHING, WRITING = (
    "parsing", "test evidence", "class pass", "matching evidence", "writing")
STAGES = (PARSING, EVIDENCE, CLASSES, MATCHING, WRITING)
WRITE_CHUNK = 500  # records rendered and compared between two reports of the writing stage


class Progress(Protocol):
    """Told how far a stage has come: `done` of `total` (files, assertions or records), several
    times a second at most per item; a stage that has nothing to do is not reported."""

    def __call__(self, done: int, total: int, stage: str = PARSING) -> None: ...


def _stage(progress: Progress | None, stage: str) -> Callable[[int, int], None] | None:
    """`progress` for one stage, as a plain (done, total) callback."""
    return None if progress is None else partial(_report, progress, stage)


def _report(progress: Progress, stage: str, done: int, total: int) -> None:
    progress(done, total, stage)


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


def read_tests(repo: PinnedRepo, entries: list[SourceFile], options: ExtractOptions, jobs: int,
               cache_dir: Path | None, progress: Progress | None) -> evidence_stage.TestEvidence:
    """The test files' assertions, through the evidence cache and the parser pool (see
    `crawler.evidence_stage`): a test file that crashes the parser or runs out of time costs its
    own evidence and is listed, never another file's, and never hangs the run."""
    return evidence_stage.read_test_files(
        partial(_read, repo), select_test_files(entries, options), jobs,
        EvidenceCache(cache_dir if cache_dir is not None else default_cache_dir()),
        _stage(progress, EVIDENCE))


def visit_files(repo: PinnedRepo, files: list[SourceFile], jobs: int,
                progress: Progress | None, cache: ResultCache | None = None,
                limits: Limits | None = None, before: dict[str, str] | None = None,
                blocks: SiteBlocks | None = None, pool: WorkerPool | None = None
                ) -> list[FileOutcome]:
    """Visit every file in worker processes (see `crawler.workers`); outcomes in file order.

    A file whose (path, blob) is in the cache is not read at all. The others are read as workers
    become free and taken as they finish, so what is held is the outcomes and one batch of bytes
    per worker, whatever the size of the repository; each is stored in the cache for the next
    run, of this repository or any other. `before` maps a path to its blob at the previous
    run: when the cache holds that version's results, only the file's changed functions are
    parsed (`crawler.skeleton`). `blocks` gets the new sites' record blocks, rendered while the
    workers parse on. `pool`, where the caller keeps one across runs (a walk's steps), parses
    instead of a fresh pool of `jobs` workers.
    """
    outcomes, misses = split_cached(cache, files)
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

    for position, outcome in _visits(jobs_in(), jobs, limits, report, pool):
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


def _visits(jobs: Iterator[tuple[str, str, bytes, skeleton.Known | None]], workers: int,
            limits: Limits | None, report: Callable[[int], None] | None,
            pool: WorkerPool | None) -> Iterator[tuple[int, FileOutcome]]:
    """`visit_all`, or the caller's pool where it keeps one (its workers already started)."""
    if pool is None:
        yield from visit_all(jobs, workers, limits, report)
        return
    for done, item in enumerate(pool.run(jobs), start=1):
        if report is not None:
            report(done)
        yield item


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
                                 cached.context, exposed=cached.exposed)
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
                   regions=filled.regions, stubbed=(), counts=outcome.counts + filled.counts,
                   exposed=exposed.carried(outcome.path, outcome.exposed, outcome.stubbed,
                                           previous.exposed, previous.regions))


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
    tests_crashed: tuple[Skipped, ...] = ()  # test files whose read crashed or timed out
    evidence_digest: str | None = None  # of `assertions`, when the tests were read
    notes: tuple[str, ...] = ()  # how the source was read, where the user did not say
    lines: LineMap | None = None  # git's diff from the previous pin, when it could be made
    no_diff: str | None = None  # why there is no diff from the previous pin, when there is none
    previous_calls: tuple[CallFacts, ...] | None = None  # an update's: edges before (`entry_stage`)


def result_cache(cache_dir: Path | None) -> ResultCache:
    return ResultCache(cache_dir if cache_dir is not None else default_cache_dir())


def load_cache(cache_dir: Path | None) -> LoadCache:
    """The checked loads of record files, beside the result cache: what `apply` is given."""
    return LoadCache(cache_dir if cache_dir is not None else default_cache_dir())


def collect(source: str, *, ref: str = "HEAD", options: ExtractOptions = ExtractOptions(),
            cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
            progress: Progress | None = None, evidence: bool = True,
            blocks: SiteBlocks | None = None,
            diff_from: Callable[[Pin], str | None] | None = None,
            again: Callable[[PinnedRepo], Collected | None] | None = None,
            web_url: str | None = None) -> Collected:
    """Pin `source` at `ref` and visit its files: the part of a run that may happen elsewhere.

    With `evidence`, the repository's test files are parsed too, for the assertions that name
    an error: often more code than the library itself, so it can be left out. `blocks`, where
    the records are written in this process, gets the sites' blocks rendered ahead.
    `diff_from(pin)` names the commit the output folder was built at, for git's diff from it.
    `again(repo)`, once pinned, may collect only what changed instead (None: collect it all).
    """
    started = time.perf_counter()
    warm_up()  # while the commit is pinned and the cache asked
    with pin(source, ref, cache_dir=cache_dir, name=name, web_url=web_url) as repo:
        changed = again(repo) if again is not None else None
        if changed is not None:
            return changed
        return _collect_pinned(repo, options, cache_dir, jobs, progress, evidence, blocks,
                               diff_from, started)


def _collect_pinned(repo: PinnedRepo, options: ExtractOptions, cache_dir: Path | None,
                    jobs: int | None, progress: Progress | None, evidence: bool,
                    blocks: SiteBlocks | None, diff_from: Callable[[Pin], str | None] | None,
                    started: float, *, pool: WorkerPool | None = None,
                    results: ResultCache | None = None) -> Collected:
    """`collect` of a repository already pinned (`pool` and `results`: as `collect_held`'s)."""
    entries = repo.list_files()
    chosen, skipped, total = select_files(entries, options)
    workers = jobs or default_jobs()
    cache = results if results is not None else result_cache(cache_dir)
    outcomes = visit_files(repo, chosen, workers, progress, cache, blocks=blocks, pool=pool)
    tests = read_tests(repo, entries, options, workers, cache_dir, progress) if evidence else None
    old_sha = diff_from(repo.pin) if diff_from is not None else None
    lines, no_diff = _line_map(repo, old_sha) if old_sha else (None, None)
    collected = Collected(repo.pin, options, total, tuple(skipped), tuple(outcomes),
                          time.perf_counter() - started, notes=_source_notes(repo), lines=lines,
                          no_diff=no_diff)
    return _with_tests(collected, tests)


def _collect_again(repo: PinnedRepo, previous: Manifest, folder: Path, cache_dir: Path | None,
                   jobs: int | None, progress: Progress | None, evidence: bool,
                   store: StoreContext, release: str | None = None, *,
                   pool: WorkerPool | None = None, results: ResultCache | None = None
                   ) -> Collected:
    """An update's collection: the files that changed since the folder's manifest (and those
    whose records went missing), and, with `evidence`, the test files through their cache."""
    missing = (store.held.missing(previous) if store.held is not None
               else _missing_ids(folder, previous))
    cache = results if results is not None else result_cache(cache_dir)
    collected = collect_changes(repo, previous, cache=cache, jobs=jobs,
                                progress=progress, blocks=store.blocks,
                                reread=_paths_of(previous, missing | _unreleased(previous, release)),
                                pool=pool)
    if not evidence:
        return collected
    return _with_tests(collected, read_tests(repo, repo.list_files(), previous.options,
                                             jobs or default_jobs(), cache_dir, progress))


def _built_here(folder: Path, pinned: Pin, options: ExtractOptions, store: StoreContext
                ) -> Manifest | None:
    """The folder's manifest when this crawler built it at this very commit with these options:
    an extract then has only what changed since to read (record files gone, test files, a
    cache lost), as an update does; else None (a full run)."""
    try:
        previous = load_manifest(folder, store.loads)
    except CrawlerError:
        return None  # a broken manifest is rebuilt from the records by a full run
    if previous is None or previous.pin.sha != pinned.sha or previous.options != options \
            or previous.crawler_version != __version__ or is_other_repository(previous.pin, pinned):
        return None
    return previous


def _with_tests(collected: Collected, tests: evidence_stage.TestEvidence | None) -> Collected:
    if tests is None:
        return collected
    return replace(collected, assertions=tests.assertions, tests_read=True,
                   tests_crashed=tests.crashed, evidence_digest=tests.digest)


def _line_map(repo: PinnedRepo, old_sha: str) -> tuple[LineMap | None, str | None]:
    """Git's diff from `old_sha` to the pin, or why there is none (the merge then pairs by keys)."""
    if old_sha == repo.pin.sha:
        return None, None
    try:
        return line_map(repo, old_sha), None
    except CrawlerError as error:
        return None, (f"no git diff from {old_sha[:12]} ({error}): the sites whose lines did not "
                      "change were paired by their keys")


def collect_changes(repo: PinnedRepo, previous: Manifest, *, cache: ResultCache | None = None,
                    jobs: int | None = None, progress: Progress | None = None,
                    blocks: SiteBlocks | None = None, reread: frozenset[str] = frozenset(),
                    pool: WorkerPool | None = None) -> Collected:
    """Visit only the files whose blob differs from the manifest's, with the manifest's options,
    and the files in `reread` (those whose record files went missing: their sites are merged
    again, so the records are remade).

    The files not read again still take part in the repository-wide class pass: their classes
    and bindings come from the result cache (or a visit, when the cache lost them).
    """
    started = time.perf_counter()
    chosen, skipped, total = select_files(repo.list_files(), previous.options)
    old = {entry.path: entry for entry in previous.files}
    # A new crawler, or a new identity (web URL or permalink shape), rewrites every record.
    same_crawler = (previous.crawler_version == __version__ and previous.pin.repo == repo.pin.repo
                    and previous.pin.forge == repo.pin.forge)
    kept = [old[f.path] for f in chosen if same_crawler and f.path in old
            and old[f.path].blob == f.blob and f.path not in reread]
    kept_paths = {entry.path for entry in kept}
    todo = [f for f in chosen if f.path not in kept_paths]
    if todo:
        warm_up()  # while the cache is asked for what it holds
    before = {entry.path: entry.blob for entry in previous.files}
    outcomes = visit_files(repo, todo, jobs or os.cpu_count() or 1, progress, cache,
                           before=before, blocks=blocks, pool=pool)
    context: tuple[FileOutcome, ...] = ()
    if todo:  # nothing changed: no class can have changed either
        unchanged = [f for f in chosen if f.path in kept_paths]
        context = tuple(visit_files(repo, unchanged, jobs or os.cpu_count() or 1, None, cache,
                                    pool=pool))
    lines, no_diff = _line_map(repo, previous.pin.sha) if todo else (None, None)
    renames: dict[str, str] = {}
    if set(old) - {f.path for f in chosen} and previous.pin.sha != repo.pin.sha:
        try:
            renames, _ = repo.changed_paths(previous.pin.sha)
        except CrawlerError:
            renames = {}  # the old commit is not at hand: identical blobs still find moved files
    before_calls = entry_stage.previous_calls(cache.get, previous, kept_paths) \
        if todo and cache is not None else None
    return Collected(repo.pin, previous.options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started, tuple(kept), tuple(sorted(renames.items())),
                     context, notes=_source_notes(repo), lines=lines, no_diff=no_diff,
                     previous_calls=before_calls)


def _source_notes(repo: PinnedRepo) -> tuple[str, ...]:
    return (repo.spec.note,) if repo.spec.note else ()


def _earlier_local_folder(root: Path, pinned: Pin, previous: Manifest | None) -> list[str]:
    """Where a new folder named by a root commit has an older `local/local/<name>` beside it
    (the identity before roots), say where its records are: they are not carried over."""
    if previous is not None or pinned.host != LOCAL or pinned.owner != (pinned.root or "")[:12]:
        return []
    earlier = root / LOCAL / LOCAL / pinned.name
    if not (earlier / MANIFEST).is_file():
        return []
    return [f"{earlier} holds records from before local repositories were told apart by their "
            f"first commit; if they are this repository's, pass --name {pinned.name} to go on "
            "there"]


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False,
          previous: Manifest | None = None, wait: float = 0.0,
          store: StoreContext | None = None, progress: Progress | None = None,
          release: str | None = None) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part.

    The whole read-merge-write runs under the folder's lock (shared for a dry run). A full run
    (nothing `kept`) loads every record; an update loads only the records the manifest lists for
    files that changed, went or came, and those in review, unless the repository's exception
    classes changed (a class default reaches into other files): then it merges everything.
    Records are the truth: leftovers of a killed run are removed, and a record file that cannot
    be loaded is left as it is, with its source file held back. The `store` context's loads keep
    the checked loads of record files across runs, and learn the files this run writes (see
    `load_cache`); its blocks hold the sites rendered ahead (see `collect`). `release` names
    the release tag the pin is, for `crawler history`; a folder that history built keeps its
    records' release history at every run (`releases.mark_step`).
    """
    started = time.perf_counter()
    store = store if store is not None else StoreContext()
    loads, held = store.loads, store.held  # held: a walk's records in memory, no file touched
    folder = output_folder(output_root, collected.pin)
    repo_output.check_folder(output_root, folder)  # no link or FIFO on the way to any write
    with repo_output.lock(folder, wait=wait, shared=dry_run):
        problem = None
        if previous is None and held is None:
            previous, problem = _manifest_or_note(folder, loads)
        check_same_repository(str(folder), previous, collected.pin)  # before anything is touched
        removed_temp = [] if dry_run or held else repo_output.clean_temp_files(folder)
        notes = [*collected.notes, *_earlier_local_folder(output_root, collected.pin, previous)]
        notes.extend([f"{folder}: removed {len(removed_temp)} temp files left by an interrupted "
                      "run"] if removed_temp else [])
        notes.extend([problem] if problem else [])
        if previous is not None and previous.pin.sha == collected.pin.sha:
            # The same commit, maybe under another name or source spelling: nothing moved, so the
            # manifest keeps the pin it has (gaining the root an older one lacks, and taking
            # this run's web URL and permalink shape: the identity an older one lacked).
            collected = replace(collected, pin=replace(
                previous.pin, root=previous.pin.root or collected.pin.root,
                web_url=collected.pin.web_url, forge=collected.pin.forge))
        pinned = collected.pin
        resolved = class_pass(collected, previous, _stage(progress, CLASSES))
        if collected.kept and collected.outcomes:
            collected = _reach_of_class_changes(collected, previous, resolved)
            collected = _reach_of_callee_changes(collected)
        full = not collected.kept
        visited = {o.path for o in collected.outcomes}
        sites = [s for s in resolved.sites if s.path in visited]
        missing = held.missing(previous) if held else _missing_ids(folder, previous)
        if full or previous is None:
            loaded = (held.loaded() if held else
                      repo_output.load_folder(folder, manifest=previous, loads=loads))
            taken: set[str] = set()
        else:
            taken = (_ids_listed(previous) | held.records.keys() if held else
                     _ids_in(folder, previous)) - missing  # a deleted record's id may be remade
            # Records on disk that the manifest does not list were written by a run that stopped
            # before its manifest: they take part, so their sites do not get second records.
            orphans = taken - _ids_listed(previous)
            wanted = _ids_to_load(previous, collected) | orphans
            loaded = (held.loaded(wanted) if held else
                      repo_output.load_folder(folder, ids=wanted, manifest=previous, loads=loads))
        # Every other record file is checked as a full run would load it, so a broken one is
        # held back all the same: extract and update agree on every folder. (A held folder
        # loaded whole and whole, at the walk's start: nothing of it is on disk to check.)
        loaded, verified = (loaded, None) if held else _verify_rest(folder, loaded, loads)
        plan = holdback.plan(loaded, pinned, sites)
        lines = _diff_from(collected, previous, notes, folder)
        merged = regenerate(pinned, plan, moves=_moves(previous, collected), taken_ids=taken,
                            aside=_set_aside(collected, previous), full=full, assertions=None,
                            lines=lines)
        merged, walked = _release_step(merged, plan.existing, previous, pinned, release)
        unchanged = set() if full else set(merged.unchanged)
        matched, others = _match_tests(folder, collected, previous, merged, full, plan,
                                       loaded.records, loads, _stage(progress, MATCHING), held)
        # a record the merge left as it was whose evidence changed is written all the same
        unchanged -= {new.id for old, new in zip(merged.records, matched.records) if new is not old}
        merged = matched
        records, others = entry_stage.refresh(
            collected.outcomes, collected.context, collected.previous_calls, full, previous,
            merged.records, others, lambda ids: (held.loaded(ids) if held else repo_output.load_folder(
                folder, ids=ids, manifest=previous, loads=loads)).records)
        unchanged -= {new.id for old, new in zip(merged.records, records) if new is not old}
        merged = replace(merged, records=tuple(records))
        manifest = build_manifest(collected, previous, [*merged.records, *plan.kept], resolved,
                                  loaded={r.id for r in loaded.records},
                                  extra_skipped=plan.skipped())
        manifest = _with_test_files(manifest, collected, previous, merged)
        if plan.held:
            manifest = replace(manifest, files=plan.files_with_held(manifest.files))
        manifest = replace(manifest, releases=walked)
        changes = [*(r for r in merged.records if r.id not in unchanged), *others]
        cyclic_gc.settled()  # the merge's records live to the end; the write makes many more
        if held is not None:  # a walk's step: kept for the next, written at its checkpoints
            written = held.keep(changes, manifest)
            pending = [f"{ERRORS_DIR}/{r.id}.yaml" for r in changes]
        else:
            written, pending = _write(folder, changes, manifest, merged, plan, loaded, verified,
                                      notes, store, dry_run, progress)
    notes.extend(_missing_notes(folder, missing, merged.added, plan.reserved, dry_run))
    problems = [broken.problem for broken in loaded.broken]
    if plan.hold_all:
        problems.append(f"{folder}: a broken record could not be placed in a source file, so "
                        "nothing was written; fix it and run again")
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(pinned, folder, manifest, merged, written, seconds, tuple(problems),
                     tuple(notes), parsed=len(collected.outcomes), pending=tuple(pending),
                     stale=tuple(r for r in merged.records if is_stale(r) and r.status != REMOVED),
                     evidence=merged.evidence)


def _write(folder: Path, changes: Sequence[ErrorRecord], manifest: Manifest,
           merged: MergeResult, plan: holdback.Plan, loaded: repo_output.Loaded,
           verified: record_files.Verified | None, notes: list[str], store: StoreContext,
           dry_run: bool, progress: Progress | None) -> tuple[int, list[str]]:
    """`apply`'s writes: only the records whose text changes, each rendered once and its file
    read once, and the manifest; how many files were written, and the names pending."""
    loads = store.loads
    writes = _pending_writes(folder, changes, manifest_text(manifest), store.blocks,
                             _stage(progress, WRITING))
    written = 0
    if not dry_run and not plan.hold_all:
        written = repo_output.write_folder(folder, writes, plan.reserved, loads)
        if writes.manifest is not None and loads is not None:
            prime_manifest(loads, manifest, writes.manifest)  # the next update's first read
        notes.extend(_refresh_lookup_index(folder, [*plan.kept, *merged.records]))
    if loads is not None and not dry_run and not plan.hold_all and verified is not None:
        record_files.remember_good_files(folder, loads, verified,
                                         {f"{r.id}.yaml" for r in loaded.records},
                                         {item.record.id for item in writes.records})
    return written, list(writes.names())


def _refresh_lookup_index(folder: Path, records: Iterable[ErrorRecord]) -> list[str]:
    """The folder's lookup index, made or brought up to date with what was written (the
    records in memory stand for their files), so the first lookup reads no record: a note,
    never a failure, when it cannot be, since `lookup` builds it again. It is a cache whose
    bytes depend on the machine (file signatures): left out of git and of folder comparisons."""
    try:
        lookup_index.refresh(folder, {record.id: record for record in records})
    except (sqlite3.Error, OSError, OutputError) as error:  # OutputError: not the crawler's file
        return [f"{folder / lookup_index.INDEX_FILE}: the lookup index was not refreshed "
                f"({error}); `crawler lookup` rebuilds it"]
    return []


def _release_step(merged: MergeResult, existing: Iterable[ErrorRecord], previous: Manifest | None,
                  pinned: Pin, release: str | None) -> tuple[MergeResult, Releases | None]:
    """The records' release history moved on by this run, when it is a walk's step or the
    folder was built by one; records it changes are written even where the merge left them."""
    before = previous.releases if previous is not None else None
    if release is None and before is None:
        return merged, None
    step = releases.Step(release, pinned.sha, before or Releases())
    marked, walked = releases.mark_step(merged.records, {r.id: r for r in existing}, step)
    touched = {new.id for old, new in zip(merged.records, marked) if new is not old}
    return replace(merged, records=tuple(marked),
                   unchanged=tuple(i for i in merged.unchanged if i not in touched)), walked


def _diff_from(collected: Collected, previous: Manifest | None, notes: list[str],
               folder: Path) -> LineMap | None:
    """Git's diff from the folder's commit, if it was made from that commit; else a note that
    the sites were paired by keys alone (the old commit was not at hand, or a batch worker)."""
    if previous is None or previous.pin.sha == collected.pin.sha or not collected.outcomes:
        return None
    lines = collected.lines
    if lines is not None and lines.old == previous.pin.sha:
        return lines
    notes.append(f"{folder}: " + (collected.no_diff or f"no git diff from {previous.pin.sha[:12]}: "
                                  "the sites whose lines did not change were paired by their keys"))
    return None


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


def _reach_of_callee_changes(collected: Collected) -> Collected:
    """A kept file whose raise calls a function of a file read again is merged again with it:
    the function's new text is its template too (`factories.reached`)."""
    paths = factories.reached(collected.outcomes, collected.context)
    if not paths:
        return collected
    return replace(collected,
                   outcomes=(*collected.outcomes, *(o for o in collected.context if o.path in paths)),
                   kept=tuple(e for e in collected.kept if e.path not in paths),
                   context=tuple(o for o in collected.context if o.path not in paths))


def class_pass(collected: Collected, previous: Manifest | None,
               progress: Callable[[int, int], None] | None = None) -> classes.Resolved:
    """The repository-wide class pass; with nothing read again, what the manifest says of it."""
    if collected.outcomes or not collected.kept or previous is None:
        files = [o for o in (*collected.outcomes, *collected.context) if o.failure is None]
        if progress is not None and files:
            progress(0, len(files))
        resolved = classes.resolve(factories.settled_files(files))
        if progress is not None and files:
            progress(len(files), len(files))
        return resolved
    raw = sum(entry.raises.without_message for entry in previous.files)
    return classes.Resolved(sites=[], exception_classes=list(previous.exception_classes),
                            from_pending=raw - previous.counts.raises.without_message)


def _match_tests(folder: Path, collected: Collected, previous: Manifest | None,
                 merged: MergeResult, full: bool, plan: holdback.Plan, loaded: Sequence[ErrorRecord],
                 loads: LoadCache | None, progress: Callable[[int, int], None] | None,
                 held: HeldFolder | None = None) -> tuple[MergeResult, tuple[ErrorRecord, ...]]:
    """The merge with each record's test evidence matched, and the records outside the merge
    whose evidence changed (an update's). With the tests not read, or an update whose tests and
    sources did not change (`evidence_stage.needs_refresh`), nothing is matched. An update
    loads the folder's other records only when they can be concerned: the tests changed, or an
    assertion names the exception of a record the merge changed (`loaded` are their old forms).
    """
    digest = collected.evidence_digest
    if not collected.tests_read or digest is None or not (
            full or evidence_stage.needs_refresh(previous, digest, bool(collected.outcomes))):
        return merged, ()
    others: list[ErrorRecord] = []
    if not full and previous is not None and (
            evidence_stage.tests_changed(previous, digest) or evidence_stage.names_tested(
                collected.assertions, [*merged.records, *loaded])):
        # the folder's other records take part in the fits
        inside = {r.id for r in merged.records} | plan.reserved
        ids = {i for entry in previous.files if entry.path not in plan.held
               for i in entry.records} - inside
        others = list((held.loaded(ids) if held else repo_output.load_folder(
            folder, ids=ids, manifest=previous, loads=loads)).records)
    refreshed = evidence_stage.refresh_evidence(merged.records, others, collected.assertions,
                                                progress)
    return replace(merged, records=refreshed.records, evidence=refreshed.stats), refreshed.others


def _with_test_files(manifest: Manifest, collected: Collected, previous: Manifest | None,
                     merged: MergeResult) -> Manifest:
    """The manifest with the test files that crashed and the digest of the evidence; a run that
    did not read the tests keeps the previous ones (the digest only while no record changed)."""
    cut = evidence_stage.patterns_cut(merged.evidence, previous)
    if collected.tests_read:
        return evidence_stage.with_test_files(manifest, collected.tests_crashed,
                                              collected.evidence_digest, cut)
    changed = merged.added or merged.moved or merged.changed or merged.removed or merged.revived
    digest = previous.evidence_digest if previous is not None and not changed else None
    return evidence_stage.with_test_files(manifest, evidence_stage.previous_crashed(previous),
                                          digest, cut)


def _pending_writes(folder: Path, records: Sequence[ErrorRecord], manifest: str,
                    blocks: SiteBlocks | None, progress: Callable[[int, int], None] | None
                    ) -> repo_output.PendingWrites:
    """`repo_output.pending_writes`, a chunk of records at a time, reported as it goes."""
    if progress is None or len(records) <= WRITE_CHUNK:
        return repo_output.pending_writes(folder, records, manifest, blocks)
    texts: list[repo_output.RecordText] = []
    for start in range(0, len(records), WRITE_CHUNK):
        chunk = repo_output.pending_writes(folder, records[start:start + WRITE_CHUNK], manifest,
                                           blocks)
        texts.extend(chunk.records)
        progress(min(start + WRITE_CHUNK, len(records)), len(records))
    return replace(chunk, records=tuple(texts))


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


@cyclic_gc.frozen_during_run()
def extract(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
            options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
            name: str | None = None, jobs: int | None = None, progress: Progress | None = None,
            dry_run: bool = False, wait: float = 0.0, evidence: bool = True,
            web_url: str | None = None, release: str | None = None) -> RunResult:
    """Pin `source` at `ref`, catalogue its raise sites, and merge them into the output folder."""
    started = time.perf_counter()
    warm_up()  # the workers' imports overlap the pin
    store = StoreContext(load_cache(cache_dir))

    def folder_commit(pinned: Pin) -> str | None:
        """The commit the output folder was built at, to diff from; None for a new folder."""
        try:
            previous = load_manifest(output_folder(output_root, pinned), store.loads)
        except CrawlerError:
            return None  # a broken manifest is rebuilt from the records: pair by keys
        return previous.pin.sha if previous is not None else None

    def only_changes(repo: PinnedRepo) -> Collected | None:
        """Nothing to read but what changed, at an update's cost, in a folder built here."""
        folder = output_folder(output_root, repo.pin)
        previous = _built_here(folder, repo.pin, options, store)
        if previous is None:
            return None
        return _collect_again(repo, previous, folder, cache_dir, jobs, progress, evidence, store)

    collected = collect(source, ref=ref, options=options, cache_dir=cache_dir, name=name,
                        jobs=jobs, progress=progress, evidence=evidence, blocks=store.blocks,
                        diff_from=folder_commit, again=only_changes, web_url=web_url)
    cyclic_gc.settled()  # the outcomes live to the end
    result = apply(collected, output_root, dry_run=dry_run, wait=wait, store=store,
                   progress=progress, release=release)
    return replace(result, seconds=time.perf_counter() - started)


@cyclic_gc.frozen_during_run()
def update(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
           cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
           progress: Progress | None = None, dry_run: bool = False, wait: float = 0.0,
           evidence: bool = True, web_url: str | None = None, release: str | None = None
           ) -> RunResult:
    """Move an existing output folder to `ref`, reading again only the files that changed.

    With `evidence`, the test files are read too (from the evidence cache, but for those that
    changed), and the records whose evidence changed are rewritten."""
    started = time.perf_counter()
    warm_up()  # the workers' imports overlap the pin and the manifest's load
    store = StoreContext(load_cache(cache_dir))
    with pin(source, ref, cache_dir=cache_dir, name=name, web_url=web_url) as repo:
        folder = output_folder(output_root, repo.pin)
        previous = load_manifest(folder, store.loads)
        if previous is None:
            hint = "".join(f"; {note}" for note in _earlier_local_folder(output_root, repo.pin,
                                                                         None))
            raise OutputError(f"[{repo.pin.repo}] no records in {folder}: run `crawler extract` "
                              f"first (with the same --name, if it was given one){hint}")
        check_same_repository(str(folder), previous, repo.pin)  # before any file is read
        collected = _collect_again(repo, previous, folder, cache_dir, jobs, progress, evidence,
                                   store, release)
    cyclic_gc.settled()  # the outcomes and the previous manifest live to the end
    result = apply(collected, output_root, dry_run=dry_run, previous=previous, wait=wait,
                   store=store, progress=progress, release=release)
    return replace(result, seconds=time.perf_counter() - started)  # pinning and loading too


def collect_held(repo: PinnedRepo, previous: Manifest | None, folder: Path, store: StoreContext,
                 *, options: ExtractOptions, cache_dir: Path | None, jobs: int | None,
                 evidence: bool, release: str | None, pool: WorkerPool | None = None,
                 results: ResultCache | None = None) -> Collected:
    """A walk's step whose folder is held in memory (`store.held`): every file where the
    folder has no manifest yet (an extract's), else what changed since `previous` (an
    update's); `apply` with the same `store` then merges it in memory. `pool` and `results`
    are what the walk keeps across its steps: its workers, and the result cache it reads
    through (`held_folder.HeldResults`)."""
    if previous is None:
        return _collect_pinned(repo, options, cache_dir, jobs, None, evidence, store.blocks, None,
                               time.perf_counter(), pool=pool, results=results)
    check_same_repository(str(folder), previous, repo.pin)  # before any file is read
    return _collect_again(repo, previous, folder, cache_dir, jobs, None, evidence, store, release,
                          pool=pool, results=results)


def write_held(folder: Path, store: StoreContext, wait: float = 0.0) -> tuple[int, list[str]]:
    """Write what a walk's held folder changed since its last checkpoint, under the folder's
    lock (`wait` seconds at most; see `held_folder.write_checkpoint`): how many files, and notes."""
    if store.held is None:
        return 0, []
    with repo_output.lock(folder, wait=wait):
        written = write_checkpoint(folder, store.held, store.blocks, store.loads)
        notes = _refresh_lookup_index(folder, store.held.records.values()) if written else []
    return written, notes


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


def _verify_rest(folder: Path, loaded: repo_output.Loaded, loads: LoadCache | None
                 ) -> tuple[repo_output.Loaded, record_files.Verified]:
    """The folder as loaded, with the record files it did not load checked too."""
    seen = {Path(b.path).name for b in loaded.broken} | {f"{r.id}.yaml" for r in loaded.records}
    verified = record_files.verify_records(folder, seen, loads)
    broken = sorted((*loaded.broken, *verified.broken), key=lambda b: b.path)  # as a full load
    return replace(loaded, broken=tuple(broken)), verified


def _missing_ids(folder: Path, previous: Manifest | None) -> set[str]:
    """Ids the manifest lists under a source file that have no file in errors/ (deleted by
    hand, or renamed: a renamed one holds its id back, see `record_files.other_file`)."""
    if previous is None:
        return set()
    listed = {i for entry in previous.files for i in entry.records}
    errors = folder / ERRORS_DIR
    present = {name[:-5] for name in os.listdir(errors)} if errors.is_dir() else set()
    return listed - present


def _unreleased(previous: Manifest, release: str | None) -> set[str]:
    """At a release step, the records whose wording came after the last release: their files
    are merged again (from the cache), so that the step gives them their first release."""
    if release is None or previous.releases is None:
        return set()
    return set(previous.releases.unreleased)


def _paths_of(previous: Manifest | None, ids: set[str]) -> frozenset[str]:
    """The source files the manifest lists these ids under."""
    if previous is None or not ids:
        return frozenset()
    return frozenset(entry.path for entry in previous.files if ids.intersection(entry.records))


def _missing_notes(folder: Path, missing: set[str], added: Iterable[str],
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


def _moves(previous: Manifest | None, collected: Collected) -> PathMoves:
    """Where the old files went: git's renames, and new paths holding an old file's blob."""
    return PathMoves.between(previous, {o.path: o.blob for o in collected.outcomes},
                             dict(collected.renames))
