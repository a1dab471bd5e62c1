"""The lookup index kept beside a repository's records: `<repository folder>/lookup.sqlite`.

Reading jax's 5,447 YAML records costs 10 s of CPU; a lookup needs, per record, a dozen short fields and
its regex's longest literal run. The index holds those rows (`entries`), the words of each
template (`words`, for the closest templates) and, for every file of errors/, the signature it
had when it was read (`files`: inode, size, mtime and ctime) with the problem it had, if it was
no record.

SQLite rather than a JSON file: a query reads only the rows whose anchor (a whole word of the
literal run) is a word of the message, through the `anchor` index and a temporary table of the
message's words (any number of them), and the word rows it shares, so a cold lookup does not
parse the whole index;
one record changed is one row rewritten in a transaction, not a whole file; and the standard
library reads it. It is a cache: never the truth, rebuilt when missing, empty, of another
version or damaged, and brought up to date before every use (`refresh`): every file of errors/
is looked at (an edit in place, as nano or VS Code save, changes no listing of the folder), the
files whose signature changed are read again (or taken from the records a run has in memory),
the rows of files gone are dropped. A file changed just before its reading (RACY_NS) could
change again within the same clock tick and keep its signature (git's "racy" files): its
digest is kept too, and compared at every use until it is old enough to trust its signature.

The crawler replaces only an index it wrote: a plain file carrying `APPLICATION_ID` (or, written
before it had one, the index's own tables). A link, a pipe, a device, a folder or anyone else's
file named lookup.sqlite is left as it is and named in one line; the lookup is then answered
from an index built in memory, as it is in a folder that cannot be written.

Extract, update and history make it or bring it up to date (`refresh` with the records they
hold), and a lookup in a folder without one builds it. Its bytes depend on the machine (the
files' signatures), so it is left out of git and of folder comparisons: the records and the
manifest alone are the folder's content, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
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
from crawler.serve import sqlite_guard
from crawler.serve.lookup.places import file_name
from crawler.serve.lookup.ranking import Wording, shared_words, wordings

if TYPE_CHECKING:
    from crawler.records import ErrorRecord

INDEX_FILE = "lookup.sqlite"
# The store's names (`record_files.ERRORS_DIR`, `manifest_file.MANIFEST`), not imported: the
# store loads the parser, a second of imports a lookup that reads no record does without.
ERRORS_DIR = "errors"
MANIFEST = "manifest.yaml"
# 2: past wordings; 3: racy files' digests; 4: plain typography; 5: anchors;
# 6: today's wording's first release; 7: file names, for a traceback's frames; 8: a removed
# record's last release (gone_after)
INDEX_VERSION = "8"
APPLICATION_ID = int.from_bytes(b"RSCi", "big")  # PRAGMA application_id: the crawler wrote it
# A file changed this recently when read keeps its digest too: 2 s where timestamps are whole
# seconds (FAT, some network file systems), 50 ms where they have nanoseconds (the kernel's
# clock for them moves at every tick, 10 ms at most)
RACY_NS = 2_000_000_000
FINE_RACY_NS = 50_000_000
_MOVE_IT = "move it away, and the next lookup builds its index there"
_COLUMNS = ("record_id", "repo", "status", "removed_in", "exception", "exception_qualname", "path",
            "line", "qualname", "kind", "template", "placeholders", "regex", "url", "past",
            "first_release", "last_release", "today", "gone_after")
_ROW = (*_COLUMNS, "required")  # what a lookup reads of an entry
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
  name TEXT PRIMARY KEY,
  ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
  digest TEXT,  -- of the bytes, for a file read within RACY_NS of its last change
  problem TEXT
);
CREATE TABLE entries (
  file TEXT NOT NULL REFERENCES files(name) ON DELETE CASCADE,
  position INTEGER NOT NULL,  -- 0: the current template; past wordings may follow
  {", ".join(_COLUMNS)},
  exception_name TEXT NOT NULL,
  required TEXT NOT NULL,
  anchor TEXT NOT NULL,  -- a whole word `required` holds ('' for none): in every text it is in
  file_name TEXT NOT NULL,  -- the last component of `path`, in lower case: as a frame names it
  PRIMARY KEY (file, position)
);
CREATE INDEX entries_exception ON entries(exception_name);
CREATE INDEX entries_file_name ON entries(file_name);
CREATE INDEX entries_anchor ON entries(anchor);
CREATE TABLE words (
  word TEXT NOT NULL,
  file TEXT NOT NULL REFERENCES files(name) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (word, file, position)
) WITHOUT ROWID;
CREATE INDEX words_file ON words(file);
"""
Signature = tuple[int, int, int, int]  # a file's inode, size, mtime and ctime (ns)
_SIGNATURE = ("ino", "size", "mtime_ns", "ctime_ns")
_UNKNOWN: tuple[None, None] = (None, None)
# what a lookup reads of the index: plain tables only, with these columns (`sqlite_guard`)
_TABLES = {"meta": ("key", "value"), "files": ("name", *_SIGNATURE, "digest", "problem"),
           "entries": ("file", "position", *_COLUMNS, "required", "anchor", "file_name"),
           "words": ("word", "file", "position")}


