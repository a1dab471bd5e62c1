"""SIGKILL a real run at many points: every record is as it was or as it should be, never half.

An update (V1 to V2: records moved, added, removed, untouched, five of them annotated by hand)
runs in a child process. It is killed just before each of its file steps in turn (a temp file
made, an fsync, a rename), and at random moments; after every kill each file must equal its
state before the run or after a clean run, load, validate, and keep its annotation; then a run
to completion must remove the leftovers and give exactly the clean result.

Most children are forked from this process (a real process, killed for real, without the half
second a fresh interpreter takes to import LibCST); a few are fresh `python -m tests.helpers.child` runs.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crawler.pipeline import apply
from crawler.store import atomic, manifest_file, record_files
from tests.helpers.child import kill_before
from tests.helpers.outputkit import SHA_B, annotate, collected, folder_of, module, snapshot
from tests.helpers.processes import ROOT, child_env, pickled, start

pytestmark = pytest.mark.runs_long

V1 = {"pkg/a.py": module("a", 6), "pkg/b.py": module("b", 6), "pkg/c.py": module("c", 5),
      "pkg/d.py": module("d", 4)}
V2 = {"pkg/a.py": module("a", 7, offset=2), "pkg/b.py": module("b", 4),
      "pkg/c.py": module("c", 5, offset=1), "pkg/d.py": module("d", 4)}
ANNOTATED = ("a_0", "a_5", "b_5", "c_3", "d_1")  # b_5 is removed by V2: kept, with its words
SEED = int(os.environ.get("CRAWLER_KILL_SEED", "20261202"))
RANDOM_KILLS = 20  # forked children killed from outside at random moments, at least
MOST_RUNS = 60  # runs forked to land them: a run that finishes before its moment lands no kill
FRESH_KILLS = 6  # fresh interpreters killed the same way


class Scene:
    """The folder before the update, the clean result after it, and the annotation blocks."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.initial_root = base / "initial"
        apply(collected(V1), self.initial_root)
        folder = folder_of(self.initial_root)
        self.blocks: dict[str, str] = {}
        for path in record_files.iter_record_paths(folder):
            function = record_files.load_record(path).site.function
            if function in ANNOTATED:
                self.blocks[f"errors/{path.name}"] = annotate(path, f"what {function} means")
        assert len(self.blocks) == len(ANNOTATED)
        self.initial = snapshot(folder)
        reference_root = base / "reference"
        shutil.copytree(self.initial_root, reference_root)
        self.steps = _count_steps(lambda: apply(collected(V2, SHA_B), reference_root))
        self.reference = snapshot(folder_of(reference_root))
        self.collected = collected(V2, SHA_B)
        self.update = pickled(self.collected, base / "update.pickle")

    def fresh(self, name: str) -> Path:
        root = self.base / name
        shutil.copytree(self.initial_root, root)
        return root

    def check(self, root: Path, label: str) -> int:
        """Every file as it was or as it should be, whole, with its annotation; temp files counted."""
        files = snapshot(folder_of(root))
        temps = 0
        for rel, data in files.items():
            if Path(rel).name.startswith(".") and rel.endswith(atomic.TEMP_SUFFIX):
                temps += 1
                continue
            assert data in (self.initial.get(rel), self.reference.get(rel)), f"{label}: {rel}"
            if rel.startswith("errors/"):
                record_files.load_record(folder_of(root) / rel)
            else:
                manifest_file.load_manifest(folder_of(root))
        for rel in self.initial:
            assert rel in files, f"{label}: {rel} lost"
        for rel, block in self.blocks.items():
            assert block in files[rel].decode("utf-8"), f"{label}: annotation of {rel} lost"
        return temps

    def finish(self, root: Path, label: str) -> None:
        """The next run completes, removes the leftovers and gives the clean result exactly."""
        result = apply(collected(V2, SHA_B), root)
        assert result.problems == (), label
        assert snapshot(folder_of(root)) == self.reference, label

    def fork(self, root: Path, kill_at: int | None = None) -> int:
        """A forked child that runs the update; its pid."""
        pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            code = 0
            try:
                if kill_at is not None:
                    kill_before(kill_at)
                apply(self.collected, root)
            except BaseException:  # noqa: BLE001 - reported by the exit code
                code = 3
            os._exit(code)
        return pid


