"""Where a batch's tasks run: local worker processes that survive a crash, or a Dask cluster.

Both count, per task, the workers that died under it and the time those attempts had run
(`Losses`), so the summary can say what a repository cost beyond its last attempt. Local worker
processes end with the driver (the kernel kills them, and their fork servers with them), and
`LocalPool.kill` stops them at once when the batch stops early.

Dask is imported only when a scheduler is given, so a local batch runs without it installed.
Dask workers started with their defaults are daemonic processes; the parser pool starts its
workers with `subprocess` there (`crawler.parse.workers`), so any cluster will do.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

from crawler.batch._connect import connect, dask_muted
from crawler.batch._worker import FILES_TOPIC, STARTED_TOPIC, Outcome, Task, init_local_worker, run_task
from crawler.errors import CrawlerError

WORKERS_WAIT = 10.0  # default seconds to wait for a cluster's first worker, or for one to come back
WORKERS_EVERY = 2.0  # seconds between two looks at how many workers a cluster has
LOST_SCHEDULER = "scheduler-connection-lost"  # why Dask cancels a client's futures when it goes
CLOSE_SECONDS = 2.0  # how long a batch that stops early waits for its Dask client to close


@dataclass
class Losses:
    """What the workers that died under tasks cost, by task key (updated as deaths are seen)."""

    deaths: dict[str, int] = field(default_factory=dict)  # workers that died running the task
    seconds: dict[str, float] = field(default_factory=dict)  # how long those attempts had run
    lock: threading.Lock = field(default_factory=threading.Lock)

    def died(self, key: str, seconds: float) -> None:
        with self.lock:
            self.deaths[key] = self.deaths.get(key, 0) + 1
            self.seconds[key] = self.seconds.get(key, 0.0) + max(0.0, seconds)

    def at_least(self, key: str, deaths: int) -> int:
        """Raise the task's count to what the scheduler counted; the count."""
        with self.lock:
            self.deaths[key] = max(self.deaths.get(key, 0), deaths)
            return self.deaths[key]

    def of(self, key: str) -> tuple[int, float]:
        with self.lock:
            return self.deaths.get(key, 0), self.seconds.get(key, 0.0)


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

    A dead process breaks the whole pool, failing every task under way, and does not say which
    one killed it. Those tasks are run again, one at a time, each in a fresh process of its own,
    so only the one that kills its process again is reported.
    """

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.context = _QuietSpawnContext()  # spawn: no fork of a threaded driver
        self.counter = self.context.Value("q", 0)
        self.generation = 0
        self.executor = self._start(jobs)
        self.losses = Losses()
        self.started: dict[Future[Outcome], float] = {}  # when a task's process took it
        self.alone_executors: set[ProcessPoolExecutor] = set()  # `alone`'s, until their task ends

    def _start(self, jobs: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(jobs, mp_context=self.context, initializer=init_local_worker,
                                   initargs=(self.counter, os.getpid()))

    @property
    def workers(self) -> int:
        return self.jobs

    def submit(self, task: Task) -> Future[Outcome]:
        return self.executor.submit(run_task, task)

    def restart(self, generation: int) -> None:
        """Replace the pool, once for every break, whichever of its futures reports it first."""
        if generation == self.generation:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = self._start(self.jobs)
            self.generation += 1

    def alone(self, task: Task) -> Future[Outcome]:
        """Run one task in a process of its own, gone when the task is done."""
        executor = self._start(1)
        self.alone_executors.add(executor)
        future = executor.submit(run_task, task)

        def done(_: Future[Outcome]) -> None:
            self.alone_executors.discard(executor)
            executor.shutdown(wait=False)

        future.add_done_callback(done)
        return future

    def note_running(self, futures: Iterator[Future[Outcome]]) -> None:
        """Remember when each future's task was handed to a process (checked at every poll)."""
        now = time.monotonic()
        for future in futures:
            if future not in self.started and future.running():
                self.started[future] = now

    def broke(self, future: Future[Outcome], key: str) -> None:
        """A break of the pool ended this task's attempt: its process, or another, died."""
        began = self.started.pop(future, None)
        self.losses.died(key, time.monotonic() - began if began is not None else 0.0)

    def files_parsed(self) -> int:
        return int(self.counter.value)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)

    def kill(self) -> None:
        """Stop every worker process now, whatever it runs (a batch that stops early: Ctrl-C,
        SIGTERM, a bug). A worker only collects, or walks releases whose every write is atomic,
        so nothing is left half written; waiting for its task would keep the user waiting for
        the largest repository under way. Its parsers and fork server end with it
        (`crawler.parse.workers.exit_with_parent`)."""
        for executor in (self.executor, *self.alone_executors):
            # concurrent.futures has no public way to stop a pool's processes before 3.14.
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                with contextlib.suppress(OSError, ValueError):
                    process.kill()
            executor.shutdown(wait=False, cancel_futures=True)