@dataclass(frozen=True)
class FileState:
    """One file of errors/ as it is now: its signature, its digest where the signature cannot
    be trusted yet (racy), and its record or what is wrong."""

    name: str
    signature: Signature
    wordings: tuple[Wording, ...] = ()
    problem: str | None = None
    digest: str | None = None


_TOKEN = re.compile(r"\w+")


def anchor_of(required: str) -> str:
    """The longest word of a literal run that is whole within it (a non-word character on both
    sides), so a whole word of every text that holds the run; '' when it has none."""
    whole = [found.group() for found in _TOKEN.finditer(required)
             if found.start() > 0 and found.end() < len(required)]
    return max(whole, key=len) if whole else ""


def errors_listing(folder: Path) -> dict[str, os.stat_result]:
    """Every file of `folder`/errors/ but temp files, with its own status now (never followed)."""
    errors = folder / ERRORS_DIR
    if not errors.is_dir() or errors.is_symlink():
        return {}
    return {entry.name: entry.stat(follow_symlinks=False)
            for entry in os.scandir(errors) if not entry.name.startswith(".")}


def signature_of(found: os.stat_result) -> Signature:
    """A file's signature as the index stores it: inode, size, mtime and ctime."""
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def is_racy(found: os.stat_result, now_ns: int) -> bool:
    """Whether a file changed so recently that a change within the same clock tick would leave
    its signature as it is (or its times are in the future): only its bytes can say."""
    whole = found.st_mtime_ns % 1_000_000_000 == 0 and found.st_ctime_ns % 1_000_000_000 == 0
    return now_ns - max(found.st_mtime_ns, found.st_ctime_ns) < (RACY_NS if whole else FINE_RACY_NS)


def file_digest(path: Path, found: os.stat_result) -> str | None:
    """The digest of a plain file's bytes; None for anything else, whose type is in its status."""
    import hashlib

    from crawler.store.plain_files import read_plain

    if not stat.S_ISREG(found.st_mode):
        return None
    try:
        return hashlib.blake2b(read_plain(path), digest_size=16).hexdigest()
    except RecordError:  # unreadable or too large: read_file_state names it
        return "unreadable"


def read_file_state(folder: Path, name: str, found: os.stat_result,
                    known: Mapping[str, ErrorRecord], now_ns: int) -> FileState:
    """A file of errors/ as lookup sees it: the record a run has in memory, or its file read;
    what is no record is named as every reader of the folder names it (`repo_output`). A racy
    file's digest is taken before it is read: a change after it is seen at the next use."""
    from crawler.store.plain_files import kind_of
    from crawler.store.record_files import broken_record, is_record_id, other_file, read_record

    where = folder / ERRORS_DIR / name
    sign = signature_of(found)
    digest = file_digest(where, found) if is_racy(found, now_ns) else None
    stem = name[:-len(".yaml")] if name.endswith(".yaml") else None
    claimed = stem if is_record_id(stem) else None
    if claimed is not None and claimed in known:
        return FileState(name, sign, tuple(wordings(known[claimed])), digest=digest)
    if not stat.S_ISREG(found.st_mode):
        return FileState(name, sign, problem=f"{where}: {kind_of(found.st_mode)}; records are "
                         "plain files, never followed or opened; it was left as it is")
    if claimed is None:  # a renamed record, a stray file
        return FileState(name, sign, problem=other_file(where).problem, digest=digest)
    try:
        return FileState(name, sign, tuple(wordings(read_record(where))), digest=digest)
    except (RecordError, OutputError) as error:
        return FileState(name, sign, problem=broken_record(str(where), claimed, error).problem,
                         digest=digest)


