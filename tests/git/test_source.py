"""What a source names, decided before git runs: no accidental network, git's own refusals.

Issue 14, cases 9 and 10: a mistyped local path must never be fetched from GitHub, and a
repository git refuses as another user's must say so with git's advice.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.errors import SourceError
from crawler.git.pin import pin
from crawler.git.source import parse_source
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT, child_env


@pytest.fixture
def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that only records its arguments: the log a test reads."""
    log = tmp_path / "git-calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(f"#!/bin/sh\necho \"$*\" >> '{log}'\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repos").mkdir()  # a folder of unpacked releases, as in the issue
    return log


PATH_LIKE = [
    "repos/clik-8.1.7",  # the case: an existing parent folder and a dot-version
    "repos/clik",  # the parent folder is here: a path in it, not a GitHub owner
    "acme/widgets-2.0",  # a release folder
    "./acme/widgets",
    "../acme/widgets",
    "~/widgets",
    "my_repos/widgets",  # a GitHub owner has no '_' or '.'
    ".cache/widgets",
    "/no/such/widgets",
]


@pytest.mark.parametrize("source", PATH_LIKE)
def test_a_path_like_source_that_is_not_here_is_refused_before_git_runs(
        fake_git: Path, source: str) -> None:
    result = CliRunner().invoke(main, ["extract", source, "-o", "out", "--cache-dir", "cache"])
    assert result.exit_code == 2  # a folder named that is not there: a usage error
    assert result.output.count("\n") == 1
    assert f"[{source}] no such folder" in result.output
    assert "github:OWNER/NAME" in result.output
    assert not fake_git.exists(), "git ran"
    assert not Path("out").exists() and not Path("cache").exists()


@pytest.mark.parametrize("source", ["github:acme/widgets", "gh:acme/widgets",
                                    "GitHub:acme/widgets.git", "github:acme/widgets-2.0",
                                    "github:my_org/widgets"])
def test_github_is_named_explicitly(fake_git: Path, source: str) -> None:
    spec = parse_source(source)
    assert (spec.kind, spec.host, spec.web_url, spec.note) == (
        "remote", "github.com", f"https://github.com/{source.partition(':')[2]}".removesuffix(
            ".git"), None)
    assert spec.location == f"{spec.web_url}.git"
    assert not fake_git.exists()


@pytest.mark.parametrize("source", ["github:acme", "github:./widgets", "gh:a/b/c", "github:"])
def test_a_github_source_must_be_owner_and_name(fake_git: Path, source: str) -> None:
    with pytest.raises(SourceError, match="write github:OWNER/NAME"):
        parse_source(source)
    assert not fake_git.exists()


def test_bare_owner_name_still_reaches_github_with_a_note(fake_git: Path) -> None:
    spec = parse_source("jax-ml/jax")
    assert (spec.kind, spec.location) == ("remote", "https://github.com/jax-ml/jax.git")
    assert spec.note == ("[jax-ml/jax] no such folder here, so it is read as GitHub's "
                         "https://github.com/jax-ml/jax (write github:jax-ml/jax to say so)")
    assert not fake_git.exists()


def test_what_exists_here_is_read_here_whatever_its_name(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = GitRepo(tmp_path / "github:acme" / "widgets")
    repo.write("a.py", "A = 1\n")
    repo.commit("one")
    monkeypatch.chdir(tmp_path)
    spec = parse_source("github:acme/widgets")
    assert (spec.kind, spec.location, spec.note) == ("local", str(repo.path), None)


# --- a repository owned by another user ------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_a_repository_git_refuses_as_unsafe_gets_gits_advice(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "theirs")
    repo.write("a.py", "A = 1\n")
    head = repo.commit("one")
    subprocess.run(["chown", "-R", "65534:65534", str(repo.path)], check=True)
    try:
        with pytest.raises(SourceError) as caught:
            pin(str(repo.path))
    finally:
        subprocess.run(["chown", "-R", f"{os.getuid()}:{os.getgid()}", str(repo.path)],
                       check=True)
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        f"[{repo.path}] git refuses to read this repository: it is owned by another user "
        "(git's safe.directory check); if you trust it, run "
        f"`git config --global --add safe.directory {repo.path}`")
    # The advice works: HOME is this test's own (tests/git/conftest.py).
    subprocess.run(["git", "config", "--global", "--add", "safe.directory", str(repo.path)],
                   check=True)
    subprocess.run(["chown", "-R", "65534:65534", str(repo.path)], check=True)
    try:
        with pin(str(repo.path)) as pinned:
            assert pinned.pin.sha == head
    finally:
        subprocess.run(["chown", "-R", f"{os.getuid()}:{os.getgid()}", str(repo.path)],
                       check=True)


