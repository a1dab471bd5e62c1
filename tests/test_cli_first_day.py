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


def test_update_check_quiet_says_the_folder_is_stale(make_repo: Callable[[str], GitRepo],
                                                      tmp_path: Path) -> None:
    """`-q` leaves out the summary, never the finding: a stale folder is one line on stdout
    (it printed nothing, exit 1); an up-to-date one prints nothing."""
    repo, out, _ = reworded(make_repo, tmp_path)
    code, stdout, stderr = run("update", repo.path, "-o", out, "--check", "-q", "-j", "1",
                               "--no-evidence")
    assert (code, stdout, stderr) == (1, "stale: 2 files would change\n", ""), (stdout, stderr)
    assert run("update", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    assert run("update", repo.path, "-o", out, "--check", "-q", "-j", "1",
               "--no-evidence") == (0, "", "")


def test_validate_and_check_print_what_they_find_on_stdout(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """One convention, ruff's: a command's findings are its output, on stdout, with -q too;
    stderr is for errors that stop it. validate printed its problems on stderr, check its
    findings on stdout and its unreadable files on stderr."""
    repo = make_repo("lib")
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n")
    repo.commit("first")
    out = tmp_path / "out"
    assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    [record] = out.rglob("errors/*.yaml")
    record.write_text(record.read_text(encoding="utf-8").replace("status: active", "status: lost"),
                      encoding="utf-8")
    for command in ("validate", "check"):
        for quiet in ((), ("-q",)):
            code, stdout, stderr = run(command, out, *quiet)
            assert (code, stderr) == (1, ""), (command, stdout, stderr)
            assert f"{record}:" in stdout and "status" in stdout, (command, stdout)