class StoredIndex:
    """The index of one repository folder, open: a lookup `Source` (see `ranking`)."""

    def __init__(self, connection: sqlite3.Connection, note: str | None = None) -> None:
        self.connection = connection
        self.note = note  # why the index at its place was not used (built in memory instead)

    def close(self) -> None:
        self.connection.close()

    def exception_names(self) -> frozenset[str]:
        rows = self.connection.execute("SELECT DISTINCT exception_name FROM entries")
        return frozenset(row[0] for row in rows)

    def containing(self, texts: Sequence[str]) -> Iterator[Wording]:
        # only the rows whose anchor is a word of a text (or that have none) are looked at,
        # however many words the texts have; their runs are looked for here (`in` searches
        # a long text many times faster than SQLite's `instr`)
        tokens = {token for text in texts for token in _TOKEN.findall(text)}
        self._asked(tokens | {""})
        for wording in self._wordings("WHERE anchor IN (SELECT word FROM temp.asked)", ()):
            if any(wording.required in text for text in texts):
                yield wording

    def _asked(self, words: Iterable[str]) -> None:
        """`words` in the connection's own temporary table `asked`, for a query to join."""
        self.connection.execute("CREATE TEMP TABLE IF NOT EXISTS asked (word TEXT PRIMARY KEY)"
                                " WITHOUT ROWID")
        self.connection.execute("DELETE FROM temp.asked")
        self.connection.executemany("INSERT INTO temp.asked VALUES (?)", ((w,) for w in words))
        self.connection.commit()  # the implicit transaction ends: no lock held on the index

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        if not words:
            return []
        self._asked(words)
        best = ("SELECT file, position, count(*) AS shared FROM words WHERE word IN "
                "(SELECT word FROM temp.asked) "
                "GROUP BY file, position ORDER BY shared DESC, file, position LIMIT ?")
        return list(self._wordings(f"JOIN ({best}) AS best USING (file, position)", (limit,),
                                   order="best.shared DESC, file, position"))

    def in_files(self, names: frozenset[str]) -> Iterator[Wording]:
        self._asked(name.lower() for name in names)
        return self._wordings("WHERE position = 0 AND file_name IN (SELECT word FROM temp.asked)",
                              ())

    def raising(self, names: frozenset[str]) -> Iterator[Wording]:
        self._asked(names)
        return self._wordings("WHERE position = 0 AND exception_name IN "
                              "(SELECT word FROM temp.asked)", ())

    def holding(self, words: frozenset[str]) -> int:
        if not words:
            return 0
        marks = ",".join("?" * len(words))
        row = self.connection.execute(
            f"SELECT count(*) FROM (SELECT file FROM words WHERE word IN ({marks}) "
            "GROUP BY file HAVING count(DISTINCT word) = ?)", (*sorted(words), len(words))
        ).fetchone()
        return int(row[0])

    def count(self) -> int:
        """How many wordings the index holds."""
        return int(self.connection.execute("SELECT count(*) FROM entries").fetchone()[0])

    def problems(self) -> list[str]:
        """One line for an index file the crawler did not write, then one for each file of
        errors/ that is no record, in name order."""
        rows = self.connection.execute(
            "SELECT problem FROM files WHERE problem IS NOT NULL ORDER BY name")
        return [*([self.note] if self.note else []), *(row[0] for row in rows)]

    def _wordings(self, where: str, args: tuple[object, ...],
                  order: str = "file, position") -> Iterator[Wording]:
        rows = self.connection.execute(f"SELECT {', '.join(_COLUMNS)}, required FROM entries "
                                       f"{where} ORDER BY {order}", args)
        for row in rows:
            values = dict(zip(_ROW, row, strict=True))
            held = str(values["placeholders"])
            values["placeholders"] = tuple(json.loads(held)) if held != "[]" else ()
            # the row holds every field, as written from a Wording (and `required`, stored: not
            # worked out again): set whole, without the frozen class's checks field by field
            wording = object.__new__(Wording)
            wording.__dict__.update(values)
            yield wording


def refresh(folder: Path, known: Mapping[str, ErrorRecord] | None = None) -> int:
    """Bring `folder`'s stored index up to date with its errors/ files, building it if it is
    missing or damaged; `known`: records a run holds in memory, as their files now are.
    Returns how many files were read again (or taken from `known`). An index file the crawler
    did not write is an `OutputError`, and left as it is."""
    path = folder / INDEX_FILE
    with closing(_connect_or_build(path)) as connection:
        return _bring_up_to_date(connection, folder, known or {})


