"""Issue 45, what a newcomer hit on the first day: `check` on a record in review with nothing
to review, `update --check -q`, where `validate` and `check` print, `history --since`, the
identity `update` reads from the manifest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import CliRunner

from crawler.cli import main
from tests.gitrepo import GitRepo


def run(*args: str | Path) -> tuple[int, str, str]:
    """The command through click's runner: exit code, stdout and stderr apart."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.stdout, result.stderr


def reworded(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> tuple[GitRepo, Path, Path]:
    """A repository extracted, then its one message reworded and committed (not updated):
    the repository, the output root and the record's file."""
    repo = make_repo("lib")
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n")
    repo.commit("first")
    out = tmp_path / "out"
    assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no data set {name!r}')\n")
    repo.commit("reworded")
    [record] = out.rglob("errors/*.yaml")
    return repo, out, record


def test_a_record_in_review_without_an_annotation_is_not_listed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A reworded record is needs_review; with no annotation there is nothing to look at, so
    `check` does not list it and exits 0. Annotated, the same record is listed (exit 1)."""
    repo, out, record = reworded(make_repo, tmp_path)
    assert run("update", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    assert yaml.safe_load(record.read_text(encoding="utf-8"))["status"] == "needs_review"
    code, stdout, stderr = run("check", out)
    assert (code, stderr) == (0, ""), stdout
    assert "0 to review" in stdout and "needs_review" not in stdout
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("  what_it_means: null\n",
                                   "  what_it_means: The dataset is not in the registry.\n", 1),
                      encoding="utf-8")
    code, stdout, _ = run("check", out)
    assert code == 1 and f"{record}: needs_review: the message changed" in stdout, stdout
