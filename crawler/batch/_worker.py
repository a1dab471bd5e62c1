"""The worker's part of a batch: pin and visit one repository, or one share of its files.

Runs in a local worker process or on a Dask worker. It only collects; the driver merges and
writes. A `RepoTask` pins its repository and, when it is small, visits all of it
(`pipeline.collect`); a large one comes back as a `Listing` that the driver splits into
`ShardTask`s, each of which pins the same commit from the worker's own cache and visits its share
(`_shards`). Progress goes back through a shared counter (local processes) or Dask events
(`FILES_TOPIC`, and `STARTED_TOPIC` when a task starts), never through output.
"""

from __future__ import annotations

import resource
import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crawler.batch.history_task import HistoryOutcome, history_task, run_history
from crawler.batch.reposfile import RepoEntry
from crawler.errors import CrawlerError
from crawler.git.pin import pin
from crawler.parse.forkserver import die_with_parent, warm_up
from crawler.parse.outcomes import FileOutcome
from crawler.parse.workers import exit_with_parent
from crawler.pipeline import PARSING, Collected, collect, read_tests, result_cache, visit_files
from crawler.pipeline.selection import select_files, select_test_files
from crawler.records import Pin, Skipped, SourceFile, TestAssertion

FILES_TOPIC = "crawler-files-parsed"  # Dask event by which workers report files parsed
STARTED_TOPIC = "crawler-task-started"  # Dask event by which a worker says it began a task
FILES_EVERY = 0.5  # seconds between two such events from one worker
SOURCES, TESTS = "sources", "tests"  # what a shard visits: files to catalogue, or test files


@dataclass(frozen=True)
class RepoTask:
    """What a worker is sent for one repository: its batch entry and where to cache; picklable."""

    entry: RepoEntry
    cache_dir: str | None  # a path on the worker; None for its user cache folder
    fresh: tuple[tuple[str, str], ...] = ()  # (slug, sha) pairs that are already up to date
    attempt: int = 0
    key: str = ""  # the task's name on the cluster, unique in the batch


@dataclass(frozen=True)
class Listing:
    """A repository too large for one task: its pin and the files to share out (`_shards`)."""

    pin: Pin
    total: int  # .py files at the commit
    skipped: tuple[Any, ...]  # records.Skipped
    sources: tuple[SourceFile, ...]  # the files to catalogue, in file order
    tests: tuple[SourceFile, ...]  # the test files read for evidence (none without it)
    notes: tuple[str, ...]


@dataclass(frozen=True)
class RepoOutcome:
    """What a worker sends back: the collected sites, a listing to split, that it is up to date
    (neither), or why it failed."""

    pin: Pin | None = None
    collected: Collected | None = None  # None when up to date, listed or failed
    error: str | None = None
    seconds: float = 0.0
    listing: Listing | None = None
    walked: HistoryOutcome | None = None  # an entry with `history:`: the walk, written here


@dataclass(frozen=True)
class ShardTask:
    """A share of one repository's files, visited at its pinned commit on any worker."""

    entry: RepoEntry
    cache_dir: str | None
    sha: str  # the commit the repository's listing pinned
    kind: str  # SOURCES or TESTS
    part: int  # position among the repository's shards of this kind
    files: tuple[SourceFile, ...]  # in file order
    attempt: int = 0
    key: str = ""


@dataclass(frozen=True)
class ShardOutcome:
    """One share's visits (SOURCES) or assertions (TESTS), in its file order, or why it failed."""

    outcomes: tuple[FileOutcome, ...] = ()
    assertions: tuple[TestAssertion, ...] = ()
    crashed: tuple[Skipped, ...] = ()  # test files whose read crashed or ran out of time
    error: str | None = None
    seconds: float = 0.0


Task = RepoTask | ShardTask
Outcome = RepoOutcome | ShardOutcome

_files_parsed: Any = None  # a shared counter in local worker processes, for live progress


def init_local_worker(counter: Any, driver: int) -> None:
    global _files_parsed
    _files_parsed = counter
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a parser that segfaults writes no core
    # A driver that dies without stopping us (SIGKILL, a SIGTERM before its handler is set)
    # would leave this process blocked on its task pipe for good, with its fork server.
    exit_with_parent(driver)
    die_with_parent()  # and the fork server of our parsers with us
    # Started with Ctrl-C blocked (`_executors`), so that none lands in its imports: from here
    # on the system's default ends the worker at once, with no traceback. It only collects, so
    # nothing is left half written; the driver, which writes, reports the interruption.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


_last_done = 0  # files done so far in the task this worker runs (one at a time)


def _count_file(done: int, total: int, stage: str = PARSING) -> None:
    """collect's progress callback on a worker: `done` files of this task so far (the batch
    counts files parsed; the other stages are not told)."""
    global _unsent, _last_done
    if stage != PARSING:
        return
    step, _last_done = max(0, done - _last_done), done  # cache hits arrive many at once
    if _files_parsed is not None:
        with _files_parsed.get_lock():
            _files_parsed.value += step
        return
    _unsent += step
    if time.monotonic() - _sent_at >= FILES_EVERY:
        _send_files()


_unsent, _sent_at = 0, 0.0  # on a Dask worker: files parsed and not yet told, and when last told


