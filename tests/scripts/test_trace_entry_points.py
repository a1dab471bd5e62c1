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


def traced_and_compared(lib: GitRepo, tmp_path: Path, program: str) -> tuple[list[dict], list[str]]:
    """`program` run under the tracer against `lib`, the library extracted, and compare's lines:
    the trace's rows and what compare prints."""
    (tmp_path / "use.py").write_text(program, encoding="utf-8")
    observed = tmp_path / "observed.json"
    env = child_env(PYTHONPATH=str(lib.path))
    subprocess.run([sys.executable, SCRIPT, "trace", str(lib.path), str(observed), "--",
                    sys.executable, str(tmp_path / "use.py")],
                   cwd=tmp_path, env=env, check=True, capture_output=True, timeout=60)
    catalogue = tmp_path / "catalogue"
    subprocess.run([str(shutil.which("crawler")), "extract", str(lib.path), "-o", str(catalogue),
                    "-q"], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    done = subprocess.run([sys.executable, SCRIPT, "compare", str(lib.path), str(catalogue),
                           str(observed)], cwd=tmp_path, env=env, check=True,
                          capture_output=True, text=True, timeout=60)
    return json.loads(observed.read_text(encoding="utf-8")), done.stdout.splitlines()


def test_a_traced_run_gives_the_pairs_recall_and_the_pairs_no_run_observed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`run` lets the raise reach it, `quiet` calls a function that catches it first, and
    `unused` is never called: one pair each way, both found, and one static pair not observed."""
    lib = make_repo("lib")
    lib.write("pkg/__init__.py", "from pkg.core import quiet, run, unused\n"
                                 "__all__ = ['quiet', 'run', 'unused']\n")
    lib.write("pkg/core.py", CORE)
    lib.commit("first")
    rows, lines = traced_and_compared(lib, tmp_path, USE)
    line = CORE.splitlines().index("        raise ValueError(f\"negative: {x}\")") + 1
    assert sorted((r["outer"], r["path"], r["line"], r["reached"]) for r in rows) == [
        ("pkg.core.quiet", "pkg/core.py", line, False), ("pkg.core.run", "pkg/core.py", line, True)]
    assert lines == [
        "reached the outermost library frame: 1 pairs; found statically 1, across one stop 0, "
        "missed 0; recall 100.0%",
        "caught by the library first: 1 pairs; found statically 1, across one stop 0, missed 0; "
        "recall 100.0%",
        # as a user sees it: the record lists `pkg.run` (its chain starts at `pkg.core.run`), and
        # its first entry point is one the package's `__init__` gives (`pkg.run`, no module)
        "public pairs listed on their record: 1 of 1 (100.0%)",
        "records with entry points that name a top-level export first: 1 of 1 (100.0%)",
        "static pairs not observed: 1; a sample of 30:",
        "   " + json.dumps(["pkg.unused", ["pkg.core.unused", "pkg.core._check"], None, None,
                            "pkg/core.py", line])]


TOOLS = """\
from pkg import core


def helper(x):
    return core._check(x)


def evaluated(x):
    return eval("core._check")(x)
"""


def test_compare_says_which_public_pairs_the_records_do_not_list_and_which_first_names_are_no_export(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A raise reached only through a public module the package's `__init__` does not export
    (`pkg.tools.helper`): listed, but not a top-level export; and one reached through `eval`, which
    no static reader follows: the record does not list it, and compare says so."""
    lib = make_repo("lib")
    lib.write("pkg/__init__.py", "")
    lib.write("pkg/core.py", CORE.replace("def run(x):\n    return _check(x)\n\n\n", ""))
    lib.write("pkg/tools.py", TOOLS)
    lib.commit("first")
    _, lines = traced_and_compared(lib, tmp_path, (
        "from pkg import tools\nfor call in (tools.helper, tools.evaluated):\n    try:\n"
        "        call(-1)\n    except ValueError:\n        pass\n"))
    line = [n for n, text in enumerate(CORE.replace(
        "def run(x):\n    return _check(x)\n\n\n", "").splitlines(), 1)
        if text.strip().startswith("raise ValueError")][0]
    assert "public pairs listed on their record: 1 of 2 (50.0%)" in lines
    assert f"  not listed: pkg.tools.evaluated -> pkg/core.py:{line}" in lines
    assert "records with entry points that name a top-level export first: 0 of 1 (0.0%)" in lines


def test_raises_after_a_recursion_to_the_limit_are_still_recorded(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A library call that recurses until Python's limit (a test suite's recursion test) made
    the tracer's own call fail, and Python unset it for the rest of the run: every raise after
    it went unrecorded (pint's and sqlparse's traces lost all rows after such a test)."""
    lib = make_repo("lib")
    lib.write("pkg/__init__.py", "def deep(n):\n    return deep(n + 1)\n\n\n"
                                 "def survive():\n    try:\n        deep(0)\n"
                                 "    except RecursionError:\n        return 'survived'\n\n\n"
                                 "def later(x):\n    if x < 0:\n"
                                 "        raise ValueError(f'negative: {x}')\n    return x\n")
    lib.commit("first")
    (tmp_path / "use.py").write_text("import pkg\npkg.survive()\ntry:\n    pkg.later(-1)\n"
                                     "except ValueError:\n    pass\n", encoding="utf-8")
    observed = tmp_path / "observed.json"
    subprocess.run([sys.executable, SCRIPT, "trace", str(lib.path), str(observed), "--",
                    sys.executable, str(tmp_path / "use.py")], cwd=tmp_path,
                   env=child_env(PYTHONPATH=str(lib.path)), check=True, capture_output=True,
                   timeout=60)
    rows = json.loads(observed.read_text(encoding="utf-8"))
    assert ("pkg.later", 14, True) in {(r["outer"], r["line"], r["reached"]) for r in rows}
