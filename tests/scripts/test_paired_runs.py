"""scripts/paired_runs.py: whole runs of two checkouts alternated with the floor, and its interval."""

from __future__ import annotations

import importlib.util
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.gitrepo import GitRepo

pytestmark = pytest.mark.runs_long

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("paired_runs", ROOT / "scripts" / "paired_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_interval_holds_the_median_and_narrows_to_a_constant() -> None:
    script = _script()
    gaps = [1.84, 4.33, 0.18, -0.5, 2.31, 0.3, 1.13, 2.06]
    low, high = script.interval(gaps)
    assert low <= statistics.median(gaps) <= high and low >= min(gaps) and high <= max(gaps)
    assert script.interval(gaps) == (low, high)  # a fixed seed: the same figures each time
    assert script.interval([0.7] * 5) == (0.7, 0.7)


def test_rounds_run_the_floor_first_then_rotate_the_checkouts_and_leave_no_folder(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/a.py", 'def f(x):\n    if x:\n        raise ValueError(f"bad {x}")\n')
    repo.commit("one")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    other = tmp_path / "other"  # a second checkout: a copy of this one's package and benchmark
    shutil.copytree(ROOT / "crawler", other / "crawler",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (other / "scripts").mkdir()
    for name in ("bench.py", "bench_table.py"):
        shutil.copy(ROOT / "scripts" / name, other / "scripts" / name)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "paired_runs.py"), str(repo.path), "--code",
         str(ROOT), "--code", str(other), "--rounds", "3", "--scratch", str(scratch)],
        capture_output=True, text=True, check=True, timeout=240)
    lines = done.stdout.splitlines()
    rounds = [line.split(": ", 1)[1].split(" | ") for line in lines if line.startswith("round ")]
    names = [[part.split(" ")[0] for part in parts] for parts in rounds]
    assert f"checkout A: {ROOT}" in lines and f"checkout B: {other.resolve()}" in lines
    assert names == [["floor", "A", "B"], ["floor", "B", "A"], ["floor", "A", "B"]]
    assert any(line.startswith("A minus B, per round: ") for line in lines)
    assert "the median's 95 % interval" in done.stdout
    assert list(scratch.iterdir()) == []
