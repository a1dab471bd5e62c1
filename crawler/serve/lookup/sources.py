"""A runtime message back to its records, from an output folder, an SQLite export or records.

Three places hold records, and each is a `ranking.Source`; the same `ranking.rank` answers from
all three, so the order, the scores and the JSON (`describe`) are the same whichever is asked:

- an output folder (the root or one repository's folder): each repository's stored index
  (`lookup_index`), brought up to date first; a lookup reads no YAML unless records changed;
- an SQLite export (`crawler export --format sqlite`): its records table;
- records in memory (`LookupIndex`): the tests', a library user's.

Every function takes what the command takes: a message, a `ValueError: message` line or a whole
traceback. Removed records are found too, marked with the commit they left in.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.errors import CrawlerError, OutputError
from crawler.serve import sqlite_guard
from crawler.serve.lookup import index as lookup_index
from crawler.serve.lookup.literal_text import literal_runs
from crawler.serve.lookup.paste import read_paste
from crawler.serve.lookup.places import PLACE_NAMES, file_name
from crawler.serve.lookup.ranking import (
    CLASS,
    NO_SITE,
    PLACE,
    REMOVED,
    Answer,
    Match,
    Wording,
    rank,
    shared_words,
    wordings,
)

if TYPE_CHECKING:
    from crawler.records import ErrorRecord, TemplateSpan

_TOKEN = re.compile(r"\w+")  # a paste's words, as `lookup_index` reads them
__all__ = ["Answer", "FolderAnswer", "LookupIndex", "Match", "class_bases", "describe",
           "literal_runs", "load_records", "lookup", "lookup_database", "lookup_output",
           "parse_message", "repository_folders"]


class LookupIndex:
    """Wordings held in memory, made ready for many lookups: a `ranking.Source`."""

    def __init__(self, records: Iterable[ErrorRecord] = (), *,
                 of: Iterable[Wording] = (), bases: Mapping[str, Sequence[str]] | None = None
                 ) -> None:
        self.bases = dict(bases or {})
        self.wordings: list[Wording] = [w for record in records for w in wordings(record)]
        self.wordings.extend(of)
        self._words: dict[str, list[int]] = {}
        for number, wording in enumerate(self.wordings):
            for word in shared_words(wording.literal_text):
                self._words.setdefault(word, []).append(number)
        self._names = frozenset(w.exception_name for w in self.wordings)
        self._anchored: dict[str, list[int]] | None = None  # made by the first `containing`
        self._files: dict[str, list[int]] | None = None  # made by the first `in_files`

    def exception_names(self) -> frozenset[str]:
        return self._names

    def containing(self, texts: Sequence[str]) -> Iterator[Wording]:
        """As the stored index answers: only the wordings whose anchor is a word of a text
        (or that have none) are looked at, whatever the number of wordings."""
        if self._anchored is None:
            self._anchored = {}
            for number, wording in enumerate(self.wordings):
                anchor = lookup_index.anchor_of(wording.required)
                self._anchored.setdefault(anchor, []).append(number)
        tokens = {token for text in texts for token in _TOKEN.findall(text)} | {""}
        numbers = sorted(n for anchor in tokens for n in self._anchored.get(anchor, ()))
        return (self.wordings[n] for n in numbers
                if any(self.wordings[n].required in text for text in texts))

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self._words.get(word, ()))
        return [self.wordings[number] for number, _ in shared.most_common(limit)]

    def in_files(self, names: frozenset[str]) -> Iterator[Wording]:
        if self._files is None:
            self._files = {}
            for number, wording in enumerate(self.wordings):
                if not wording.past:
                    self._files.setdefault(file_name(wording.path),
                                           []).append(number)
        numbers = sorted(n for name in names for n in self._files.get(name.lower(), ()))
        return (self.wordings[n] for n in numbers)

    def raising(self, names: frozenset[str]) -> Iterator[Wording]:
        return (w for w in self.wordings if not w.past and w.exception_name in names)

    def holding(self, words: frozenset[str]) -> int:
        held = [{self.wordings[n].record_id for n in self._words.get(word, ())} for word in words]
        return len(set.intersection(*held)) if held else 0

    def answer(self, message: str, limit: int = 10) -> Answer:
        """The records for what a user pasted (see `ranking.rank`)."""
        return rank(message, self, limit, self.bases)

    def lookup(self, message: str, limit: int = 10) -> list[Match]:
        """`answer`'s matches: exact ones best first; else the closest, marked."""
        return list(self.answer(message, limit).matches)