def open_index(folder: Path) -> StoredIndex:
    """`folder`'s index, up to date: the stored one (refreshed in place), or one built in memory
    from the files where it cannot be written or is not the crawler's (then named in `note`)."""
    connection = None
    note = None
    try:
        connection = _connect_or_build(folder / INDEX_FILE)
        _bring_up_to_date(connection, folder, {})
        return StoredIndex(connection)
    except OutputError as error:  # not the crawler's file: left as it is, and said
        note = str(error)
    except (sqlite3.Error, OSError):
        pass
    if connection is not None:
        connection.close()
    connection = sqlite3.connect(":memory:")
    connection.executescript(_SCHEMA)
    _bring_up_to_date(connection, folder, {})
    return StoredIndex(connection, note)


def _connect_or_build(path: Path) -> sqlite3.Connection:
    """The index at `path` if it is one of this version; else, where the crawler wrote what is
    there (or nothing is), a new empty one put in its place, looked at again before use."""
    from crawler.store.plain_files import lstat_or_none

    for _ in range(3):
        found = lstat_or_none(path)
        if found is not None:
            connection = _open_own(path, found)
            if connection is not None:
                return connection
        _put_empty(path, found)
    raise OutputError(f"{path}: replaced again and again while the lookup index was built there; "
                      "it was left as it is; run again")


def _open_own(path: Path, found: os.stat_result) -> sqlite3.Connection | None:
    """The index at `path`, open, if it is of this version; None where it is the crawler's but
    empty, damaged or of another version (to be built again); an `OutputError` for anything
    the crawler did not write."""
    from crawler.store.plain_files import kind_of, read_head

    if not stat.S_ISREG(found.st_mode):
        raise OutputError(f"{path}: {kind_of(found.st_mode)}, not the lookup index the crawler "
                          f"writes; it was left as it is; {_MOVE_IT}")
    if found.st_size == 0:
        return None  # an empty file holds nothing to lose
    head = read_head(path, 100) or b""
    if not head.startswith(sqlite_guard.SQLITE_MAGIC):
        raise OutputError(f"{path}: a plain file that is no SQLite database, not the lookup index "
                          f"the crawler writes; it was left as it is; {_MOVE_IT}")
    marked = head[68:72] == APPLICATION_ID.to_bytes(4, "big")
    connection = sqlite3.connect(path)
    try:
        version = _version(connection, path, marked)
    except BaseException:
        connection.close()
        raise
    if version == INDEX_VERSION:
        return connection
    connection.close()
    return None


def _version(connection: sqlite3.Connection, path: Path, marked: bool) -> str | None:
    """The index version of a database at the index's place, read within a bound in steps;
    None where it bears the crawler's mark but is damaged. One written before the mark is told
    by its own tables; any other database is an `OutputError`."""
    try:
        with sqlite_guard.bounded(connection, path, sqlite_guard.budget_for(path), _MOVE_IT):
            sqlite_guard.require_tables(connection, path, {"meta": ("key", "value"),
                                                           "files": (), "entries": ()}, _MOVE_IT)
            row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is not None and row[0] == INDEX_VERSION:
                sqlite_guard.require_tables(connection, path, _TABLES, _MOVE_IT)
    except sqlite3.DatabaseError:
        row = None
    if row is None and not marked:
        raise OutputError(f"{path}: an SQLite database the crawler did not write, not its lookup "
                          f"index; it was left as it is; {_MOVE_IT}")
    return None if row is None else str(row[0])