def wait(pid: int) -> int:
    """The child's exit: its code, or minus the signal that ended it."""
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _count_steps(run: Callable[[], object]) -> int:
    """How many file steps a clean update takes: the kill points of the child."""
    count = 0
    saved = os.fsync, os.sync, os.replace, tempfile.mkstemp

    def counting(real: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            return real(*args, **kwargs)

        return step

    os.fsync, os.sync, os.replace = counting(os.fsync), counting(os.sync), counting(os.replace)
    tempfile.mkstemp = counting(tempfile.mkstemp)  # type: ignore[assignment]
    real_temp = atomic.create_temp
    atomic.create_temp = counting(atomic.create_temp)  # type: ignore[method-assign]
    try:
        run()
    finally:
        os.fsync, os.sync, os.replace, tempfile.mkstemp = saved  # type: ignore[assignment]
        atomic.create_temp = real_temp  # type: ignore[method-assign]
    return count


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    return Scene(tmp_path_factory.mktemp("kill"))


def test_scene_is_a_real_update(scene: Scene) -> None:
    changed = [rel for rel in scene.reference if scene.initial.get(rel) != scene.reference[rel]]
    untouched = [rel for rel in scene.initial if scene.initial[rel] == scene.reference.get(rel)]
    assert len(changed) >= 15 and len(untouched) >= 4
    assert scene.steps >= 2 * len(changed)  # a temp file and a rename per written file, and syncs


def sampled_steps(steps: int, every: int) -> list[int]:
    """The first and last six steps, and every `every`th between: `every` shares no factor
    with the three or four steps a written file takes, so that each kind of step is hit."""
    return sorted({*range(1, 7), *range(7, steps - 5, every), *range(max(1, steps - 5), steps + 1)})


@pytest.mark.parametrize("every", [5, pytest.param(1, marks=pytest.mark.slow)],
                         ids=["every-5th", "every"])
def test_kill_before_every_file_step(scene: Scene, every: int) -> None:
    """SIGKILL just before each step: a temp file made, its fsync, its rename, a folder sync.
    A plain `pytest` kills before every fifth step (and the first and last six); `-m slow`
    before every one."""
    for step in sampled_steps(scene.steps, every):
        root = scene.fresh(f"step-{step}")
        assert wait(scene.fork(root, kill_at=step)) == -signal.SIGKILL, f"step {step}"
        scene.check(root, f"step {step}")
        scene.finish(root, f"step {step}")
        shutil.rmtree(root)
    root = scene.fresh("no-kill")
    assert wait(scene.fork(root, kill_at=scene.steps + 1)) == 0  # one more step than there are
    assert snapshot(folder_of(root)) == scene.reference
    shutil.rmtree(root)  # the scene is the module's: the other parametrisation makes it again


def _whole_update(scene: Scene, name: str) -> float:
    root = scene.fresh(name)
    started = time.monotonic()
    assert wait(scene.fork(root)) == 0
    return time.monotonic() - started


def test_kill_at_random_moments(scene: Scene) -> None:
    """SIGKILL from outside at random moments, up to four times over one folder (until a run
    finishes), then the healing run."""
    rng = random.Random(SEED)
    # a whole update, from fork to exit: the shortest of three, since the first fills caches
    # the others find, and a busy machine can stretch any one (one slow run made the window so
    # long that most runs finished before their kill)
    window = min(_whole_update(scene, f"calibrate-{n}") for n in range(3))
    kills = finished = temps = 0
    root = scene.fresh("chain-0")
    # Runs go on until RANDOM_KILLS kills have landed. A run that continues a killed one has less
    # left to write than the window, so more of them finish before their moment; a fixed number
    # of runs left the number of kills to chance (15 of 40 once, on a busy machine).
    run = 0
    while kills < RANDOM_KILLS and run < MOST_RUNS:
        pid = scene.fork(root)
        time.sleep(rng.uniform(0, window * 1.1))
        os.kill(pid, signal.SIGKILL)
        code = wait(pid)
        assert code in (0, -signal.SIGKILL), code
        kills, finished = kills + (code != 0), finished + (code == 0)
        temps += scene.check(root, f"seed {SEED}, run {run}")
        # a chain ends after four runs, or once one finished: the next run over a finished
        # folder has nothing left to write, ends at once, and no kill could land in it
        if run % 4 == 3 or code == 0:
            scene.finish(root, f"seed {SEED}, run {run}")
            shutil.rmtree(root)
            root = scene.fresh(f"chain-{run}")
        run += 1
    assert kills >= RANDOM_KILLS, (kills, finished)
    print(f"\nrandom kills (seed {SEED}): {kills} killed, {finished} finished first, "
          f"{temps} temp files left behind and cleaned")


def test_kill_fresh_interpreters(scene: Scene) -> None:
    """The same from outside, on `python -m tests.helpers.child` processes, once they are ready."""
    rng = random.Random(SEED + 1)
    kills = 0
    root = scene.fresh("fresh")
    for run in range(FRESH_KILLS):
        child = start("apply", str(scene.update), str(root), stdin=None)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0, 0.3))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        kills += child.returncode == -signal.SIGKILL
        scene.check(root, f"fresh run {run}")
    scene.finish(root, "fresh")
    assert kills >= 1
    print(f"\nfresh interpreters: {kills} of {FRESH_KILLS} runs killed")


