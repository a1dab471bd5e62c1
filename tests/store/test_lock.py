"""Two runs on one output folder: the second waits or stops with one line; never interleaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.errors import OutputError
from crawler.pipeline import apply
from crawler.store import record_files
from tests.helpers.outputkit import SHA_B, collected, folder_of, module, snapshot
from tests.helpers.processes import ROOT, child_env, pickled, start

V1 = {"pkg/a.py": module("a", 5)}
V2 = {"pkg/a.py": module("a", 6, offset=3)}


def _holder(folder: Path):  # type: ignore[no-untyped-def]
    holder = start("hold", str(folder))
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked", holder.stderr.read() if holder.stderr else ""
    return holder


def test_second_run_refuses_then_waits(tmp_path: Path) -> None:
    root = tmp_path / "out"
    apply(collected(V1), root)
    folder = folder_of(root)
    before = snapshot(folder)
    holder = _holder(folder)
    try:
        with pytest.raises(OutputError) as caught:
            apply(collected(V2, SHA_B), root)
        message = str(caught.value)
        assert f"another crawler run (pid {holder.pid})" in message and "--wait" in message
        assert "\n" not in message
        with pytest.raises(OutputError, match="after waiting 0.3s"):
            apply(collected(V2, SHA_B), root, wait=0.3)
        with pytest.raises(OutputError):
            apply(collected(V2, SHA_B), root, dry_run=True)  # a reader waits for the writer too
        assert snapshot(folder) == before
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    result = apply(collected(V2, SHA_B), root, wait=5)
    assert result.files_written > 0
    assert (folder / ".crawler.lock").read_bytes() == b""  # no churn in a committed folder


def test_a_refused_run_names_a_dry_runs_pid(tmp_path: Path) -> None:
    """A dry run holds a shared lock and writes no pid: the kernel's list of locks names it,
    not a pid a killed run left in the file."""
    root = tmp_path / "out"
    apply(collected(V1), root)
    folder = folder_of(root)
    (folder / ".crawler.lock").write_text("1\n")  # left by a run killed mid-way
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SHARED, str(folder)], cwd=ROOT,
                              env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputError) as caught:
            apply(collected(V2, SHA_B), root)
        assert f"another crawler run (pid {holder.pid}) is using" in str(caught.value)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)


HOLD_SHARED = """import sys
from pathlib import Path
from crawler.store import repo_output
with repo_output.lock(Path(sys.argv[1]), shared=True):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_waiting_run_proceeds_when_the_holder_finishes(tmp_path: Path) -> None:
    import threading

    root = tmp_path / "out"
    apply(collected(V1), root)
    holder = _holder(folder_of(root))
    assert holder.stdin is not None
    threading.Timer(0.5, holder.stdin.close).start()
    result = apply(collected(V2, SHA_B), root, wait=20)
    assert result.files_written > 0
    holder.wait(10)


def test_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    root = tmp_path / "out"
    apply(collected(V1), root)
    holder = _holder(folder_of(root))
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    assert (folder_of(root) / ".crawler.lock").exists()
    result = apply(collected(V2, SHA_B), root)  # no wait needed: the kernel dropped the lock
    assert result.files_written > 0


def test_orphaned_forked_worker_does_not_hold_the_lock(tmp_path: Path) -> None:
    root = tmp_path / "out"
    apply(collected(V1), root)
    dying = start("fork-and-die", str(folder_of(root)))
    out, err = dying.communicate(timeout=30)
    assert dying.returncode == -signal.SIGKILL, err
    orphan = int(out.strip())
    try:
        os.kill(orphan, 0)  # still alive, holding a copy of the lock file descriptor... closed
        result = apply(collected(V2, SHA_B), root)
        assert result.files_written > 0
    finally:
        os.kill(orphan, signal.SIGKILL)


def _race(tmp_path: Path, **extra: str) -> list[str]:
    root = tmp_path / "out"
    apply(collected(V1), root)
    log = tmp_path / "log"
    first = pickled(collected(V2, SHA_B), tmp_path / "first.pickle")
    second = pickled(collected(V1), tmp_path / "second.pickle")
    env = {"CRAWLER_TEST_LOG": str(log), "CRAWLER_TEST_WAIT": "30", "CRAWLER_TEST_GO": "1", **extra}
    runs = [start("apply", str(first), str(root), **env), start("apply", str(second), str(root), **env)]
    for run in runs:  # both ready (imports done), then both go at once
        assert run.stdout is not None and run.stdout.readline().strip() == "ready"
    for run in runs:
        assert run.stdin is not None
        run.stdin.write("go\n")
        run.stdin.close()
    for run in runs:
        assert run.stdout is not None and run.stderr is not None
        out, err = run.stdout.read(), run.stderr.read()
        assert run.wait(60) == 0, err
        assert out.splitlines()[-1].startswith("done")
    for path in record_files.iter_record_paths(folder_of(root)):
        record_files.load_record(path)
    return [line.split()[0] for line in log.read_text().splitlines()]


def test_two_real_runs_never_interleave(tmp_path: Path) -> None:
    steps = _race(tmp_path)
    assert steps == ["load", "enter", "exit"] * 2


def test_without_the_lock_they_would(tmp_path: Path) -> None:
    """The control: the race above does interleave when the lock is taken away."""
    steps = _race(tmp_path, CRAWLER_TEST_NO_LOCK="1")
    assert steps != ["load", "enter", "exit"] * 2
