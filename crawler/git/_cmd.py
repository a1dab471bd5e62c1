"""The one door to git: GitPython's `Repo` and `Git`, hardened so that a call runs nothing else.

A repository we are asked to read may be hostile: its config can name commands (fsmonitor,
hooks, helpers) that porcelain would execute. We only run plumbing on the object store, and
every call, the persistent `cat-file --batch` included, carries the same defusing `-c` options
(GitPython's persistent git options) and `--git-dir` (never discovery). GitPython's unsafe
protocol and option guards stay at their defaults.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from crawler.errors import RefError, SourceError


def _import_gitpython() -> None:
    """Import GitPython without letting the environment pick the program it runs.

    `import git` runs `$GIT_PYTHON_GIT_EXECUTABLE version` at once: a hostile value would run
    before any of our code. The variable is set aside for the import (our `_Git` pins "git"
    anyway), and GIT_PYTHON_REFRESH=quiet turns a missing git into a failed call, not an
    ImportError.
    """
    saved = {key: os.environ.pop(key) for key in ("GIT_PYTHON_GIT_EXECUTABLE", "GIT_PYTHON_REFRESH")
             if key in os.environ}
    os.environ["GIT_PYTHON_REFRESH"] = "quiet"
    try:
        importlib.import_module("git")  # imported here, under the setting above
    finally:
        del os.environ["GIT_PYTHON_REFRESH"]
        os.environ.update(saved)


_import_gitpython()

from git import Git, GitCommandError, Remote, Repo  # noqa: E402, F401
from git.db import GitCmdObjectDB  # noqa: E402
from git.exc import (  # noqa: E402, F401
    InvalidGitRepositoryError,
    NoSuchPathError,
    UnsafeOptionError,
    UnsafeProtocolError,
)

# Options on every call; `-c` on the command line beats any config file.
SAFE_CONFIG: tuple[str, ...] = (
    "core.hooksPath=/dev/null",  # no hook runs, whatever the repository says
    "core.fsmonitor=false",  # a repository's fsmonitor is a command git would execute
    "protocol.ext.allow=never",  # ext:: runs an arbitrary command
    "protocol.fd.allow=never",
    "gc.auto=0",  # no background gc: it could drop objects a reader still wants
    "maintenance.auto=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "init.templateDir=",  # a new store gets no template, so no hooks (GitPython refuses --template)
)

# Transports git knows; per-transport settings beat `protocol.allow`, so each is named.
_TRANSPORTS = ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")

# Calls that must never reach a network: this also stops the lazy fetch that git does in a
# partial clone when something asks for an object that the size filter left out.
OFFLINE_CONFIG: tuple[str, ...] = ("protocol.allow=never",) + tuple(
    f"protocol.{name}.allow=never" for name in _TRANSPORTS
)

# fetch and ls-remote: the transports we accept, nothing else (helpers, user-allowed extras).
# Given after OFFLINE_CONFIG on the same call, so these win.
NETWORK_CONFIG: tuple[str, ...] = (
    "protocol.allow=never",
    "protocol.file.allow=always",
    "protocol.git.allow=always",
    "protocol.ssh.allow=always",
    "protocol.http.allow=always",  # parse_source lets http through only for loopback hosts
    "protocol.https.allow=always",
    "http.lowSpeedLimit=1000",  # a stalled transfer fails instead of hanging a run
    "http.lowSpeedTime=60",
)

HEX_SHA = re.compile(r"[0-9a-fA-F]{4,40}")
FULL_SHA = re.compile(r"[0-9a-f]{40}")


class GitFailed(GitCommandError):
    """A git command exited non-zero; `reason` is its last line of stderr, `lines` all of them."""

    def __init__(self, command: Sequence[str], status: int | str | None, stderr: str) -> None:
        super().__init__(list(command), status, stderr)
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        self.lines = lines  # all of git's stderr, for the advice a message passes on
        last = lines[-1] if lines else "git exited with an error"
        for prefix in ("fatal: ", "error: "):
            last = last.removeprefix(prefix)
        self.reason = last


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for every git call: no inherited GIT_* variable, no prompt."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",  # fail instead of asking for a password
        GIT_ASKPASS="",  # nor through a helper program (empty: git asks no program)
        SSH_ASKPASS="",
        GIT_CONFIG_NOSYSTEM="1",
        LC_ALL="C",  # git's messages, which we quote, in one language
        LANGUAGE="C",
    )
    env.update(extra or {})
    return env


class _Git(Git):
    """GitPython's command wrapper with our options on every call and our own process start.

    `Git.execute` builds each process's environment as `os.environ` plus additions: it can set
    a variable, never remove one, so an inherited GIT_DIR, GIT_OBJECT_DIRECTORY or
    GIT_CONFIG_PARAMETERS would redirect or reconfigure the call (and `Repo()` copies some of
    them into `update_environment` itself). That protection cannot be held through GitPython,
    so this one method stays on the plain path: the scrubbed environment, stdin closed and no
    controlling terminal (ssh cannot stop a run to ask for a passphrase). Everything else
    (argv, persistent options, the cat-file protocol, errors) is GitPython's.
    """

    GIT_PYTHON_GIT_EXECUTABLE = "git"  # never the program $GIT_PYTHON_GIT_EXECUTABLE names
    GIT_PYTHON_TRACE = False  # no argv or blob bytes in logs, whatever $GIT_PYTHON_TRACE says

    def __init__(self, working_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__(working_dir)
        self.set_persistent_git_options(no_pager=True, c=[*SAFE_CONFIG, *OFFLINE_CONFIG])

    def bind(self, git_dir: Path) -> None:
        """Name the repository on every call with `--git-dir` (no discovery) and run there."""
        self._working_dir = str(git_dir)  # not a work tree, not what GIT_WORK_TREE says
        self.set_persistent_git_options(no_pager=True, git_dir=str(git_dir),
                                        c=[*SAFE_CONFIG, *OFFLINE_CONFIG])

    def execute(  # type: ignore[override]
                self, command: Any, istream: Any = None, *, as_process: bool = False,
                with_stdout: bool = True, universal_newlines: bool = False,
                stdout_as_string: bool = True, strip_newline_in_stdout: bool = True,
                env: Mapping[str, str] | None = None, **unsupported: Any) -> Any:
        if unsupported:
            raise TypeError(f"_Git.execute does not support {sorted(unsupported)}")
        try:
            proc = subprocess.Popen(
                command, cwd=self._working_dir, env=git_env(env),
                stdin=istream if istream is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE if with_stdout else subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=universal_newlines, start_new_session=True)
        except OSError as exc:
            raise GitFailed(command, None, f"cannot run git: {exc}") from None
        if as_process:
            return self.AutoInterrupt(proc, command)
        out, err = proc.communicate()
        if proc.returncode != 0:
            text = err if isinstance(err, str) else err.decode("utf-8", "replace")
            raise GitFailed(command, proc.returncode, text)
        newline = "\n" if universal_newlines else b"\n"
        if out is not None and strip_newline_in_stdout and out.endswith(newline):
            out = out[:-1]
        if stdout_as_string and isinstance(out, bytes):
            return out.decode("utf-8", "surrogateescape")
        return out


# `Repo()` takes these from os.environ, and nothing tells it not to: an inherited
# GIT_COMMON_DIR would point its config reader and writer at another repository.
_REPO_VARIABLES = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_WORK_TREE")
_environ_lock = threading.Lock()


@contextmanager
def _repo_variables_hidden() -> Iterator[None]:
    """Hide `_REPO_VARIABLES` while a `Repo` is constructed (pure Python: no process starts)."""
    with _environ_lock:
        saved = {key: os.environ.pop(key) for key in _REPO_VARIABLES if key in os.environ}
        try:
            yield
        finally:
            os.environ.update(saved)


class GitRepo(Repo):
    """A `git.Repo` whose every call goes through `_Git`, bound to its git directory.

    Opened on the git directory itself: its work tree and index are never read or written.
    """

    GitCommandWrapperType = _Git
    git: _Git

    def __init__(self, git_dir: str | os.PathLike[str], odbt: Any = GitCmdObjectDB) -> None:
        with _repo_variables_hidden():
            super().__init__(os.fspath(git_dir), odbt=odbt)  # `odbt`: Repo.init passes its own
        self.git.bind(Path(self.git_dir))

    def run(self, command: str, *args: str, network: bool = False, config: Sequence[str] = (),
            input: bytes | None = None) -> bytes:
        """One plumbing call's stdout, bytes as git wrote them; GitFailed when git fails."""
        if network:
            _guard(command, args)
        extra = [*NETWORK_CONFIG, *config] if network else list(config)
        if extra:
            self.git(c=extra)  # this call only, after the persistent -c: these win
        return _call(self.git, command, *args, input=input)


