"""Exports of an output folder for the site and API projects: JSON Lines, JSON documents, SQLite.

Every export is deterministic: records in (repo, id) order, JSON with keys in the records' own
order, no timestamps; the same records give byte-identical files. The record documents are the
YAML records as JSON (valid against schemas/record.schema.json); the JSON index and the SQLite
database carry EXPORT_SCHEMA_VERSION (schemas/export-index.schema.json, schemas/export.sql).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from crawler.errors import OutputError
from crawler.regexes import BoundedRegex, Budget
from crawler.serve import datasette_metadata, export_target
from crawler.serve.export_data import (
    EXPORT_SCHEMA_VERSION,
    Output,
    Repository,
    json_line,
    record_document,
    records_of,
)
from crawler.serve.export_json import export_json, index_document
from crawler.serve.export_sqlite import export_sqlite, stream_sqlite
from crawler.serve.review import load_output_folders
from crawler.store.atomic import sync_folder, write_atomic
from crawler.store.repo_output import REBUILT

FORMATS = ("jsonl", "json", "sqlite")


def read_output(root: Path) -> Output:
    """Every repository under an output root (a folder with a manifest.yaml), in repo order.

    A file that cannot be loaded costs itself only: it is named in `skipped`, and every other
    record of every repository is exported.
    """
    if not root.is_dir():
        raise OutputError(f"{root}: no such folder; give the output root of `crawler extract`")
    repositories = []
    skipped: list[str] = []
    for folder, loaded in load_output_folders(root):
        skipped.extend(broken.problem for broken in loaded.broken)
        if loaded.manifest is None:
            if loaded.manifest_problem is not None:
                problem = loaded.manifest_problem.removesuffix(REBUILT)
                skipped.append(f"{problem}; its repository was left out: run `crawler extract` "
                               "again to rebuild it")
            continue
        records = sorted(loaded.records, key=lambda r: r.id)
        repositories.append(Repository(folder, loaded.manifest, tuple(records)))
    if not repositories and skipped:
        raise OutputError(f"{root}: no repository could be read: {skipped[0]}")
    if not repositories:
        raise OutputError(f"{root}: no manifest.yaml found; run `crawler extract` first")
    repositories.sort(key=lambda r: r.manifest.pin.repo)
    return Output(tuple(repositories), tuple(skipped))


def load_output(root: Path) -> list[Repository]:
    """The repositories of `read_output`, without what it left out."""
    return list(read_output(root).repositories)


# ---------------------------------------------------------------- JSON Lines


def write_jsonl(repositories: Sequence[Repository], out: TextIO) -> int:
    """One record document a line; returns how many."""
    count = 0
    for _, record in records_of(repositories):
        out.write(json_line(record_document(record)) + "\n")
        count += 1
    return count


def export_jsonl(repositories: Sequence[Repository], target: Path) -> int:
    lines = [json_line(record_document(r)) + "\n" for _, r in records_of(repositories)]
    write_atomic(target, "".join(lines))
    sync_folder(target.parent)
    return len(lines)


def _jsonl_chunks(repositories: Sequence[Repository]) -> Iterator[bytes]:
    for _, record in records_of(repositories):
        yield (json_line(record_document(record)) + "\n").encode("utf-8")


# ---------------------------------------------------------------- searching the database


@dataclass(frozen=True)
class DatabaseHit:
    """A record found for a runtime message; `exact` when its regex matches the whole message."""

    id: str
    repo: str
    status: str
    exception: str
    template: str
    path: str
    line: int
    url: str | None
    exact: bool


SEARCH_CANDIDATES = 200
SEARCH_SECONDS = 0.5  # the backtracking regexes of one search, together
_WORD = re.compile(r"\w+")


def search_database(db_path: Path, message: str, limit: int = 10) -> list[DatabaseHit]:
    """Records whose template fits a message a user pasted: full-text candidates, then regexes.

    The message's words are OR-ed in an FTS5 query over the templates (placeholder values in the
    message are words no template has); the best-ranked candidates are then tried with each
    record's own regex. Exact fits come first (those with the most literal text first; a template
    that is placeholders only is never exact), then the other candidates by rank.
    """
    if not db_path.is_file():
        raise OutputError(f"{db_path}: no such database; write one with `crawler export --format sqlite`")
    from crawler.serve.lookup import parse_message  # the command's reading of what was pasted

    texts = parse_message(message)[1]  # `ValueError: ...` or a whole traceback: its message
    message = texts[0] if texts else message
    words = sorted(set(_WORD.findall(message)), key=lambda w: (-len(w), w))[:64]
    if not words:
        return []
    query = "{literal_words} : (" + " OR ".join(f'"{w}"' for w in words) + ")"
    try:
        connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            _check_version(connection, db_path)
            rows = connection.execute(
                "SELECT r.id, r.repo, r.status, r.exception, r.template, r.path, r.line, r.url,"
                " r.regex, r.placeholders FROM records_fts JOIN records AS r ON r.rowid = records_fts.rowid"
                " WHERE records_fts MATCH ? ORDER BY bm25(records_fts), r.id LIMIT ?",
                (query, SEARCH_CANDIDATES)).fetchall()
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise OutputError(f"{db_path}: cannot search the database ({error})") from error
    hits = []
    budget = Budget(SEARCH_SECONDS)
    for rank, row in enumerate(rows):
        regex, template = row[8], row[4]
        literal = len(template) - sum(len(p) + 2 for p in json.loads(row[9]))
        exact = literal > 0 and _fullmatch(regex, message, budget)  # `{msg}` fits every message
        hits.append((0 if exact else 1, -literal if exact else 0, rank,
                     DatabaseHit(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], exact)))
    hits.sort(key=lambda h: h[:3])
    return [h[3] for h in hits[:limit]]


def _fullmatch(regex: str, message: str, budget: Budget) -> bool:
    """`re.match` of a record's `^...$` regex, bounded: the whole message, or all of it but a
    final newline (which `$` lets through); a regex past the budget fits nothing."""
    pattern = BoundedRegex.compile(regex)
    if pattern is None:
        return False
    if budget.fullmatch(pattern, message) is not None:
        return True
    return message.endswith("\n") and budget.fullmatch(pattern, message[:-1]) is not None


def _check_version(connection: sqlite3.Connection, db_path: Path) -> None:
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or row[0] != str(EXPORT_SCHEMA_VERSION):
        found = row[0] if row else "none"
        raise OutputError(f"{db_path}: export schema version {found}, this crawler reads "
                          f"{EXPORT_SCHEMA_VERSION}; export the database again")


def export(root: Path, fmt: str, target: Path, *, force: bool = False) -> int:
    """Export every repository under ROOT in one format to TARGET; returns how many records."""
    return export_output(read_output(root), fmt, target, force=force)


def export_output(output: Output, fmt: str, target: Path, *, force: bool = False) -> int:
    """Export what `read_output` read in one format to TARGET; returns how many records.

    Where TARGET may be written, and how, is decided first (see `export_target`): a file the
    crawler did not write is replaced only with `force`; a device or a pipe is written through.
    """
    if fmt not in FORMATS:
        raise OutputError(f"{fmt!r}: not an export format; use one of {', '.join(FORMATS)}")
    where = export_target.place(target, fmt, force)
    if fmt == "sqlite" and where.how != export_target.STREAM:
        datasette_metadata.check_beside(where.real, force)
    repositories = list(output.repositories)
    if fmt == "json":
        return export_json(repositories, where.real)
    if where.how == export_target.STREAM:
        if fmt == "sqlite":
            return stream_sqlite(repositories, where)
        export_target.stream(where, _jsonl_chunks(repositories))
        return sum(len(r.records) for r in repositories)
    if fmt == "sqlite":
        return export_sqlite(repositories, where.real)
    return export_jsonl(repositories, where.real)


__all__ = ["EXPORT_SCHEMA_VERSION", "FORMATS", "DatabaseHit", "Output", "Repository",
           "export", "export_output", "export_json", "export_jsonl", "export_sqlite", "index_document",
           "load_output", "read_output", "record_document", "search_database", "write_jsonl"]
