"""`crawler batch --scheduler ADDRESS` where no Dask scheduler answers ends in one line and exit 1,
within Dask's connect timeout, whatever listens there: a server that sends bytes that are not
Dask's protocol (distributed raised `ValueError`, `struct.error` or `MemoryError` in its
handshake: a 69-line traceback), one that accepts and never answers (the batch ran on past
100 s), and a port where nothing listens. Real listeners on 127.0.0.1 in this process; the
installed command as a subprocess, with the connect timeout set as a user sets it (Dask's
`distributed.comm.timeouts.connect`, by its environment variable)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT, child_env

pytest.importorskip("distributed")  # the [dask] extra

CONNECT = 2.0  # seconds: the connect timeout the runs are given
SLACK = 1.5  # seconds past it by which the batch must have let go of the connection
RUN_SECONDS = 60.0  # the whole command, interpreter start and imports on a loaded machine included

GARBAGE = {
    "frame count of 2**64": b"\xff" * 64,  # distributed: ValueError, or MemoryError allocating
    "an HTTP answer": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    "three bytes, then closed": b"\x01\x02\x03",  # struct.error on a short header
}


@dataclass
class Listener:
    """A TCP server on 127.0.0.1 in a thread: it answers each connection with `reply` (None:
    never answers), then holds it open until the peer closes it; when each connection came and
    when its peer let go are noted."""

    reply: bytes | None
    close_after_reply: bool = False
    accepted: list[float] = field(default_factory=list)
    released: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._serve, daemon=True)]
        self.threads[0].start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.append(time.monotonic())
            thread = threading.Thread(target=self._hold, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _hold(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.2)
            try:
                if self.reply is not None:
                    conn.sendall(self.reply)
                    if self.close_after_reply:
                        return
                while not self.stopping.is_set():
                    try:
                        if not conn.recv(65536):  # the peer closed it
                            self.released.append(time.monotonic())
                            return
                    except TimeoutError:
                        continue
            except OSError:
                self.released.append(time.monotonic())

    def stop(self) -> None:
        self.stopping.set()
        self.server.close()
        for thread in self.threads:
            thread.join(5)


@pytest.fixture
def listen() -> Iterator[list[Listener]]:
    started: list[Listener] = []
    yield started
    for listener in started:
        listener.stop()


@pytest.fixture(scope="module")
def repos_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("connect")
    repo = GitRepo(folder / "repo")
    repo.write("lib/mod.py", 'def f(x):\n    raise ValueError(f"bad value {x}")\n')
    repo.commit("one module")
    path = folder / "repos.yaml"
    path.write_text("repos:\n  - source: ./repo\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Ran:
    code: int
    stderr: str
    seconds: float


def batch_at(address: str, repos_file: Path, out: Path) -> Ran:
    """The installed `crawler batch` at `address`, with a connect timeout of CONNECT seconds."""
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "-m", "crawler", "batch", str(repos_file), "-o", str(out),
         "--cache-dir", str(out / "cache"), "--scheduler", address],
        cwd=ROOT, env=child_env(DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=f"{CONNECT:g}s"),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_SECONDS * 2)
    return Ran(process.returncode, process.stderr, time.monotonic() - started)


def assert_one_line(ran: Ran, address: str, *words: str) -> str:
    """Exit 1, one line on stderr naming the address and what to do, no traceback."""
    assert ran.code == 1, ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    line = lines[0]
    assert address in line and "check the address" in line, line
    for word in words:
        assert word in line, line
    assert ran.seconds < RUN_SECONDS, ran
    return line


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_a_server_that_is_not_dask_ends_the_batch_in_one_line(
        name: str, repos_file: Path, tmp_path: Path, listen: list[Listener]) -> None:
    listener = Listener(GARBAGE[name], close_after_reply=name.endswith("closed"))
    listen.append(listener)
    address = f"tcp://127.0.0.1:{listener.port}"
    ran = batch_at(address, repos_file, tmp_path / "out")
    line = assert_one_line(ran, address)
    assert "not a Dask scheduler" in line or "cannot reach a Dask scheduler" in line, line
    assert listener.accepted, "the batch never connected"
    assert not (tmp_path / "out" / "repo").exists()  # nothing was extracted


def test_a_server_that_never_answers_is_let_go_at_the_connect_timeout(
        repos_file: Path, tmp_path: Path, listen: list[Listener]) -> None:
    listener = Listener(None)
    listen.append(listener)
    address = f"tcp://127.0.0.1:{listener.port}"
    ran = batch_at(address, repos_file, tmp_path / "out")
    assert_one_line(ran, address, f"within {CONNECT:g} s")
    assert len(listener.accepted) == 1, listener.accepted
    # it waited the connect timeout for an answer, and no longer
    held = [gone - came for came, gone in zip(listener.accepted, listener.released)]
    assert held and CONNECT - 0.2 <= held[0] <= CONNECT + SLACK, held


def test_a_port_where_nothing_listens_ends_the_batch_in_one_line(
        repos_file: Path, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]  # closed at the end of the block: nothing listens there
    address = f"tcp://127.0.0.1:{port}"
    ran = batch_at(address, repos_file, tmp_path / "out")
    # distributed retries a refused connection until the deadline, so on a busy machine the
    # deadline can come before its own error: either line is true, and each is one line
    line = assert_one_line(ran, address)
    assert "cannot reach a Dask scheduler" in line or "nothing there answered" in line, line


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:port", "bogus://127.0.0.1:1"])
def test_what_is_not_an_address_is_said_before_any_connection(
        address: str, repos_file: Path, tmp_path: Path) -> None:
    ran = batch_at(address, repos_file, tmp_path / "out")
    assert ran.code == 1 and "Traceback" not in ran.stderr, ran.stderr
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: --scheduler {address}: not an address")
    assert "tcp://HOST:8786" in lines[0], lines
