"""Batch extraction: many repositories, in local worker processes or on a Dask cluster.

The driver (this process) takes the entries of a repos.yaml (`reposfile`), sends one
`RepoTask` per repository to the workers (`_worker`, run by `_executors`), and applies each
`RepoOutcome` as it comes back. A repository with more files than its `split_files` comes back
as a listing instead, and its files go out again as shares (`_shards`), so one large repository
keeps several workers busy. A worker only pins and visits; the driver alone merges and writes
(`pipeline.apply`), so what crosses the network is small (a batch entry out, a `Collected` back)
and the output folder needs no locks. A repository already up to date at its pinned commit is
skipped, so an interrupted batch picks up where it stopped. Workers that die under a task are
counted against its repository. A batch stopped early (Ctrl-C, SIGTERM as `Terminated`, a lost
cluster) waits for no task: it kills its local workers, or closes its Dask client within
seconds, and lets the exception through. Nothing here prints: progress goes to the callback given.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.batch._executors import WORKERS_WAIT, DaskRunner, LocalPool, dask_runner
from crawler.batch._shards import Assembly, shard_tasks
from crawler.batch._worker import Outcome, RepoOutcome, RepoTask, ShardOutcome, ShardTask, Task
from crawler.batch.known import Known, scan_outputs
from crawler.batch.reposfile import RepoEntry
from crawler.errors import CrawlerError, Terminated, sigterm_raises
from crawler.git.source import redact
from crawler.pipeline import RunResult, apply, load_cache, output_folder
from crawler.records import Pin, is_network_address
from crawler.store.cache import LoadCache
from crawler.store.context import StoreContext

__all__ = ["DONE", "FAILED", "UP_TO_DATE", "BatchResult", "Known", "RepoResult", "Terminated",
           "run_batch", "scan_outputs", "scheduler_address"]

DONE, UP_TO_DATE, FAILED = "done", "up to date", "failed"
LOCAL = "local"  # --scheduler local: worker processes on this machine, whatever Dask's config says
POLL_SECONDS = 0.25  # how often the driver wakes to report progress while it waits
NO_DRY_WALK = ("has `history:`, and a release walk writes each step as it goes: it has no dry "
               "run; run the batch without --dry-run, or try `crawler history` on a copy")
WRITER_THREADS = 4  # repositories the driver merges and writes at once (the writes wait on fsync)


# ---------------------------------------------------------------- where tasks run


def scheduler_address(option: str | None) -> str | None:
    """The Dask scheduler to use: `--scheduler`, else Dask's `scheduler-address` setting.

    None means local worker processes (also for `--scheduler local`, whatever the config says).
    """
    if option is not None:
        return None if option == LOCAL else option
    try:
        import dask.config
    except ImportError:
        return None
    address = dask.config.get("scheduler-address", None)
    return str(address) if address else None


# ---------------------------------------------------------------- the driver


@dataclass(frozen=True)
class RepoResult:
    """One repository's line in the summary."""

    entry: RepoEntry
    status: str  # done, up to date, failed
    pin: Pin | None = None
    folder: Path | None = None
    records: int = 0
    added: int = 0
    changed: int = 0  # moved, template changed (needs review) or revived
    removed: int = 0
    files: int = 0  # files visited
    files_written: int = 0
    seconds: float = 0.0  # workers' time on it, attempts lost to dead workers included
    error: str | None = None
    tasks: int = 0  # tasks it ran as: 1, or 1 plus its shares when it was split
    workers_lost: int = 0  # workers (or local processes) that died while running one of its tasks
    retries: int = 0  # tasks run again after their worker died
    seconds_lost: float = 0.0  # how long those attempts had run when their worker died


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands, reported while it runs."""

    total: int
    done: int  # finished, whatever the status
    running: int
    failed: int
    files_parsed: int


@dataclass(frozen=True)
class BatchResult:
    """Every repository's result, in the order of the batch file."""

    results: tuple[RepoResult, ...]
    seconds: float
    scheduler: str  # "local" or the scheduler's address

    @property
    def failed(self) -> list[RepoResult]:
        return [r for r in self.results if r.status == FAILED]

    @property
    def files(self) -> int:
        return sum(r.files for r in self.results)


