"""scripts/trace_entry_points.py: a program run under the tracer, and its pairs against the catalogue."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "scripts" / "trace_entry_points.py")
CORE = """\
def run(x):
    return _check(x)


def quiet(x):
    return _guarded(x)


def unused(x):
    return _check(x)


def _guarded(x):
    try:
        return _check(x)
    except ValueError:
        return None


def _check(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x
"""
USE = """\
import pkg
pkg.quiet(-1)
try:
    pkg.run(-2)
except ValueError:
    pass
"""


def test_a_traced_run_gives_the_pairs_recall_and_the_pairs_no_run_observed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`run` lets the raise reach it, `quiet` calls a function that catches it first, and
    `unused` is never called: one pair each way, both found, and one static pair not observed."""
    lib = make_repo("lib")
    lib.write("pkg/__init__.py", "from pkg.core import quiet, run, unused\n"
                                 "__all__ = ['quiet', 'run', 'unused']\n")
    lib.write("pkg/core.py", CORE)
    lib.commit("first")
    (tmp_path / "use.py").write_text(USE, encoding="utf-8")
    observed = tmp_path / "observed.json"
    env = child_env(PYTHONPATH=str(lib.path))
    subprocess.run([sys.executable, SCRIPT, "trace", str(lib.path), str(observed), "--",
                    sys.executable, str(tmp_path / "use.py")],
                   cwd=tmp_path, env=env, check=True, capture_output=True, timeout=60)
    line = CORE.splitlines().index("        raise ValueError(f\"negative: {x}\")") + 1
    assert sorted((r["outer"], r["path"], r["line"], r["reached"]) for r in json.loads(
        observed.read_text(encoding="utf-8"))) == [
        ("pkg.core.quiet", "pkg/core.py", line, False), ("pkg.core.run", "pkg/core.py", line, True)]
    catalogue = tmp_path / "catalogue"
    subprocess.run([str(shutil.which("crawler")), "extract", str(lib.path), "-o", str(catalogue),
                    "-q"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    done = subprocess.run([sys.executable, SCRIPT, "compare", str(lib.path), str(catalogue),
                           str(observed)], cwd=tmp_path, env=env, check=True,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [
        "reached the outermost library frame: 1 pairs; found statically 1, across one stop 0, "
        "missed 0; recall 100.0%",
        "caught by the library first: 1 pairs; found statically 1, across one stop 0, missed 0; "
        "recall 100.0%",
        "static pairs not observed: 1; a sample of 30:",
        "   " + json.dumps(["pkg.unused", ["pkg.core.unused", "pkg.core._check"], None, None,
                            "pkg/core.py", line])]
