"""How worker processes start: forked by the fork server, or as plain subprocesses in a daemon.

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
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from crawler.parse import forkserver as _forkserver

_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # holds `crawler/`
_CHILD_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); "
               "from crawler.parse.launch import child_main; child_main(sys.argv[2:])")


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
    from crawler.parse.workers import _worker_main

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
