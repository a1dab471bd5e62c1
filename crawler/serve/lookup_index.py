"""The lookup index kept beside a repository's records: `<repository folder>/lookup.sqlite`.

Reading jax's 5,447 YAML records costs 10 s of CPU; a lookup needs, per record, a dozen short fields and
its regex's longest literal run. The index holds those rows (`entries`), the words of each
template (`words`, for the closest templates) and, for every file of errors/, the signature it
had when it was read (`files`: inode, size, mtime and ctime, which any write or rename changes)
with the problem it had, if it was no record.

SQLite rather than a JSON file: a query reads only the rows whose literal run is in the message
(`instr` in SQL) and the word rows it shares, so a cold lookup does not parse the whole index;
one record changed is one row rewritten in a transaction, not a whole file; and the standard
library reads it. It is a cache: never the truth, rebuilt when missing, of another version or
unreadable, and brought up to date before every use (`refresh`): the files whose signature
changed are read again (or taken from the records a run has in memory), the rows of files gone
are dropped; an unchanged listing of errors/ (`_listing_signature`) spares the stat of each
file. A folder that cannot be written is served from an index built in memory.

The first lookup in a folder builds it; extract and update then keep it (`refresh` with the
records they hold) but never create it: a folder without one stays exactly what its records and
manifest make it, byte for byte, while the index's bytes depend on the machine (signatures).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.errors import OutputError, RecordError
from crawler.serve.ranking import Wording, shared_words, wordings

if TYPE_CHECKING:
    from crawler.records import ErrorRecord

INDEX_FILE = "lookup.sqlite"
# The store's names (`record_files.ERRORS_DIR`, `manifest_file.MANIFEST`), not imported: the
# store loads the parser, a second of imports a lookup that reads no record does without.
ERRORS_DIR = "errors"
MANIFEST = "manifest.yaml"
INDEX_VERSION = "2"  # 2: past releases' wordings
RACY_NS = 2_000_000_000  # a listing changed this recently is checked file by file
_COLUMNS = ("record_id", "repo", "status", "removed_in", "exception", "exception_qualname", "path",
            "line", "qualname", "kind", "template", "placeholders", "regex", "url", "past",
            "first_release", "last_release", "today")
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (name TEXT PRIMARY KEY, signature TEXT NOT NULL, problem TEXT);
CREATE TABLE entries (
  file TEXT NOT NULL REFERENCES files(name) ON DELETE CASCADE,
  position INTEGER NOT NULL,  -- 0: the current template; past wordings may follow
  {", ".join(_COLUMNS)},
  exception_name TEXT NOT NULL,
  required TEXT NOT NULL,
  PRIMARY KEY (file, position)
);
CREATE INDEX entries_exception ON entries(exception_name);
CREATE TABLE words (
  word TEXT NOT NULL,
  file TEXT NOT NULL REFERENCES files(name) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (word, file, position)
) WITHOUT ROWID;
CREATE INDEX words_file ON words(file);
"""


@dataclass(frozen=True)
class FileState:
    """One file of errors/ as it is now: its signature, and its record or what is wrong."""

    name: str
    signature: str
    wordings: tuple[Wording, ...] = ()
    problem: str | None = None


def errors_signatures(folder: Path) -> dict[str, str]:
    """Every file of `folder`/errors/ but temp files, with its signature now."""
    from crawler.store.record_files import signature

    errors = folder / ERRORS_DIR
    if not errors.is_dir() or errors.is_symlink():
        return {}
    return {entry.name: json.dumps(signature(entry.stat(follow_symlinks=False)))
            for entry in os.scandir(errors) if not entry.name.startswith(".")}


def read_file_state(folder: Path, name: str, sign: str,
                    known: Mapping[str, ErrorRecord]) -> FileState:
    """A file of errors/ as lookup sees it: the record a run has in memory, or its file read;
    what is no record is named as every reader of the folder names it (`repo_output`)."""
    from crawler.store.plain_files import kind_of
    from crawler.store.record_files import broken_record, is_record_id, other_file, read_record

    where = folder / ERRORS_DIR / name
    stem = name[:-len(".yaml")] if name.endswith(".yaml") else None
    claimed = stem if is_record_id(stem) else None
    if claimed is not None and claimed in known:
        return FileState(name, sign, tuple(wordings(known[claimed])))
    found = os.lstat(where)
    if not stat.S_ISREG(found.st_mode):
        return FileState(name, sign, problem=f"{where}: {kind_of(found.st_mode)}; records are "
                         "plain files, never followed or opened; it was left as it is")
    if claimed is None:  # a renamed record, a stray file
        return FileState(name, sign, problem=other_file(where).problem)
    try:
        return FileState(name, sign, tuple(wordings(read_record(where))))
    except (RecordError, OutputError) as error:
        return FileState(name, sign, problem=broken_record(str(where), claimed, error).problem)


