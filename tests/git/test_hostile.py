"""A hostile repository or environment runs nothing through the git layer on GitPython.

Every trap below is a program that touches MARKER when run; each test arms traps, does
everything the stage does (pin, list, read every blob, diff, fetch), and finds no MARKER.
"""

from __future__ import annotations

import http.server
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import git
import pytest

from crawler.errors import SourceError
from crawler.git import _cmd
from crawler.git.pin import PinnedRepo, pin
from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "MARKER"


@pytest.fixture
def trap(tmp_path: Path, marker: Path) -> Path:
    """A program that leaves MARKER behind (and its arguments in it) when anything runs it."""
    script = tmp_path / "trap.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\n")
    script.chmod(0o755)
    return script


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """Two commits: a modified file, a renamed one, a binary; attributes that name filters."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/core.py", 'def f():\n    raise ValueError("bad")\n')
    repo.write("pkg/util.py", "".join(f"X{i} = {i}\n" for i in range(40)))
    repo.write(".gitattributes", "* filter=trap diff=trap\n")
    repo.commit("first")
    repo.write("pkg/core.py", 'def f(x):\n    raise ValueError(f"bad {x}")\n')
    repo.move("pkg/util.py", "pkg/helpers.py")
    repo.commit("second")
    return repo


def arm_repository_config(repo: GitRepo, trap: Path) -> None:
    """Every repository setting that names a program git would run for porcelain."""
    hooks = repo.path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-checkout", "post-index-change", "pre-auto-gc",
                 "post-rewrite", "fsmonitor-watchman"):
        (hooks / hook).symlink_to(trap)
    settings = {
        "core.fsmonitor": str(trap),
        "core.hooksPath": str(hooks),
        "core.sshCommand": str(trap),
        "core.askPass": str(trap),
        "core.pager": str(trap),
        "core.editor": str(trap),
        "credential.helper": f"!{trap}",
        "filter.trap.clean": str(trap),
        "filter.trap.smudge": str(trap),
        "filter.trap.process": str(trap),
        "diff.trap.textconv": str(trap),
        "diff.external": str(trap),
        "gc.auto": "1",
        "uploadpack.packObjectsHook": str(trap),  # git honours it only from protected config
        "uploadpack.allowFilter": "true",
        "uploadpack.allowAnySHA1InWant": "true",
    }
    # An alias cannot shadow a builtin, but one of each name we run proves it.
    for command in ("rev-list", "rev-parse", "ls-tree", "cat-file", "diff-tree", "for-each-ref",
                    "fetch", "ls-remote", "init", "config"):
        settings[f"alias.{command}"] = f"!{trap}"
    for key, value in settings.items():
        repo.git("config", key, value)


def read_everything(repo: PinnedRepo, old: str) -> None:
    files = repo.list_files()
    blobs = [entry.blob for entry in files if entry.mode.startswith("100") and entry.size >= 0]
    assert len(list(repo.read_blobs(blobs))) == len(blobs) == 3
    assert repo.changed_paths(old) == ({"pkg/util.py": "pkg/helpers.py"}, {"pkg/core.py"})


def test_repository_config_runs_nothing(repo: GitRepo, trap: Path, marker: Path) -> None:
    arm_repository_config(repo, trap)
    first = repo.git("rev-parse", "HEAD~1")
    with pin(str(repo.path)) as local:
        read_everything(local, first)
    repo.git("config", "uploadpack.allowFilter", "true")
    with pin(repo.path.as_uri(), "main") as remote:  # file://: fetched into the cache
        read_everything(remote, first)
    assert not marker.exists()
    # The traps are armed: porcelain runs them.
    subprocess.run(["git", "status"], cwd=repo.path, capture_output=True, check=False,
                   stdin=subprocess.DEVNULL, timeout=60)
    assert marker.exists()


HOSTILE_ENVIRONMENT = {
    "GIT_DIR": "{elsewhere}",
    "GIT_WORK_TREE": "{elsewhere}",
    "GIT_COMMON_DIR": "{elsewhere}",
    "GIT_OBJECT_DIRECTORY": "{elsewhere}",
    "GIT_INDEX_FILE": "{elsewhere}/index",
    "GIT_NAMESPACE": "hidden",
    "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='{trap}' 'diff.external'='{trap}'",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "{trap}",
    "GIT_CONFIG_GLOBAL": "{elsewhere}/config",
    "GIT_EXTERNAL_DIFF": "{trap}",
    "GIT_PAGER": "{trap}",
    "GIT_SSH": "{trap}",
    "GIT_SSH_COMMAND": "{trap}",
    "GIT_ASKPASS": "{trap}",
    "GIT_EXEC_PATH": "{elsewhere}",
    "GIT_TRACE": "{elsewhere}/trace",
    "GIT_ALLOW_PROTOCOL": "ext:file",
}


@pytest.fixture
def hostile_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, trap: Path) -> Path:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    GitRepo(elsewhere / "other")  # a real repository there, so a redirect would "work"
    (elsewhere / "config").write_text(f"[core]\n\tfsmonitor = {trap}\n")
    for key, value in HOSTILE_ENVIRONMENT.items():
        monkeypatch.setenv(key, value.format(elsewhere=elsewhere / "other/.git", trap=trap))
    return elsewhere


def test_inherited_variables_neither_redirect_nor_reconfigure(
        repo: GitRepo, hostile_environment: Path, marker: Path) -> None:
    first = repo.git("rev-parse", "HEAD~1")
    with pin(str(repo.path)) as local:
        assert local.pin.sha == repo.head()
        read_everything(local, first)
    repo.git("config", "uploadpack.allowFilter", "true")
    with pin(repo.path.as_uri(), "main") as remote:
        assert remote.pin.sha == repo.head()
        read_everything(remote, first)
        config = (remote.git_dir / "config").read_text()
    assert "remote \"origin\"" in config  # written to the store, not to GIT_COMMON_DIR
    assert not marker.exists()
    assert not list(hostile_environment.rglob("trace"))


def test_gitpython_alone_would_pass_inherited_variables_on(
        repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why `_Git.execute` starts the process itself: GitPython's environment is os.environ plus
    additions, and an addition cannot remove a variable."""
    other = GitRepo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    stock = git.Git(str(repo.path))
    stock.update_environment(GIT_DIR=None)  # GitPython's "unset" only drops its own additions
    assert stock.rev_parse("--absolute-git-dir") == str(other.path / ".git")
    ours = _cmd.run_git(None, "rev-parse", "--absolute-git-dir", cwd=repo.path)
    assert ours.decode().strip() == str(repo.path / ".git")


