"""A message that ends in a line break is found exactly, by its record's own regex (its
placeholders captured), pasted with or without that line break: alone, as `Name: text`, or in
the traceback Python prints for it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo

CRAWLER = shutil.which("crawler") or "crawler"
MODULE = '''\
def leaked(trace):
    raise ValueError(f"Leaked trace {trace}. Leaked tracer(s):\\n\\nnone\\n")


def ends_in_line_break(fun):
    raise TypeError(f"Error interpreting argument to {fun} as a JAX value.\\n")
'''


def _crawler(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CRAWLER, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture
def catalogue(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo("lib")
    repo.write("lib.py", MODULE)
    repo.commit("messages ending in a line break")
    out = tmp_path / "out"
    extracted = _crawler("extract", repo.path, "-o", out, "-q", "--no-evidence")
    assert extracted.returncode == 0, extracted.stderr
    return repo.path, out


def _traceback(folder: Path, call: str) -> str:
    """What Python prints for the raise, run for real."""
    ran = subprocess.run([sys.executable, "-c", f"import lib; lib.{call}"], cwd=folder,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1 and ran.stderr.startswith("Traceback"), ran.stderr
    return ran.stderr


@pytest.mark.parametrize(("call", "line", "template", "captures"), [
    ("leaked('t1')", 2, "Leaked trace {trace}. Leaked tracer(s):\n\nnone\n", {"trace": "t1"}),
    ("ends_in_line_break('jit')", 6, "Error interpreting argument to {fun} as a JAX value.\n",
     {"fun": "jit"}),
])
def test_a_template_ending_in_a_line_break_matches_exactly_with_or_without_it(
        catalogue: tuple[Path, Path], call: str, line: int, template: str,
        captures: dict[str, str]) -> None:
    folder, out = catalogue
    message = template.format(**captures)
    name = "ValueError" if call.startswith("leaked") else "TypeError"
    traceback = _traceback(folder, call)
    assert traceback.endswith(f"{name}: {message}\n")  # str(exc) ends in the line break
    for paste in (message, message.rstrip("\n"), f"{name}: {message.rstrip()}", traceback):
        found = _crawler("lookup", paste, out, "--json", "-n", "1")
        assert found.returncode == 0, (paste, found.stdout, found.stderr)
        (first,) = json.loads(found.stdout)["matches"]
        assert (first["path"], first["line"], first["match"], first["template"]) == (
            "lib.py", line, "exact", template), paste
        assert first["captures"] == captures, paste  # read by the record's regex, not loosely
