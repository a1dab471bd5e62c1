"""`crawler history`: walk a repository's release tags, one regeneration per tag, to a commit.

Each step is the regeneration `update` makes (`pipeline.update`): only the files whose blob
changed since the previous tag are read again (the result cache and skeleton reads do the rest),
the same matching pairs old records with new sites, and annotations are never touched. The step
names its release, so each record's `versions` and `history.templates` move on with it
(`catalogue.releases.mark_step`). The first step of a folder that no walk built is a full
`extract` (every record is loaded and given its first release); the last step is the requested
commit, which is no release. The manifest lists the tags walked: a later run walks only the
tags after them.

The folder is held in memory from step to step (`store.held_folder`): a step's merge hands its
records to the next, none is read again from its file, and the records that changed are
written at checkpoints (every `checkpoint_steps` steps or `checkpoint_seconds`, and at the
end), each one journalled batch. A killed walk goes on from its last checkpoint, to the same
folder an uninterrupted one makes. A step where no selected file changed reads and writes no
record: it lists the tag's files, and moves the manifest's releases on. A folder that cannot
be held exactly (a record file that does not load) is walked step by step on disk, as
`update` would, which holds such files back; so is the first step of a folder that `extract`
built.

A held walk keeps what each step would start again (`_Shared`): one pool of worker processes
(a fresh pool's workers each cost a start and a first parse), and the visit results it
decoded (`held_folder.HeldResults`). A step then costs what changed since the tag before.

The reading runs ahead of the merges (`_ReadAhead`): a thread pins the coming tags and has
their changed files parsed (by a pool of its own, or by a Dask cluster's workers through
`cluster_pool`) into the result cache, keyed by blob, while the steps merge in release order in
this thread and find each file there. A blob read once is never read again, in this walk or a
later one; the merges are the sequential walk's, so the folder is the same, byte for byte.

Nothing here prints: each step is handed to `on_step` as it ends, which may stop the walk
there (the command line does when the reader of its output went away): what the walk made is
written as at its end, and a re-run goes on from that step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from crawler.catalogue.releases import Walk, moved_tags, order_tags, plan_walk
from crawler.errors import RefError
from crawler.git.cache_folder import default_cache_dir
from crawler.git.pin import pin
from crawler.git.tags import TagListing, list_tags
from crawler.parse.forkserver import warm_up
from crawler.parse.workers import WorkerPool, default_jobs
from crawler.pipeline import (
    RunResult,
    apply,
    collect_held,
    extract,
    load_cache,
    output_folder,
    read_tests,
    result_cache,
    update,
    visit_files,
    write_held,
)
from crawler.pipeline.selection import select_files
from crawler.records import ExtractOptions, Manifest, TagMove
from crawler.store import repo_output
from crawler.store.context import StoreContext
from crawler.store.held_folder import HeldFolder, HeldResults, finish_checkpoint, hold
from crawler.store.manifest_file import load_manifest
from crawler.store.parse_cache import ResultCache

CHECKPOINT_STEPS = 10  # steps between two checkpoints, at most
CHECKPOINT_SECONDS = 120.0  # seconds of walking between two checkpoints, at most
READ_AHEAD = 4  # tags whose files are read ahead of the step that merges them, at most
# How long a step waits for the folder's lock. The reader's git children, forked while a step
# holds it, keep a copy of its descriptor (and the lock) until they exec: a moment, or longer on
# a loaded machine. Another run that holds the folder still stops the walk, this much later.
LOCK_WAIT = 30.0


@dataclass(frozen=True)
class TagStep:
    """One regeneration of a walk: the release it reached (None: the end commit).

    Once the next step is made, a step's result keeps its counts, its changes by id, its pin
    and its manifest's releases, not its records (`merged.records`, `stale`) nor its
    manifest's lists of files: on jax, each step's records that moved kept a version of their
    own, 1 GB over 186 releases. The walk's last step keeps all of it.
    """

    tag: str | None
    number: int  # one-indexed, among the steps of this run
    steps: int  # how many this run makes
    result: RunResult
    date: int | None = None  # the tag's date (unix seconds; None: the end commit, or unknown)
    left: float | None = None  # seconds the steps after it may take, from those before


@dataclass(frozen=True)
class HistoryResult:
    """A walk: where it wrote, the steps it made, and the tags it left out, with why."""

    folder: Path
    walk: Walk
    steps: tuple[TagStep, ...]
    seconds: float
    checkpoints: int = 0  # checkpoints that wrote files, the end's included
    stopped: bool = False  # `on_step` stopped it before its last step: a re-run goes on
    read_ahead: int = 0  # (path, blob) pairs read ahead of the steps: parsed, or in the cache
    moved: tuple[TagMove, ...] = ()  # walked tags that moved or went since they were walked


def walk_releases(source: str, *, tags: str, ref: str = "HEAD", output_root: Path = Path("output"),
                  options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
                  name: str | None = None, jobs: int | None = None, evidence: bool = True,
                  since: str | None = None,
                  on_step: Callable[[TagStep], bool | None] | None = None,
                  checkpoint_steps: int = CHECKPOINT_STEPS,
                  checkpoint_seconds: float = CHECKPOINT_SECONDS,
                  read_ahead: int = READ_AHEAD,
                  cluster_pool: Callable[[], WorkerPool] | None = None) -> HistoryResult:
    """Walk the tags matching `tags` (from `since`, one of them) after those walked before, then
    `ref` (unless `ref` is one of the tags: the walk ends there). Plain arguments: a batch
    worker or a Dask task can run it whole, where the output folder is. An `on_step` that
    returns False stops the walk there, at a checkpoint (`HistoryResult.stopped`).
    `read_ahead` tags have their files read ahead of the merges (0: each step reads its own),
    in the pool `cluster_pool` makes where one is given (a Dask cluster's workers:
    `batch.dask_reading.DaskPool`; see `_ReadAhead`)."""
    started = time.perf_counter()
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        listing = list_tags(repo, tags)
        every = {tag.name: tag.commit for tag in list_tags(repo, "*").tags}
        folder = output_folder(output_root, repo.pin)
        local = repo.spec.kind == "local" or bool(repo.spec.file_url)
    found = listing.tags
    if not found:
        raise RefError(f"[{repo.pin.source}] no tag {_that_names_a_commit(listing)}matches "
                       f"{tags!r}{_why_not(listing)}; list them with `git tag -l` and give "
                       "--tags a glob that matches the releases")
    walk = order_tags(found)
    if since is not None and since not in {tag.name for tag in walk.tags}:
        raise RefError(f"[{repo.pin.source}] --since {since!r} is not one of the release tags "
                       f"that {tags!r} selects; give one of them")
    store = StoreContext(load_cache(cache_dir))
    store = replace(store, held=_hold(output_root, folder, store))
    previous = store.held.manifest if store.held is not None else load_manifest(folder)
    moved: tuple[TagMove, ...] = ()
    if previous is not None and previous.releases is not None:
        moved = moved_tags(previous.releases, every)
        previous = replace(previous, releases=replace(previous.releases, moved=moved))
        if store.held is not None:  # the steps go on from the held manifest: it says so too
            store.held.manifest = previous
    walk = plan_walk(found, previous.releases if previous is not None else None,
                     stop_at=ref if ref in {tag.name for tag in found} else None, since=since)
    walk = replace(walk, ignored=(*listing.not_commits, *walk.ignored))
    targets: list[str | None] = [tag.name for tag in walk.tags]
    if ref not in {tag.name for tag in found}:
        targets.append(None)  # the end commit, which is no release
    steps: list[TagStep] = []
    stopped = False
    checkpoints = _Checkpoints(folder, checkpoint_steps, checkpoint_seconds)
    dates = {tag.name: tag.date for tag in found}
    # A remote is fetched one commit at a time into one cache: only the steps pin it.
    reader = (_ReadAhead(source, [tag if tag is not None else ref for tag in targets],
                         options=previous.options if previous is not None else options,
                         before=previous, cache_dir=cache_dir, name=name,
                         jobs=jobs or default_jobs(), depth=read_ahead, cluster_pool=cluster_pool,
                         evidence=evidence)
              if (read_ahead > 0 or cluster_pool is not None) and local else None)
    walking = time.perf_counter()
    with WorkerPool(jobs or default_jobs()) as pool, _reading(reader):
        shared = _Shared(pool, HeldResults(cache_dir if cache_dir is not None
                                           else default_cache_dir()))
        for number, tag in enumerate(targets, 1):
            if reader is not None:
                reader.wait(number - 1)
            shared.results.next_step()
            # The tests are read at the walk's end only: a step between keeps the records'
            # evidence as it is (each read and match cost more than the step's parse on jax),
            # and the end's full match (the digest changed) gives every record its evidence.
            step_evidence = evidence and number == len(targets)
            at = tag if tag is not None else ref
            if store.held is not None and (previous is None or previous.releases is not None):
                result = _held_step(source, at, tag, previous, store, folder, shared,
                                    output_root=output_root, options=options,
                                    cache_dir=cache_dir, name=name, jobs=jobs,
                                    evidence=step_evidence)
                result = checkpoints.after_step(store, result)
            else:  # on disk: a folder that cannot be held, or one `extract` built
                result = _step(source, at, tag, previous, output_root=output_root,
                               options=options, cache_dir=cache_dir, name=name, jobs=jobs,
                               evidence=step_evidence)
                if store.held is not None:  # the folder is now a walk's: held from here on
                    store = replace(store, held=_hold(output_root, folder, store))
            # a held step goes on from the manifest as read back, as one on disk loads it
            previous = store.held.manifest if store.held is not None else result.manifest
            if reader is not None:
                reader.stepped()
            spent = time.perf_counter() - walking
            if steps:  # the step before is no longer the last: its counts are all it keeps
                steps[-1] = _counted(steps[-1])
            steps.append(TagStep(tag, number, len(targets), result, dates.get(tag or ""),
                                 spent / number * (len(targets) - number)))
            if on_step is not None and on_step(steps[-1]) is False and number < len(targets):
                stopped = True  # what the walk made so far is written below, as at its end
                break
    if steps:
        last = checkpoints.final(store, steps[-1].result)
        if reader is not None and reader.failure is not None:
            last = replace(last, notes=(*last.notes, f"reading ahead stopped ({reader.failure}); "
                                        "the steps read their own files"))
        steps[-1] = replace(steps[-1], result=last)
    return HistoryResult(folder, walk, tuple(steps), time.perf_counter() - started,
                         checkpoints.written, stopped, reader.visited if reader else 0, moved)


def _counted(step: TagStep) -> TagStep:
    """The step without what only its own merge needed (see `TagStep`)."""
    result = step.result
    manifest = replace(result.manifest, files=(), skipped=(), exception_classes=(), removed={},
                       needs_review=())
    return replace(step, result=replace(result, manifest=manifest, stale=(),
                                        merged=replace(result.merged, records=())))


def _that_names_a_commit(listing: TagListing) -> str:
    """Where every tag the glob selects names a tree or a blob, the message says so."""
    return "that names a commit " if listing.not_commits else ""


def _why_not(listing: TagListing) -> str:
    reasons = "; ".join(f"{tag} {why}" for tag, why in listing.not_commits)
    return f" ({reasons})" if reasons else ""


@contextmanager
def _reading(reader: _ReadAhead | None) -> Iterator[None]:
    """The read-ahead thread for the walk's steps, stopped when they end (at once on an error:
    its daemon thread then ends with the tag it reads)."""
    if reader is None:
        yield
        return
    reader.start()
    try:
        yield
    except BaseException:
        reader.close(wait=False)
        raise
    reader.close(wait=True)


class _ReadAhead:
    """The coming tags' files parsed into the result cache by a thread of their own, at most
    `depth` tags ahead of the step that merges them.

    Each tag is pinned and its selected files visited as its step would visit them
    (`pipeline.visit_files`, skeletons against the tag before), by its own worker pool or, with
    `cluster_pool`, by the pool it makes (a Dask cluster's workers). A file already in the
    cache (the same path and blob, read for any earlier tag or run) is not read. With
    `evidence`, the last tag's test files are read too, into the evidence cache, where the last
    step finds them: on a cluster, no step then starts a parser process of its own. The steps
    then find every file there: what they merge is what they would have parsed. Where the
    reader fails, the steps read their own files, as a walk without it does.
    """

    def __init__(self, source: str, refs: list[str], *, options: ExtractOptions,
                 before: Manifest | None, cache_dir: Path | None, name: str | None, jobs: int,
                 depth: int, cluster_pool: Callable[[], WorkerPool] | None, evidence: bool = False) -> None:
        self.source, self.refs, self.options, self.evidence = source, refs, options, evidence
        self.cache_dir, self.name, self.jobs, self.cluster_pool = cache_dir, name, jobs, cluster_pool
        self.before = {entry.path: entry.blob for entry in before.files} if before else None
        self._ready = [threading.Event() for _ in refs]
        self._room = threading.Semaphore(max(1, depth))  # tags read and not yet merged
        self._stop = threading.Event()
        self.failure: BaseException | None = None  # what stopped it: the steps read on
        self.visited = 0  # (path, blob) pairs it visited: parsed, or found in the cache
        self._seen: set[tuple[str, str]] = set()
        self._thread = threading.Thread(target=self._read_all, name="crawler-read-ahead",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wait(self, index: int) -> None:
        """Until the reader is done with the tag at `index` (or stopped)."""
        self._ready[index].wait()

    def stepped(self) -> None:
        """A step merged its tag: the reader may go one tag further."""
        self._room.release()

    def close(self, wait: bool) -> None:
        self._stop.set()
        self._room.release()
        if wait:
            self._thread.join()

    def _read_all(self) -> None:
        cache = result_cache(self.cache_dir)
        try:
            with self._pool() as pool:
                before = self.before
                for index, ref in enumerate(self.refs):
                    self._room.acquire()
                    if self._stop.is_set():
                        return
                    before = self._read(ref, before, cache, pool,
                                        tests=self.evidence and index == len(self.refs) - 1)
                    self._ready[index].set()
        except BaseException as error:  # noqa: BLE001 - the steps read their own files instead
            self.failure = error
        finally:
            for ready in self._ready:
                ready.set()
            cache.close()

    def _pool(self) -> WorkerPool:
        if self.cluster_pool is None:
            return WorkerPool(self.jobs)
        return self.cluster_pool()

    def _read(self, ref: str, before: dict[str, str] | None, cache: ResultCache,
              pool: WorkerPool, tests: bool) -> dict[str, str]:
        """Visit the files of `ref` into the cache; its (path: blob), for the next tag's read.
        With `tests` (the walk's last step reads them), its test files too."""
        with pin(self.source, ref, cache_dir=self.cache_dir, name=self.name) as repo:
            listed = repo.list_files()
            chosen, _, _ = select_files(listed, self.options)
            # a file this walk read for an earlier tag is in the cache: not even looked up
            new = [entry for entry in chosen if (entry.path, entry.blob) not in self._seen]
            visit_files(repo, new, pool.jobs, None, cache, before=before, pool=pool)
            if tests:  # into the evidence cache, where the last step finds them
                read_tests(repo, listed, self.options, pool.jobs, self.cache_dir, None, pool)
        self._seen.update((entry.path, entry.blob) for entry in new)
        self.visited += len(new)
        return {entry.path: entry.blob for entry in chosen}


@dataclass(frozen=True)
class _Shared:
    """What a held walk's steps share: its worker pool, and the visit results it decoded."""

    pool: WorkerPool
    results: HeldResults


def _hold(output_root: Path, folder: Path, store: StoreContext) -> HeldFolder | None:
    """The folder in memory for the walk, once a checkpoint a kill interrupted is finished and
    temp files are gone; None where it cannot be held (see `store.held_folder.hold`)."""
    repo_output.check_folder(output_root, folder)  # no link or FIFO on the way to any write
    if not folder.is_dir():
        return HeldFolder((), None)
    with repo_output.lock(folder, wait=LOCK_WAIT):
        finish_checkpoint(folder)
        repo_output.clean_temp_files(folder)
        return hold(folder, store.loads)


def _held_step(source: str, ref: str, tag: str | None, previous: Manifest | None,
               store: StoreContext, folder: Path, shared: _Shared, *, output_root: Path,
               options: ExtractOptions, cache_dir: Path | None, name: str | None,
               jobs: int | None, evidence: bool) -> RunResult:
    """One regeneration in memory: the merge of what changed since `previous` with the held
    records (every file, for a folder with no manifest yet), kept for the next step."""
    started = time.perf_counter()
    warm_up()  # the workers' imports overlap the pin
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        collected = collect_held(repo, previous, folder, store, options=options,
                                 cache_dir=cache_dir, jobs=jobs, evidence=evidence, release=tag,
                                 pool=shared.pool, results=shared.results)
    result = apply(collected, output_root, previous=previous, store=store, release=tag,
                   wait=LOCK_WAIT)
    return replace(result, seconds=time.perf_counter() - started)


class _Checkpoints:
    """When a held walk writes what it changed: every `steps` steps or `seconds`, and at its end."""

    def __init__(self, folder: Path, steps: int, seconds: float) -> None:
        self.folder, self.steps, self.seconds = folder, max(1, steps), seconds
        self.since_step, self.since = 0, time.monotonic()
        self.written = 0  # checkpoints that wrote files

    def after_step(self, store: StoreContext, result: RunResult) -> RunResult:
        self.since_step += 1
        if self.since_step < self.steps and time.monotonic() - self.since < self.seconds:
            return result
        return self.final(store, result)

    def final(self, store: StoreContext, result: RunResult) -> RunResult:
        """Write what is held and unwritten; the step's result takes the notes of the write."""
        written, notes = write_held(self.folder, store, wait=LOCK_WAIT)
        self.written += bool(written)
        self.since_step, self.since = 0, time.monotonic()
        return replace(result, notes=(*result.notes, *notes)) if notes else result


def _step(source: str, ref: str, tag: str | None, previous: Manifest | None, *,
          output_root: Path, options: ExtractOptions, cache_dir: Path | None, name: str | None,
          jobs: int | None, evidence: bool) -> RunResult:
    """One regeneration: a full extract where no walk built the folder yet (with the options
    of the extract that made it, if one did), else an update."""
    if previous is None or previous.releases is None:
        options = previous.options if previous is not None else options
        return extract(source, ref=ref, output_root=output_root, options=options,
                       cache_dir=cache_dir, name=name, jobs=jobs, evidence=evidence, release=tag,
                       wait=LOCK_WAIT)
    return update(source, ref=ref, output_root=output_root, cache_dir=cache_dir, name=name,
                  jobs=jobs, evidence=evidence, release=tag, wait=LOCK_WAIT)
