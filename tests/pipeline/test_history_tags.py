"""`crawler history` as a user types it (issue 32, item 7): tags that name a tree or a blob are
left out with why, and a walk whose reader goes away stops at a checkpoint with exit 141.

The repository: a release per tag `v1.0` ... `v1.<RELEASES - 1>`, each adding a raise; `v1.1.1`
names the tree of `v1.1` (a lightweight tag) and `v1.2.1` a blob of `v1.2` (an annotated tag),
both names that would walk as versions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT, child_env

pytestmark = pytest.mark.runs_long

RELEASES = 12  # enough steps that a reader closed after two lines is gone long before the end
LEFT_OUT = [("v1.1.1", "points at a tree, not a commit"),
            ("v1.2.1", "points at a blob, not a commit")]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo(tmp_path_factory.mktemp("tags é") / "repo")
    for number in range(RELEASES):
        repo.write(f"pkg/m{number}.py", f"def f():\n    raise ValueError('error {number}')\n")
        repo.commit(f"release {number}")
        repo.tag(f"v1.{number}", annotated=number % 2 == 0)
        if number == 1:
            repo.git("tag", "v1.1.1", repo.git("rev-parse", "HEAD^{tree}"))
        if number == 2:
            repo.git("tag", "-a", "v1.2.1", "-m", "a blob", repo.git("rev-parse", "HEAD:pkg/m2.py"))
    return repo


def crawler(*args: str) -> list[str]:
    return [sys.executable, "-m", "crawler", *args]


def history(repo: GitRepo, out: Path, *extra: str) -> list[str]:
    return crawler("history", str(repo.path), "--tags", "v1.*", "-o", str(out), "--cache-dir",
                   str(out.parent / "cache"), "-j", "1", "--no-evidence", *extra)


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, env=child_env(), capture_output=True, text=True,
                          timeout=300)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by its path there: what two output folders must share. The
    lookup index is left out: a cache whose bytes depend on the files' signatures (inodes)."""
    return {str(path.relative_to(root)): path.read_bytes()
            for path in sorted(root.rglob("*")) if path.is_file() and path.name != "lookup.sqlite"}


def walked_tags(root: Path) -> list[str]:
    """The releases the folder's manifest says were walked, in order."""
    manifest = next(root.rglob("manifest.yaml")).read_text(encoding="utf-8")
    return [line.split(": ", 1)[1] for line in manifest.splitlines()
            if line.startswith("  - tag: ")]


def test_tags_of_a_tree_and_a_blob_are_left_out_once_with_why_and_the_walk_goes_on(
        repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run(history(repo, out))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [line for line in lines if line.startswith("left out")] == [
        f"left out {tag}: {why}" for tag, why in LEFT_OUT]
    assert lines[-1].startswith(f"{RELEASES} release tags walked in version order, v1.0 to "
                                f"v1.{RELEASES - 1}")
    assert walked_tags(out) == [f"v1.{number}" for number in range(RELEASES)]
    written = snapshot(out)
    again = run(history(repo, out, "--json"))
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert [(item["tag"], item["why"]) for item in summary["ignored"]][:2] == LEFT_OUT
    assert [item["tag"] for item in summary["ignored"]].count("v1.1.1") == 1
    assert snapshot(out) == written  # the re-run is byte-identical


@pytest.mark.parametrize(("tag", "kind"), [("v1.1.1", "tree"), ("v1.2.1", "blob")])
def test_extract_at_a_tag_of_a_tree_or_blob_is_one_line_and_exit_1(
        repo: GitRepo, tmp_path: Path, tag: str, kind: str) -> None:
    result = run(crawler("extract", str(repo.path), "--commit", tag, "-o", str(tmp_path / "out"),
                         "--cache-dir", str(tmp_path / "cache"), "-j", "1", "--no-evidence"))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"Error: [{repo.path}] {tag!r} names a {kind}, not a commit: give "
                             "a branch, a tag or a sha that names a commit\n")
    assert not (tmp_path / "out").exists()


def test_a_walk_whose_reader_goes_away_stops_at_a_checkpoint_exits_141_and_resumes(
        repo: GitRepo, tmp_path: Path) -> None:
    """`crawler history ... 2>&1 | head -2`, pipefail reading crawler's own exit code."""
    cut = tmp_path / "cut"
    piped = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" 2>&1 | head -2', "bash",
                            *history(repo, cut)],
                           cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300)
    assert piped.returncode == 141, piped.stdout + piped.stderr
    assert [line.split(" ")[:2] for line in piped.stdout.splitlines()] == [
        ["[1/13]", "v1.0"], ["[2/13]", "v1.1"]]
    assert piped.stderr == ""
    done = walked_tags(cut)  # written at the step where the walk stopped
    assert 2 <= len(done) < RELEASES
    assert done == [f"v1.{number}" for number in range(len(done))]
    resumed = run(history(repo, cut, "-q"))
    assert resumed.returncode == 0, resumed.stderr
    whole = tmp_path / "whole"
    assert run(history(repo, whole, "-q")).returncode == 0
    assert snapshot(cut) == snapshot(whole)


def test_a_reader_gone_before_the_first_line_stops_the_walk_after_one_step(
        repo: GitRepo, tmp_path: Path) -> None:
    """The same through a pipe whose reading end the test closes at once: no race at all."""
    out = tmp_path / "out"
    with subprocess.Popen(history(repo, out), cwd=ROOT, env=child_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        assert process.stdout is not None
        process.stdout.close()
        assert process.wait(timeout=300) == 141
    assert walked_tags(out) == ["v1.0"]