# GitPython's guards, kept at their defaults, on each command that reaches a remote: options
# that run a program (fetch as Remote.fetch checks it; ls-remote as newer Git.ls_remote does).
UNSAFE_NETWORK_OPTIONS: dict[str, list[str]] = {
    "fetch": Remote.unsafe_git_fetch_options,
    "ls-remote": ["--upload-pack", "--exec"],
}


def _guard(command: str, args: Sequence[str]) -> None:
    """UnsafeOptionError or UnsafeProtocolError (GitPython's) before git runs."""
    Git.check_unsafe_options(options=[arg for arg in args if arg.startswith("-")],
                             unsafe_options=UNSAFE_NETWORK_OPTIONS[command])
    for arg in args:
        Git.check_unsafe_protocols(arg)  # ext::, <transport>:: on the command line


def run_git(git_dir: Path | None, command: str, *args: str, cwd: Path | None = None,
            env: Mapping[str, str] | None = None) -> bytes:
    """One call outside an open `GitRepo`: discovery (no `git_dir`) or a config lookup."""
    git = _Git(cwd or git_dir)
    if git_dir is not None:
        git.bind(git_dir)
    return _call(git, command, *args, env=env)


def _call(git: _Git, command: str, *args: str, input: bytes | None = None,
          env: Mapping[str, str] | None = None) -> bytes:
    """`git.<command>(*args)` through GitPython, stdout as the bytes git wrote."""
    with tempfile.TemporaryFile() if input is not None else nullcontext() as stdin:
        if stdin is not None and input is not None:  # Popen reads stdin from a file, not bytes
            stdin.write(input)
            stdin.seek(0)
        out: bytes = getattr(git, command.replace("-", "_"))(
            *args, istream=stdin, env=env, stdout_as_string=False, strip_newline_in_stdout=False)
    return out


