"""A content-addressed cache of checked loads of record files, beside the per-file result cache.

Loading a record file safely costs a scan of its YAML events, a load, a schema check and a
re-parse of its annotation block: about a millisecond, for every record an update reads. What
those checks find depends only on the file's bytes, the crawler and the record schema, so an
entry is keyed by `sha256(format, crawler version, schema version, schema text, bytes)` and
holds what the checked load computed: the data and the annotation block kept (or null). A file
edited by hand has other bytes, so it is never a hit: it goes through every check again.

The same conventions as `crawler.cache`: entries are JSON (never pickle: a cache folder must
not be able to run code), written atomically; an entry that cannot be read or does not hold
what its name says is ignored, counted and written again; a cache that cannot be written never
fails the run. The checks that depend on the file's name (its id) are not cached: they run on
every load.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from functools import cache
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.records import SCHEMA_VERSION

FORMAT = 1  # bump when the layout of an entry or what a checked load keeps changes
_SURROGATE = re.compile("[\ud800-\udfff]")
SCHEMA_FILE = Path(__file__).resolve().parent / "schemas" / "record.schema.json"

# A record file's loaded data and the annotation block kept from its text (None: not kept).
Checked = tuple[dict[str, Any], str | None]


class LoadCache:
    """Checked loads of record files by their bytes, under `root/loads/`; `None` as root disables it."""

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        self.folder = root / "loads" if root is not None else None
        self.version = version
        self.hits = 0
        self.misses = 0
        self.corrupt = 0  # entries ignored: unreadable, or not what their name says
        self.stored = 0
        self.unstorable = 0  # loads whose data JSON cannot hold exactly (a date, a NaN)

    def key(self, raw: bytes) -> str:
        head = f"{FORMAT}\0{self.version}\0{SCHEMA_VERSION}\0{_schema_digest()}\0"
        return hashlib.sha256(head.encode("utf-8") + raw).hexdigest()

    def get(self, raw: bytes) -> Checked | None:
        """What a checked load of these bytes found before, or None."""
        if self.folder is None:
            return None
        key = self.key(raw)
        try:
            entry = json.loads((self.folder / key[:2] / f"{key}.json").read_bytes())
            checked = _checked_from_entry(entry, key)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
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

    def put(self, raw: bytes, checked: Checked) -> None:
        """Store what a checked load of `raw` found; what JSON cannot hold exactly is left out."""
        if self.folder is None:
            return
        data, block = checked
        if not (is_plain(data) and (block is None or is_plain(block))):
            self.unstorable += 1
            return
        key = self.key(raw)
        entry = {"key": key, "version": self.version, "data": data, "block": block}
        text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        self.stored += _write_entry(self.folder / key[:2] / f"{key}.json", text)


@cache
def _schema_digest() -> str:
    """The record schema's own bytes: an edited schema must not reuse what the old one passed."""
    return hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest()


def _checked_from_entry(entry: Any, key: str) -> Checked:
    if entry["key"] != key:
        raise ValueError("entry does not match its name")
    data, block = entry["data"], entry["block"]
    if not isinstance(data, dict) or not (block is None or isinstance(block, str)):
        raise TypeError("entry does not hold a checked load")
    return data, block


def _write_entry(file: Path, text: str) -> bool:
    # A temp name per process and thread: the batch driver's writer threads may store the same
    # entry at once.
    tmp = file.with_name(f".{file.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, file)  # atomic: a reader sees the old entry, the new one, or none
        return True
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False


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
