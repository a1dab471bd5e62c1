"""Where a batch's tasks run: local worker processes that survive a crash, or a Dask cluster.

Dask is imported only when a scheduler is given, so a local batch runs without it installed.
Dask workers started with their defaults are daemonic processes; the parser pool starts its
workers with `subprocess` there (`crawler.parse._launch`), so any cluster will do.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import SpawnContext, SpawnProcess

from crawler.batch._worker import FILES_TOPIC, RepoOutcome, RepoTask, collect_repo, init_local_worker
from crawler.errors import CrawlerError


class _QuietSpawnProcess(SpawnProcess):
    """A worker started with Ctrl-C blocked, which it inherits: a Ctrl-C during its start and
    imports waits until `init_local_worker` sets its own handler, instead of printing a
    traceback from the middle of an import."""

    def start(self) -> None:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _QuietSpawnContext(SpawnContext):
    Process = _QuietSpawnProcess  # type: ignore[assignment]


class LocalPool:
    """Local worker processes that survive one of them dying (a parser crash, the OOM killer).

    A dead process breaks the whole pool, failing every repository under way, and does not say
    which one killed it. Those repositories are run again, one at a time, each in a fresh
    process of its own, so only the one that kills its process again is reported.
    """

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.context = _QuietSpawnContext()  # spawn: no fork of a threaded driver
        self.counter = self.context.Value("q", 0)
        self.generation = 0
        self.executor = self._start(jobs)

    def _start(self, jobs: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(jobs, mp_context=self.context,
                                   initializer=init_local_worker, initargs=(self.counter,))

    def restart(self, generation: int) -> None:
        """Replace the pool, once for every break, whichever of its futures reports it first."""
        if generation == self.generation:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = self._start(self.jobs)
            self.generation += 1

    def alone(self, task: RepoTask) -> Future[RepoOutcome]:
        """Run one task in a process of its own, gone when the task is done."""
        executor = self._start(1)
        future = executor.submit(collect_repo, task)
        future.add_done_callback(lambda _: executor.shutdown(wait=False))
        return future

    def files_parsed(self) -> int:
        return int(self.counter.value)


@contextmanager
def dask_executor(address: str) -> Iterator[tuple[Executor, int, Callable[[], int]]]:
    """A concurrent.futures view of a Dask client, how many tasks its workers run at once, and
    how many files they have parsed so far."""
    try:
        from distributed import Client
    except ImportError as error:
        raise CrawlerError(f"--scheduler {address}: dask.distributed is not installed; "
                           "install the extra with `pip install 'raise-site-crawler[dask]'`") from error
    try:
        client = Client(address, timeout=30)
    except (OSError, TimeoutError) as error:
        raise CrawlerError(f"--scheduler {address}: cannot reach the scheduler ({error}); "
                           "start one with `dask scheduler`") from error
    with client:
        parsed = [0]
        client.subscribe_topic(FILES_TOPIC, lambda event: parsed.__setitem__(0, parsed[0] + event[1]))
        yield (client.get_executor(pure=False), max(1, sum(client.nthreads().values())),
               lambda: parsed[0])

