"""A Dask cluster started the way users start one, and stopped by its processes' ids."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.processes import child_env


def dask_command(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    """A `dask` command in its own process group, so that it and its nanny's worker stop together."""
    env = child_env(DASK_DISTRIBUTED__WORKER__DAEMON="",  # whatever the caller set: defaults
                    XDG_CACHE_HOME=str(cwd / "cache"))  # the workers' cache, in the test's folder
    env.pop("DASK_DISTRIBUTED__WORKER__DAEMON")
    return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop(process: subprocess.Popen[Any]) -> None:
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


def scheduler_address(scheduler_file: Path, deadline: float) -> str:
    """The address the scheduler wrote to its file. The scheduler creates the file before it
    writes it, so a file that exists may still be empty or half written: read until it parses."""
    while True:
        try:
            return str(json.loads(scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextmanager
def started_cluster(folder: Path, workers: int
                    ) -> Iterator[tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]]:
    """`dask scheduler` and `workers` single-threaded `dask worker`s on loopback, each in its own
    process group: the scheduler's address, its process and the workers'. None of their processes
    outlives the block."""
    scheduler_file = folder / "scheduler.json"
    scheduler = dask_command("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(scheduler_file), cwd=folder)
    started = [scheduler]
    try:
        address = scheduler_address(scheduler_file, time.monotonic() + 60)
        for _ in range(workers):
            started.append(dask_command("worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                        "--no-dashboard", cwd=folder))
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=90)
        yield address, scheduler, started[1:]
    finally:
        for process in reversed(started):
            stop(process)
    deadline = time.monotonic() + 10
    while any(group_alive(process.pid) for process in started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for process in started for pid in group_alive(process.pid)] == []