class _Sources:
    """Several repositories' indexes asked as one."""

    def __init__(self, sources: Sequence[lookup_index.StoredIndex]) -> None:
        self.sources = sources

    def exception_names(self) -> frozenset[str]:
        return frozenset().union(*(source.exception_names() for source in self.sources))

    def containing(self, texts: Sequence[str]) -> Iterator[Wording]:
        for source in self.sources:
            yield from source.containing(texts)

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        return [w for source in self.sources for w in source.sharing_words(words, limit)]

    def in_files(self, names: frozenset[str]) -> Iterator[Wording]:
        for source in self.sources:
            yield from source.in_files(names)

    def raising(self, names: frozenset[str]) -> Iterator[Wording]:
        for source in self.sources:
            yield from source.raising(names)

    def holding(self, words: frozenset[str]) -> int:
        return sum(source.holding(words) for source in self.sources)


def lookup(message: str, records: Iterable[ErrorRecord], limit: int = 10) -> list[Match]:
    """The records whose regex matches a runtime message, best first; else the closest, marked."""
    return LookupIndex(records).lookup(message, limit=limit)


@dataclass(frozen=True)
class FolderAnswer:
    """A lookup in an output folder: the answer, and one line for each file in errors/ that
    is no record (left out; the others are served)."""

    answer: Answer
    problems: tuple[str, ...]


def lookup_output(folder: Path, message: str, limit: int = 10, left_out: int = 0
                  ) -> FolderAnswer:
    """What a user pasted, looked up in every repository under `folder` (the output root or one
    repository's folder) through their stored indexes, each brought up to date first;
    `left_out`: characters of the paste's beginning its reader did not keep."""
    folders = repository_folders(folder)
    if not folders:
        raise OutputError(f"{folder}: no records found; run `crawler extract` first")
    with ExitStack() as stack:
        indexes = [stack.enter_context(closing(lookup_index.open_index(where))) for where in folders]
        problems = tuple(problem for index in indexes for problem in index.problems())
        if not problems and not any(index.count() for index in indexes):
            raise OutputError(f"{folder}: no records found; run `crawler extract` first")
        bases: dict[str, tuple[str, ...]] = {}
        for where, index in zip(folders, indexes, strict=True):
            bases.update(class_bases(where, index.connection))
        answer = rank(message, _Sources(indexes), limit, bases, left_out)
    return FolderAnswer(answer, problems)


def repository_folders(root: Path) -> list[Path]:
    """Every repository folder under `root` (one holding a manifest or errors/), `root` too,
    found without walking into errors/ (a lookup must not list thousands of files to start)."""
    found = []
    pending = [root]
    while pending:
        where = pending.pop()
        try:
            entries = {entry.name: entry for entry in os.scandir(where)}
        except OSError:
            continue
        if lookup_index.MANIFEST in entries or lookup_index.ERRORS_DIR in entries:
            found.append(where)
            continue
        pending.extend(Path(entry.path) for name, entry in sorted(entries.items())
                       if not name.startswith(".") and entry.is_dir(follow_symlinks=False))
    return sorted(found)


_DATABASE_COLUMNS = ("id", "repo", "status", "removed_in", "exception", "exception_qualname",
                     "path", "line", "qualname", "kind", "template", "placeholders", "regex", "url")


# what lookup reads of an export, each a plain table with these columns (`sqlite_guard`)
_DATABASE_TABLES = {
    "meta": ("key", "value"),
    "records": ("id", "repo", "status", "exception", "exception_class", "path", "line",
                "qualname", "kind", "template", "placeholders", "regex"),
    "exception_classes": ("repo", "name", "qualname"),
    "wordings": ("record_id", "position", "template", "first_release", "last_release",
                 "exception", "path"),
}
_EXPORT_AGAIN = "export it again with `crawler export --format sqlite -o FILE`"


def lookup_database(db: Path, message: str, limit: int = 10, left_out: int = 0) -> Answer:
    """What a user pasted, looked up in an SQLite export: the same ranking, the same answer as
    from the output folder it was exported from. The database is the user's, not the
    crawler's: only its plain tables are read, within a bound in SQLite steps (`sqlite_guard`)."""
    # the export's modules read records and YAML, which a lookup from a folder never needs
    from crawler.serve.export.data import check_version

    _require_sqlite_file(db)
    budget = sqlite_guard.budget_for(db)
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection, \
                sqlite_guard.bounded(connection, db, budget, _EXPORT_AGAIN):
            sqlite_guard.require_tables(connection, db, _DATABASE_TABLES, _EXPORT_AGAIN)
            check_version(connection, db)
            connection.row_factory = sqlite3.Row
            # the qualified name is the exception class's (null where it is not known)
            rows = connection.execute(
                "SELECT r.*, c.qualname AS exception_qualname FROM records AS r"
                " LEFT JOIN exception_classes AS c ON c.repo = r.repo AND c.name = r.exception_class"
                " ORDER BY r.repo, r.id").fetchall()
            spans = _database_spans(connection)
    except sqlite3.Error as error:
        raise OutputError(f"{db}: cannot read the records of the database ({error}); "
                          f"{_EXPORT_AGAIN}") from error
    found = (w for row in rows for w in _database_wordings(row, spans.get(row["id"], ())))
    return rank(message, LookupIndex(of=found), limit, left_out=left_out)


