"""Atomic writes: a crash leaves each file with its old content or its new one, never half.

Every text goes to a temp file beside its target (`.<name>.<random>.tmp`), is fsynced, then
renamed over the target; the folder is fsynced after its renames so that they last too. A batch
writes and fsyncs all its temp files before the first rename, renames them several at once, and
fsyncs each folder once.

A temp file is made with mode 0666 less the umask, as `open` would make the target itself
(`tempfile.mkstemp` makes 0600, which a web server running as another user cannot read).
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

from crawler.errors import OutputError
from crawler.store.plain_files import refuse_replacing

TEMP_SUFFIX = ".tmp"  # temp files: ".<name>.<random>.tmp", beside their target
# fsyncs in flight at once: the journal commits those that wait together (measured here: 0.2 ms
# a file with 16 threads, 0.7 ms one after the other)
_FSYNC_THREADS = 16
# renames in flight at once, for the same reason: a rename waits on the filesystem's journal, and
# those that wait together commit together (2,000 records of a 5,400-file folder on ext4: 0.6 to
# 1.0 s in 16 threads, 2.4 to 6.0 s one after the other)
_RENAME_THREADS = 16
_NEW_FILE_MODE = 0o666  # less the umask, by the kernel: 0644 under 022, 0600 under 077
_NAME_TRIES = 100


def write_atomic(path: Path, text: str) -> None:
    """Write one file so that a crash leaves either the old or the new content, never half.

    Only a plain file (or nothing) is replaced: a link, FIFO or device there is refused.
    """
    tmp: str | None = None
    refuse_replacing(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _stage(path, text)
        _fsync(tmp)
        os.replace(tmp, path)
        tmp = None
    except OSError as error:
        raise_output_error(error, path, "this file was left as it was")
    finally:
        if tmp is not None:
            _discard(tmp)


def write_all(files: Sequence[tuple[Path, str]]) -> None:
    """Write each `(path, text)` atomically, as one batch; the folders must exist.

    Every temp file is written and fsynced before the first rename, so a crash leaves each
    target as it was or as it should be; then each folder is fsynced once. An OSError leaves no
    temp file behind and is raised as it is, for the caller to say what it was writing. Where a
    target is not a plain file (a link, a FIFO), nothing at all is written.
    """
    staged = stage_batch(files)
    try:
        replace_all(list(zip(staged, (path for path, _ in files))))
    except BaseException:
        for tmp in staged:  # those renamed are gone already; the others were never renamed
            _discard(tmp)
        raise
    for folder in sorted({path.parent for path, _ in files}):
        sync_folder(folder)


def replace_all(renames: Sequence[tuple[str | Path, str | Path]]) -> None:
    """Rename each `(temp file, target)`, several at once; once all were tried, the first
    OSError is raised. Each rename is atomic on its own and each temp file was fsynced before
    any of them, so their order does not matter: a crash leaves each target as it was or as it
    should be, whichever renames had run."""
    if len(renames) <= 1:
        for tmp, target in renames:
            os.replace(tmp, target)
        return
    with ThreadPoolExecutor(min(_RENAME_THREADS, len(renames))) as pool:
        outcomes = list(pool.map(_replace, renames))
    failed = next((error for error in outcomes if error is not None), None)
    if failed is not None:
        raise failed


def _replace(rename: tuple[str | Path, str | Path]) -> OSError | None:
    try:
        os.replace(*rename)
    except OSError as error:
        return error
    return None


def stage_batch(files: Sequence[tuple[Path, str]]) -> list[str]:
    """Each text in a temp file beside its target, all written and fsynced, none renamed: the
    caller renames them (a journal of its own can then finish the renames after a crash).
    An OSError leaves no temp file behind; a target that is not a plain file stages nothing."""
    for path, _ in files:
        refuse_replacing(path)
    staged: list[str] = []
    try:
        for path, text in files:
            staged.append(_stage(path, text))
        _fsync_each(staged)
    except BaseException:
        for tmp in staged:
            _discard(tmp)
        raise
    return staged


def raise_output_error(error: OSError, where: object, outcome: str) -> NoReturn:
    """Raise one line for a failed write: where, why, what is left on disk, and what to do.

    It raises rather than returns the error, so that each raise's message is a template the
    crawler reads exactly (a returned error would be catalogued by its factory's argument).
    """
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        raise OutputError(f"{where}: disk full ({error.strerror}); {outcome}; free some space "
                          "and run again") from error
    raise OutputError(f"{where}: cannot write ({error.strerror}); {outcome}") from error


def sync_folder(folder: Path) -> None:
    """Make the renames in a folder durable (where the filesystem lets a folder be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _stage(path: Path, text: str) -> str:
    """A temp file beside `path` holding `text`, written but not yet fsynced."""
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def create_temp(path: Path) -> tuple[int, str]:
    """A new temp file beside `path`, opened for writing: (descriptor, its path).

    Its name is `.<name>.<random>.tmp`; it is created exclusively, never through a link, with
    the permissions the umask gives a new file.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_NAME_TRIES):
        tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(5)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, flags, _NEW_FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temp file name", str(path.parent))


def _fsync_each(paths: list[str]) -> None:
    if len(paths) <= 1:
        for path in paths:
            _fsync(path)
        return
    with ThreadPoolExecutor(min(_FSYNC_THREADS, len(paths))) as pool:
        for _ in pool.map(_fsync, paths):  # the first error, raised here
            pass


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass
