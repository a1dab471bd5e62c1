"""scripts/template_changes.py on real extracts of tiny git repositories: the same code twice
(this repository's HEAD as both OLD and NEW, each written out and run as its own tree) reports
nothing; two libraries whose message at the same raise differs report that record's template,
placeholders and regex, and a raise only one of them has."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
SCRIPT, PRODUCE = ROOT / "scripts" / "template_changes.py", ROOT / "scripts" / "produce_outputs.py"
BEFORE = '''\
def load(name, strict=True):
    if not name:
        raise ValueError("a dataset needs a name")
    if strict and name.startswith("_"):
        raise KeyError(f"no public dataset {name!r}")
    return name
'''
AFTER = '''\
def load(name, strict=True):
    if not name:
        raise ValueError("a dataset needs a name")
    if strict and name.startswith("_"):
        raise KeyError(f"no dataset called {name!r} in {strict}")
    return name


def save(name):
    raise NotImplementedError("saving is not written yet")
'''


def script(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")])}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=cwd)


def library(path: Path, text: str) -> tuple[Path, str]:
    repo = GitRepo(path)
    repo.write("lib/__init__.py", "")
    repo.write("lib/core.py", text)
    return repo.path, repo.commit("a library")


def test_the_same_code_twice_reports_no_record(tmp_path: Path) -> None:
    path, sha = library(tmp_path / "lib", BEFORE)
    listing = tmp_path / "inputs.txt"
    listing.write_text(f"lib {path} {sha}\n")
    done = script(SCRIPT, listing, "--old", "HEAD", "--new", "HEAD", "--work", tmp_path / "work")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [line for line in done.stdout.splitlines()
                if ": changed " in line or ": only " in line], done.stdout
    assert "0 records changed or on one side only, over 1 libraries" in done.stdout
    # each side ran the revision's own tree, not this checkout
    assert [p.name for p in (tmp_path / "work" / "code").iterdir()] == [
        subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                       text=True, check=True).stdout.strip()]
    for side in ("old", "new"):
        records = sorted((tmp_path / "work" / side / "lib").rglob("errors/*.yaml"))
        assert len(records) == 2
        command = (tmp_path / "work" / f"{side}.work" / "logs" / "lib.err").read_text()
        assert command.split()[1:3] == ["-m", "crawler"]


def test_a_changed_template_and_a_raise_only_one_side_has_are_reported(tmp_path: Path) -> None:
    roots = {}
    for name, text in (("old", BEFORE), ("new", AFTER)):
        path, sha = library(tmp_path / f"lib-{name}", text)
        listing = tmp_path / f"{name}.txt"
        listing.write_text(f"lib {path} {sha} lib\n")
        roots[name] = tmp_path / name
        done = script(PRODUCE, listing, roots[name], "--work", tmp_path / f"{name}.work")
        assert done.returncode == 0, done.stdout + done.stderr
    done = script(SCRIPT, "--roots", roots["old"], roots["new"])
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    changed = [line for line in lines if ": changed " in line]
    assert len(changed) == 1 and "lib/core.py:5 KeyError" in changed[0], done.stdout
    at = lines.index(changed[0])
    shown = "\n".join(lines[at + 1:at + 7])
    assert "template: 'no public dataset {name}'" in shown, done.stdout
    assert "-> 'no dataset called {name} in {strict}'" in shown, done.stdout
    assert "placeholders:" in shown and "regex:" in shown and "kind:" not in shown
    only_new = [line for line in lines if ": only new " in line]
    assert len(only_new) == 1 and "NotImplementedError" in only_new[0], done.stdout
    assert not [line for line in lines if ": only old " in line]
    assert any(line.split() == ["lib", "2", "3", "1", "0", "1"] for line in lines), done.stdout
    assert "2 records changed or on one side only, over 1 libraries" in done.stdout
    # the unchanged raise is not named
    assert "a dataset needs a name" not in done.stdout
