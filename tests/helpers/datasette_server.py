"""datasette serving an SQLite export on 127.0.0.1 for a test, stopped by its process id."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.processes import child_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(database: Path, metadata: Path | None = None, wait: float = 60.0) -> Iterator[str]:
    """`datasette serve DATABASE [-m METADATA]` on a free loopback port: its base URL. The
    server runs in a session of its own and is stopped, with anything it started, by its id."""
    if importlib.util.find_spec("datasette") is None:
        pytest.skip("datasette is not installed (pip install -e '.[test]')")
    port = free_port()
    args = [sys.executable, "-m", "datasette", "serve", str(database),
            *(["-m", str(metadata)] if metadata is not None else []),
            "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=child_env(), start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait  # a loaded machine starts it slowly
        while True:
            try:
                urllib.request.urlopen(base + "/-/versions.json", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
                    pytest.fail(f"datasette did not start: {errors[-500:]}")
                time.sleep(0.1)
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()