E2E_KILLS = 8  # with 4, all four runs once finished before their kill on a loaded machine


def test_kill_real_extract_end_to_end(make_repo: Callable[..., Any], tmp_path: Path) -> None:
    """`python -m crawler extract` on a real git repository, killed at random, then finished."""
    repo = make_repo("widgets")
    for path, text in V1.items():
        repo.write(path, text)
    repo.commit("v1")
    out = tmp_path / "out"

    def extract(root: Path) -> Any:
        return subprocess.Popen([sys.executable, "-m", "crawler", "extract", str(repo.path), "-o",
                                 str(root), "-q", "-j", "1"], cwd=ROOT, env=child_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = extract(out)
    assert first.communicate(timeout=60)[0] == "" and first.returncode == 0, first.stderr
    folder = out / "local" / repo.head()[:12] / "widgets"  # named by its first commit (issue 14)
    blocks = {}
    for path in record_files.iter_record_paths(folder):
        function = record_files.load_record(path).site.function
        if function in ANNOTATED:
            blocks[path.name] = annotate(path, f"what {function} means")
    initial = snapshot(folder)
    for path, text in V2.items():
        repo.write(path, text)
    repo.commit("v2")
    reference_out, timed_out = tmp_path / "reference", tmp_path / "timed"
    shutil.copytree(out, reference_out)
    shutil.copytree(out, timed_out)
    clean = extract(reference_out)
    clean.communicate(timeout=60)
    assert clean.returncode == 0
    # the window to kill in: a run like the killed ones, its files' results cached by the one
    # above (a run that parses takes longer, and a kill timed by it could land after the end)
    started = time.monotonic()
    timed = extract(timed_out)
    timed.communicate(timeout=60)
    window = time.monotonic() - started
    assert timed.returncode == 0
    reference = snapshot(reference_out / folder.relative_to(out))
    assert reference != initial

    rng = random.Random(SEED + 2)
    kills = 0
    for run in range(E2E_KILLS):
        child = extract(out)
        time.sleep(rng.uniform(window * 0.3, window * 1.05))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        kills += child.returncode == -signal.SIGKILL
        for rel, data in snapshot(folder).items():
            if Path(rel).name.startswith(".") and rel.endswith(atomic.TEMP_SUFFIX):
                continue
            assert data in (initial.get(rel), reference.get(rel)), f"e2e run {run}: {rel}"
        for name, block in blocks.items():
            assert block in (folder / "errors" / name).read_text(encoding="utf-8"), name
    last = extract(out)
    last.communicate(timeout=60)
    assert last.returncode == 0, last.stderr
    assert snapshot(folder) == reference
    assert kills >= 1
    print(f"\nend-to-end extract: {kills} of {E2E_KILLS} runs killed")


def test_kill_the_first_run(tmp_path: Path) -> None:
    """A first run into an empty folder, killed before every third step: the next run completes."""
    first = collected(V1)
    reference_root = tmp_path / "reference"
    steps = _count_steps(lambda: apply(first, reference_root))
    reference = snapshot(folder_of(reference_root))
    for step in range(1, steps + 1, 3):
        root = tmp_path / f"first-{step}"
        pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            try:
                kill_before(step)
                apply(first, root)
            finally:
                os._exit(3)
        assert wait(pid) == -signal.SIGKILL
        if folder_of(root).exists():
            for rel, data in snapshot(folder_of(root)).items():
                if not rel.endswith(atomic.TEMP_SUFFIX):
                    assert data == reference[rel], f"step {step}: {rel}"
        apply(first, root)
        assert snapshot(folder_of(root)) == reference, f"step {step}"