class DaskRunner:
    """A Dask client seen as a runner of keyed tasks, that watches its workers come and die.

    Each attempt of a task tells when and where it starts (`STARTED_TOPIC`); the scheduler's
    `remove-worker` events name the tasks it had given a worker that died. Only a task that had
    started on that worker counts (the scheduler also hands a worker the next task ahead); both
    events are stamped by the scheduler's clock, so their difference is the time it lost.
    """

    def __init__(self, client: Any, wait: float) -> None:
        self.client = client
        self.address = str(client.scheduler.address)
        self.wait = wait
        self.losses = Losses()
        self.began: dict[str, tuple[str, float]] = {}  # task key -> (worker, start) of its last attempt
        self.parsed = 0
        self.no_workers_since: float | None = None
        self.looked_at = time.monotonic()
        client.subscribe_topic(FILES_TOPIC, self._files)
        client.subscribe_topic(STARTED_TOPIC, self._started)
        client.subscribe_topic("all", self._scheduler_event)

    @property
    def workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, task: Task) -> Future[Outcome]:
        future: Future[Outcome] = Future()
        remote = self.client.submit(run_task, task, key=task.key, pure=False)

        def settle(done: Any) -> None:
            if future.done():  # the driver cancelled it: it stopped early
                return
            try:
                outcome = done.result()
            except BaseException as error:  # noqa: BLE001 - handed to the driver as the outcome's
                _settle_once(future.set_exception, error)
            else:
                _settle_once(future.set_result, outcome)

        remote.add_done_callback(settle)
        future.remote = remote  # type: ignore[attr-defined]  # kept alive while it runs
        return future

    def files_parsed(self) -> int:
        return self.parsed

    def check_workers(self) -> None:
        """Raise when the cluster has had no worker for `wait` seconds (looked at now and then)."""
        now = time.monotonic()
        if now - self.looked_at < WORKERS_EVERY:
            return
        self.looked_at = now
        if self.client.status != "running":  # reconnecting: its futures were cancelled
            raise self._lost()
        if self.client.nthreads():
            self.no_workers_since = None
            return
        self.no_workers_since = self.no_workers_since or now
        if now - self.no_workers_since >= self.wait:
            raise CrawlerError(f"{self.client.scheduler.address}: the cluster has had no workers "
                               f"for {self.wait:.0f} s; start some with `dask worker "
                               f"{self.client.scheduler.address}`, then run the batch again")

    def stop_if_lost(self, error: BaseException) -> None:
        """Raise when a task's failure says the scheduler went away: Dask cancelled every task,
        so the batch stops with one line instead of failing each repository."""
        if getattr(error, "reason", None) == LOST_SCHEDULER:
            raise self._lost()

    def _lost(self) -> CrawlerError:
        return CrawlerError(f"{self.address}: the batch lost its connection to the scheduler; "
                            "check that it runs (`dask scheduler`), then run the batch again "
                            "(what it wrote is kept)")

    def _files(self, event: tuple[float, Any]) -> None:
        self.parsed += int(event[1])

    def _started(self, event: tuple[float, Any]) -> None:
        stamp, message = event
        if isinstance(message, dict):
            self.began[str(message.get("key"))] = (str(message.get("worker")), stamp)

    def _scheduler_event(self, event: tuple[float, Any]) -> None:
        stamp, message = event
        if not isinstance(message, dict) or message.get("action") != "remove-worker" \
                or message.get("expected"):
            return
        for key in message.get("processing-tasks") or ():
            worker, began = self.began.get(str(key), ("", stamp))
            if worker == message.get("worker"):
                self.losses.died(str(key), stamp - began)


def _settle_once(setter: Callable[[Any], None], value: Any) -> None:
    """Set a future's outcome unless the driver cancelled it meanwhile (it runs in Dask's
    thread, while the driver, stopping, cancels in its own)."""
    with contextlib.suppress(InvalidStateError):
        setter(value)


@contextmanager
def dask_runner(address: str, wait: float = WORKERS_WAIT) -> Iterator[DaskRunner]:
    """A runner on the Dask scheduler at `address`, once it has a worker (`wait` seconds at most)."""
    client = connect(address)
    try:
        try:
            client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise CrawlerError(f"--scheduler {address}: no worker joined the cluster within "
                               f"{wait:g} s; start some with `dask worker {address}` (or wait "
                               "longer with --wait-workers)") from None
        with dask_muted():
            yield DaskRunner(client, wait)
    except BaseException:
        with dask_muted(), contextlib.suppress(Exception):
            # the scheduler forgets the tasks no client wants any more
            client.close(timeout=CLOSE_SECONDS)
        raise
    client.close()
