"""The facts the annotation rule reads of each record, kept between runs.

Building the rule's index reads every record's facts (`annotation_fit.record_facts`: the names
of its snippet, message, condition, where it is, its exception and entry points; `own_words`):
on jax's 5,482 records 0.75 s of CPU, every `crawler check`, for facts that change only when a
record does. They are kept in the cache database (`crawler.store.cache`), one entry per
repository folder, each record's facts under the digest of what they are read from: the
record's whole site and entry points, or, where the folder's load gave it, the key of its
file's bytes with the code that reads a record from them (`files`); and its exception class's
bases. An edited record has another digest and is read again, and so has one whose annotation
alone was edited while its file's key stands for it (one record's facts, 0.14 ms). The entry's
key holds the digest of the rule's code (`RULE_SOURCES`: an edit of it reads every record
again) and the folder's path, so a folder's entry is replaced, never piled up; the entry names
the digest of the folder's module names the facts were read with (what makes `pkg.filters` the
module `m:filters` in every record's facts): with others, every record is read again. What each
annotation mentions (`annotation_names.code_mentions`: its code parsed, its prose's words; 0.38
s on jax's 5,482) is kept in the same entry under the digest of its judged text: an edited
annotation is read again. What each record's own annotation names (`annotation_fit.Index.
named`: its mentions as the folder's module names make them) is kept under the key of its
file's bytes, where the load gave it, with the entry's module names and the digest of the code
that reads a record of the bytes: a run whose record files are as they were gathers, hashes and
reads no annotation's text (judging jax's 5,482, 0.45 -> 0.28 s of CPU). An entry that is not
what it should be is ignored and written again; a run whose digests are all there writes
nothing. The facts kept are those of the last run's
records and annotations alone.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from crawler.records import ErrorRecord
from crawler.serve.review.annotation_names import Mentions, code_mentions
from crawler.store import documents
from crawler.store.cache import ENCODER, CacheTable, is_plain

FACTS = "annotation_facts"  # the kind of the cache's entry

# The modules whose code reads a record's facts: an edit of either reads every record again.
RULE_SOURCES = ("annotation_fit.py", "annotation_names.py")

# A record's facts: each name and word with how many kinds of facts hold it, and its own words.
Facts = tuple[dict[str, int], frozenset[str]]


def rule_digest(folder: Path = Path(__file__).parent) -> str:
    """sha256 of the rule's sources (`RULE_SOURCES` in `folder`), names and bytes."""
    digest = hashlib.sha256()
    for name in RULE_SOURCES:
        digest.update(f"{name}\0".encode())
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


@cache
def _running_rule() -> str:
    """The digest of the rule's code this process runs, read once."""
    return rule_digest()


@cache
def _reader() -> str:
    """The digest of the code that makes a record of a file's loaded data: with other code, a
    file's bytes may make another site."""
    return hashlib.sha256(Path(documents.__file__).read_bytes()).hexdigest()