def _dask_event(topic: str, message: Any) -> None:
    """Tell the driver something through a Dask event; nothing when not on a Dask worker.

    A dict message names the worker too (its `worker` key), as the scheduler's own events do.
    """
    if "distributed" not in sys.modules:
        return
    try:
        from distributed import get_worker

        worker = get_worker()
        if isinstance(message, dict):
            message = {**message, "worker": worker.address}
        worker.log_event(topic, message)
    except Exception:  # noqa: BLE001, S110 - not on a worker, or the event was lost: no progress
        pass


def _send_files() -> None:
    """On a Dask worker, tell the driver how many more files were parsed (progress only)."""
    global _unsent, _sent_at
    if _unsent:
        _dask_event(FILES_TOPIC, _unsent)
    _unsent, _sent_at = 0, time.monotonic()


def run_task(task: Task) -> Outcome:
    """Run one task (on a worker); every failure comes back as a reason, never raised."""
    global _last_done
    _last_done = 0
    _dask_event(STARTED_TOPIC, {"key": task.key})  # for the time an attempt lost if killed
    started = time.perf_counter()
    try:
        if isinstance(task, RepoTask):
            return _collect(task, started)
        return _visit_share(task, started)
    except CrawlerError as error:
        reason = str(error)
    except Exception as error:  # noqa: BLE001 - one repository's crash must not stop the batch
        reason = f"crashed: {type(error).__name__}: {error}"[:500]
    finally:
        _send_files()
    seconds = time.perf_counter() - started
    return RepoOutcome(error=reason, seconds=seconds) if isinstance(task, RepoTask) else \
        ShardOutcome(error=reason, seconds=seconds)


def _collect(task: RepoTask, started: float) -> RepoOutcome:
    """Pin the repository; up to date, all of it visited, or listed for the driver to split.

    When the output already holds this repository, the ref is resolved first: at the same commit
    with the same options there is nothing to do. The files are visited at the resolved sha, so a
    branch that moves meanwhile cannot mix two commits.
    """
    entry, cache_dir = task.entry, _path(task.cache_dir)
    if entry.history is not None:
        return _walk(task, started)
    with pin(entry.source, entry.ref, cache_dir=cache_dir, name=entry.name,
             web_url=entry.web_url) as repo:
        resolved = repo.pin
        if (resolved.slug, resolved.sha) in task.fresh:
            return RepoOutcome(resolved, seconds=time.perf_counter() - started)
        listing = _listing(repo, entry)
    if listing is not None:
        return RepoOutcome(resolved, listing=listing, seconds=time.perf_counter() - started)
    collected = collect(entry.source, ref=resolved.sha, options=entry.options,
                        cache_dir=cache_dir, name=entry.name, jobs=entry.jobs,
                        progress=_count_file, evidence=entry.evidence,
                        web_url=entry.web_url)
    collected = replace(collected, pin=resolved)  # keep the ref as the user gave it
    return RepoOutcome(resolved, collected, seconds=time.perf_counter() - started)


def _walk(task: RepoTask, started: float) -> RepoOutcome:
    """An entry with `history:`: its release walk, run whole here, since each step merges
    into the folder the one before wrote (the folder's lock keeps other runs out)."""
    address = _cluster_address()
    if address is None:
        walked = run_history(history_task(task.entry, task.cache_dir))
    else:  # the cluster reads the files: this task waits outside the worker's threads
        from distributed import rejoin, secede

        secede()
        try:
            walked = run_history(history_task(task.entry, task.cache_dir, scheduler=address))
        finally:
            rejoin()
    seconds = time.perf_counter() - started
    if walked.error is not None:
        return RepoOutcome(error=walked.error, seconds=seconds)
    return RepoOutcome(walked.pin, seconds=seconds, walked=walked)


def _cluster_address() -> str | None:
    """The scheduler's address when this runs as a task on a Dask worker, else None."""
    if "distributed" not in sys.modules:  # a local pool's process never imported it
        return None
    from distributed import get_worker

    try:
        return str(get_worker().scheduler.address)
    except ValueError:  # not in a worker's task
        return None


def _listing(repo: Any, entry: RepoEntry) -> Listing | None:
    """The repository's files when there are more than one task should visit, else None."""
    files = repo.list_files()
    chosen, skipped, total = select_files(files, entry.options)
    tests = select_test_files(files, entry.options) if entry.evidence else []
    if entry.split_files is None or len(chosen) + len(tests) <= entry.split_files:
        return None
    notes = (repo.spec.note,) if repo.spec.note else ()
    return Listing(repo.pin, total, tuple(skipped), tuple(chosen), tuple(tests), notes)


def _visit_share(task: ShardTask, started: float) -> ShardOutcome:
    """Visit one share of a repository at its pinned commit, fetched into this worker's cache."""
    entry, cache_dir = task.entry, _path(task.cache_dir)
    warm_up()  # while the commit is pinned
    with pin(entry.source, task.sha, cache_dir=cache_dir, name=entry.name,
             web_url=entry.web_url) as repo:
        files = list(task.files)
        if task.kind == TESTS:
            # through this worker's evidence cache; the files are test files already chosen
            found = read_tests(repo, files, entry.options, entry.jobs, cache_dir, None)
            return ShardOutcome(assertions=found.assertions, crashed=found.crashed,
                                seconds=time.perf_counter() - started)
        outcomes = visit_files(repo, files, entry.jobs, _count_file, result_cache(cache_dir))
    return ShardOutcome(outcomes=tuple(outcomes), seconds=time.perf_counter() - started)


def _path(value: str | None) -> Path | None:
    return Path(value) if value is not None else None
