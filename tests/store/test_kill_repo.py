"""SIGKILL real `python -m crawler extract` and `update` runs on a library of a hundred files.

The library (`tests.helpers.killlib`) is committed three times in a real git repository: its first
version, then files renamed, then messages reworded, functions moved within and across files,
lines inserted, a file deleted and one added. It is extracted at the first commit and every
record gets an annotation in one of several layouts (block scalars, comments, unicode, lists).
Then `extract` and `update` to the last commit, with their default options (workers included),
are killed at random moments spread over a clean run's duration, very early and very late ones
among them, and just before chosen file steps (`tests.helpers.child crawler`). After every kill no
process of the run may outlive it, the lock must be free, every file must load (or be a temp
file) and every annotation block must be byte for byte as planted; after a few kills in a row
on one folder, one run to the end must give exactly the output of a clean run from the start.

`scripts/kill_fuzz.py` runs the same with as many kills as asked.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.killlib import edited, library, renamed
from tests.helpers.killprocs import kill, pool_workers
from tests.helpers.killrun import Figures, KillScene, kill_chain
from tests.helpers.processes import ROOT, child_env

pytestmark = pytest.mark.runs_long

SEED = int(os.environ.get("CRAWLER_KILL_SEED", "20261203"))
FILES = 100  # library modules; with the packages and tests, 126 files at the last commit
# (the same kinds of files and moves as with 200, the large modules among them: every run,
# killed or clean, takes half as long, and the kills spread over it as before)
CHAINS = 2  # per command: each a copy of the start, killed KILLS times, then healed
# The plain suite runs each command's first chain (10 kills); `pytest -m slow` (and CI) the second.
KILLS = 5  # SIGKILLs per chain: the first just before a file step, the others at random moments


@pytest.fixture(scope="module")
def kill_scene(tmp_path_factory: pytest.TempPathFactory) -> KillScene:
    return KillScene(tmp_path_factory.mktemp("kill-repo"), library(FILES, SEED), SEED)


def test_library_moves_every_way() -> None:
    """The commits rename, reword, move, shift, delete and add, as the kill test needs."""
    first = library(FILES, SEED)
    second = renamed(first, SEED)
    third = edited(second, SEED + 1)
    assert len(first) >= FILES and max(len(text) for text in first.values()) > 20 * 1024
    moved = set(second) - set(first)
    assert len(moved) >= FILES // 20 and all("/moved/" in path for path in moved)
    assert sum("reworded: " in text for text in third.values()) >= FILES // 20
    assert len(set(second) - set(third)) == 2 and len(set(third) - set(second)) == 2
    shifted = [path for path in set(second) & set(third)
               if third[path].startswith("# a comment\n") and not second[path].startswith("#")]
    assert len(shifted) >= FILES // 20


@pytest.mark.parametrize("chain", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_kill_extract_and_update(kill_scene: KillScene, chain: int) -> None:
    """10 SIGKILLs a chain: every annotation kept byte for byte, the clean output after each chain."""
    scene = kill_scene
    assert scene.records >= 3 * FILES and scene.files >= FILES
    statuses = b"".join(scene.reference["update"].values())
    assert b"status: removed" in statuses and b"status: needs_review" in statuses
    rng = random.Random(SEED)
    firsts = {command: [rng.randint(1, scene.steps[command] - 1), scene.steps[command]][:CHAINS]
              for command in ("extract", "update")}
    rng = random.Random(SEED + chain)
    figures = Figures()
    for command in ("extract", "update"):
        figures.add(kill_chain(scene, command, KILLS, rng, f"seed {SEED} {command} {chain}",
                               first_step=firsts[command][chain]))
    assert figures.problems == []
    assert figures.leftovers == []
    assert figures.kills == 2 * KILLS
    print(f"\nkills (seed {SEED}, chain {chain}): {figures.kills} killed, {figures.finished} "
          f"finished first, {figures.heals} healing runs, {figures.annotations} annotation blocks "
          f"checked, {figures.temps} temp files seen, every process gone {figures.lingered:.1f} s "
          f"after its kill at the latest; clean runs {scene.seconds['extract']:.1f} s and "
          f"{scene.seconds['update']:.1f} s, {scene.steps['extract']} and "
          f"{scene.steps['update']} file steps")


TEST_CASE = ("def test_{n}_{i}():\n"
             "    with pytest.raises(ValueError, match=\"bad value {i}\"):\n"
             "        core.check({i})\n\n\n")


def test_no_worker_outlives_a_kill_while_tests_are_read(make_repo: Callable[[str], GitRepo],
                                                         tmp_path: Path) -> None:
    """SIGKILL `extract` while its parser pool reads test files for evidence: none outlives it.

    The evidence pool's workers used to wait on a queue whose write end they held themselves,
    so the parent's death never reached them: they lived on, every one, until killed by hand.
    Test files now go through the parser's own pool, whose workers the kernel ends with the run.
    """
    repo = make_repo("evidence")
    repo.write("lib/core.py", 'def check(x):\n    if x:\n        raise ValueError("bad value")\n')
    for n in range(12):
        repo.write(f"tests/test_{n:02d}.py", "import pytest\n\nfrom lib import core\n\n\n"
                   + "".join(TEST_CASE.format(n=n, i=i) for i in range(100)))
    repo.commit("a library and its tests")
    args = [sys.executable, "-m", "crawler", "extract", str(repo.path), "-o", str(tmp_path / "out"),
            "--cache-dir", str(tmp_path / "cache"), "-q"]
    with open(tmp_path / "stderr", "wb") as err:
        started = time.monotonic()
        child = subprocess.Popen(args, cwd=ROOT, env=child_env(), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        while len(pool_workers(child.pid)) < 2 and child.poll() is None:
            time.sleep(0.005)
        assert child.poll() is None, "the run ended before it read the tests"
        ended = kill(child, started)
    assert ended.killed
    assert ended.leftovers == (), "\n".join(ended.leftovers)
