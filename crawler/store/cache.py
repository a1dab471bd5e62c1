"""The content-addressed caches: per-file visit results, and checked loads of record files.

Both kinds live in one SQLite file, `root/cache.sqlite3`, as JSON rows (never pickle: a cache
folder must not be able to run code) keyed by `sha256(format, crawler version, kind, what the
entry depends on)`:

- `ResultCache`: a file's visit results depend only on its bytes, its path (records and module
  names carry it) and the crawler that read it: keyed by (path, blob sha) and a digest of the
  reading code's sources, so an edited parser never reuses what the old one read (or a crash it
  had), whatever the version number says. The same blob at the
  same path in a fork, a later commit or another clone is read once.
- `EvidenceCache`: a test file's assertions, by (path, blob sha) and a digest of the sources
  of the assertion reader (`crawler/parse/assertions.py` and what it imports from the
  crawler): a test file whose blob did not change is never parsed again, by `extract` or
  `update`, and an edit of the source visitor does not throw the tests' entries away.
- `LoadCache`: what the checks of a record or manifest file find depends only on its bytes, the
  crawler and the schema of its kind: keyed by (schema version, schema text, bytes). A file
  edited by hand has other bytes, so it is never a hit. The checks that depend on the file's
  name (its id) are not cached: they run on every load. Each file a run writes or checks is
  also noted by its name, in one entry per folder that maps each name to the key of the bytes
  the file had, so a file whose block alone a person edited has only that block loaded
  (`annotation_edits`).
- Entries of other kinds, by the key their owner names (`get_entry`, `put_entry`): the
  annotation rule's facts of each record of a folder (`crawler.serve.review.fact_cache`).

Entries wait in memory and are written by `flush` (and `put` when many wait), each batch in one
transaction: 0.18 ms a file, measured on jax's 5,400 records, against a file each. An entry that
cannot be read or does not hold what its key says is ignored, counted and written again; a
database that cannot be opened or read is moved aside and started again; a cache that cannot be
written never fails the run. A cache of an older format (other keys, or the `results/` folder
and `loads.sqlite3` of format 5 and 2) is never read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Protocol, TypeVar

from crawler import __version__
from crawler.records import SCHEMA_VERSION
from crawler.store import schemas

_FIELDS_OF: dict[type, tuple[tuple[str, ...], Callable[[Any], Any] | None]] = {}


def record_fields(value: Any) -> dict[str, Any]:
    """JSON's `default`: a record as the dict of its fields, which `asdict` makes of it. The
    encoder writes the tuples, lists and leaves they hold itself, and calls this again for a
    record inside: a walk of every value in Python was most of the cost of storing an outcome."""
    kind = type(value)
    fields_of = _FIELDS_OF.get(kind)
    if fields_of is None:
        if not is_dataclass(kind):
            raise TypeError(f"{kind.__name__} is not a record JSON can write")
        names = tuple(f.name for f in fields(kind))
        fields_of = _FIELDS_OF[kind] = (names, attrgetter(*names) if len(names) > 1 else None)
    names, values = fields_of
    if values is not None:
        return dict(zip(names, values(value)))
    return {name: getattr(value, name) for name in names}  # attrgetter of one name is no tuple


# What the caches write: records as their fields, text as it is (not \u escapes), no spaces.
ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":"),
                           default=record_fields)


FORMAT = 19  # bump when the layout of an entry, or what a checked load keeps, changes
DATABASE = "cache.sqlite3"
FLUSH_EVERY = 2000  # entries waiting before `put` writes them
RESULTS, RECORD, MANIFEST = "results", "record", "manifest"  # the kinds of entry
EVIDENCE = "evidence"  # a test file's assertions
GOOD_FILES = "good_files"  # a folder's record files that passed their checks, by stat
STAMPS = "stamps"  # a folder's record files that loaded: each one's stat and the key of its bytes
WRITTEN = "written"  # a folder's record files by name: the key of the bytes each last had
_SURROGATE = re.compile("[\ud800-\udfff]")
_T = TypeVar("_T")
_Found = TypeVar("_Found", covariant=True)

# A record file's loaded data and the annotation block kept from its text (None: not kept).
Checked = tuple[dict[str, Any], str | None]


class _ByBlob(Protocol[_Found]):
    def get(self, path: str, blob: str) -> _Found | None: ...


class _File(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def blob(self) -> str: ...


def split_cached(cache: _ByBlob[_Found] | None, files: Sequence[_File]
                 ) -> tuple[list[_Found | None], list[int]]:
    """What the cache holds for each file by (path, blob), in file order (None where nothing),
    and the positions of the files it does not hold: those a run must read."""
    found: list[_Found | None] = [None] * len(files)
    misses: list[int] = []
    for index, entry in enumerate(files):
        cached = cache.get(entry.path, entry.blob) if cache is not None else None
        if cached is None:
            misses.append(index)
        else:
            found[index] = cached
    return found, misses


class CacheTable:
    """JSON entries by key, one kind of them, in `root/cache.sqlite3`; `None` as root: none.

    Entries are written by `flush` (and `put` when many wait). One instance may be shared by
    threads; several processes may share the file (WAL: readers never wait for a writer).
    """

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        self.database = root / DATABASE if root is not None else None
        self.version = version
        self.hits = 0
        self.misses = 0
        self.corrupt = 0  # entries ignored: unreadable, or not what their key says
        self.stored = 0
        self._waiting: dict[str, str] = {}  # key: entry, until `flush` writes them
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _key(self, kind: str, *parts: str, data: bytes = b"") -> str:
        head = "\0".join((str(FORMAT), self.version, kind, *parts, ""))
        return hashlib.sha256(head.encode("utf-8") + data).hexdigest()

    def _get(self, key: str, counted: bool = True) -> Any:
        """The entry stored under `key`, checked to carry it, or None (counted as a miss)."""
        if self.database is None:
            return None
        with self._lock:
            row = self._waiting.get(key) or self._query(key)
        return self._entry(key, row, counted)

    def _entry(self, key: str, row: str | None, counted: bool) -> Any:
        """`_get`'s entry of a row read under `key`."""
        if row is None:
            self.misses += counted
            return None
        try:
            entry = json.loads(row)
            if entry["key"] != key:
                raise ValueError("entry does not match its name")
        except (ValueError, KeyError, TypeError, RecursionError):
            if counted:
                self._broken_entry()
            return None
        return entry

    def _file_entry(self, key: str, path: str, blob: str, decode: Callable[[dict[str, Any]], _T]
                    ) -> _T | None:
        """The entry of a file at a blob, decoded; None when there is none or it is broken (an
        entry that names another file, or that `decode` refuses, is counted and rebuilt)."""
        entry = self._get(key)
        if entry is None:
            return None
        try:
            if entry["path"] != path or entry["blob"] != blob:
                raise ValueError("entry does not match its name")
            value = decode(entry)
        except (ValueError, KeyError, TypeError, AttributeError):
            self._broken_entry()
            return None
        self.hits += 1
        return value

    def get_entry(self, kind: str, *parts: str) -> dict[str, Any] | None:
        """The entry `put_entry` stored under (kind, parts), or None; counted in no figure."""
        entry = self._get(self._key(kind, *parts), counted=False)
        return entry if isinstance(entry, dict) else None

    def put_entry(self, kind: str, *parts: str, entry: dict[str, Any]) -> None:
        """Store `entry` (JSON's own types) under (kind, parts), written by the next `flush`."""
        if self.database is not None:
            self._put(self._key(kind, *parts), entry, counted=False)

    def _broken_entry(self) -> None:
        self.corrupt += 1  # a broken entry is rebuilt, never trusted
        self.misses += 1

    def _put(self, key: str, entry: dict[str, Any], counted: bool = True) -> None:
        text = ENCODER.encode({"key": key, "version": self.version, **entry})
        with self._lock:
            self._waiting[key] = text
            self.stored += counted
            many = len(self._waiting) >= FLUSH_EVERY
        if many:
            self.flush()

    def flush(self) -> None:
        """Write the entries `put` since the last flush, in one transaction."""
        with self._lock:
            waiting, self._waiting = self._waiting, {}
            if not waiting or self.database is None:
                return
            try:
                connection = self._connect()
                with connection:
                    connection.executemany(
                        "INSERT OR REPLACE INTO entries (key, entry) VALUES (?, ?)",
                        waiting.items())
            except (sqlite3.Error, OSError) as error:
                self._failed(error)

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _query(self, key: str) -> str | None:
        try:
            row = self._connect().execute("SELECT entry FROM entries WHERE key = ?",
                                          (key,)).fetchone()
        except (sqlite3.Error, OSError) as error:
            self._failed(error)
            return None
        return row[0] if row is not None and isinstance(row[0], str) else None

    def _rows(self, keys: Sequence[str]) -> dict[str, str]:
        """`_query` of many keys, a few hundred a query: the rows found, by key."""
        with self._lock:
            rows = {key: self._waiting[key] for key in keys if key in self._waiting}
            asked = [key for key in keys if key not in rows]
            try:
                for start in range(0, len(asked), 500):
                    part = asked[start:start + 500]
                    rows.update(self._connect().execute(
                        f"SELECT key, entry FROM entries WHERE key IN ({','.join('?' * len(part))})",
                        part).fetchall())
            except (sqlite3.Error, OSError) as error:
                self._failed(error)
                return {}
        return {key: row for key, row in rows.items() if isinstance(row, str)}

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            assert self.database is not None
            self.database.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.database, timeout=60, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
            connection.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost entry is rebuilt
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, entry TEXT NOT NULL)")
            self._connection = connection
        return self._connection

    def _failed(self, error: Exception) -> None:
        """A database another process keeps busy costs this batch; any other failure, the file."""
        if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
            self.corrupt += 1  # not moved aside: the other process's entries are good
            self._waiting = {}
            return
        self._broken()

    def _broken(self) -> None:
        """A database that cannot be used: moved aside for the next run, none for this one."""
        self.corrupt += 1
        self._waiting = {}
        if self._connection is not None:
            try:
                self._connection.close()
            except sqlite3.Error:
                pass
            self._connection = None
        if self.database is not None:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.replace(f"{self.database}{suffix}", f"{self.database}{suffix}.broken")
                except OSError:
                    pass
        self.database = None


