"""The root commit that tells local repositories apart: the first commit of the pinned history.

Two folders named `lib` hold two repositories when their histories begin at different commits,
and two clones of one repository share their first commit, wherever they are. The root is the
one reached along first parents, not the smallest of all roots: a subtree merge adds a root to
a history but not to its first-parent line, so the identity does not move when one lands.

Walking the first parents takes about 0.35 s on jax-ml/jax (26,000 of its 37,500 commits, no
commit-graph file); a commit's history never changes, so the answer is cached by its sha. A
commit not cached yet, as each update's new pin is, takes the root of the nearest commit on its
first-parent line that is: the line's end is the same from any commit on it.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from crawler.git._cmd import FULL_SHA, GitRepo

ROOTS_DIR = "roots"  # <cache>/roots/<commit sha>: that commit's root, one line
NEAR = 2000  # the latest commits of a first-parent line looked through for a cached one


def root_commit(repo: GitRepo, sha: str, cache_dir: Path) -> str | None:
    """The first commit of `sha`'s first-parent history; None in a shallow clone, whose
    history stops at a cut rather than at its first commit. Raises GitFailed."""
    folder = cache_dir / ROOTS_DIR
    cached = _read_cached(folder / sha)
    known = cached is not None
    if not known:
        cached = _cached_on_the_line(repo, sha, folder)
    if cached is not None and _is_root(repo, cached):
        if not known:
            _write_cached(folder, sha, cached)
        return cached
    if repo.run("rev-parse", "--is-shallow-repository").strip() == b"true":
        return None
    out = repo.run("rev-list", "--first-parent", "--max-parents=0", "--end-of-options", sha)
    root = out.decode("ascii").split()[0]
    _write_cached(cache_dir / ROOTS_DIR, sha, root)
    return root


def _cached_on_the_line(repo: GitRepo, sha: str, folder: Path) -> str | None:
    """The cached root of one of the `NEAR` latest commits on `sha`'s first-parent line, the
    nearest first; None when none of them is cached (or git cannot say: the walk decides)."""
    try:
        cached = set(os.listdir(folder))
    except OSError:
        return None
    if not cached:
        return None
    try:
        out = repo.run("rev-list", "--first-parent", f"--max-count={NEAR}", "--end-of-options", sha)
    except Exception:  # noqa: BLE001 - any failure only costs the shortcut: the walk runs
        return None
    for commit in out.decode("ascii").split():
        if commit in cached:
            return _read_cached(folder / commit)
    return None


def _is_root(repo: GitRepo, sha: str) -> bool:
    """A cached answer is used only while it still names a parentless commit here."""
    try:
        out = repo.run("rev-list", "--no-walk", "--max-parents=0", "--end-of-options", sha)
    except Exception:  # noqa: BLE001 - any failure only costs the cache: the walk runs
        return False
    return out.decode("ascii").strip() == sha


def _read_cached(path: Path) -> str | None:
    """The cached root, or None; never follows a link or waits on a special file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 64).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    return text if FULL_SHA.fullmatch(text) else None


def _write_cached(folder: Path, sha: str, root: str) -> None:
    """Best effort: a cache that cannot be written costs the next run the walk, nothing more."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temp = str(folder / f".{sha}.{secrets.token_hex(5)}.tmp")
        # 0666 less the umask, as for any file the crawler writes (mkstemp's 0600 is private)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(f"{root}\n")
        os.replace(temp, folder / sha)
    except OSError:
        Path(temp).unlink(missing_ok=True)
