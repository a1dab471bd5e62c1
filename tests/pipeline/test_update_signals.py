"""SIGINT and SIGTERM stop a real `crawler update` under load, every time, with their exit codes.

The library of tests.helpers.killlib (several hundred files, two worker processes) is extracted and every
record annotated (tests.helpers.killrun's scene); then `update` to the last commit is signalled at points
of its run: while its workers parse, as soon as they are gone (the merge), just before its first
file step (the first record written) and half-way through its file steps, the last two from inside
the run (`tests.helpers.child`: the signal is sent just before that step, from whichever thread takes it),
to its pid or, as a terminal's Ctrl-C, to its process group. Each run must end with the signal's
code (130, 143) and one line, no process of it left, and every planted annotation byte for byte.

Before the fix a SIGTERM ended the run by its default action (no line, exit -15); a Ctrl-C that
came while a worker started was dropped (see tests/parse/test_launch.py for that alone).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.helpers.killlib import library
from tests.helpers.killprocs import alive, describe, family, grace, pool_workers
from tests.helpers.killrun import KillScene, Workspace, child_command
from tests.helpers.processes import ROOT, ctrl_c_default

SEED = 20261206
FILES = 300  # library modules; with packages and tests, over 320 files
TRIALS = 5  # per point and signal in the slow run
CODES = {signal.SIGINT: (130, "Error: interrupted"), signal.SIGTERM: (143, "Error: terminated")}
POINTS = ("parse", "merge", "first write", "mid write")


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> KillScene:
    return KillScene(tmp_path_factory.mktemp("update-signals"), library(FILES, SEED), SEED)


@dataclass(frozen=True)
class Stopped:
    code: int
    stderr: str
    left: tuple[str, ...]
    sent: bool  # did the signal go out before the run ended?


def signalled(scene: KillScene, space: Workspace, point: str, signum: int, group: bool) -> Stopped:
    """`update` from the annotated start in `space`, sent `signum` at `point`."""
    env = dict(scene.env)
    steps = scene.steps["update"]
    if point == "first write":
        env["CRAWLER_TEST_SIGNAL_AT"] = f"1:{int(signum)}"
    elif point == "mid write":
        env["CRAWLER_TEST_SIGNAL_AT"] = f"{max(2, steps // 2)}:{int(signum)}"
    args = child_command(scene.command("update", space)) + ["-j", "2"]
    space.logs.mkdir(parents=True, exist_ok=True)
    with open(space.logs / "stdout", "wb") as out, open(space.logs / "stderr", "wb") as err:
        child = subprocess.Popen(args, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True, preexec_fn=ctrl_c_default)
    seen = family(child.pid)
    try:
        sent = True
        if point in ("parse", "merge"):
            sent = _when(child, seen, lambda: bool(pool_workers(child.pid)))
            if sent and point == "merge":
                sent = _when(child, seen, lambda: not pool_workers(child.pid))
            if sent:
                (os.killpg if group else os.kill)(child.pid, signum)
        code = child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    deadline = time.monotonic() + grace()
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = tuple(describe(proc.pid) for proc in alive(seen))
    for proc in alive(seen):
        os.kill(proc.pid, signal.SIGKILL)
    stderr = (space.logs / "stderr").read_text(encoding="utf-8", errors="replace")
    return Stopped(code, stderr, left, sent)


def _when(child: subprocess.Popen[bytes], seen: set, ready: Callable[[], bool]) -> bool:
    """Poll until `ready()` (noting the run's processes); False if the run ended first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return False
        seen |= family(child.pid)
        if ready():
            return True
        time.sleep(0.01)
    raise AssertionError("the run never got there")


def trial(scene: KillScene, point: str, signum: int, number: int) -> list[str]:
    """One signalled run on a fresh copy of the start; what went wrong, as lines."""
    label = f"{signal.Signals(signum).name} at {point} #{number}"
    space = scene.fresh(f"{label.replace(' ', '-').replace('#', '')}")
    stopped = signalled(scene, space, point, signum, group=number % 2 == 1)
    problems = []
    if not stopped.sent:
        problems.append(f"{label}: the run ended before the signal (code {stopped.code})")
    code, line = CODES[signal.Signals(signum)]
    if stopped.code != code or stopped.stderr.splitlines() != [line]:
        problems.append(f"{label}: exit {stopped.code}, stderr {stopped.stderr[-300:]!r}")
    problems += [f"{label}: {proc} outlived the run" for proc in stopped.left]
    checked = scene.check(space)
    problems += [f"{label}: {problem}" for problem in checked.problems]
    if checked.annotations != scene.records:
        problems.append(f"{label}: {checked.annotations} of {scene.records} annotations checked")
    shutil.rmtree(space.root)
    return problems


@pytest.mark.slow  # the scene alone (an extract and two updates) takes a minute or more
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_write_stops_update_with_its_code(scene: KillScene,
                                                               signum: int) -> None:
    assert scene.files >= 300 and scene.records >= 600
    assert trial(scene, "first write", signum, 0) == []


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("point", POINTS)
def test_every_signal_stops_update_at_every_point(scene: KillScene, point: str,
                                                  signum: int) -> None:
    """TRIALS runs signalled at `point`, alternately to the pid and to the process group."""
    problems = []
    for number in range(TRIALS):
        problems += trial(scene, point, signum, number)
    assert problems == []