class FactCache:
    """One repository folder's records' facts, by the digest of what each is read from."""

    def __init__(self, table: CacheTable | None, folder: Path, rule: str | None = None,
                 files: Mapping[str, str] | None = None) -> None:
        self.table = table if table is not None and table.database is not None else None
        self.files = files or {}  # record id: the key of its file's bytes (`Loaded.keys`)
        self.folder = os.path.abspath(folder)
        self.rule = _running_rule() if rule is None else rule
        self.computed = 0  # records whose facts were read this run, not found kept
        self.read_texts = 0  # annotation texts read this run (`mentions`), not found kept
        self._classes: Mapping[Any, Mapping[str, Any]] = {}
        self._kept: dict[str, Any] = {}
        self._used: dict[str, list[Any]] = {}
        self._kept_mentions: dict[str, Any] = {}
        self._used_mentions: dict[str, list[list[str]]] = {}
        self._kept_named: dict[str, Any] = {}
        self._used_named: dict[str, list[str] | None] = {}
        self.named_read = 0  # records whose annotation's terms were read this run (`named`)
        self.parts: tuple[str, ...] = (self.rule, self.folder)  # the entry's key
        self.modules = ""  # the digest of the folder's module names the facts were read with

    def open(self, modules: Collection[str], classes: Mapping[Any, Mapping[str, Any]]) -> None:
        """Read the folder's entry for these module names (the exception classes give each
        record its bases)."""
        self._classes = classes
        names = hashlib.sha256("\0".join(sorted(modules)).encode("utf-8", "surrogatepass"))
        self.modules = names.hexdigest()
        entry = self.table.get_entry(FACTS, *self.parts) if self.table is not None else None
        # facts read with other module names are not these (the mentions are: text alone)
        same = entry is not None and entry.get("modules") == self.modules
        facts = entry.get("facts") if entry is not None and same else None
        self._kept = facts if isinstance(facts, dict) else {}
        mentions = entry.get("mentions") if entry is not None else None
        self._kept_mentions = mentions if isinstance(mentions, dict) else {}
        # what each record's annotation names: of its file's bytes, as this code reads them
        named = entry.get("named") if entry is not None and same \
            and entry.get("reader") == _reader() else None
        self._kept_named = named if isinstance(named, dict) else {}

    def key(self, record: ErrorRecord) -> str | None:
        """The digest of what the record's facts are read from; None if it cannot be written.

        Where the load gave the key of the record's file bytes (`files`), those bytes and the
        code that reads a record from them stand for its site and entry points: a digest of
        the site's JSON text was a third of the index's time (jax's 5,482: 0.2 s of CPU). An
        edit of its annotation then reads its facts again, one record's (0.14 ms)."""
        cls = self._classes.get(record.site.exception_qualname)
        bases = [str(base) for base in (cls.get("bases") or ())] if cls is not None else []
        file = self.files.get(record.id)
        try:
            text = ENCODER.encode(["file", file, _reader(), bases] if file is not None else
                                  [record.site, record.entry_points, bases])
        except (TypeError, ValueError):
            return None
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def file_key(self, record: ErrorRecord) -> str | None:
        """The key of the bytes of the record's file, where the load gave it (`files`)."""
        return self.files.get(record.id)

    def named(self, key: str) -> tuple[bool, list[str] | None]:
        """Whether what the annotation of the file with the bytes of `key` names is kept, and
        what it is (`annotation_fit.Index.named`; None: the annotation has no text to judge)."""
        found = self._kept_named.get(key, False)
        if not (found is None or isinstance(found, list) and set(map(type, found)) <= {str}):
            return False, None
        self._used_named[key] = found
        return True, found

    def put_named(self, key: str, named: Collection[str] | None) -> None:
        """Keep what the annotation of the file with the bytes of `key` names, for the next run."""
        self.named_read += 1
        self._used_named[key] = None if named is None else sorted(named)

    def get(self, key: str | None) -> Facts | None:
        """The facts kept under `key`, or None (none kept, or not facts)."""
        found = self._kept.get(key) if key is not None else None
        if not (isinstance(found, list) and len(found) == 2 and isinstance(found[0], dict)
                and isinstance(found[1], list)):
            return None
        facts, own = found
        if not (set(map(type, facts.values())) <= {int} and set(map(type, own)) <= {str}):
            return None
        self._used[key] = found  # type: ignore[index]  # not None: found
        return facts, frozenset(own)

    def put(self, key: str | None, facts: Facts) -> None:
        """Keep the facts read of a record (under `key`, its digest) for the next run."""
        self.computed += 1
        if key is not None:
            self._used[key] = [facts[0], sorted(facts[1])]

    def mentions(self, text: str) -> Mentions:
        """What an annotation's judged text mentions (`code_mentions`), kept under its digest."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        found = self._used_mentions.get(key) or self._kept_mentions.get(key)  # this run's first
        if isinstance(found, list) and len(found) == 3 and all(
                isinstance(part, list) and set(map(type, part)) <= {str} for part in found):
            self._used_mentions[key] = found
            return Mentions(tuple(found[0]), frozenset(found[1]), frozenset(found[2]))
        self.read_texts += 1
        mentions = code_mentions(text)
        self._used_mentions[key] = [list(mentions.names), sorted(mentions.user_names),
                                    sorted(mentions.words)]
        return mentions

    def close(self) -> None:
        """Write the folder's entry, the facts of this run's records and the mentions of its
        annotations alone, if it changed."""
        if self.table is None or (self._used.keys() == self._kept.keys() and not self.computed
                                  and self._used_mentions.keys() == self._kept_mentions.keys()
                                  and not self.read_texts and not self.named_read
                                  and self._used_named.keys() == self._kept_named.keys()):
            return
        entry = {"modules": self.modules, "facts": self._used, "mentions": self._used_mentions,
                 "reader": _reader(), "named": self._used_named}
        if is_plain(entry):  # what JSON gives back exactly (no surrogate): else not kept
            self.table.put_entry(FACTS, *self.parts, entry=entry)
            self.table.flush()
