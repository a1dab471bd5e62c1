"""A `crawler batch` stopped by a signal, or by the loss of its cluster, ends cleanly: one line on
stderr, no traceback, the shell's exit code (130 for SIGINT, 143 for SIGTERM, 1 for a lost
cluster), and none of its processes alive two seconds later, whichever process the signal reached:
the driver alone (`kill PID`), or its whole process group (a terminal's Ctrl-C).

Each batch is the installed command in a session of its own, signalled once a task is under way
(a parser at work in a local batch, a task running on a Dask worker), with repositories enough
that it would otherwise run on for many seconds. Its processes are its process group and every
descendant of the driver seen before the signal, each known by pid and start time.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawler.batch._worker import STARTED_TOPIC
from tests.helpers.batch import fill
from tests.helpers.gitrepo import GitRepo
from tests.helpers.killprocs import Proc, alive, describe, family, pool_workers
from tests.helpers.processes import ROOT, child_env, ctrl_c_default

pytestmark = pytest.mark.runs_long

REPOSITORIES, MODULES = 6, 30  # minutes of parsing on 2 cores, were the batch left to run
AFTER = 2.0  # seconds after the signal by which no process of the batch may be left
# seconds from a signal to the driver's exit: SIGINT to the driver alone used to wait for every
# task under way (17-23 s); a loaded machine may need a few
EXIT_SECONDS = 8.0
needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="the [dask] extra is not installed")


@pytest.fixture(scope="module")
def repos_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signals")
    names = [f"repo{i}" for i in range(REPOSITORIES)]
    for name in names:
        fill(GitRepo(folder / name), name, MODULES)
    path = folder / "repos.yaml"
    path.write_text("repos:\n" + "".join(f"  - source: ./{n}\n" for n in names), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Ended:
    """How a signalled batch ended: its exit code, its stderr, and its processes still alive
    `AFTER` seconds after the signal (described)."""

    code: int
    stderr: str
    left: tuple[str, ...]
    group_left: bool  # does its process group still have a member?
    seconds: float = 0.0  # from the signal to the driver's exit


class Batch:
    """`crawler batch` in its own session, its output in files (a survivor holding a pipe would
    hang the reader); every process of it is stopped by its id when the test ends."""

    def __init__(self, repos_file: Path, folder: Path, *options: str) -> None:
        self.folder = folder
        folder.mkdir()
        command = [sys.executable, "-m", "crawler", "batch", str(repos_file), "-o",
                   str(folder / "out"), "--cache-dir", str(folder / "cache"), "-j", "2", *options]
        with open(folder / "stdout", "wb") as out, open(folder / "stderr", "wb") as err:
            self.process = subprocess.Popen(command, cwd=ROOT, env=child_env(), stdin=subprocess.DEVNULL,
                                            stdout=out, stderr=err, start_new_session=True,
                                            preexec_fn=ctrl_c_default)  # as from a terminal
        self.seen: set[Proc] = set()

    def wait_until(self, ready: Callable[[], object], what: str, timeout: float = 60) -> None:
        """Poll `ready()` (noting the batch's processes meanwhile) until it is true."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the batch ended before {what}: {self.stderr()}"
            self.seen |= family(self.process.pid)
            if ready():
                return
            time.sleep(0.02)
        raise AssertionError(f"no {what} within {timeout} s")

    def signal(self, signum: int, group: bool) -> Ended:
        """Send `signum` to the driver or its process group; how the batch ended."""
        self.seen |= family(self.process.pid)
        (os.killpg if group else os.kill)(self.process.pid, signum)
        return self.ended(time.monotonic())

    def ended(self, since: float | None = None) -> Ended:
        """How it ended; its processes are looked at `AFTER` seconds after `since` (default:
        when the driver exited)."""
        code = self.process.wait(timeout=60)
        exited = time.monotonic()
        since = exited if since is None else since
        self.seen |= family(self.process.pid)  # any member of its group that outlived it
        while (alive(self.seen) or self.group()) and time.monotonic() < since + AFTER:
            time.sleep(0.05)
        left = tuple(describe(proc.pid) for proc in sorted(alive(self.seen), key=lambda p: p.pid))
        return Ended(code, self.stderr(), left, self.group(), exited - since)

    def group(self) -> bool:
        """Has its process group a member that is not a zombie? (`os.killpg(pgid, 0)` counts
        zombies, which have exited and wait only to be reaped, by init here.)"""
        self.seen |= family(self.process.pid)
        return any(alive({proc}) for proc in family(self.process.pid) if proc.pid != self.process.pid)

    def stderr(self) -> str:
        return (self.folder / "stderr").read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        """Kill whatever is left of it, by pid (a failed test must not leave processes behind)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for proc in alive(self.seen | family(self.process.pid)):
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def batches() -> Iterator[list[Batch]]:
    started: list[Batch] = []
    yield started
    for batch in started:
        batch.stop()


def assert_clean_end(ended: Ended, code: int, says: str) -> None:
    lines = ended.stderr.splitlines()
    assert (ended.code, len(lines)) == (code, 1), ended.stderr
    assert says in lines[0]
    assert "Traceback" not in ended.stderr and "InvalidStateError" not in ended.stderr
    assert ended.left == ()
    assert not ended.group_left
    assert ended.seconds < EXIT_SECONDS, f"the driver took {ended.seconds:.1f} s to exit"


STOPS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
WHOM = [False, True]  # the driver alone, or its process group


def sweep(plain: set[tuple[str, str]]) -> list[object]:
    """Every (signal, whom) pair as parameters; a plain `pytest` runs the pairs in `plain`, the
    others are `slow` (`pytest -m slow` runs the whole sweep). Each plain pair of the local and
    the Dask batch differs, so that between them every signal reaches both the driver alone and
    its process group."""
    params = []
    for signum, code, says in STOPS:
        for group in WHOM:
            name = (signal.Signals(signum).name, "group" if group else "driver")
            marks = () if name in plain else (pytest.mark.slow,)
            params.append(pytest.param(signum, code, says, group, marks=marks, id="-".join(name)))
    return params


# ---------------------------------------------------------------- local worker processes


@pytest.mark.parametrize(("signum", "code", "says", "group"),
                         sweep({("SIGINT", "driver"), ("SIGTERM", "group")}))
def test_a_local_batch_stops_cleanly_on_a_signal(repos_file: Path, tmp_path: Path, batches: list[Batch],
                                                 signum: int, code: int, says: str, group: bool) -> None:
    """Before: SIGTERM left the pool's processes blocked on a pipe a minute later, and SIGINT to
    the driver alone waited for every task under way (17-23 s)."""
    batch = Batch(repos_file, tmp_path / "batch")
    batches.append(batch)
    batch.wait_until(lambda: pool_workers(batch.process.pid), "parser at work")
    ended = batch.signal(signum, group)
    assert_clean_end(ended, code, says)
    assert len(list((tmp_path / "batch" / "out").rglob("manifest.yaml"))) < REPOSITORIES


# ---------------------------------------------------------------- a Dask cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two workers that the signalled batches share (they survive them)."""
    from tests.helpers.dask_cluster import started_cluster

    with started_cluster(tmp_path_factory.mktemp("cluster"), 2) as (address, _, _):
        yield address


def task_running(address: str) -> bool:
    """Is a task of the crawler running on a worker of the cluster now?"""
    from distributed import Client

    with Client(address, timeout=30) as client:
        processing = client.processing()
        return any(started["key"] in processing.get(started["worker"], ())
                   for _, started in client.get_events(STARTED_TOPIC))


@needs_dask
@pytest.mark.parametrize(("signum", "code", "says", "group"),
                         sweep({("SIGTERM", "driver"), ("SIGINT", "group")}))
def test_a_dask_batch_stops_cleanly_on_a_signal(repos_file: Path, tmp_path: Path, batches: list[Batch],
                                                cluster: str, signum: int, code: int, says: str,
                                                group: bool) -> None:
    """Before: 133-177 lines with 8-12 InvalidStateError tracebacks (the callback that settles a
    task set an outcome on a future the stopping driver had cancelled)."""
    batch = Batch(repos_file, tmp_path / "batch", "--scheduler", cluster)
    batches.append(batch)
    batch.wait_until(lambda: task_running(cluster), "task running on a worker")
    assert_clean_end(batch.signal(signum, group), code, says)


@needs_dask
def test_a_dask_batch_that_loses_its_cluster_ends_with_one_line(
        repos_file: Path, tmp_path: Path, batches: list[Batch]) -> None:
    """Its one worker SIGKILLed mid-batch (the scheduler up): exit 1, one line; then, a new worker
    joined, the scheduler SIGKILLed mid-batch: the same. Before, the first printed tracebacks
    beside its line, and the second failed every repository with Dask's cancellation, after
    tracebacks of its reconnection."""
    from distributed import Client

    from tests.helpers.dask_cluster import dask_command, started_cluster, stop

    (tmp_path / "cluster").mkdir()
    timings: list[float] = []
    with started_cluster(tmp_path / "cluster", 1) as (address, scheduler, workers):

        def lose(victim: subprocess.Popen[bytes], name: str) -> Ended:
            batch = Batch(repos_file, tmp_path / name, "--scheduler", address, "--wait-workers", "1")
            batches.append(batch)
            batch.wait_until(lambda: task_running(address), "task running on a worker")
            os.killpg(victim.pid, signal.SIGKILL)
            began = time.monotonic()
            ended = batch.ended()
            timings.append(time.monotonic() - began)
            return ended

        assert_clean_end(lose(workers[0], "workers lost"), 1, "the cluster has had no workers")
        worker = dask_command("worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                              "--no-dashboard", cwd=tmp_path / "cluster")
        try:
            with Client(address, timeout=30) as client:
                client.wait_for_workers(1, timeout=90)
            assert_clean_end(lose(scheduler, "scheduler lost"), 1,
                             "lost its connection to the scheduler")
        finally:  # without its scheduler, a worker asked to stop waits for it: no asking
            os.killpg(worker.pid, signal.SIGKILL)
            stop(worker)
    print("TIMINGS", timings)