class StoredIndex:
    """The index of one repository folder, open: a lookup `Source` (see `ranking`)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def exception_names(self) -> frozenset[str]:
        rows = self.connection.execute("SELECT DISTINCT exception_name FROM entries")
        return frozenset(row[0] for row in rows)

    def containing(self, texts: Sequence[str]) -> Iterator[Wording]:
        clause = " OR ".join("instr(?, required) > 0" for _ in texts)
        yield from self._wordings(f"WHERE {clause}", tuple(texts))

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        if not words:
            return []
        marks = ",".join("?" * len(words))
        best = self.connection.execute(
            f"SELECT file, position FROM words WHERE word IN ({marks}) GROUP BY file, position "
            "ORDER BY count(*) DESC, file, position LIMIT ?", (*sorted(words), limit)).fetchall()
        found: list[Wording] = []
        for file, position in best:
            found.extend(self._wordings("WHERE file = ? AND position = ?", (file, position)))
        return found

    def count(self) -> int:
        """How many wordings the index holds."""
        return int(self.connection.execute("SELECT count(*) FROM entries").fetchone()[0])

    def problems(self) -> list[str]:
        """One line for each file of errors/ that is no record, in name order."""
        rows = self.connection.execute(
            "SELECT problem FROM files WHERE problem IS NOT NULL ORDER BY name")
        return [row[0] for row in rows]

    def _wordings(self, where: str, args: tuple[object, ...]) -> Iterator[Wording]:
        rows = self.connection.execute(f"SELECT {', '.join(_COLUMNS)} FROM entries {where} "
                                       "ORDER BY file, position", args)
        for row in rows:
            values = dict(zip(_COLUMNS, row, strict=True))
            values["placeholders"] = tuple(json.loads(str(values["placeholders"])))
            yield Wording(**values)  # type: ignore[arg-type]


def refresh(folder: Path, known: Mapping[str, ErrorRecord] | None = None) -> int:
    """Bring `folder`'s stored index up to date with its errors/ files, building it if it is
    missing or unreadable; `known`: records a run holds in memory, as their files now are.
    Returns how many files were read again (or taken from `known`)."""
    path = folder / INDEX_FILE
    with closing(_connect_or_build(path)) as connection:
        return _bring_up_to_date(connection, folder, known or {})


def open_index(folder: Path) -> sqlite3.Connection:
    """`folder`'s index, up to date: the stored one (refreshed in place), or, where it cannot
    be written, one built in memory from the files."""
    connection = None
    try:
        connection = _connect_or_build(folder / INDEX_FILE)
        _bring_up_to_date(connection, folder, {})
        return connection
    except (sqlite3.Error, OSError):
        if connection is not None:
            connection.close()
        connection = sqlite3.connect(":memory:")
        connection.executescript(_SCHEMA)
        _bring_up_to_date(connection, folder, {})
        return connection


def _connect_or_build(path: Path) -> sqlite3.Connection:
    """The index at `path` if it is one of this version, else a new empty one put in its place."""
    if path.is_file() and not path.is_symlink():
        connection = sqlite3.connect(path)
        try:
            row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is not None and row[0] == INDEX_VERSION:
                return connection
        except sqlite3.DatabaseError:
            pass  # not a database, or another shape: built again below
        connection.close()
    _build_empty(path)
    return sqlite3.connect(path)


def _build_empty(path: Path) -> None:
    """A new empty index put at `path` whole (written aside, then renamed over it)."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        with closing(sqlite3.connect(temp)) as connection:
            connection.executescript(_SCHEMA)
            connection.execute("INSERT INTO meta VALUES ('version', ?)", (INDEX_VERSION,))
            connection.commit()
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _bring_up_to_date(connection: sqlite3.Connection, folder: Path,
                      known: Mapping[str, ErrorRecord]) -> int:
    listing = _listing_signature(folder)
    row = connection.execute("SELECT value FROM meta WHERE key = 'listing'").fetchone()
    if not known and listing and row is not None and row[0] == listing:
        return 0  # no file of errors/ was added, removed or replaced since the index was
    now = errors_signatures(folder)
    stored = dict(connection.execute("SELECT name, signature FROM files").fetchall())
    gone = [name for name in stored if name not in now]
    changed = sorted(name for name, sign in now.items() if stored.get(name) != sign)
    states = [read_file_state(folder, name, now[name], known) for name in changed]
    with connection:  # one transaction: a reader sees the index before or after, never between
        connection.execute("PRAGMA foreign_keys = ON")
        connection.executemany("DELETE FROM files WHERE name = ?", [(n,) for n in gone + changed])
        _insert(connection, states)
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('listing', ?)", (listing,))
    return len(changed)


def _listing_signature(folder: Path) -> str:
    """errors/'s own signature, which every create, rename or removal in it changes (each write
    of the crawler renames a file into place); "" when missing, or too recent to trust: a change
    in the same clock tick as the last one would leave it as it is (git's "racy" files)."""
    try:
        found = os.lstat(folder / ERRORS_DIR)
    except OSError:
        return ""
    if time.time_ns() - max(found.st_mtime_ns, found.st_ctime_ns) < RACY_NS:
        return ""
    return json.dumps([found.st_ino, found.st_mtime_ns, found.st_ctime_ns])


def _insert(connection: sqlite3.Connection, states: Iterable[FileState]) -> None:
    files: list[tuple[str, str, str | None]] = []
    entries: list[tuple[object, ...]] = []
    words: list[tuple[str, str, int]] = []
    for state in states:
        files.append((state.name, state.signature, state.problem))
        for position, wording in enumerate(state.wordings):
            row = [getattr(wording, column) for column in _COLUMNS]
            row[_COLUMNS.index("placeholders")] = json.dumps(list(wording.placeholders))
            entries.append((state.name, position, *row, wording.exception_name, wording.required))
            words.extend((word, state.name, position) for word in shared_words(wording.literal_text))
    connection.executemany("INSERT INTO files VALUES (?, ?, ?)", files)
    marks = ",".join("?" * (len(_COLUMNS) + 4))
    connection.executemany(f"INSERT INTO entries VALUES ({marks})", entries)
    connection.executemany("INSERT INTO words VALUES (?, ?, ?)", words)