def run_batch(entries: list[RepoEntry], *, scheduler: str | None = None, jobs: int | None = None,
              cache_dir: Path | None = None, force: bool = False, dry_run: bool = False,
              progress: Callable[[BatchProgress], None] | None = None,
              wait_workers: float = WORKERS_WAIT) -> BatchResult:
    """Collect every repository on the workers and apply each result here as it arrives.

    `scheduler` is a Dask scheduler address, or None for `jobs` local processes (default: one
    per core). With `force`, repositories already up to date are extracted again. A cluster
    with no worker for `wait_workers` seconds (at the start, or later) stops the batch.
    """
    started = time.perf_counter()
    known = [] if force else scan_outputs({entry.output_root for entry in entries})
    driver = _Driver(entries, known, dry_run, progress, load_cache(cache_dir))
    tasks = driver.plan(None if cache_dir is None else str(cache_dir))
    with sigterm_raises():
        if scheduler is None:
            pool = LocalPool(max(1, min(jobs or os.cpu_count() or 1, len(tasks))))
            try:
                driver.run(tasks, pool)
            except BaseException:
                pool.kill()  # stopped early: no task under way is waited for
                raise
            pool.shutdown()
        else:
            with dask_runner(scheduler, wait_workers) as runner:
                driver.run(tasks, runner)
    results = tuple(driver.finish(entry) for entry in entries)
    return BatchResult(results, time.perf_counter() - started, scheduler or LOCAL)


@dataclass
class _Tally:
    """One repository's tasks and the workers they lost, added up as its tasks finish."""

    tasks: int = 0
    workers_lost: int = 0
    retries: int = 0
    seconds_lost: float = 0.0


