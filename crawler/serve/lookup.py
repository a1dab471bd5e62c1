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
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.errors import OutputError
from crawler.serve import lookup_index
from crawler.serve.export_data import check_version
from crawler.serve.ranking import (
    Answer,
    Match,
    Query,
    Wording,
    literal_runs,
    rank,
    read_query,
    shared_words,
    wordings,
)

if TYPE_CHECKING:
    from crawler.records import ErrorRecord

__all__ = ["Answer", "FolderAnswer", "LookupIndex", "Match", "Query", "describe", "literal_runs",
           "load_records", "lookup", "lookup_database", "lookup_output", "parse_message",
           "repository_folders"]


class LookupIndex:
    """Wordings held in memory, made ready for many lookups: a `ranking.Source`."""

    def __init__(self, records: Iterable[ErrorRecord] = (), *,
                 of: Iterable[Wording] = ()) -> None:
        self.wordings: list[Wording] = [w for record in records for w in wordings(record)]
        self.wordings.extend(of)
        self._words: dict[str, list[int]] = {}
        for number, wording in enumerate(self.wordings):
            for word in shared_words(wording.literal_text):
                self._words.setdefault(word, []).append(number)
        self._names = frozenset(w.exception_name for w in self.wordings)

    def exception_names(self) -> frozenset[str]:
        return self._names

    def containing(self, texts: Sequence[str]) -> Iterator[Wording]:
        return (w for w in self.wordings if any(w.required in text for text in texts))

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self._words.get(word, ()))
        return [self.wordings[number] for number, _ in shared.most_common(limit)]

    def answer(self, message: str, limit: int = 10) -> Answer:
        """The records for what a user pasted (see `ranking.rank`)."""
        return rank(message, self, limit)

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


def lookup(message: str, records: Iterable[ErrorRecord], limit: int = 10) -> list[Match]:
    """The records whose regex matches a runtime message, best first; else the closest, marked."""
    return LookupIndex(records).lookup(message, limit=limit)


@dataclass(frozen=True)
class FolderAnswer:
    """A lookup in an output folder: the answer, and one line for each file in errors/ that
    is no record (left out; the others are served)."""

    answer: Answer
    problems: tuple[str, ...]


def lookup_output(folder: Path, message: str, limit: int = 10) -> FolderAnswer:
    """What a user pasted, looked up in every repository under `folder` (the output root or one
    repository's folder) through their stored indexes, each brought up to date first."""
    folders = repository_folders(folder)
    if not folders:
        raise OutputError(f"{folder}: no records found; run `crawler extract` first")
    with ExitStack() as stack:
        indexes = [lookup_index.StoredIndex(stack.enter_context(closing(
            lookup_index.open_index(where)))) for where in folders]
        problems = tuple(problem for index in indexes for problem in index.problems())
        if not problems and not any(index.count() for index in indexes):
            raise OutputError(f"{folder}: no records found; run `crawler extract` first")
        answer = rank(message, _Sources(indexes), limit)
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


def lookup_database(db: Path, message: str, limit: int = 10) -> Answer:
    """What a user pasted, looked up in an SQLite export: the same ranking, the same answer as
    from the output folder it was exported from."""
    if not db.is_file():
        raise OutputError(f"{db}: no such database; write one with `crawler export --format sqlite`")
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            check_version(connection, db)
            connection.row_factory = sqlite3.Row
            # the qualified name is the exception class's (null where it is not known)
            rows = connection.execute(
                "SELECT r.*, c.qualname AS exception_qualname FROM records AS r"
                " LEFT JOIN exception_classes AS c ON c.repo = r.repo AND c.name = r.exception_class"
                " ORDER BY r.repo, r.id").fetchall()
    except sqlite3.Error as error:
        raise OutputError(f"{db}: cannot read the records of the database ({error}); export it "
                          "again with `crawler export --format sqlite`") from error
    return rank(message, LookupIndex(of=(_database_wording(row) for row in rows)), limit)


def _database_wording(row: sqlite3.Row) -> Wording:
    """A row of the export's records table as a wording: the columns lookup shows."""
    values: dict[str, Any] = {name: row[name] if name in row.keys() else None
                              for name in _DATABASE_COLUMNS}
    placeholders = values.pop("placeholders")
    return Wording(record_id=values.pop("id"),
                   placeholders=tuple(json.loads(placeholders)) if placeholders else (),
                   **{**values, "qualname": values["qualname"] or "",
                      "kind": values["kind"] or ""})


def parse_message(message: str) -> tuple[str | None, list[str]]:
    """The exception a pasted message names (builtin ones only, without records) and the texts
    to try, the message first."""
    query = read_query(message, frozenset())
    return query.exception, list(query.texts)


def load_records(folder: Path) -> tuple[list[ErrorRecord], list[str]]:
    """Every record under `folder` (a repository folder or the output root), read quickly
    (`record_files.read_record`), and one line for each file in an errors/ folder that is not
    one (broken, renamed, stray): skipped, never in the way of the others."""
    from crawler.serve.review import load_output_folders

    records: list[ErrorRecord] = []
    problems: list[str] = []
    for _, loaded in load_output_folders(folder, quick=True):
        records.extend(loaded.records)
        problems.extend(broken.problem for broken in loaded.broken)
    return records, problems


def describe(matches: Sequence[Match]) -> list[dict[str, object]]:
    """Matches as plain data, for `--json`: the same keys from a folder and from a database."""
    return [
        {
            "id": m.wording.record_id,
            "repo": m.wording.repo,
            "status": m.wording.status,
            "removed_in": m.wording.removed_in,
            "exact": m.exact,
            "score": m.score,
            "same_exception": m.same_exception,
            "exception": m.wording.exception,
            "exception_qualname": m.wording.exception_qualname,
            "path": m.wording.path,
            "line": m.wording.line,
            "qualname": m.wording.qualname,
            "kind": m.wording.kind,
            "template": m.wording.template,
            "captures": m.captures,
            "url": m.wording.url,
            # a wording of past releases matched (`crawler history`): which, and what it reads now
            **({"past_wording": {"first": m.wording.first_release, "last": m.wording.last_release,
                                 "today": m.wording.today}} if m.wording.past else {}),
        }
        for m in matches
    ]