def _require_sqlite_file(db: Path) -> None:
    """`--db` must lead to a plain file that starts as an SQLite database does: a pipe or a
    device would leave SQLite waiting on its open, and a text file is no database."""
    from crawler.store.plain_files import kind_of

    try:
        mode = os.stat(db).st_mode
    except FileNotFoundError:
        raise OutputError(f"{db}: no such database; write one with "
                          "`crawler export --format sqlite -o FILE`") from None
    except OSError as error:
        raise OutputError(f"{db}: cannot look at the database ({error.strerror}); "
                          "give another --db") from error
    if not stat.S_ISREG(mode):
        raise OutputError(f"{db}: {kind_of(mode)}, not an SQLite database file; it was left as it "
                          "is; give the file `crawler export --format sqlite -o FILE` wrote")
    try:
        with open(db, "rb") as handle:
            head = handle.read(len(sqlite_guard.SQLITE_MAGIC))
    except OSError as error:
        raise OutputError(f"{db}: cannot read the database ({error.strerror}); give a file "
                          "you may read") from error
    if head != sqlite_guard.SQLITE_MAGIC:
        raise OutputError(f"{db}: a plain file, not an SQLite database; give the file "
                          "`crawler export --format sqlite -o FILE` wrote")


def _database_wordings(row: sqlite3.Row, spans: Sequence[TemplateSpan]) -> list[Wording]:
    """A row of the export's records table as the wordings lookup tries, as from its record
    file: the current template (the columns lookup shows), then its past ones."""
    values: dict[str, Any] = {name: row[name] if name in row.keys() else None
                              for name in _DATABASE_COLUMNS}
    from crawler.serve.lookup.ranking import past_wordings_of, with_past_wordings

    placeholders = values.pop("placeholders")
    now = Wording(record_id=values.pop("id"),
                  placeholders=tuple(json.loads(placeholders)) if placeholders else (),
                  **{**values, "qualname": values["qualname"] or "", "kind": values["kind"] or ""})
    return with_past_wordings(now, past_wordings_of(spans, now.status == REMOVED, now.template))


def _database_spans(connection: sqlite3.Connection) -> dict[str, list[TemplateSpan]]:
    """Each record's wordings in past releases, oldest first, from the export's `wordings`
    table (none in an export of a folder that no `crawler history` walked)."""
    from crawler.records import TemplateSpan

    spans: dict[str, list[TemplateSpan]] = {}
    rows = connection.execute(
        "SELECT record_id, template, first_release, last_release, exception, path FROM wordings"
        " ORDER BY record_id, position")
    for record_id, template, first, last, exception, path in rows:
        spans.setdefault(record_id, []).append(TemplateSpan(template, first, last, exception, path))
    return spans


def parse_message(message: str) -> tuple[str | None, list[str]]:
    """The exception a pasted message names (its last one) and the texts to try, best first."""
    reported = read_paste(message).reported[0]
    return reported.exception, list(reported.texts)


_CLASSES_KEY = "classes"


def class_bases(folder: Path, connection: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """The exception classes the folder's manifest lists, each (by qualified and short name) to
    its bases, for kinship; kept in the index's meta table while the manifest is unchanged."""
    manifest = folder / lookup_index.MANIFEST
    try:
        found = manifest.stat()
    except OSError:
        return {}
    sign = json.dumps([found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns])
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (_CLASSES_KEY,)).fetchone()
    if row is not None:
        held = json.loads(row[0])
        if held.get("signature") == sign:
            return {name: tuple(bases) for name, bases in held["bases"].items()}
    bases = _manifest_bases(manifest)
    with suppress(sqlite3.Error), connection:  # a cache: a read-only index is asked again later
        connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           (_CLASSES_KEY, json.dumps({"signature": sign, "bases": bases})))
    return {name: tuple(found) for name, found in bases.items()}


def _manifest_bases(manifest: Path) -> dict[str, list[str]]:
    """The manifest's `exception_classes` section alone, read as records are: a plain file only
    (never a FIFO or a device, which would stall the lookup), with the safe loader; a manifest
    that cannot be read that way gives no kinship."""
    from crawler.store import safe_yaml  # here: a warm lookup, its manifest unchanged, needs no YAML

    try:
        raw = safe_yaml.read_capped(manifest)
    except CrawlerError:
        return {}
    lines = raw.decode("utf-8", errors="replace").splitlines()
    start = next((n for n, line in enumerate(lines) if line == "exception_classes:"), None)
    if start is None:
        return {}
    end = next((n for n in range(start + 1, len(lines))
                if lines[n] and not lines[n].startswith((" ", "-"))), len(lines))
    try:
        classes = safe_yaml.safe_load_text("\n".join(lines[start:end]), str(manifest)) or {}
    except CrawlerError:
        return {}
    if not isinstance(classes, dict):
        return {}
    bases: dict[str, list[str]] = {}
    for item in classes.get("exception_classes") or ():
        if isinstance(item, dict) and isinstance(item.get("bases"), list):
            names = [str(base) for base in item["bases"]]
            bases[str(item.get("qualname"))] = names
            bases.setdefault(str(item.get("name")), names)
    return bases