# The checks a load runs beyond the schema; changed with them, so bytes that passed older checks
# are checked again (2: a key written twice, and an annotation block that cannot be kept, refused).
_LOAD_CHECKS = "2"


class LoadCache(CacheTable):
    """Checked loads of record and manifest files by their bytes."""

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        super().__init__(root, version)
        self.unstorable = 0  # loads whose data JSON cannot hold exactly (a date, a NaN)
        self._names: dict[str, dict[str, str]] = {}  # folder: record file name: key (`note_file`)
        self._names_changed: set[str] = set()
        self._names_lock = threading.Lock()

    def key(self, raw: bytes, kind: str = RECORD) -> str:
        return self._key(kind, str(SCHEMA_VERSION), schemas.digest(kind), _LOAD_CHECKS, data=raw)

    def get(self, raw: bytes, kind: str = RECORD) -> Checked | None:
        """What a checked load of these bytes, as a file of this kind, found before, or None."""
        return self._checked(self.key(raw, kind))

    def get_by_key(self, key: str, counted: bool = False) -> Checked | None:
        """`get` of the bytes stored under `key` (`put`'s answer), counted in none of the figures
        unless `counted` (else a lookup on another file's behalf)."""
        return self._checked(key, counted)

    def get_many(self, keys: Sequence[str]) -> dict[str, Checked]:
        """`get_by_key` of each key, read in a few queries; a key whose entry is missing or is
        no checked load is left out, uncounted (the file's own load counts it)."""
        found = {}
        for key, row in (self._rows(keys) if self.database is not None else {}).items():
            checked = self._as_checked(self._entry(key, row, False), False)
            if checked is not None:
                found[key] = checked
        self.hits += len(found)
        return found

    def stamps(self, folder: str) -> dict[str, Any]:
        """What `put_stamps` last stored of the record files of `folder` (an absolute path)."""
        entry = self._get(self._stamps_key(folder), counted=False)
        files = entry.get("files") if entry is not None else None
        return files if isinstance(files, dict) else {}

    def put_stamps(self, folder: str, files: dict[str, list[Any]]) -> None:
        """Store, for each record file of `folder` that loaded, its stat signature and the key
        of the bytes it held: `[ino, size, mtime_ns, ctime_ns, key]` (`repo_output`)."""
        if self.database is not None:
            self._put(self._stamps_key(folder), {"files": files}, counted=False)

    def _stamps_key(self, folder: str) -> str:
        # the keys it holds are those of this schema and these checks: another's are not read
        return self._key(STAMPS, folder, str(SCHEMA_VERSION), schemas.digest(RECORD), _LOAD_CHECKS)

    def note_file(self, path: Path, key: str) -> None:
        """Note that the record file at `path` holds the bytes stored under `key` (`put`'s
        answer), as written or checked: an edit of its annotation block alone is then loaded by
        that block alone (`annotation_edits`). One entry per folder holds every name's key, so a
        run that writes thousands of records stores one entry, not one each."""
        if self.database is None:
            return
        folder, name = os.path.abspath(path.parent), path.name
        with self._names_lock:
            names = self._names_of(folder)
            if names.get(name) != key:
                names[name] = key
                self._names_changed.add(folder)

    def noted_key(self, path: Path) -> str | None:
        """The key `note_file` last noted for the record file at `path`, or None."""
        if self.database is None:
            return None
        with self._names_lock:
            return self._names_of(os.path.abspath(path.parent)).get(path.name)

    def _names_of(self, folder: str) -> dict[str, str]:
        names = self._names.get(folder)
        if names is None:
            entry = self._get(self._key(WRITTEN, folder), counted=False)
            files = entry.get("files") if entry is not None else None
            names = {name: key for name, key in files.items() if isinstance(key, str)} \
                if isinstance(files, dict) else {}
            self._names[folder] = names
        return names

    def flush(self) -> None:
        """Store the folders' names noted since the last flush, then write every entry."""
        with self._names_lock:
            changed, self._names_changed = self._names_changed, set()
            entries = [(folder, dict(self._names[folder])) for folder in sorted(changed)]
        for folder, names in entries:
            self._put(self._key(WRITTEN, folder), {"files": names}, counted=False)
        super().flush()

    def _checked(self, key: str, counted: bool = True) -> Checked | None:
        return self._as_checked(self._get(key, counted), counted)

    def _as_checked(self, entry: Any, counted: bool) -> Checked | None:
        if entry is None:
            return None
        data, block = entry.get("data"), entry.get("block")
        if not isinstance(data, dict) or not (block is None or isinstance(block, str)):
            if counted:  # else the file's own lookup counts it
                self._broken_entry()  # not a checked load
            return None
        self.hits += counted
        return data, block

    def spoiled(self) -> None:
        """A hit whose data did not make a record after all: counted, and loaded again in full."""
        self.hits -= 1
        self._broken_entry()

    def put(self, raw: bytes, checked: Checked, *, plain: bool = False, kind: str = RECORD
            ) -> str:
        """Store what a checked load of `raw` found; what JSON cannot hold exactly is left out.
        The key of `raw` (`note_file` takes it, so the bytes are hashed once).

        `plain`: the caller made the data of JSON's own types, so it is not walked again.
        """
        if self.database is None:
            return ""  # no database: nothing stored, nothing to note
        key = self.key(raw, kind)
        data, block = checked
        if not ((plain or is_plain(data)) and (block is None or is_plain(block))):
            self.unstorable += 1
            return key
        self._put(key, {"data": data, "block": block})
        return key


    def good_files(self, folder: Path) -> dict[str, list[int]]:
        """The record files of `folder` a run found good, by name: their stat signatures
        (`repo_output.signature`) when it did. A file with the same signature since is unchanged."""
        entry = self._get(self._key(GOOD_FILES, str(folder)))
        files = entry.get("files") if entry is not None else None
        return files if isinstance(files, dict) else {}

    def put_good_files(self, folder: Path, files: dict[str, list[int]]) -> None:
        if self.database is not None:
            self._put(self._key(GOOD_FILES, str(folder)), {"files": files})
            self.flush()


def is_plain(value: Any) -> bool:
    """True when JSON gives `value` back exactly: same types, same order, same characters.

    Loaded YAML may hold what JSON cannot: a date, an infinite float, a key that is no string.
    A surrogate is refused too: JSON would join a high and a low one into one character.
    """
    kind = type(value)
    if kind is str:
        return value.isascii() or _SURROGATE.search(value) is None
    if kind in (bool, int, type(None)):
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(is_plain(item) for item in value)
    if kind is dict:
        return all(type(k) is str and is_plain(k) and is_plain(v) for k, v in value.items())
    return False
