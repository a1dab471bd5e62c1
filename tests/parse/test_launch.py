"""Workers in a daemonic process (a Dask worker's defaults), and workers whose crawler is killed.

A daemonic process may not start `multiprocessing` children; the pool then starts its workers
with `subprocess`. These tests make the test process daemonic, as Dask makes its workers, and
run the same hostile files as tests/parse/test_workers.py through that path.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.parse.outcomes import PARSER_CRASHED, TIMED_OUT
from crawler.parse.workers import Limits, WorkerPool, _Subprocess, in_daemon
from tests.helpers.processes import ctrl_c_default
from tests.helpers.workers import PARENS, TEST_FILE, good, messages, run

pytestmark = pytest.mark.runs_long

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def daemonic() -> Iterator[None]:
    """This process flagged daemonic, exactly as multiprocessing flags a Dask worker."""
    process = multiprocessing.current_process()
    before = process.daemon
    process.daemon = True
    try:
        yield
    finally:
        process.daemon = before


def test_a_daemon_may_not_fork_workers_so_the_pool_starts_subprocesses(daemonic: None) -> None:
    assert in_daemon()
    with pytest.raises(AssertionError, match="daemonic processes are not allowed"):
        multiprocessing.get_context("spawn").Process(target=print).start()
    with WorkerPool(2, Limits(batch_files=2, files_per_worker=2)) as pool:
        outcomes = {}
        processes = set()
        for index, outcome in pool.run([good(f"f{i}") for i in range(6)]):
            outcomes[index] = outcome
            processes |= {worker.process for worker in pool._workers}
        started = pool.started
    assert {type(process) for process in processes} == {_Subprocess}
    assert [messages(outcomes[i]) for i in range(6)] == [[f"f{i} failed"] for i in range(6)]
    assert started == 3  # recycled after two files each, and none started for nothing
    assert not any(process.is_alive() for process in processes)


def test_a_segfault_in_a_subprocess_worker_is_named_and_the_run_goes_on(daemonic: None) -> None:
    outcomes, started = run([good("a"), ("parens.py", "p", PARENS, None), good("b")], 2)
    failure = outcomes[1].failure
    assert failure is not None and failure.reason == PARSER_CRASHED
    assert failure.detail is not None and "SIGSEGV" in failure.detail
    assert messages(outcomes[0]) == ["a failed"] and messages(outcomes[2]) == ["b failed"]
    assert started >= 3  # the crash, and its confirmation alone


def test_time_and_memory_limits_hold_in_subprocess_workers(daemonic: None) -> None:
    slow = ("x = [" + "1, " * 400_000 + "]\n").encode()
    outcomes, _ = run([("slow.py", "s", slow, None), good("a")], 1, Limits(seconds=0.5))
    assert outcomes[0].failure is not None and outcomes[0].failure.reason == TIMED_OUT
    big = b"".join(b"x%d = [%s]\n" % (i, b"1, " * 2000) for i in range(400))
    outcomes, _ = run([("big.py", "g", big, None), good("a")], 1,
                      Limits(seconds=30, memory_bytes=300 << 20))
    assert outcomes[0].failure is not None and outcomes[0].failure.reason != TIMED_OUT
    assert messages(outcomes[1]) == ["a failed"]


CRAWLER = textwrap.dedent("""\
    import multiprocessing, os, sys
    from crawler.parse.workers import Limits, WorkerPool
    if sys.argv[1] == "daemon":
        multiprocessing.current_process().daemon = True
    slow = ("x = [" + "1, " * 3_000_000 + "]\\n").encode()
    with WorkerPool(2, Limits(seconds=600)) as pool:
        results = pool.run([("slow%d.py" % i, str(i), slow) for i in range(2)])
        pool._start(); pool._start()  # both workers up before the first answer
        pids = [w.process.pid for w in pool._workers]
        print(" ".join(map(str, pids)), flush=True)
        next(results)
""")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie is gone


@pytest.mark.parametrize("mode", ["fork server", "daemon"])
def test_workers_exit_when_their_crawler_is_killed_mid_parse(mode: str) -> None:
    crawler = subprocess.Popen([sys.executable, "-c", CRAWLER, mode.split()[0]], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert crawler.stdout is not None
        pids = [int(pid) for pid in crawler.stdout.readline().split()]
        assert len(pids) >= 2 and all(alive(pid) for pid in pids)
        time.sleep(0.5)  # parsing now
        crawler.send_signal(signal.SIGKILL)
        crawler.wait(10)
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in pids if alive(pid)]
        for pid in left:  # stop what a failure left behind, by its id
            os.kill(pid, signal.SIGKILL)
        assert left == [], f"workers outlived their crawler: {left}"
    finally:
        if crawler.poll() is None:
            crawler.kill()
            crawler.wait(10)


def test_test_files_are_read_by_subprocess_workers_in_a_daemon(daemonic: None) -> None:
    # it names pytest.raises: a test file that cannot hold an assertion is not parsed at all
    files = [("tests/test_a.py", "a", TEST_FILE),
             ("tests/test_crash.py", "c", b"import pytest  # pytest.raises\n" + PARENS)]
    with WorkerPool(2) as pool:
        found = dict(pool.read_tests(files))
    assert len(found[0].assertions) == 1 and found[0].failure is None
    assert found[1].failure is not None and found[1].failure.reason == PARSER_CRASHED


FIRST_DISPOSITION = textwrap.dedent("""
    import signal, sys
    from crawler.parse import forkserver as _forkserver, workers
    from tests.parse.test_launch import report_disposition
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN where a script started us in the background
    if sys.argv[1] == "warm":
        _forkserver.warm_up()
    process, conn = workers.start_worker(report_disposition, 0)
    print(conn.recv(), signal.getsignal(signal.SIGINT) == before)
    process.join(10)