def load_records(folder: Path) -> tuple[list[ErrorRecord], list[str]]:
    """Every record under `folder` (a repository folder or the output root), read quickly
    (`record_files.read_record`), and one line for each file in an errors/ folder that is not
    one (broken, renamed, stray): skipped, never in the way of the others."""
    from crawler.serve.review.checks import load_output_folders

    records: list[ErrorRecord] = []
    problems: list[str] = []
    for _, loaded in load_output_folders(folder, quick=True):
        records.extend(loaded.records)
        problems.extend(broken.problem for broken in loaded.broken)
    return records, problems


def describe(answer: Answer) -> dict[str, object]:
    """An answer as plain data, for `--json` (`schemas/lookup.schema.json`): the same keys from
    a folder and from a database."""
    paste = answer.paste
    return {
        "verdict": answer.verdict,
        "exit": 0 if answer.found else 1,
        "says": _says(answer),
        "paste": {
            "forms": list(paste.forms) if paste else [],
            # the characters read (the paste's end) and those of its beginning left out
            "read": paste.read if paste else 0,
            "left_out": paste.left_out if paste else 0,
            "exceptions": [{"exception": r.exception, "prefixes": list(r.prefixes),
                            "text": r.text, "cut": r.cut, "texts": list(r.texts),
                            "frames": [{"path": f.path, "line": f.line, "function": f.function}
                                       for f in r.frames]}
                           for r in (paste.reported if paste else ())],
        },
        # records that print the same words, which nothing in the paste tells apart: the
        # answer is the group of them (1: one record is first)
        "group": answer.group,
        "matches": [_described(m) for m in answer.matches],
        "timed_out": list(answer.timed_out),
    }


def _says(answer: Answer) -> str:
    """The answer in one plain line."""
    if answer.verdict == "none":
        return NO_SITE
    first = answer.matches[0]
    if answer.found and answer.group > 1:
        places = ", ".join(f"{m.wording.path}:{m.wording.line}"
                           for m in answer.matches[:answer.group])
        return (f"printed by {answer.group} raise sites, which nothing in the paste tells "
                f"apart: {places}")
    if answer.found:
        how = "" if first.kind in (PLACE, CLASS) else " match"
        return f"{first.kind}{how}: {first.wording.exception} at {first.wording.path}:" \
               f"{first.wording.line}"
    return "no template explains this message; the closest are listed"


def _described(m: Match) -> dict[str, object]:
    w = m.wording
    return {
        "rank": m.rank,
        "tie": m.tie,
        "id": w.record_id,
        "repo": w.repo,
        "status": w.status,
        "removed_in": w.removed_in,
        "match": m.kind,
        "exact": m.exact,
        "confident": m.confident,
        "explained": m.explained,
        "coverage": m.coverage,
        "score": m.score,
        # what the paste's traceback says of the record's place: its raise's line, its
        # function, a frame above it; null: no frame names it
        "where": PLACE_NAMES.get(m.where),
        "kinship": m.kinship,
        "same_exception": m.same_exception,
        "exception": w.exception,
        "exception_qualname": w.exception_qualname,
        "path": w.path,
        "line": w.line,
        "qualname": w.qualname,
        "kind": w.kind,
        "template": w.template,
        "matched_text": m.text,
        "captures": m.captures,
        "url": w.url,
        # the releases that printed the wording matched (`crawler history`); for an old
        # wording, today's (`today`, null: the site is gone), for a removed site its last release
        "releases": ({"first": w.first_release, "last": w.last_release}
                     if w.past or w.first_release or w.last_release else None),
        "past_wording": ({"first": w.first_release, "last": w.last_release, "today": w.today,
                          "successor": w.record_id if w.today is not None else None}
                         if w.past else None),
        # a removed site's last release (whichever of its wordings matched)
        "last_release": (w.gone_after or w.last_release) if w.status == REMOVED else None,
        # a removed record's likeliest successor among the live records the paste brought up
        "successor": ({"id": m.successor.record_id, "path": m.successor.path,
                       "line": m.successor.line, "qualname": m.successor.qualname,
                       "template": m.successor.template} if m.successor else None),
        # the record's other wordings the paste fits as well, with the releases that printed them
        "also_fits": [{"template": o.template, "first": o.first_release, "last": o.last_release}
                      for o in m.also],
    }
