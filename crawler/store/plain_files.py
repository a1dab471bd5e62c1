"""Files of an output folder opened safely: plain files only, never through a link, reads capped.

Every file the crawler reads or writes in an output folder is a plain file. A symbolic link, a
named pipe, a device or a socket is refused by its type, named in one line, and never opened:
its type is read with `lstat` first, and the open itself uses `O_NOFOLLOW` and `O_NONBLOCK`
(a FIFO swapped in after the `lstat` opens without waiting) and is checked again with `fstat`.
A read counts the bytes it gets and stops one byte past its cap, so a file whose size reads 0
(a `/dev/zero` behind a name) cannot make it read forever. The folders between an output root
and the files written there must be plain folders too (`refuse_links_below`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from crawler.errors import OutputError, RecordError

MAX_READ_BYTES = 64 * 1024 * 1024  # far above any real record or manifest; more is refused
_CHUNK = 1 << 20
_SAFE_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def kind_of(mode: int) -> str:
    """What a file is, from its `st_mode`, as a message names it."""
    return next((name for test, name in _KINDS if test(mode)), "a plain file" if stat.S_ISREG(mode)
                else "not a plain file")


def signature(found: os.stat_result) -> list[int]:
    """What changes whenever a file's bytes do: any write or rename sets its ctime, which no
    one can set back (an editor, `git checkout`, `cp -p` and a restore all give a new one)."""
    return [found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]


def lstat_or_none(path: Path | str) -> os.stat_result | None:
    """The file's own status (a link's, not its target's); None where nothing is there."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # a file where a folder on the way should be
        return None


def _not_plain(path: Path | str, mode: int) -> RecordError:
    return RecordError(f"{kind_of(mode)}, not a plain file; the crawler neither follows nor "
                       "replaces it, it was left as it is; replace it with a plain file",
                       path=str(path))


def open_plain(path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor of the plain file at `path`; anything else raises `RecordError` unopened.

    `FileNotFoundError` is raised as it is, for the caller to tell "absent" from "refused".
    """
    found = lstat_or_none(path)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise _not_plain(path, found.st_mode)
    try:
        fd = os.open(path, flags | _SAFE_OPEN, mode)
    except OSError as error:
        swapped = lstat_or_none(path)  # replaced since the lstat: a link (ELOOP) or a socket
        if swapped is not None and not stat.S_ISREG(swapped.st_mode):
            raise _not_plain(path, swapped.st_mode) from error
        raise
    opened = os.fstat(fd).st_mode
    if not stat.S_ISREG(opened):
        os.close(fd)
        raise _not_plain(path, opened)
    return fd


def read_plain(path: Path | str, cap: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a plain file of at most `cap` bytes, counted as read, never taken from its size.

    Raises `RecordError` (one line naming the file) for anything else: not a plain file, larger
    than the cap, or unreadable.
    """
    try:
        fd = open_plain(path)
    except OSError as error:
        raise RecordError(f"cannot read: {error.strerror}", path=str(path)) from error
    try:
        data = _read_upto(fd, cap + 1, os.fstat(fd).st_size + 1)
    except OSError as error:
        raise RecordError(f"cannot read: {error.strerror}", path=str(path)) from error
    finally:
        os.close(fd)
    if len(data) > cap:
        raise RecordError(f"more than {cap} bytes, too large for a record or manifest; it was "
                          "left as it is", path=str(path))
    return data


def read_head(path: Path | str, limit: int) -> bytes | None:
    """Up to the first `limit` bytes of a plain file; None where it cannot be read as one."""
    try:
        fd = open_plain(path)
    except (OSError, RecordError):
        return None
    try:
        return _read_upto(fd, limit, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def text_or_none(path: Path | str) -> str | None:
    """The UTF-8 text of a plain file within the cap; None for anything else (or nothing)."""
    try:
        return read_plain(path).decode("utf-8")
    except (RecordError, UnicodeDecodeError):
        return None


def _read_upto(fd: int, most: int, hint: int) -> bytes:
    """Read until end of file or `most` bytes, whichever comes first; `hint` sizes the first read."""
    parts: list[bytes] = []
    total = 0
    while total < most:
        chunk = os.read(fd, min(most - total, max(hint - total, _CHUNK)))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def refuse_replacing(path: Path) -> None:
    """Refuse before writing `path` where something other than a plain file is there.

    An atomic write renames over its target: over a link or a FIFO it would replace them, and a
    person's link to a file elsewhere would silently stop being one.
    """
    found = lstat_or_none(path)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise OutputError(f"{path}: {kind_of(found.st_mode)}, not a plain file; the crawler never "
                          "writes through or replaces one, nothing was written; remove it and "
                          "run again")


def refuse_links_below(root: Path, path: Path) -> None:
    """Refuse where a folder from `root` (excluded: the user's own choice) down to `path` is a
    symbolic link, before anything is written under it; missing ones are made as plain folders,
    and a plain file in the way fails the first write as it is."""
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        found = lstat_or_none(here)
        if found is not None and stat.S_ISLNK(found.st_mode):
            raise OutputError(f"{here}: a symbolic link where the output folder needs a plain "
                              "folder; nothing was written: the crawler writes nowhere a link "
                              "leads; replace it with a folder and run again")
        if found is None or not stat.S_ISDIR(found.st_mode):
            return  # made by the run, or a file in the way that the first write names


__all__ = ["MAX_READ_BYTES", "kind_of", "lstat_or_none", "open_plain", "read_head", "read_plain",
           "refuse_links_below", "refuse_replacing", "text_or_none"]