def test_bare_owner_name_end_to_end_says_which_url_it_used(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub is played by a folder: the test's own ~/.gitconfig rewrites its URLs to file://
    (HOME is this test's, tests/git/conftest.py), so nothing reaches the network."""
    served = GitRepo(tmp_path / "served" / "acme" / "widgets.git")
    served.write("w.py", "raise ValueError('widgets')\n")
    served.commit("one")
    served.git("config", "uploadpack.allowFilter", "true")
    served.git("config", "uploadpack.allowAnySHA1InWant", "true")
    Path(os.environ["HOME"], ".gitconfig").write_text(
        f'[url "{(tmp_path / "served").as_uri()}/"]\n\tinsteadOf = https://github.com/\n')
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["extract", "acme/widgets", "-o", "out", "--cache-dir",
                                       "cache", "-j", "1", "--no-evidence"])
    assert result.exit_code == 0, result.output
    assert ("note: [acme/widgets] no such folder here, so it is read as GitHub's "
            "https://github.com/acme/widgets (write github:acme/widgets to say so)\n"
            ) in result.output
    assert (work / "out" / "github.com" / "acme" / "widgets" / "manifest.yaml").is_file()
    quiet = CliRunner().invoke(main, ["extract", "github:acme/widgets", "-o", "out",
                                      "--cache-dir", "cache", "-j", "1", "--no-evidence"])
    assert quiet.exit_code == 0 and "note:" not in quiet.output


def _give_away(folder: Path, uid: int) -> None:
    """Every file of `folder` to `uid` (and back with the test's own)."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)


_TRUST = "git config --global --add safe.directory "


def test_a_file_url_to_another_users_repository_gets_the_advice_its_path_gets(
        tmp_path: Path) -> None:
    """Issue 32, item 10: `file://` gave a garbled fragment of git's message. Both forms give
    one line with git's advice, every command needed at once, and the advice works."""
    repo = GitRepo(tmp_path / "their repo é")
    repo.write("a.py", "raise ValueError('theirs')\n")
    repo.commit("one")
    try:
        _give_away(repo.path, 12345)
    except PermissionError:
        pytest.skip("this user cannot give a folder to another user")
    try:
        by_path, by_url = (_extract(tmp_path, source)
                           for source in (str(repo.path), repo.path.as_uri()))
        said = ("git refuses to read this repository: it is owned by another user (git's "
                "safe.directory check); if you trust it, run ")
        top, git_dir = shlex.quote(str(repo.path)), shlex.quote(str(repo.path / ".git"))
        assert (by_path.returncode, by_path.stderr) == (
            1, f"Error: [{repo.path}] {said}`{_TRUST}{top}`\n")
        assert (by_url.returncode, by_url.stderr) == (
            1, f"Error: [{repo.path.as_uri()}] {said}`{_TRUST}{top}` and `{_TRUST}{git_dir}`\n")
        for command in by_url.stderr.split("`")[1::2]:  # as the user would run them
            subprocess.run(shlex.split(command), check=True)
        trusted = _extract(tmp_path, repo.path.as_uri())
        assert trusted.returncode == 0, trusted.stderr
    finally:
        _give_away(repo.path, os.getuid())


def _extract(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """`crawler extract SOURCE` as a user types it, in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "crawler", "extract", source, "-o", str(tmp_path / "out"),
         "--cache-dir", str(tmp_path / "cache"), "-j", "1", "--no-evidence", "-q"],
        cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=120)