def test_no_prompt_and_no_program_for_credentials(
        tmp_path: Path, trap: Path, marker: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that wants a password: no helper, no askpass, no terminal; a clear failure."""
    monkeypatch.setenv("GIT_ASKPASS", str(trap))
    monkeypatch.setenv("SSH_ASKPASS", str(trap))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'credential.helper'='!{trap}'")
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(f"[core]\n\taskPass = {trap}\n")
    with _server_wanting_a_password() as port:
        url = f"http://127.0.0.1:{port}/owner/name.git"
        with pytest.raises(SourceError, match="cannot fetch"):
            pin(url)
    assert not marker.exists()


class _Unauthorised(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _server_wanting_a_password:  # noqa: N801 (used as a context manager)
    def __enter__(self) -> int:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorised)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_address[1]

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_unsafe_options_and_protocols_are_refused_by_gitpython(repo: GitRepo, trap: Path,
                                                               marker: Path) -> None:
    opened = _cmd.GitRepo(repo.path / ".git")
    with pytest.raises(git.exc.UnsafeOptionError):
        opened.run("fetch", f"--upload-pack={trap}", "--end-of-options", "origin", network=True)
    with pytest.raises(git.exc.UnsafeOptionError):
        opened.run("ls-remote", f"--upl={trap}", "--end-of-options", "origin", network=True)
    with pytest.raises(git.exc.UnsafeProtocolError):
        opened.run("ls-remote", "--end-of-options", f"ext::{trap}", network=True)
    assert not marker.exists()


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)


@pytest.mark.parametrize("refresh", [None, "quiet", "not-a-mode"])
def test_gitpython_executable_variable_is_never_run(repo: GitRepo, trap: Path, marker: Path,
                                                    refresh: str | None) -> None:
    """`import git` runs $GIT_PYTHON_GIT_EXECUTABLE; importing the crawler must not."""
    env = {"GIT_PYTHON_GIT_EXECUTABLE": str(trap)}
    if refresh is not None:
        env["GIT_PYTHON_REFRESH"] = refresh
    code = ("import os\nfrom crawler.git.pin import pin\n"
            f"print(pin({str(repo.path)!r}).pin.sha)\n"
            "print(os.environ['GIT_PYTHON_GIT_EXECUTABLE'])\n")  # handed back untouched
    done = run_python(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [repo.head(), str(trap)]
    assert not marker.exists()


def test_gitpython_trace_logs_nothing(repo: GitRepo, caplog: pytest.LogCaptureFixture,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git.cmd.Git, "GIT_PYTHON_TRACE", "full")  # as $GIT_PYTHON_TRACE=full
    with caplog.at_level(logging.DEBUG), pin(str(repo.path)) as pinned:
        blobs = [entry.blob for entry in pinned.list_files()]
        data = b"".join(chunk for _, chunk in pinned.read_blobs(blobs))
    assert b"raise ValueError" in data
    assert [record for record in caplog.records if record.name == "git.cmd"] == []


def test_blobs_are_read_through_gitpythons_object_database(repo: GitRepo) -> None:
    with pin(str(repo.path)) as pinned:
        assert isinstance(pinned.repo, git.Repo)
        [core] = [entry for entry in pinned.list_files() if entry.path == "pkg/core.py"]
        [(_, data)] = pinned.read_blobs([core.blob])
        assert pinned.repo.git.cat_file_all is not None  # the persistent cat-file --batch
        assert pinned.repo.odb.stream(bytes.fromhex(core.blob)).read() == data
    assert pinned.repo.git.cat_file_all is None  # closed with the pin