# Object-store queries. `rev-list --missing=print` is the one command that, in git 2.39, never
# fetches a missing object lazily: it reports it. Anything else is asked about present objects.


def objects(repo: GitRepo, *revs: str) -> tuple[set[str], set[str]]:
    """(present, absent) objects of the commits `revs`, not walking history; GitFailed when
    a rev itself is absent."""
    out = repo.run("rev-list", "--objects", "--no-walk", "--missing=print", "--no-object-names",
                   "--end-of-options", *revs)
    lines = out.decode("ascii").split()
    return ({line for line in lines if not line.startswith("?")},
            {line[1:] for line in lines if line.startswith("?")})


def complete(repo: GitRepo, rev: str) -> bool:
    """True when `rev` and all its trees are present; blobs may have been left out."""
    try:
        out = repo.run("rev-list", "--objects", "--no-walk", "--missing=print",
                       "--no-object-names", "--filter=blob:none", "--end-of-options", rev)
    except GitFailed:
        return False  # "bad object": not here at all (or a damaged store)
    return b"?" not in out


def peel(repo: GitRepo, rev: str) -> str | None:
    """The commit sha `rev` names (tags peeled), or None; only for present objects."""
    try:
        out = repo.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except GitFailed:
        return None
    return out.decode("ascii").strip() or None


def resolve_commit(repo: GitRepo, ref: str, where: str) -> str:
    """The full sha of `ref` in a repository read in place; RefError when it is not there."""
    # A full sha that is absent would make rev-parse fetch it lazily in a partial clone.
    if FULL_SHA.fullmatch(ref) and not complete(repo, ref):
        raise unknown_ref(where, ref)
    sha = peel(repo, ref)
    if sha is None:
        raise not_a_commit(where, ref, peeled_kind(repo, ref)) or unknown_ref(where, ref)
    if not FULL_SHA.fullmatch(sha):
        raise SourceError(f"[{where}] {sha} is not a 40-hex sha: sha256 repositories are not "
                          "supported")
    if not complete(repo, sha):
        raise SourceError(f"[{where}] the trees of commit {sha} are not in the repository (a "
                          "partial or shallow clone?): fetch them, or give the repository's URL")
    return sha


def peeled_kind(repo: GitRepo, rev: str) -> str | None:
    """What `rev` names once its tags are peeled (commit, tree, blob), or None: nothing here."""
    try:
        sha = repo.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{}}")
        return repo.run("cat-file", "-t", sha.decode("ascii").strip()).decode("ascii").strip()
    except (GitFailed, UnicodeDecodeError):
        return None


def not_a_commit(where: str, ref: str, kind: str | None) -> RefError | None:
    """The one message for a ref (a tag, typically) that names a tree or a blob; None for a
    commit or nothing at all."""
    if kind is None or kind == "commit":
        return None
    return RefError(f"[{where}] {ref!r} names a {kind}, not a commit: give a branch, a tag or "
                    "a sha that names a commit")


def unknown_ref(where: str, ref: str) -> RefError:
    """The one message for a ref that names nothing."""
    hint = " (a short sha must be unambiguous: give more digits)" if HEX_SHA.fullmatch(ref) else ""
    return RefError(f"[{where}] unknown commit {ref!r}: no branch, tag or sha of that name"
                    f"{hint}; list them with `git ls-remote {where}`")
