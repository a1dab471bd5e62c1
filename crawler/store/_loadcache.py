"""A content-addressed cache of checked loads of record files, beside the per-file result cache.

Loading a record file safely costs a scan of its YAML events, a load, a schema check and a
re-parse of its annotation block: about a millisecond, for every record an update reads. What
those checks find depends only on the file's bytes, the crawler and the schema of its kind, so
an entry is keyed by `sha256(format, crawler version, schema version, kind, schema text, bytes)`
and holds what the checked load computed: the data and the annotation block kept (or null). A
file edited by hand has other bytes, so it is never a hit: it goes through every check again.
Manifests are kept the same way (kind `manifest`, no block): an update reads one first of all.

Entries are JSON (never pickle: a cache folder must not be able to run code), rows of one
SQLite file, `root/loads.sqlite3`: a run writes thousands at once, and one transaction costs a
fraction of a file each (0.18 ms a file, measured on jax's 5,400 records). An entry that cannot
be read or does not hold what its key says is ignored, counted and written again; a database
that cannot be opened or read is moved aside and started again; a cache that cannot be written
never fails the run. The checks that depend on the file's name (its id) are not cached: they
run on every load.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import threading
from functools import cache
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.records import SCHEMA_VERSION

FORMAT = 2  # bump when the layout of an entry or what a checked load keeps changes
DATABASE = "loads.sqlite3"
FLUSH_EVERY = 2000  # entries waiting before `put` writes them
_SURROGATE = re.compile("[\ud800-\udfff]")
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
RECORD, MANIFEST = "record", "manifest"  # the kinds of file, each checked by its own schema

# A record file's loaded data and the annotation block kept from its text (None: not kept).
Checked = tuple[dict[str, Any], str | None]


class LoadCache:
    """Checked loads of record files by their bytes, in `root/loads.sqlite3`; `None` disables it.

    Entries are written by `flush` (and `put` when many wait), each batch in one transaction.
    One instance may be shared by threads.
    """

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        self.database = root / DATABASE if root is not None else None
        self.version = version
        self.hits = 0
        self.misses = 0
        self.corrupt = 0  # entries ignored: unreadable, or not what their key says
        self.stored = 0
        self.unstorable = 0  # loads whose data JSON cannot hold exactly (a date, a NaN)
        self._waiting: dict[str, str] = {}  # key: entry, until `flush` writes them
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def key(self, raw: bytes, kind: str = RECORD) -> str:
        head = f"{FORMAT}\0{self.version}\0{SCHEMA_VERSION}\0{kind}\0{_schema_digest(kind)}\0"
        return hashlib.sha256(head.encode("utf-8") + raw).hexdigest()

    def get(self, raw: bytes, kind: str = RECORD) -> Checked | None:
        """What a checked load of these bytes, as a file of this kind, found before, or None."""
        if self.database is None:
            return None
        key = self.key(raw, kind)
        with self._lock:
            row = self._waiting.get(key) or self._query(key)
        if row is None:
            self.misses += 1
            return None
        try:
            checked = _checked_from_entry(json.loads(row), key)
        except (ValueError, KeyError, TypeError, RecursionError):
            self.corrupt += 1  # a broken entry is rebuilt, never trusted
            self.misses += 1
            return None
        self.hits += 1
        return checked

    def spoiled(self) -> None:
        """A hit whose data did not make a record after all: counted, and loaded again in full."""
        self.hits -= 1
        self.corrupt += 1
        self.misses += 1

    def put(self, raw: bytes, checked: Checked, *, plain: bool = False, kind: str = RECORD
            ) -> None:
        """Store what a checked load of `raw` found; what JSON cannot hold exactly is left out.

        `plain`: the caller made the data of JSON's own types, so it is not walked again.
        """
        if self.database is None:
            return
        data, block = checked
        if not ((plain or is_plain(data)) and (block is None or is_plain(block))):
            self.unstorable += 1
            return
        key = self.key(raw, kind)
        entry = {"key": key, "version": self.version, "data": data, "block": block}
        with self._lock:
            self._waiting[key] = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
            self.stored += 1
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
                        "INSERT OR REPLACE INTO checked (key, entry) VALUES (?, ?)",
                        waiting.items())
            except (sqlite3.Error, OSError):
                self._broken()

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _query(self, key: str) -> str | None:
        try:
            row = self._connect().execute("SELECT entry FROM checked WHERE key = ?",
                                          (key,)).fetchone()
        except (sqlite3.Error, OSError):
            self._broken()
            return None
        return row[0] if row is not None and isinstance(row[0], str) else None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            assert self.database is not None
            self.database.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.database, timeout=60, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
            connection.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost entry is rebuilt
            connection.execute(
                "CREATE TABLE IF NOT EXISTS checked (key TEXT PRIMARY KEY, entry TEXT NOT NULL)")
            self._connection = connection
        return self._connection

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


@cache
def _schema_digest(kind: str) -> str:
    """The schema's own bytes: an edited schema must not reuse what the old one passed."""
    return hashlib.sha256((SCHEMA_DIR / f"{kind}.schema.json").read_bytes()).hexdigest()


def _checked_from_entry(entry: Any, key: str) -> Checked:
    if entry["key"] != key:
        raise ValueError("entry does not match its name")
    data, block = entry["data"], entry["block"]
    if not isinstance(data, dict) or not (block is None or isinstance(block, str)):
        raise TypeError("entry does not hold a checked load")
    return data, block


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
