"""The one door to git: every call gets a scrubbed environment and options that run nothing.

A repository we are asked to read may be hostile: its config can name commands (fsmonitor,
hooks, helpers) that porcelain would execute. We only run plumbing on the object store, and
every call, through `run_git` or `CatFile`, carries the same defusing options.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from crawler.errors import RefError, SourceError

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
)

# Transports git knows; per-transport settings beat `protocol.allow`, so each is named.
_TRANSPORTS = ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")

# Calls that must never reach a network: this also stops the lazy fetch that git does in a
# partial clone when something asks for an object that the size filter left out.
OFFLINE_CONFIG: tuple[str, ...] = ("protocol.allow=never",) + tuple(
    f"protocol.{name}.allow=never" for name in _TRANSPORTS
)

# fetch and ls-remote: the transports we accept, nothing else (helpers, user-allowed extras).
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


class GitFailed(Exception):
    """A git command exited non-zero; `reason` is its last line of stderr."""

    def __init__(self, args: Sequence[str], stderr: str) -> None:
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else "git exited with an error"
        for prefix in ("fatal: ", "error: "):
            last = last.removeprefix(prefix)
        super().__init__(f"git {' '.join(args[:1])}: {last}")
        self.reason = last
        self.stderr = stderr


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for every git call: no inherited GIT_* variable, no prompt."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",  # fail instead of asking for a password
        GIT_CONFIG_NOSYSTEM="1",
        LC_ALL="C",  # git's messages, which we quote, in one language
        LANGUAGE="C",
    )
    env.update(extra or {})
    return env


def git_command(
    git_dir: Path | None, args: Sequence[str], *, network: bool, config: Sequence[str] = ()
) -> list[str]:
    """The argv for one call: `--git-dir` (never discovery) and the defusing `-c` options."""
    config = (*SAFE_CONFIG, *(NETWORK_CONFIG if network else OFFLINE_CONFIG), *config)
    cmd = ["git", "--no-pager"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    for item in config:
        cmd += ["-c", item]
    return cmd + list(args)


def run_git(
    git_dir: Path | None,
    *args: str,
    cwd: Path | None = None,
    network: bool = False,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    config: Sequence[str] = (),
) -> bytes:
    """Run one git command and return its stdout; raise GitFailed when it fails."""
    proc = subprocess.run(
        git_command(git_dir, args, network=network, config=config),
        cwd=cwd or git_dir,
        env=git_env(env),
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        # No controlling terminal: ssh cannot stop a run to ask for a passphrase.
        start_new_session=True,
    )
    if proc.returncode != 0:
        raise GitFailed(args, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


class CatFile:
    """One `git cat-file --batch` process, started on first use, that serves many objects."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def read(self, sha: str) -> tuple[str, bytes]:
        """(type, bytes) of one object; KeyError when git says it is missing."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode("ascii") + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) == 2 and header[1] == b"missing":
            raise KeyError(sha)
        if len(header) != 3:
            raise GitFailed(["cat-file"], self._died())
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after each object
        if len(data) != size:
            raise GitFailed(["cat-file"], self._died())
        return header[1].decode("ascii"), data

    def close(self) -> None:
        """End the process; safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            # stderr to a file, not a pipe: a chatty git must not block on a full pipe.
            self._stderr = tempfile.TemporaryFile()
            self._proc = subprocess.Popen(
                git_command(self.git_dir, ["cat-file", "--batch"], network=False),
                cwd=self.git_dir,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
            )
        return self._proc

    def _died(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace")
        self.close()
        return text or "cat-file stopped"


# Object-store queries. `rev-list --missing=print` is the one command that, in git 2.39, never
# fetches a missing object lazily: it reports it. Anything else is asked about present objects.


def objects(git_dir: Path, *revs: str) -> tuple[set[str], set[str]]:
    """(present, absent) objects of the commits `revs`, not walking history; GitFailed when
    a rev itself is absent."""
    out = run_git(git_dir, "rev-list", "--objects", "--no-walk", "--missing=print",
                  "--no-object-names", "--end-of-options", *revs)
    lines = out.decode("ascii").split()
    return ({line for line in lines if not line.startswith("?")},
            {line[1:] for line in lines if line.startswith("?")})


def complete(git_dir: Path, rev: str) -> bool:
    """True when `rev` and all its trees are present; blobs may have been left out."""
    try:
        out = run_git(git_dir, "rev-list", "--objects", "--no-walk", "--missing=print",
                      "--no-object-names", "--filter=blob:none", "--end-of-options", rev)
    except GitFailed:
        return False  # "bad object": not here at all (or a damaged store)
    return b"?" not in out


def peel(git_dir: Path, rev: str) -> str | None:
    """The commit sha `rev` names (tags peeled), or None; only for present objects."""
    try:
        out = run_git(git_dir, "rev-parse", "--verify", "--quiet", "--end-of-options",
                      f"{rev}^{{commit}}")
    except GitFailed:
        return None
    return out.decode("ascii").strip() or None


def resolve_commit(git_dir: Path, ref: str, where: str) -> str:
    """The full sha of `ref` in a repository read in place; RefError when it is not there."""
    # A full sha that is absent would make rev-parse fetch it lazily in a partial clone.
    if FULL_SHA.fullmatch(ref) and not complete(git_dir, ref):
        raise unknown_ref(where, ref)
    sha = peel(git_dir, ref)
    if sha is None:
        raise unknown_ref(where, ref)
    if not FULL_SHA.fullmatch(sha):
        raise SourceError(f"[{where}] {sha} is not a 40-hex sha: sha256 repositories are not "
                          "supported")
    if not complete(git_dir, sha):
        raise SourceError(f"[{where}] the trees of commit {sha} are not in the repository (a "
                          "partial or shallow clone?): fetch them, or give the repository's URL")
    return sha


def unknown_ref(where: str, ref: str) -> RefError:
    """The one message for a ref that names nothing."""
    hint = " (a short sha must be unambiguous: give more digits)" if HEX_SHA.fullmatch(ref) else ""
    return RefError(f"[{where}] unknown commit {ref!r}: no branch, tag or sha of that name"
                    f"{hint}; list them with `git ls-remote {where}`")
