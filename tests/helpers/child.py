"""A real second process for the lock and kill tests: `python -m tests.helpers.child MODE ...`.

    hold FOLDER            take the folder's lock, print "locked", hold it until stdin closes
    fork-and-die FOLDER    take the lock, fork a child that sleeps, print its pid, die by SIGKILL
    apply PICKLE ROOT      run pipeline.apply on a pickled Collected; print "ready" first
    crawler ARGS...        the real command line (`python -m crawler ARGS...`), hooked as below

For `apply`, CRAWLER_TEST_KILL_AT=N makes the process SIGKILL itself just before its Nth file
step (a temp file made, an fsync, a rename), and CRAWLER_TEST_LOG=PATH appends when it loads
and when it starts and ends writing, so that a test can see whether two runs interleaved;
CRAWLER_TEST_GO=1 makes it wait for a line on stdin after "ready", so two start together.
For `crawler`, CRAWLER_TEST_KILL_AT works the same, CRAWLER_TEST_COUNT_STEPS=PATH writes
the number of file steps the run took to PATH when it exits, and CRAWLER_TEST_SIGNAL_AT=N:SIGNUM
sends the signal SIGNUM to the process just before its Nth file step.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _log(what: str) -> None:
    path = os.environ.get("CRAWLER_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{what} {os.getpid()}\n")


def hook_steps(each: Callable[[int], None]) -> None:
    """Call `each(n)` just before this process's Nth file step (temp file, fsync or sync, rename)."""
    count = 0

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def step_then(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            each(count)
            return real(*args, **kwargs)

        return step_then

    os.fsync = wrap(os.fsync)
    os.sync = wrap(os.sync)
    os.replace = wrap(os.replace)
    tempfile.mkstemp = wrap(tempfile.mkstemp)  # type: ignore[assignment]
    from crawler.store import atomic  # its temp files are made with the umask's mode, not mkstemp

    atomic.create_temp = wrap(atomic.create_temp)  # type: ignore[method-assign]


def kill_before(step: int) -> None:
    """SIGKILL this process just before its Nth file step (temp file, fsync or sync, rename)."""

    def kill_at(count: int) -> None:
        if count == step:
            os.kill(os.getpid(), signal.SIGKILL)

    hook_steps(kill_at)


def signal_before(step: int, signum: int) -> None:
    """Send `signum` to this process just before its Nth file step, once (from whichever thread
    takes the step: the main thread raises when it next runs, as with a signal from outside)."""
    sent = [False]

    def signal_at(count: int) -> None:
        if count == step and not sent[0]:
            sent[0] = True
            os.kill(os.getpid(), signum)

    hook_steps(signal_at)


def count_steps(path: str) -> None:
    """Count this process's file steps; write the count to `path` when it exits."""
    import atexit

    steps = [0]
    hook_steps(lambda count: steps.__setitem__(0, count))
    atexit.register(lambda: Path(path).write_text(f"{steps[0]}\n", encoding="ascii"))


def crawler(argv: list[str]) -> None:
    """The command line itself, with its file steps hooked (a kill, or a count)."""
    if os.environ.get("CRAWLER_TEST_KILL_AT"):
        kill_before(int(os.environ["CRAWLER_TEST_KILL_AT"]))
    if os.environ.get("CRAWLER_TEST_COUNT_STEPS"):
        count_steps(os.environ["CRAWLER_TEST_COUNT_STEPS"])
    if os.environ.get("CRAWLER_TEST_SIGNAL_AT"):
        step, signum = os.environ["CRAWLER_TEST_SIGNAL_AT"].split(":")
        signal_before(int(step), int(signum))
    # the installed command's own entry (`python -m crawler` and `crawler` both run it): a
    # signal that lands as the command ends, in an exit-time finalizer, is said as the command
    # says it there (`entry.stop_as_python_ends`), not as click's main alone would leave it
    sys.argv = ["crawler", *argv]
    from crawler.cli.entry import main as command_line

    command_line()


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "crawler":
        crawler(argv[1:])
        return
    if mode == "hold":
        from crawler.store import repo_output

        with repo_output.lock(Path(argv[1])):
            print("locked", flush=True)
            sys.stdin.read()
        return
    if mode == "fork-and-die":
        from crawler.store import repo_output

        with repo_output.lock(Path(argv[1])):
            pid = os.fork()
            if pid == 0:  # a worker that outlives its parent, off the test's pipes
                os.close(1)
                os.close(2)
                time.sleep(60)
                os._exit(0)
            print(pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    from crawler import pipeline
    from crawler.store import repo_output

    with open(argv[1], "rb") as handle:
        collected = pickle.load(handle)
    if os.environ.get("CRAWLER_TEST_KILL_AT"):
        kill_before(int(os.environ["CRAWLER_TEST_KILL_AT"]))
    if os.environ.get("CRAWLER_TEST_LOG"):
        real_load, real_write = repo_output.load_folder, repo_output.write_folder

        def load(*args: Any, **kwargs: Any) -> Any:
            _log("load")
            return real_load(*args, **kwargs)

        def write(*args: Any, **kwargs: Any) -> Any:
            _log("enter")
            time.sleep(0.3)  # widen the window in which another run could interleave
            try:
                return real_write(*args, **kwargs)
            finally:
                _log("exit")

        repo_output.load_folder, repo_output.write_folder = load, write  # type: ignore[assignment]
        if os.environ.get("CRAWLER_TEST_NO_LOCK"):  # the control: what would happen without it
            from contextlib import nullcontext

            repo_output.lock = lambda *a, **k: nullcontext()  # type: ignore[assignment]
    print("ready", flush=True)
    if os.environ.get("CRAWLER_TEST_GO"):
        sys.stdin.readline()  # start together with another child
    result = pipeline.apply(collected, Path(argv[2]), wait=float(os.environ.get("CRAWLER_TEST_WAIT", "0")))
    print(f"done {result.files_written}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