def _put_empty(path: Path, found: os.stat_result | None) -> None:
    """A new empty index put at `path` whole (written aside, then moved into place): where
    nothing was, never over what appeared since; where the crawler's was, only over that file."""
    from crawler.store.plain_files import lstat_or_none

    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        with closing(sqlite3.connect(temp)) as connection:
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.executescript(_SCHEMA)
            connection.execute("INSERT INTO meta VALUES ('version', ?)", (INDEX_VERSION,))
            connection.commit()
        os.chmod(temp, 0o666 & ~_umask())
        now = lstat_or_none(path)
        if found is None and now is None:
            with suppress(FileExistsError):
                os.link(temp, path)  # fails, replacing nothing, where a file appeared meanwhile
        elif found is not None and now is not None and _same_file(found, now):
            os.replace(temp, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


def _same_file(one: os.stat_result, other: os.stat_result) -> bool:
    return (one.st_dev, one.st_ino, one.st_mode) == (other.st_dev, other.st_ino, other.st_mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _bring_up_to_date(connection: sqlite3.Connection, folder: Path,
                      known: Mapping[str, ErrorRecord]) -> int:
    """Read again the files of errors/ whose signature changed, or whose bytes did where the
    signature could not be trusted yet; drop the rows of files gone. The listing (every file's
    name and signature, packed) is kept while no file is racy: the same listing, and the index
    is up to date without reading its rows. Nothing changed: no write (but the listing)."""
    now_ns = time.time_ns()
    listed = _packed_listing(folder)  # before the rows are read: never newer than they are
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (_LISTING_KEY,)).fetchone()
    if row is not None and row[0] == listed:
        return 0
    listing = errors_listing(folder)
    stored = {name: (sign, digest) for name, *sign, digest in connection.execute(
        f"SELECT name, {', '.join(_SIGNATURE)}, digest FROM files")}
    gone = [name for name in stored if name not in listing]
    changed: list[str] = []
    settled: list[tuple[str]] = []  # racy when read, unchanged since, old enough now
    for name, found in listing.items():
        sign, digest = stored.get(name, _UNKNOWN)
        if sign != [found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]:
            changed.append(name)
        elif digest is not None:
            if file_digest(folder / ERRORS_DIR / name, found) != digest:
                changed.append(name)
            elif not is_racy(found, now_ns):
                settled.append((name,))
    if not (gone or changed or settled):
        if not any(digest is not None for _, digest in stored.values()):
            with suppress(sqlite3.Error), connection:  # a folder that cannot be written: next time
                _keep_listing(connection, listed)
        return 0
    states = [read_file_state(folder, name, listing[name], known, now_ns) for name in sorted(changed)]
    with connection:  # one transaction: a reader sees the index before or after, never between
        connection.execute("PRAGMA foreign_keys = ON")
        connection.executemany("DELETE FROM files WHERE name = ?", [(n,) for n in gone + changed])
        _insert(connection, states)
        connection.executemany("UPDATE files SET digest = NULL WHERE name = ?", settled)
        racy = connection.execute("SELECT 1 FROM files WHERE digest IS NOT NULL LIMIT 1").fetchone()
        _keep_listing(connection, None if racy else listed)
    return len(changed)


_LISTING_KEY = "listing"


def _packed_listing(folder: Path) -> bytes:
    """errors/'s listing as `errors_listing` sees it, packed: every file's name and signature,
    in the folder's order (an unchanged folder lists in the same order; another order only
    costs a full check). Kept whole, not hashed: compared exactly, and no hash to load. One
    stat a file and nothing kept: a lookup's first step."""
    from array import array

    names: list[str] = []
    numbers: list[int] = []
    try:  # a folder, never a link to one: else no file (as `errors_listing`)
        where = os.open(folder / ERRORS_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        where = -1
    if where >= 0:
        try:
            for name in os.listdir(where):
                if name.startswith("."):
                    continue
                try:
                    found = os.stat(name, dir_fd=where, follow_symlinks=False)
                except FileNotFoundError:  # gone since it was listed
                    continue
                names.append(name)
                numbers += (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
        finally:
            os.close(where)
    try:
        packed = array("q", numbers).tobytes()
    except OverflowError:  # an inode number past 2**63
        packed = repr(numbers).encode()
    return "\0".join(names).encode("utf-8", "surrogateescape") + b"\0\0" + packed


def _keep_listing(connection: sqlite3.Connection, digest: bytes | None) -> None:
    """The listing the rows are up to date with; None: a file is racy, keep none."""
    if digest is None:
        connection.execute("DELETE FROM meta WHERE key = ?", (_LISTING_KEY,))
    else:
        connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_LISTING_KEY, digest))


def _insert(connection: sqlite3.Connection, states: Iterable[FileState]) -> None:
    files: list[tuple[object, ...]] = []
    entries: list[tuple[object, ...]] = []
    words: list[tuple[str, str, int]] = []
    for state in states:
        files.append((state.name, *state.signature, state.digest, state.problem))
        for position, wording in enumerate(state.wordings):
            row = [getattr(wording, column) for column in _COLUMNS]
            row[_COLUMNS.index("placeholders")] = json.dumps(list(wording.placeholders))
            entries.append((state.name, position, *row, wording.exception_name, wording.required,
                            anchor_of(wording.required), file_name(wording.path)))
            words.extend((word, state.name, position) for word in shared_words(wording.literal_text))
    connection.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)", files)
    marks = ",".join("?" * (len(_COLUMNS) + 6))
    connection.executemany(f"INSERT INTO entries VALUES ({marks})", entries)
    connection.executemany("INSERT INTO words VALUES (?, ?, ?)", words)
