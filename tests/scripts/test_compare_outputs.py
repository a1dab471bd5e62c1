"""scripts/produce_outputs.py and scripts/compare_outputs.py on real extracts: two runs of the
same code on the same input are equal byte for byte (lookup index and lock aside), and a byte
changed or a file added in one of them is reported with exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from crawler.serve.lookup.index import INDEX_FILE
from crawler.store.repo_output import LOCK_FILE
from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
PRODUCE, COMPARE = ROOT / "scripts" / "produce_outputs.py", ROOT / "scripts" / "compare_outputs.py"
LIBRARY = '''\
def load(name, strict=True):
    if not name:
        raise ValueError("a dataset needs a name")
    if strict and name.startswith("_"):
        raise KeyError(f"no public dataset {name!r}")
    return name
'''
TESTS = '''\
import pytest

from lib.core import load


def test_empty_name():
    with pytest.raises(ValueError, match="a dataset needs a name"):
        load("")
'''


def script(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")])}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def test_two_runs_are_equal_and_a_planted_change_and_an_extra_file_are_reported(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "lib")
    repo.write("lib/__init__.py", "")
    repo.write("lib/core.py", LIBRARY)
    repo.write("tests/test_core.py", TESTS)
    sha = repo.commit("a library with its test")
    listing = tmp_path / "inputs.txt"
    listing.write_text(f"# name path commit\nlib {repo.path} {sha}\n")
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        done = script(PRODUCE, listing, root, "--work", tmp_path / f"{root.name}.work")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 inputs" in done.stdout and "0 failed" in done.stdout
    records = sorted(first.rglob("errors/*.yaml"))
    assert len(records) == 2
    assert "a dataset needs a name" in "".join(path.read_text() for path in records)
    # the two files left out are there, and differ between the runs or not: never counted
    index, lock = next(first.rglob(INDEX_FILE)), next(first.rglob(LOCK_FILE))
    assert index.name == "lookup.sqlite" and lock.name == ".crawler.lock"

    equal = script(COMPARE, first, second)
    assert equal.returncode == 0, equal.stdout + equal.stderr
    files = len([path for path in first.rglob("*") if path.is_file()]) - 2
    assert equal.stdout.splitlines() == [
        f"{files} files compared, 0 differing, 0 missing, 0 extra, 0 of another kind "
        "(.crawler.lock, lookup.sqlite left out)"]

    index.write_bytes(index.read_bytes() + b"\0")
    changed = second / records[0].relative_to(first)
    text = changed.read_bytes()
    changed.write_bytes(text.replace(b"line: ", b"line: 1", 1))
    (second / "lib" / "stray.txt").write_text("not the crawler's\n")
    differs = script(COMPARE, first, second)
    assert differs.returncode == 1, differs.stdout + differs.stderr
    lines = differs.stdout.splitlines()
    relative = changed.relative_to(second).as_posix()
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"differs: {relative} ({len(text)} and {len(text) + 1} bytes, line ")
    assert lines[1] == f"extra: lib/stray.txt (file only in {second})"
    assert lines[2] == (f"{files} files compared, 1 differing, 0 missing, 1 extra, 0 of another "
                        "kind (.crawler.lock, lookup.sqlite left out)")


def test_a_root_that_is_no_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = script(COMPARE, tmp_path, tmp_path / "nowhere")
    assert done.returncode == 2
    assert done.stderr == f"error: {tmp_path / 'nowhere'} is no folder\n"
    assert "Traceback" not in done.stderr


def test_a_folder_only_one_side_has_is_one_line_and_a_mode_changed_is_a_difference(
        tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        (root / "kept").mkdir(parents=True)
        (root / "kept" / "manifest.yaml").write_text("same\n")
        (root / "kept" / "manifest.yaml").chmod(0o644)
    (first / "gone" / "errors").mkdir(parents=True)
    for name in ("a.yaml", "b.yaml", INDEX_FILE):
        (first / "gone" / "errors" / name).write_text("x\n")
    (second / "kept" / "errors").write_text("a file where the other has none\n")
    (second / "kept" / "manifest.yaml").chmod(0o600)
    done = script(COMPARE, first, second)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"missing: gone/ (folder only in {first}, holding 2 files)",
        f"extra: kept/errors (file only in {second})",
        "differs: kept/manifest.yaml (mode 644 against 600)",
        "1 files compared, 1 differing, 1 missing, 1 extra, 0 of another kind "
        "(.crawler.lock, lookup.sqlite left out)"]


def test_the_code_digest_is_left_out_only_when_the_code_changed(tmp_path: Path) -> None:
    """Two versions of the crawler write different `evidence_digest`s (a digest of its own
    evidence reader) and nothing else different: `--code-changed` blanks that line only."""
    manifest = "name: lib\nevidence_digest: {}\nrecords: 2\n"
    first, second = tmp_path / "first", tmp_path / "second"
    for root, digest in ((first, "ab12"), (second, "cd34")):
        (root / "lib").mkdir(parents=True)
        (root / "lib" / "manifest.yaml").write_text(manifest.format(digest))
    assert script(COMPARE, first, second).returncode == 1
    assert script(COMPARE, first, second, "--code-changed").returncode == 0
    (second / "lib" / "manifest.yaml").write_text(manifest.format("cd34").replace("2", "3"))
    changed = script(COMPARE, first, second, "--code-changed")
    assert changed.returncode == 1
    assert changed.stdout.splitlines()[0].startswith("differs: lib/manifest.yaml")
