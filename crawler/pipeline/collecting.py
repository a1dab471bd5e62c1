"""Reading a repository into sites: pin, select files, visit them in worker processes (or
take them from the result cache), read the tests for evidence; the whole checkout or the
files changed since the folder's commit.

Which existing records a run loads, and what it says of those it cannot find.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from crawler import __version__
from crawler.catalogue.manifest import is_other_repository
from crawler.catalogue.merge import PathMoves
from crawler.errors import CrawlerError, OutputError
from crawler.git.cache_folder import default_cache_dir
from crawler.git.diff import LineMap, line_map
from crawler.git.pin import PinnedRepo, pin
from crawler.git.source import LOCAL
from crawler.parse import skeleton
from crawler.parse.forkserver import warm_up
from crawler.parse.outcomes import FileOutcome
from crawler.parse.workers import Limits, WorkerPool, default_jobs, visit_all
from crawler.pipeline import entry_stage, evidence_stage
from crawler.pipeline.selection import select_files, select_test_files
from crawler.pipeline.stages import EVIDENCE, Progress, stage_callback
from crawler.records import (
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
from crawler.store import record_files, repo_output
from crawler.store.cache import LoadCache, split_cached
from crawler.store.context import StoreContext
from crawler.store.manifest_file import MANIFEST, load_manifest
from crawler.store.parse_cache import EvidenceCache, ResultCache
from crawler.store.record_files import ERRORS_DIR, iter_record_paths, load_record
from crawler.store.render import SiteBlocks


def read_tests(repo: PinnedRepo, entries: list[SourceFile], options: ExtractOptions, jobs: int,
               cache_dir: Path | None, progress: Progress | None, pool: WorkerPool | None = None
               ) -> evidence_stage.TestEvidence:
    """The test files' assertions, through the evidence cache and the parser pool (see
    `crawler.pipeline.evidence_stage`; `pool`: one the caller keeps): a test file that crashes the parser
    or runs out of time costs its own evidence and is listed, never another file's, and never
    hangs the run."""
    return evidence_stage.read_test_files(
        partial(_read, repo), select_test_files(entries, options), jobs,
        EvidenceCache(cache_dir if cache_dir is not None else default_cache_dir()),
        stage_callback(progress, EVIDENCE), pool)


def visit_files(repo: PinnedRepo, files: list[SourceFile], jobs: int,
                progress: Progress | None, cache: ResultCache | None = None,
                limits: Limits | None = None, before: dict[str, str] | None = None,
                blocks: SiteBlocks | None = None, pool: WorkerPool | None = None
                ) -> list[FileOutcome]:
    """Visit every file in worker processes (see `crawler.parse.workers`); outcomes in file order.

    A file whose (path, blob) is in the cache is not read at all. The others are read as workers
    become free and taken as they finish, so what is held is the outcomes and one batch of bytes
    per worker, whatever the size of the repository; each is stored in the cache for the next
    run, of this repository or any other. `before` maps a path to its blob at the previous
    run: when the cache holds that version's results, only the file's changed functions are
    parsed (`crawler.parse.skeleton`). `blocks` gets the new sites' record blocks, rendered while the
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
    if pool is None:  # the first file to parse starts the fork server (`crawler.parse.forkserver`)
        warm_up()
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
                   exposed=skeleton.carried(outcome.path, outcome.exposed, outcome.stubbed,
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
    previous_calls: entry_stage.Before | None = None  # the graph before, where to keep the one after


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
    with pin(source, ref, cache_dir=cache_dir, name=name, web_url=web_url) as repo:
        changed = again(repo) if again is not None else None
        if changed is not None:
            return changed
        return collect_pinned(repo, options, cache_dir, jobs, progress, evidence, blocks,
                               diff_from, started)


def collect_pinned(repo: PinnedRepo, options: ExtractOptions, cache_dir: Path | None,
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
                          no_diff=no_diff, previous_calls=entry_stage.Before(
                              cache_root=_root(cache)))
    return _with_tests(collected, tests)


def collect_again(repo: PinnedRepo, previous: Manifest, folder: Path, cache_dir: Path | None,
                   jobs: int | None, progress: Progress | None, evidence: bool,
                   store: StoreContext, release: str | None = None, *,
                   pool: WorkerPool | None = None, results: ResultCache | None = None
                   ) -> Collected:
    """An update's collection: the files that changed since the folder's manifest (and those
    whose records went missing), and, with `evidence`, the test files through their cache."""
    missing = (store.held.missing(previous) if store.held is not None
               else missing_ids(folder, previous))
    cache = results if results is not None else result_cache(cache_dir)
    collected = collect_changes(repo, previous, cache=cache, jobs=jobs,
                                progress=progress, blocks=store.blocks,
                                reread=paths_of(previous, missing | unreleased(previous, release)),
                                pool=pool)
    if not evidence:
        return collected
    return _with_tests(collected, read_tests(repo, repo.list_files(), previous.options,
                                             jobs or default_jobs(), cache_dir, progress))


def built_here(folder: Path, pinned: Pin, options: ExtractOptions, store: StoreContext
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
    before_graph = entry_stage.before_of(_root(cache), previous, cache.get, kept_paths) \
        if todo and cache is not None else None
    return Collected(repo.pin, previous.options, total, tuple(skipped), tuple(outcomes),
                     time.perf_counter() - started, tuple(kept), tuple(sorted(renames.items())),
                     context, notes=_source_notes(repo), lines=lines, no_diff=no_diff,
                     previous_calls=before_graph)


def _root(cache: ResultCache | None) -> Path | None:
    """The cache's folder, where the entry-point graph is kept for the next update."""
    return cache.database.parent if cache is not None and cache.database is not None else None


def _source_notes(repo: PinnedRepo) -> tuple[str, ...]:
    return (repo.spec.note,) if repo.spec.note else ()


def earlier_local_folder(root: Path, pinned: Pin, previous: Manifest | None) -> list[str]:
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
