"""Worker processes that parse untrusted source: recycled, time- and memory-limited, crash-proof.

LibCST 1.9 can kill the process that calls it (3,000 nested parentheses segfault its parser), so
no file is ever parsed in the crawler's own process. `WorkerPool.run` streams files to worker
processes in small batches and yields each file's `FileOutcome` as soon as it arrives:

- each worker answers file by file, so the file in flight when a worker dies is known exactly;
  it is run once more, alone, in a fresh worker, and only a second death makes it
  `parser_crashed` (a fault left behind by an earlier file cannot be blamed on the wrong one);
- a file that runs over `Limits.seconds` of its worker's CPU time (not wall time: the same file
  is cut on a busy machine as on a quiet one) has its worker killed and becomes `timed_out`;
- a worker's address space is capped (`RLIMIT_AS`), so a file that needs too much memory fails
  in that worker (`parse_failed`, or `parser_crashed` when the allocator aborts);
- a worker is replaced after `Limits.files_per_worker` files, so a leak cannot grow for long;
- blobs are pulled from the caller's iterator only when a worker is free, so at most one batch
  per worker is held in memory, whatever the size of the repository.

How worker processes start: forked by the fork server, or as plain subprocesses in a daemon.

`multiprocessing` refuses to start a child from a daemonic process, and every Dask worker started
with its defaults (`dask worker`, a `LocalCluster`, dask-jobqueue, Kubernetes) is one. There the
workers are started with `subprocess` instead, and speak the same pickled protocol over one end
of a socket pair. Both kinds look alike to the pool (`WorkerProcess`): a sentinel that becomes
ready when the process ends, `is_alive`, `join`, `kill` and an `exitcode` that is minus the signal
that killed it. The fork server stays the default elsewhere: its forks skip the 0.6 to 0.7 s of
imports that each new interpreter pays (measured on 2 cores).

Either way a worker whose crawler dies is killed by the kernel or exits within a second
(`exit_with_parent`), so a crawler killed with SIGKILL leaves no parser behind.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

from crawler.errors import CrawlerError
from crawler.parse import forkserver as _forkserver
from crawler.parse.outcomes import (
    ASSERTIONS,
    PARSER_CRASHED,
    TIMED_OUT,
    VISIT,
    Answer,
    FileAssertions,
    FileOutcome,
    Job,
    failed,
)


class WorkerError(CrawlerError):
    """Worker processes die before they parse anything: the pool itself is broken, not a file."""


@dataclass(frozen=True)
class Limits:
    """What one worker process may spend: per file, and over its life."""

    seconds: float = 120.0  # CPU per file; jax's largest file parses in about 3 s
    memory_bytes: int = 4 << 30  # RLIMIT_AS of a worker: address space, not resident memory
    files_per_worker: int = 500  # a worker is replaced after this many files
    batch_files: int = 8  # files sent to a worker at once
    batch_bytes: int = 256 << 10  # ... or fewer, when they add up to this many bytes


def _collect_between_batches() -> None:
    """The cyclic collector of a worker: off during a batch, and blind to the worker's modules.

    A parse makes millions of objects and frees them by reference counting (a syntax tree has
    no cycles), so the collector would only rescan them: the worker collects between batches
    instead. What is alive before the first batch (the modules the fork server preloaded:
    34,000 objects) lives as long as the worker; frozen, no collection rescans it. Each one
    took 5 to 15 ms (0.67 s over the stdlib's 740 files), and takes 0.3 ms frozen.
    """
    gc.disable()
    gc.freeze()


def _worker_main(conn: Connection, memory_bytes: int, crawler: int) -> None:
    """A worker's life: receive a batch, answer it file by file, until told to stop."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us; no traceback on ^C
    exit_with_parent(crawler)  # a crawler killed with SIGKILL leaves no parser behind
    # A parser that aborts (Rust's out-of-memory handler) would print a backtrace over the
    # progress bar; how each file ended is reported in the manifest instead.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not write a core file
    # the parsers, imported here: the crawler's own process, which imports this module for the
    # pool, parses nothing; a forked worker has them from the fork server's preload already
    from crawler.parse.file_tasks import TASKS, trust_parser_output

    trust_parser_output()
    _collect_between_batches()
    if memory_bytes > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:  # retired: say what this worker spent, for the benchmark
            usage = resource.getrusage(resource.RUSAGE_SELF)
            conn.send((usage.ru_maxrss, usage.ru_utime + usage.ru_stime))
            return
        task, jobs = batch
        read = TASKS[task]
        for job in jobs:  # (path, blob, data) or (path, blob, data, known)
            conn.send(read(*job))
        gc.collect()  # between batches, when no tree is alive: a few milliseconds


@dataclass
class _Worker:
    """One worker process and the batch it is answering."""

    process: WorkerProcess
    conn: Connection
    batch: list[tuple[int, Job]] = field(default_factory=list)
    answered: int = 0
    since: float = 0.0  # when the file in flight started (the last answer or the send)
    cpu_since: float | None = None  # the worker's CPU seconds then; None: not readable here
    check_at: float = 0.0  # when to look at its CPU time again
    files: int = 0  # files sent over its life
    alone: bool = False  # running one suspect file on its own

    @property
    def busy(self) -> bool:
        return self.answered < len(self.batch)


_STALLED = 10  # a worker using no CPU (blocked) is stopped after this many limits of wall time


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class WorkerStats:
    """What the workers of this process spent, as they reported it when retired (not killed)."""

    started: int = 0
    cpu_seconds: float = 0.0
    peak_rss_kib: int = 0  # the largest worker's ru_maxrss (KiB on Linux)


STATS = WorkerStats()  # over the life of this process: read by the benchmark


class WorkerPool:
    """A pool of `jobs` worker processes; use as a context manager, then `run` files through it."""

    def __init__(self, jobs: int, limits: Limits | None = None) -> None:
        self.jobs = max(1, jobs)
        self.limits = limits or Limits()
        self._workers: list[_Worker] = []
        self.started = 0  # worker processes started, for tests and the benchmark
        self._broken_starts = 0  # workers in a row that exited, not killed, before any answer

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker: politely when idle, by force when busy."""
        for worker in list(self._workers):  # _stop removes it from the list
            self._stop(worker, force=worker.busy)

    def run(self, jobs: Iterable[Job]) -> Iterator[tuple[int, FileOutcome]]:
        """(index in `jobs`, outcome) for every file, in the order they finish."""
        for index, answer in self._run(jobs, VISIT):
            assert isinstance(answer, FileOutcome)
            yield index, answer

    def read_tests(self, files: Iterable[tuple[str, str, bytes]]
                   ) -> Iterator[tuple[int, FileAssertions]]:
        """(index in `files`, assertions) for every (path, blob, bytes) of a test file, in the order
        they finish; a file whose worker crashed or ran out of time gives none, with the reason as
        its `failure`."""
        jobs = ((path, blob, data, None) for path, blob, data in files)
        for index, answer in self._run(jobs, ASSERTIONS):
            if isinstance(answer, FileOutcome):  # the pool's own answer for a lost file
                yield index, FileAssertions(answer.path, (), failure=answer.failure)
            else:
                yield index, answer

    def _run(self, jobs: Iterable[Job], task: str) -> Iterator[tuple[int, Answer]]:
        """Every job's answer, `task` (VISIT or ASSERTIONS) saying what a worker does with it."""
        source = enumerate(jobs)
        # Jobs to send before the source's next: the rest of a batch whose worker died, or
        # one taken ahead to see whether there is work at all.
        retry: deque[tuple[int, Job]] = deque()
        suspects: deque[tuple[int, Job]] = deque()  # files in flight when a worker died
        while True:
            for worker in self._idle_workers(retry, suspects, source):
                if suspects:
                    self._send(worker, [suspects.popleft()], task, alone=True)
                    continue
                batch = self._next_batch(retry, source)
                if not batch:
                    break
                self._send(worker, batch, task, alone=False)
            busy = [w for w in self._workers if w.busy]
            if not busy:
                if not retry and not suspects and not _pull(source, retry):
                    return
                continue
            yield from self._wait(busy, retry, suspects)

    # ---------------------------------------------------------------- scheduling

    def _idle_workers(self, retry: deque[tuple[int, Job]], suspects: deque[tuple[int, Job]],
                      source: Iterator[tuple[int, Job]]) -> Iterator[_Worker]:
        """Idle workers to give work to, starting new ones up to `jobs` while there is work
        (a worker is never started for nothing: a subprocess costs a new interpreter)."""
        for worker in list(self._workers):
            if not worker.busy and worker.files >= self.limits.files_per_worker:
                self._stop(worker, force=False)  # recycled
        for worker in list(self._workers):
            if not worker.busy:
                yield worker
        while len(self._workers) < self.jobs and (retry or suspects or _pull(source, retry)):
            worker = self._start()
            yield worker
            if not worker.busy:
                break  # nothing left to give it

    def _next_batch(self, retry: deque[tuple[int, Job]], source: Iterator[tuple[int, Job]]
                    ) -> list[tuple[int, Job]]:
        batch: list[tuple[int, Job]] = []
        size = 0
        while len(batch) < self.limits.batch_files and size < self.limits.batch_bytes:
            item = retry.popleft() if retry else next(source, None)
            if item is None:
                break
            batch.append(item)
            size += len(item[1][2])
        return batch

    def _send(self, worker: _Worker, batch: list[tuple[int, Job]], task: str, alone: bool) -> None:
        worker.batch, worker.answered, worker.alone = batch, 0, alone
        worker.files += len(batch)
        self._started_file(worker)
        try:
            worker.conn.send((task, [job for _, job in batch]))
        except (BrokenPipeError, ConnectionError, OSError):
            pass  # it died while idle: found by the next wait, and the batch goes elsewhere

    # ---------------------------------------------------------------- answers and deaths

    def _wait(self, busy: list[_Worker], retry: deque[tuple[int, Job]],
              suspects: deque[tuple[int, Job]]) -> Iterator[tuple[int, Answer]]:
        now = time.monotonic()
        deadline = min(w.check_at for w in busy)
        handles: dict[Any, _Worker] = {}
        for worker in busy:
            handles[worker.conn] = worker
            if worker.process.sentinel is not None:  # else the pipe's end tells of a death
                handles[worker.process.sentinel] = worker
        ready = wait(list(handles), timeout=max(0.0, deadline - now))
        seen: set[int] = set()
        for handle in ready:
            worker = handles[handle]
            if id(worker) in seen:
                continue
            seen.add(id(worker))
            yield from self._drain(worker)
            if worker.busy and not worker.process.is_alive():
                yield from self._died(worker, retry, suspects)
        now = time.monotonic()
        for worker in busy:
            if worker.busy and worker in self._workers and now >= worker.check_at:
                yield from self._drain(worker)
                if worker.busy and self._over_time(worker, time.monotonic()):
                    yield from self._timed_out(worker, retry)

    def _started_file(self, worker: _Worker) -> None:
        worker.since = time.monotonic()
        worker.cpu_since = cpu_seconds(worker.process.pid)
        worker.check_at = worker.since + self.limits.seconds  # CPU time never runs ahead of wall

    def _over_time(self, worker: _Worker, now: float) -> bool:
        """Whether the file in flight has had `Limits.seconds` of the worker's CPU; if not yet,
        when to look again."""
        limit = self.limits.seconds
        wall = now - worker.since
        cpu = cpu_seconds(worker.process.pid)
        if worker.cpu_since is None or cpu is None:
            return wall >= limit  # no CPU clock of the worker here: the wall clock decides
        used = cpu - worker.cpu_since
        if used >= limit or wall >= limit * _STALLED:
            return True
        worker.check_at = now + max(limit - used, 0.05)
        return False

    def _drain(self, worker: _Worker) -> Iterator[tuple[int, Answer]]:
        """Every answer the worker has sent so far."""
        try:
            while worker.busy and worker.conn.poll():
                outcome = worker.conn.recv()
                index, _ = worker.batch[worker.answered]
                worker.answered += 1
                self._started_file(worker)
                self._broken_starts = 0
                yield index, outcome
        except (EOFError, OSError):
            pass

    def _died(self, worker: _Worker, retry: deque[tuple[int, Job]],
              suspects: deque[tuple[int, Job]]) -> Iterator[tuple[int, Answer]]:
        worker.process.join(1.0)
        index, (path, blob, *_) = worker.batch[worker.answered]
        retry.extendleft(reversed(worker.batch[worker.answered + 1 :]))
        alone = worker.alone
        culprit = worker.batch[worker.answered]
        worker.batch, worker.answered = [], 0
        self._stop(worker, force=True)
        exitcode = worker.process.exitcode
        if exitcode is not None and exitcode >= 0:
            # Not killed by a signal: Python itself failed in the worker (visit_file catches
            # every parser exception). Many of those in a row mean no worker can run at all.
            self._broken_starts += 1
            if self._broken_starts >= 3:
                raise WorkerError(
                    f"worker processes exit (code {exitcode}) before parsing any file; run "
                    "with the crawler's own entry point, or guard your script's code with "
                    "`if __name__ == '__main__':`")
        if alone:
            yield index, failed(path, blob, PARSER_CRASHED, _death(worker.process.exitcode))
        else:
            suspects.append(culprit)  # confirmed or cleared alone in a fresh worker

    def _timed_out(self, worker: _Worker, retry: deque[tuple[int, Job]]
                   ) -> Iterator[tuple[int, Answer]]:
        index, (path, blob, *_) = worker.batch[worker.answered]
        retry.extendleft(reversed(worker.batch[worker.answered + 1 :]))
        worker.batch, worker.answered = [], 0
        self._stop(worker, force=True)
        yield index, failed(path, blob, TIMED_OUT,
                            f"parse took over {self.limits.seconds:g} s of CPU; the worker was stopped")

    # ---------------------------------------------------------------- processes

    def _start(self) -> _Worker:
        process, parent = start_worker(_worker_main, self.limits.memory_bytes)
        self.started += 1
        STATS.started += 1
        worker = _Worker(process, parent)
        self._workers.append(worker)
        return worker

    def _stop(self, worker: _Worker, force: bool) -> None:
        if worker in self._workers:
            self._workers.remove(worker)
        if not force:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                force = True
        if not force:
            try:
                if worker.conn.poll(5.0):
                    peak, cpu = worker.conn.recv()
                    STATS.peak_rss_kib = max(STATS.peak_rss_kib, peak)
                    STATS.cpu_seconds += cpu
            except (EOFError, OSError, ValueError, TypeError):
                pass
            worker.process.join(5.0)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(5.0)  # reaps it, and frees what watched it
        worker.conn.close()


def _pull(source: Iterator[tuple[int, Job]], into: deque[tuple[int, Job]]) -> bool:
    """Take the next job ahead of its batch, so that a new worker is started only for work."""
    item = next(source, None)
    if item is not None:
        into.append(item)
    return item is not None


def _death(exitcode: int | None) -> str:
    """How a worker died, in words: `killed by SIGSEGV (signal 11)`."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        extra = "; the memory limit may have been reached" if -exitcode == signal.SIGABRT else ""
        return f"the parser killed its worker process: {name} (signal {-exitcode}){extra}"
    return f"the worker process exited with code {exitcode} while parsing this file"


def visit_all(jobs: Iterable[Job], workers: int, limits: Limits | None = None,
              progress: Callable[[int], None] | None = None) -> Iterator[tuple[int, FileOutcome]]:
    """Run `jobs` through a fresh pool of `workers` processes; (index, outcome) as they finish."""
    with WorkerPool(workers, limits) as pool:
        for done, item in enumerate(pool.run(jobs), start=1):
            if progress:
                progress(done)
            yield item


_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # holds `crawler/`


_CHILD_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); "
               "from crawler.parse.workers import child_main; child_main(sys.argv[2:])")


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _signal_on_parent_death() -> None:
    """Ask Linux to SIGKILL this process when its parent thread ends; nothing elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watching thread is left


def _release_fork_server() -> None:
    """Close the fork server's "alive" pipe that multiprocessing hands each forked child.

    While any child holds it the fork server outlives the crawler, and so does its children's
    parent; without it the server exits with the crawler. tests/parse/test_launch.py fails if a
    later Python moves this internal.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int) and multiprocessing.parent_process() is not None:
        try:
            os.close(alive)
        except OSError:
            pass
        server._forkserver_alive_fd = None  # type: ignore[union-attr]


class WorkerProcess(Protocol):
    """What the pool needs of a worker process, whichever way it was started."""

    @property
    def pid(self) -> int | None: ...
    @property
    def sentinel(self) -> Any: ...
    @property
    def exitcode(self) -> int | None: ...
    def is_alive(self) -> bool: ...
    def join(self, timeout: float | None = None) -> None: ...
    def kill(self) -> None: ...


def in_daemon() -> bool:
    """Is this process daemonic (a Dask worker), so that multiprocessing may not start children?"""
    return bool(multiprocessing.current_process().daemon)


def start_worker(main: Any, memory_bytes: int) -> tuple[WorkerProcess, Connection]:
    """Start one worker running `main(conn, memory_bytes, crawler_pid)`; its process and our end
    of the pipe."""
    if in_daemon():
        return _start_subprocess(memory_bytes)
    context = _forkserver.context()
    parent, child = context.Pipe(duplex=True)
    process = context.Process(target=main, args=(child, memory_bytes, os.getpid()),
                              name="crawler-worker", daemon=True)
    with _forkserver.ctrl_c_ignored_by_forks():  # it may start the fork server
        process.start()
    child.close()
    return process, parent


class _Subprocess:
    """A worker started with `subprocess`, shaped like a `multiprocessing.Process`."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        # A pidfd becomes readable when the process ends, like a Process's sentinel.
        self.sentinel = os.pidfd_open(popen.pid) if hasattr(os, "pidfd_open") else None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        if self.popen.returncode is not None and self.sentinel is not None:
            os.close(self.sentinel)
            self.sentinel = None

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()


def _start_subprocess(memory_bytes: int) -> tuple[WorkerProcess, Connection]:
    ours, theirs = socket.socketpair()
    try:
        with _forkserver.ctrl_c_held():
            popen = subprocess.Popen(
                [sys.executable, "-c", _CHILD_CODE, _PACKAGE_ROOT, str(theirs.fileno()),
                 str(memory_bytes), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(theirs.fileno(),))
    finally:
        theirs.close()
    return _Subprocess(popen), Connection(ours.detach())


def child_main(argv: list[str]) -> None:
    """A subprocess worker's entry: the socket it was given, then the same life as a fork's."""
    fd, memory_bytes, crawler = (int(arg) for arg in argv)
    _worker_main(Connection(fd), memory_bytes, crawler)


def exit_with_parent(crawler: int, poll_seconds: float = 0.5) -> None:
    """Exit this worker as soon as the crawler (pid `crawler`) that started it is gone, even
    mid-parse.

    The worker's parent is the crawler itself for a subprocess, or the fork server, which exits
    when no process holds its "alive" pipe: the crawler, and each child it forks unless the child
    lets go of it, as ours does. On Linux the kernel kills the worker when its parent ends
    (PR_SET_PDEATHSIG): a thread could not, since LibCST's native parser holds the GIL for the
    whole parse. A crawler that died before that request took effect is caught by the check that
    follows it; elsewhere, a thread that watches the crawler's pid catches the idle worker.
    """
    _release_fork_server()
    _signal_on_parent_death()
    if not _alive(crawler):
        _end()

    def watch() -> None:
        while True:
            time.sleep(poll_seconds)
            if not _alive(crawler):
                _end()

    threading.Thread(target=watch, name="crawler-parent-watch", daemon=True).start()


def _end() -> None:
    """End this worker now, as the kernel would: it holds nothing that needs cleaning up."""
    os.kill(os.getpid(), signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone's process, so it exists
    return True


def cpu_seconds(pid: int | None) -> float | None:
    """User and system CPU seconds of a live process, from Linux's /proc; None elsewhere."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, IndexError, ValueError):
        return None
