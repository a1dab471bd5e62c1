"""Run a command in its own process group, SIGKILL it, and find every process that outlives it.

A run's processes are its process group (workers, their fork server and git inherit it) and
every descendant of its leader seen just before the kill, each known by pid and start time so
that a reused pid is never mistaken for a survivor. A zombie has exited: it only waits for its
new parent to reap it. Linux only (`/proc`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.processes import ROOT, child_env

GRACE = 5.0  # seconds a process of a killed run may take to notice and exit, on an idle machine


def grace() -> float:
    """GRACE, stretched by how overloaded the machine is now: a fork server that was importing
    LibCST when its parent died finishes that first, and on a shared machine with a load of
    ten per core that takes ten times as long."""
    return GRACE * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@dataclass(frozen=True)
class Proc:
    """A process, by pid and start time (a pid alone may be reused)."""

    pid: int
    started: int


def _stat(pid: int) -> tuple[int, int, int, str] | None:
    """(parent pid, process group, start time, state) of a process, or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name in parentheses may hold spaces
    return int(fields[1]), int(fields[2]), int(fields[19]), fields[0]


def family(leader: int) -> set[Proc]:
    """The run's processes: its process group, and every descendant of its leader."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) is not None:
            table[int(name)] = stat
    found = {pid for pid, (_, group, _, _) in table.items() if group == leader} | {leader}
    grew = True
    while grew:
        grew = False
        for pid, (parent, _, _, _) in table.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return {Proc(pid, table[pid][2]) for pid in found if pid in table}


def alive(procs: set[Proc]) -> set[Proc]:
    """Those still running: the same start time, and not a zombie waiting for its parent."""
    left = set()
    for proc in procs:
        stat = _stat(proc.pid)
        if stat is not None and stat[2] == proc.started and stat[3] not in ("Z", "X"):
            left.add(proc)
    return left


@dataclass(frozen=True)
class Ended:
    """How one run ended: its exit code (minus the signal), and the processes that outlived it."""

    code: int
    seconds: float
    leftovers: tuple[str, ...] = ()  # each described: `pid 123 (command line)`
    lingered: float = 0.0  # seconds from the kill until its last process was gone

    @property
    def killed(self) -> bool:
        return self.code == -signal.SIGKILL


def run(args: list[str], logs: Path, *, kill_after: float | None = None,
        env: dict[str, str] | None = None, timeout: float = 600.0) -> Ended:
    """Run `args` in its own process group; SIGKILL it after `kill_after` seconds if still alive.

    After a kill, every process of its family must be gone within `grace()` seconds; those that
    are not are listed in `leftovers` and killed by their pid, so that no run outlives its test.
    Its stdout and stderr are appended to files in `logs` (a pipe could be held open by a
    survivor, and would hang the reader).
    """
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "stdout", "ab") as out, open(logs / "stderr", "ab") as err:
        started = time.monotonic()
        child = subprocess.Popen(args, cwd=ROOT, env=env or child_env(), stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=err, start_new_session=True)
        try:
            child.wait(timeout=timeout if kill_after is None else kill_after)
            return Ended(child.returncode, time.monotonic() - started)
        except subprocess.TimeoutExpired:
            if kill_after is None:
                child.kill()
                child.wait()
                raise
        return kill(child, started, timeout)


def kill(child: subprocess.Popen[bytes], started: float, timeout: float = 600.0) -> Ended:
    """SIGKILL a run's leader; its processes that outlive it by `grace()` are `leftovers`."""
    procs = family(child.pid)
    os.kill(child.pid, signal.SIGKILL)
    killed = time.monotonic()
    code = child.wait(timeout=timeout)
    seconds = killed - started
    procs |= family(child.pid)  # any that started since: the group outlives its leader
    return Ended(code, seconds, *_outlived(procs, killed))


def pool_workers(leader: int) -> list[int]:
    """The run's parser workers: processes its fork server forked (their parent is a
    descendant of the leader, not the leader) that run the fork server's command line."""
    found = []
    for proc in family(leader):
        stat = _stat(proc.pid)
        if stat is None or stat[0] == leader:
            continue
        try:
            with open(f"/proc/{proc.pid}/cmdline", "rb") as handle:
                line = handle.read()
        except OSError:
            continue
        if b"multiprocessing.forkserver" in line:
            found.append(proc.pid)
    return found


def _outlived(procs: set[Proc], killed: float) -> tuple[tuple[str, ...], float]:
    """The processes still alive `grace()` seconds after the kill, described, each then killed
    by its pid; and how long after the kill the last one was seen alive."""
    deadline = killed + grace()
    while (left := alive(procs)) and time.monotonic() < deadline:
        time.sleep(0.05)
    lingered = time.monotonic() - killed
    described = tuple(describe(proc.pid) for proc in sorted(left, key=lambda p: p.pid))
    for proc in left:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return described, lingered


def describe(pid: int) -> str:
    """`pid 123 (its command line, cut)`, for a report."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            line = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        line = "gone"
    return f"pid {pid} ({line[:120]})"