class _Driver:
    """Submits tasks, applies outcomes as they arrive, and keeps the tally for progress."""

    def __init__(self, entries: list[RepoEntry], known: list[Known], dry_run: bool,
                 progress: Callable[[BatchProgress], None] | None,
                 loads: LoadCache | None = None) -> None:
        self.entries = {entry.index: entry for entry in entries}
        self.loads = loads  # the driver's own checked record loads, shared by its writer threads
        self.known = {known_.folder: known_ for known_ in known}
        self.dry_run = dry_run
        self.progress = progress
        self.results: dict[int, RepoResult] = {}
        self.tallies = {entry.index: _Tally() for entry in entries}
        self.assemblies: dict[int, Assembly] = {}  # split repositories waiting for their shares
        self.folders: dict[Path, int] = {}  # output folder -> the entry that wrote it
        self.files_done = 0

    def plan(self, cache_dir: str | None) -> list[RepoTask]:
        """One task per entry, the largest repositories known from earlier runs first."""
        by_source: dict[str, list[Known]] = {}
        for known in self.known.values():
            by_source.setdefault(known.source, []).append(known)
        batch = uuid.uuid4().hex[:8]  # task keys unique on a cluster that other batches share
        tasks = []
        for entry in self.entries.values():
            if entry.history is not None and self.dry_run:
                self.results[entry.index] = RepoResult(entry, FAILED, error=NO_DRY_WALK)
                continue
            # The manifest holds the source as pin redacts it: no token from a URL. A local path
            # is never written, so its candidates are the folders under its output root (the
            # worker checks the slug).
            candidates = by_source.get(redact(entry.source), []) if is_network_address(
                entry.source) else [k for k in self.known.values() if entry.output_root in k.folder.parents]
            fresh = tuple(
                (k.slug, k.sha) for k in candidates
                if k.folder == entry.output_root / k.slug and k.options == entry.options
                and k.crawler_version == __version__
            )
            size = max((k.files for k in candidates), default=-1)
            task = RepoTask(entry, cache_dir, fresh, key=f"crawler-{batch}-repo{entry.index}")
            tasks.append((-1 if size < 0 else 0, -size, entry.index, task))
        return [task for *_, task in sorted(tasks, key=lambda t: t[:3])]

    def finish(self, entry: RepoEntry) -> RepoResult:
        """The entry's result with its tally of tasks and lost workers."""
        tally = self.tallies[entry.index]
        result = self.results[entry.index]
        return replace(result, tasks=tally.tasks, workers_lost=tally.workers_lost,
                       retries=tally.retries, seconds_lost=tally.seconds_lost,
                       seconds=result.seconds + tally.seconds_lost)

    def run(self, tasks: list[RepoTask], runner: LocalPool | DaskRunner) -> None:
        """Run the tasks, and the shares of those that come back split, on `runner`."""
        local = runner if isinstance(runner, LocalPool) else None
        remote: dict[Future[Outcome], tuple[Task, int]] = {}
        writing: dict[Future[RepoResult], int] = {}
        writer = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="crawler-apply")
        queue: deque[Task] = deque(tasks)
        suspects: deque[Task] = deque()  # under way when a local process died
        workers = runner.workers
        # Back-pressure: results the driver has not written yet are held in its memory, so no
        # more tasks are out than keep the workers busy while the writers catch up.
        window = 2 * workers + WRITER_THREADS

        def submit(task: Task) -> None:
            self.tallies[task.entry.index].tasks += task.attempt == 0
            remote[runner.submit(task)] = (task, local.generation if local else 0)

        try:
            while queue or remote or writing or suspects:
                if local and suspects and not any(t.attempt for t, _ in remote.values()):
                    suspect = suspects.popleft()
                    remote[local.alone(suspect)] = (suspect, -1)
                while queue and len(remote) + len(writing) < window:
                    submit(queue.popleft())
                if local:
                    local.note_running(iter(remote))
                else:
                    assert isinstance(runner, DaskRunner)
                    runner.check_workers()
                self._report(len(remote), workers, runner.files_parsed)
                waiting: list[Future[Any]] = [*remote, *writing]
                finished, _ = wait(waiting, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future in writing:
                        self.results[writing.pop(future)] = future.result()
                        continue
                    task, generation = remote.pop(future)
                    outcome, gave_up = self._outcome(future, task, generation, runner, suspects)
                    if outcome is None:
                        continue  # to be run again alone
                    self._count_losses(task, runner, gave_up)
                    for follow in self._take(task, outcome, writer, writing):
                        queue.appendleft(follow)  # a split repository's shares go out first
        finally:
            if local is None:  # a local pool's are cancelled by its own thread (`LocalPool.kill`):
                for pending in remote:  # from here, they raced its marking them broken
                    pending.cancel()
            writer.shutdown(wait=True, cancel_futures=True)  # a write under way is finished
        self._report(0, workers, runner.files_parsed)

    def _outcome(self, future: Future[Outcome], task: Task, generation: int,
                 runner: LocalPool | DaskRunner, suspects: deque[Task]) -> tuple[Outcome | None, bool]:
        """A finished task's outcome, and whether it was given up (no outcome of its own: its
        last worker died); None when a broken local pool sends it to be run again alone."""
        try:
            return future.result(), False
        except BrokenProcessPool:
            assert isinstance(runner, LocalPool)
            runner.broke(future, task.key)
            if task.attempt == 0:
                runner.restart(generation)
                suspects.append(replace(task, attempt=1))
                return None, True
            return _failed(task, "its worker process died, twice "
                                 "(a crash in the parser, or out of memory)"), True
        except Exception as error:  # noqa: BLE001 - a lost Dask worker, a cancellation
            if isinstance(runner, DaskRunner):
                runner.stop_if_lost(error)  # the scheduler went away: the batch stops
            return _failed(task, self._remote_error(task, error, runner)), True

    def _count_losses(self, task: Task, runner: LocalPool | DaskRunner, gave_up: bool) -> None:
        """Add the workers that died under this task to its repository: each death was followed
        by a retry, unless it was the one after which the task was given up."""
        deaths, lost = runner.losses.of(task.key)
        tally = self.tallies[task.entry.index]
        tally.workers_lost += deaths
        tally.seconds_lost += lost
        tally.retries += max(0, deaths - gave_up)

    @staticmethod
    def _remote_error(task: Task, error: Exception, runner: LocalPool | DaskRunner) -> str:
        """Why a task on Dask gave no outcome; one that killed every worker it ran on says so."""
        allowed = getattr(error, "allowed_failures", None)
        if type(error).__name__ != "KilledWorker" or allowed is None:
            return f"{type(error).__name__}: {error}"
        deaths = runner.losses.at_least(task.key, int(allowed) + 1)  # where events were lost
        what = "it" if isinstance(task, RepoTask) else f"its {task.kind} share {task.part + 1}"
        return (f"killed {deaths} workers: each died while running {what} (a crash in the "
                f"parser, or out of memory), and Dask gives up after {int(allowed) + 1}; "
                "run it alone with `crawler extract` to see why")

    def _take(self, task: Task, outcome: Outcome, writer: ThreadPoolExecutor,
              writing: dict[Future[RepoResult], int]) -> list[Task]:
        """Settle one task's outcome; the tasks it calls for (a split repository's shares)."""
        entry = task.entry
        if isinstance(task, ShardTask):
            assert isinstance(outcome, ShardOutcome)
            assembly = self.assemblies[entry.index]
            assembly.add(task, outcome)
            if not assembly.complete:
                return []
            del self.assemblies[entry.index]
            error = assembly.error()
            outcome = RepoOutcome(assembly.listing.pin, None if error else assembly.collected(),
                                  error=error, seconds=sum(o.seconds for o in assembly.done.values())
                                  + assembly.seconds)
        assert isinstance(outcome, RepoOutcome)
        if outcome.listing is not None and isinstance(task, RepoTask):
            shards = shard_tasks(task, outcome.listing)
            self.assemblies[entry.index] = Assembly(outcome.listing, tuple(shards), entry.evidence,
                                                    outcome.seconds, {})
            return list(reversed(shards))  # appended to the front one by one: first share first
        done = self._settle(entry, outcome)
        if done is not None:
            self.results[entry.index] = done
        else:
            assert outcome.collected is not None
            self.files_done += len(outcome.collected.outcomes)
            writing[writer.submit(self._write, entry, outcome)] = entry.index
        return []

    def _report(self, pending: int, workers: int, live: Callable[[], int]) -> None:
        if self.progress is None:
            return
        parsed = max(self.files_done, live())  # events from Dask workers may lag behind results
        failed = sum(1 for r in self.results.values() if r.status == FAILED)
        self.progress(BatchProgress(len(self.entries), len(self.results), min(pending, workers),
                                    failed, parsed))

    def _settle(self, entry: RepoEntry, outcome: RepoOutcome) -> RepoResult | None:
        """The result of an outcome that needs no writing; None when it must be written."""
        if outcome.error is not None or outcome.pin is None:
            return RepoResult(entry, FAILED, seconds=outcome.seconds, error=outcome.error)
        folder = output_folder(entry.output_root, outcome.pin)
        other = self.folders.setdefault(folder, entry.index)
        if other != entry.index:
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds,
                              error=f"writes the same folder as repos[{other}] ({folder}); "
                                    "give one of them its own `name`")
        if outcome.walked is not None:  # a release walk, written by its worker
            walked = outcome.walked
            return RepoResult(entry, DONE, outcome.pin, folder, records=walked.records,
                              files=walked.files, seconds=outcome.seconds)
        if outcome.collected is None:
            known = self.known.get(folder)
            return RepoResult(entry, UP_TO_DATE, outcome.pin, folder,
                              records=known.records if known else 0, seconds=outcome.seconds)
        return None

    def _write(self, entry: RepoEntry, outcome: RepoOutcome) -> RepoResult:
        """Merge and write one repository (in a driver thread); its failure is its own."""
        collected = outcome.collected
        assert collected is not None and outcome.pin is not None
        files = len(collected.outcomes)
        try:
            run: RunResult = apply(collected, entry.output_root, dry_run=self.dry_run,
                                   store=StoreContext(self.loads))
        except (CrawlerError, OSError) as error:
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds, files=files,
                              error=str(error))
        except Exception as error:  # noqa: BLE001 - a bug met in one repository's merge
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds, files=files,
                              error=f"crashed while merging: {type(error).__name__}: {error}"[:500])
        merged = run.merged
        done = RepoResult(
            entry, DONE, run.pin, run.folder, records=run.manifest.counts.records,
            added=len(merged.added), changed=len(merged.moved) + len(merged.changed)
            + len(merged.revived), removed=len(merged.removed), files=files,
            files_written=run.files_written, seconds=run.seconds,
        )
        if run.problems:  # a file it could not read (a broken record, a FIFO) fails the entry
            count = f" ({len(run.problems)} files left as they are)" if len(run.problems) > 1 else ""
            return replace(done, status=FAILED, error=run.problems[0] + count)
        return done


def _failed(task: Task, reason: str) -> Outcome:
    return RepoOutcome(error=reason) if isinstance(task, RepoTask) else ShardOutcome(error=reason)
