"""A small package whose entry points an update keeps current, its first extract and its records."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import yaml

from crawler.callgraph.entry_points import Graph
from crawler.parse.call_edges import read_calls
from crawler.parse.module_names import module_name
from tests.helpers.gitrepo import GitRepo

FILES = {
    "pkg/__init__.py": "from pkg.api import load, save\n",
    "pkg/api.py": """\
from pkg import _checks


def load(path):
    return _checks.check_path(path)


def save(mode):
    return _checks.check_mode(mode)
""",
    "pkg/_checks.py": """\
def check_path(path):
    if not path:
        raise ValueError(f"no path given: {path!r}")
    return path


def check_mode(mode):
    if mode not in ("r", "w"):
        raise ValueError(f"mode must be r or w, not {mode}")
    return mode
""",
    "pkg/other.py": """\
def other():
    raise RuntimeError("an untouched raise in an untouched file")
""",
}


def crawler(*args: str) -> dict[str, object]:
    crawler_path = shutil.which("crawler")
    assert crawler_path is not None, "the crawler is installed with the package"
    done = subprocess.run([crawler_path, *args, "--json"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def records(folder: Path) -> dict[str, tuple[str, bytes, int, dict[str, object]]]:
    """Each record file by its raise's function: its name, bytes, mtime and entry points."""
    found = {}
    for path in sorted((folder / "errors").glob("*.yaml")):
        data = path.read_bytes()
        extracted = yaml.safe_load(data)["extracted"]
        found[extracted["function"]] = (f"errors/{path.name}", data, path.stat().st_mtime_ns, {
            "entry_points": extracted["entry_points"], "left_out": extracted["entry_points_left_out"]})
    return found


def first_extract(make_repo: Callable[[str], GitRepo], tmp_path: Path, files: dict[str, str]
                  ) -> tuple[GitRepo, list[str], Path]:
    """A repository of `files`, committed, and extracted with a cache: the repository, the
    output and cache options an update repeats, and the records' folder."""
    repo = make_repo("repo")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("first")
    common = ["-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]
    return repo, common, Path(str(crawler("extract", str(repo.path), *common)["folder"]))


Found = list[tuple[str, tuple[str, ...], str | None, str | None]]


def graph_of(repo: GitRepo, files: dict[str, str]) -> Graph:
    """The graph of the files as committed: read back from git's object store."""
    for path, text in files.items():
        repo.write(path, textwrap.dedent(text))
    repo.commit()
    facts = []
    for path in repo.git("ls-files").splitlines():
        data = repo.git("show", f"HEAD:{path}").encode()
        read = read_calls(data, module_name(path), path.endswith("__init__.py"))
        assert read is not None
        facts.append(read)
    return Graph(facts)


def entries(graph: Graph, node: str, exception: str = "ValueError", line: int = 0) -> Found:
    found = graph.entry_points(node, exception, line)
    return [(e.name, e.chain, e.stops, e.caught_by) for e in found.items]