""")


def report_disposition(conn: object, memory_bytes: int, crawler: int) -> None:
    """A worker's target that reports how SIGINT is handled before it does anything itself."""
    conn.send(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)  # type: ignore[attr-defined]


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_a_forked_worker_ignores_ctrl_c_from_its_first_instruction(start: str) -> None:
    """A Ctrl-C sent to the process group while a worker unpickles its task or imports must
    not reach it as a KeyboardInterrupt (it printed a traceback from `import resource`); the
    crawler keeps its own handler. Fork server started by warm_up, or by the first worker."""
    done = subprocess.run([sys.executable, "-c", FIRST_DISPOSITION, start], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=ctrl_c_default)  # as from a terminal, also under nohup
    assert done.stdout.split() == ["True", "True"], done.stderr


SIGNAL_DURING_STARTS = textwrap.dedent("""
    import multiprocessing.process, os, signal, sys, threading, time
    from crawler.parse import forkserver as _forkserver, workers
    from tests.parse.test_launch import report_disposition

    if sys.argv[1] == "warm":
        _forkserver.warm_up()
    # a thread beside the main one, as a progress bar's or a writer's: it does not block SIGINT
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    real_start = multiprocessing.process.BaseProcess.start

    def start_with_ctrl_c(self):  # Ctrl-C reaches the crawler while a worker starts
        os.kill(os.getpid(), signal.SIGINT)
        real_start(self)

    multiprocessing.process.BaseProcess.start = start_with_ctrl_c
    honoured = 0
    for _ in range(int(sys.argv[2])):
        try:
            process, conn = workers.start_worker(report_disposition, 0)
            ignores = conn.recv()
            time.sleep(0.2)  # a KeyboardInterrupt raised in the main thread comes here at last
        except KeyboardInterrupt:
            honoured += 1
            process, conn = None, None
        if process is not None:
            process.join(10)
            assert ignores, "a worker did not ignore Ctrl-C from its first instruction"
    print(honoured)
""")


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_ctrl_c_while_a_worker_starts_stops_the_crawler(start: str) -> None:
    """A SIGINT sent while a worker starts raises KeyboardInterrupt in the crawler, every time,
    with another thread of the crawler alive beside it: the fork server's start ignored Ctrl-C
    process-wide for each worker, and the kernel gave the signal to that other thread, which
    dropped it (0 of 5 honoured with a warm fork server; the run went on to exit 0). Only the
    very first start, which starts the fork server itself, may ignore it ("cold")."""
    trials = 5
    done = subprocess.run([sys.executable, "-c", SIGNAL_DURING_STARTS, start, str(trials)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=ctrl_c_default)
    assert done.returncode == 0, done.stderr
    honoured = int(done.stdout.split()[-1])
    assert honoured == (trials if start == "warm" else trials - 1), done.stdout


SIGNAL_DURING_SERVER_START = textwrap.dedent("""
    import os, signal, time
    from multiprocessing import resource_tracker
    from crawler.parse import forkserver as _forkserver

    real = resource_tracker.ensure_running

    def ensure_running_with_ctrl_c():  # Ctrl-C arrives as the fork server starts, once
        real()
        if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # inside the start's window
            os.kill(os.getpid(), signal.SIGINT)

    resource_tracker.ensure_running = ensure_running_with_ctrl_c
    try:
        _forkserver.warm_up()
        time.sleep(0.5)
        print("lost")
    except KeyboardInterrupt:
        print("honoured")
""")


def test_ctrl_c_while_the_fork_server_starts_stops_the_crawler() -> None:
    """A SIGINT that comes while the fork server starts (with Ctrl-C ignored, at a command's
    start) is held and raised after, with no other thread: multiprocessing's resource tracker,
    started inside that window, unblocked SIGINT as it ended, and the signal was dropped."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_DURING_SERVER_START], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, preexec_fn=ctrl_c_default)
    assert done.stdout.split() == ["honoured"], (done.stdout, done.stderr)


# A run that parses prints the fork server it started among its children; one whose every file
# comes from the cache (a rerun, most of a weekly update) starts none, and pays none of its imports.
_CHILDREN_AFTER_EXTRACT = textwrap.dedent("""
    import glob, sys
    from pathlib import Path
    from crawler.pipeline import extract
    extract(sys.argv[1], output_root=Path(sys.argv[2]), cache_dir=Path(sys.argv[3]))
    children = set()
    for listing in glob.glob("/proc/self/task/*/children"):
        children.update(Path(listing).read_text().split())
    print(len(children))
""")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_a_run_served_by_the_cache_starts_no_fork_server(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    repo.write("pkg/mod.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit()
    args = [sys.executable, "-c", _CHILDREN_AFTER_EXTRACT, str(repo.path), str(tmp_path / "out"),
            str(tmp_path / "cache")]
    first = subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT, timeout=120)
    again = subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT, timeout=120)
    assert int(first.stdout.split()[-1]) >= 1, first.stderr  # the file parsed: a fork server
    assert int(again.stdout.split()[-1]) == 0, again.stderr  # from the cache: none
