"""A batch on a Dask cluster started the way users start one: `dask scheduler` and `dask worker`
as processes, with Dask's default settings (daemonic workers under a nanny), on loopback only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.batch.driver import DONE, FAILED, run_batch
from crawler.batch.reposfile import load_batch
from tests.batch.test_batch import repos, statuses, tree  # noqa: F401 - `repos` is a fixture
from tests.processes import child_env

pytest.importorskip("distributed")  # the [dask] extra


def dask_command(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    """A `dask` command in its own process group, so that it and its nanny's worker stop together."""
    env = child_env(DASK_DISTRIBUTED__WORKER__DAEMON="")  # whatever the caller set: defaults
    env.pop("DASK_DISTRIBUTED__WORKER__DAEMON")
    return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a command and everything it started, by its process group's id."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(20)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # a worker its nanny left behind
    except ProcessLookupError:
        pass


def group_alive(pgid: int) -> list[int]:
    """The living (not zombie) processes of a process group, read from /proc."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A scheduler and two single-threaded workers; the scheduler's address and the workers."""
    folder = tmp_path / "cluster"
    folder.mkdir()
    scheduler_file = folder / "scheduler.json"
    scheduler = dask_command("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(scheduler_file), cwd=folder)
    started = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(2):
            started.append(dask_command("worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                        "--no-dashboard", cwd=folder))
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=90)
        yield address, started[1:]
    finally:
        for process in reversed(started):
            stop(process)
    deadline = time.monotonic() + 10
    while any(group_alive(process.pid) for process in started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for process in started for pid in group_alive(process.pid)] == []


def test_a_batch_on_dask_worker_processes_with_default_settings(
        repos: Path,  # noqa: F811 - the fixture imported above
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    address, _ = cluster
    local = run_batch(load_batch(repos, tmp_path / "out-local"), jobs=2)
    on_dask = run_batch(load_batch(repos, tmp_path / "out-dask"), scheduler=address)
    assert statuses(on_dask) == statuses(local) == [DONE, DONE, DONE, FAILED]
    assert on_dask.scheduler == address
    written = tree(tmp_path / "out-local")
    assert written == tree(tmp_path / "out-dask")
    assert sum(name.endswith("manifest.yaml") for name in written) == 3
