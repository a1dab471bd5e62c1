"""Where an export may write (`crawler export --to PATH`), decided before anything is read.

The rules, applied to what PATH leads to (a symbolic link is followed, never replaced):

- nothing there, or a plain file the crawler wrote: the export is written beside it and renamed
  over it (atomic); a plain file the crawler did not write is refused unless `--force`;
- a character device (`/dev/null`, a terminal) or a named pipe: written through, never replaced;
  a write the device refuses (`/dev/full`: no space) is an error, never a success;
- a folder, a block device or a socket: refused; `--format json` alone writes a folder, whose
  `index.json` is replaced on the same terms as a file, and whose `errors/` may not be a link.

A file the crawler wrote is told by its first bytes (`written_by_crawler`): a JSON Lines export
starts with a record document's first keys, `{"schema_version":N,"id":"<16 hex>","status":`; a
SQLite export has the crawler's `application_id` in its header (or, written before it had one,
a `meta` table naming a `crawler_version`); an index.json starts with its two schema versions.
An empty file holds nothing to lose (as `mktemp` makes it) and counts as the crawler's.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from crawler.errors import OutputError
from crawler.serve import sqlite_guard
from crawler.store.atomic import raise_output_error, write_whole
from crawler.store.plain_files import kind_of, lstat_or_none, read_head

REPLACE, STREAM, FOLDER = "replace", "stream", "folder"  # how a target is written
APPLICATION_ID = int.from_bytes(b"RSCx", "big")  # PRAGMA application_id of a SQLite export
_JSONL_START = re.compile(rb'\{"schema_version":\d+,"id":"[0-9a-f]{16}","status":"')
_INDEX_START = re.compile(rb'\{\n  "schema_version": \d+,\n  "record_schema_version": \d+,')
INDEX = "index.json"
_ANOTHER = "give another --to"


FORMAT_OF_SUFFIX = {".jsonl": "jsonl", ".json": "json", ".sqlite": "sqlite", ".db": "sqlite"}


def format_of(given: Path) -> str | None:
    """The export format a target's name says (`--format` left out): `-` and a named pipe are
    JSON Lines (a reader of one line at a time), a folder is JSON documents, else the suffix
    (`.jsonl`, `.json`, `.sqlite` or `.db`); None when the name says nothing."""
    if str(given) == "-":
        return "jsonl"
    try:
        found: os.stat_result | None = os.stat(given)  # a link: what it leads to
    except OSError:
        found = None
    if found is not None and stat.S_ISDIR(found.st_mode):
        return "json"
    if found is not None and stat.S_ISFIFO(found.st_mode):
        return "jsonl"
    return FORMAT_OF_SUFFIX.get(given.suffix.lower())


@dataclass(frozen=True)
class Target:
    """Where one export goes: the path given, the one it leads to, and how it is written."""

    given: Path
    real: Path  # `given` with every symbolic link followed
    how: str  # REPLACE, STREAM or FOLDER


def place(given: Path, fmt: str, force: bool = False) -> Target:
    """Where `--to given` writes an export in `fmt`; refused with one line where it may not."""
    real = given.resolve()  # a link is followed: the rules are about what it points at
    try:
        found: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        found = None
    except OSError as error:
        raise OutputError(f"{given}: cannot look at the export's target ({error.strerror}); "
                          "give another --to") from error
    if fmt == "json":
        return _folder_target(given, real, found, force)
    if found is None:
        return Target(given, real, REPLACE)
    mode = found.st_mode
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Target(given, real, STREAM)
    if stat.S_ISREG(mode):
        if not force and not written_by_crawler(real):
            raise OutputError(f"{given}: a file the crawler did not write; it was left as it is; "
                              "give another --to, or pass --force to replace it")
        return Target(given, real, REPLACE)
    what = "--format json writes a folder; give a file name" if stat.S_ISDIR(mode) else "give a file"
    raise OutputError(f"{given}: {kind_of(mode)}, where --format {fmt} writes one file; {what}")


def _folder_target(given: Path, real: Path, found: os.stat_result | None, force: bool) -> Target:
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise OutputError(f"{given}: {kind_of(found.st_mode)}, where --format json writes a "
                          "folder of files; give a folder")
    index = real / INDEX
    if not force and lstat_or_none(index) is not None and not written_by_crawler(index):
        raise OutputError(f"{index}: a file the crawler did not write; it was left as it is; "
                          "give another folder, or pass --force to replace it")
    return Target(given, real, FOLDER)


def written_by_crawler(path: Path) -> bool:
    """Whether a plain file is empty or an export the crawler wrote, told by its first bytes."""
    head = read_head(path, 100)
    if head is None:
        return False
    if not head:
        return True
    if _JSONL_START.match(head) or _INDEX_START.match(head):
        return True
    if not head.startswith(sqlite_guard.SQLITE_MAGIC) or len(head) < 72:
        return False
    return int.from_bytes(head[68:72], "big") == APPLICATION_ID or _names_crawler(path)


def _names_crawler(path: Path) -> bool:
    """A SQLite export written before it carried `APPLICATION_ID`: its `meta` table says so.
    The file may be anyone's: only a plain `meta` table is read, within a bound in steps."""
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            with sqlite_guard.bounded(connection, path, sqlite_guard.budget_for(path), _ANOTHER):
                sqlite_guard.require_tables(connection, path, {"meta": ("key", "value")}, _ANOTHER)
                row = connection.execute("SELECT value FROM meta WHERE key = 'crawler_version'"
                                         ).fetchone()
        finally:
            connection.close()
    except (sqlite3.Error, OutputError):  # not a database, or not one the crawler wrote
        return False
    return row is not None


def stream(target: Target, chunks: Iterable[bytes]) -> None:
    """Write through to a character device or a pipe, opened as it is (never replaced).

    The open waits for a pipe's reader, as a shell's `>` does. Every byte is written or the
    export fails: a device that refuses a write (`/dev/full`) is an error with one line.
    """
    try:
        fd = os.open(target.real, os.O_WRONLY | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise_output_error(error, target.given, "nothing was written")
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):  # swapped since `place` looked
            raise OutputError(f"{target.given}: {kind_of(mode)} now, not the device or pipe it "
                              "was; nothing was written; run again")
        for chunk in chunks:
            write_whole(fd, chunk)
    except OSError as error:
        raise_output_error(error, target.given, "the export written there is incomplete")
    finally:
        os.close(fd)


__all__ = ["APPLICATION_ID", "FOLDER", "REPLACE", "STREAM", "Target", "place", "stream",
           "written_by_crawler"]
