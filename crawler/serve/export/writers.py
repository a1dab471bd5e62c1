"""Exports of an output folder for the site and API projects: JSON Lines, JSON documents, SQLite.

Every export is deterministic: records in (repo, id) order, JSON with keys in the records' own
order, no timestamps; the same records give byte-identical files. The record documents are the
YAML records as JSON (valid against schemas/record.schema.json); the JSON index and the SQLite
database carry EXPORT_SCHEMA_VERSION (schemas/export-index.schema.json, schemas/export.sql).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from crawler.errors import OutputError
from crawler.serve.export import datasette_metadata
from crawler.serve.export import target as export_target
from crawler.serve.export.data import (
    EXPORT_SCHEMA_VERSION,
    Output,
    Repository,
    json_line,
    record_document,
    records_of,
)
from crawler.serve.export.json_folder import export_json, index_document
from crawler.serve.export.sqlite_db import export_sqlite, stream_sqlite
from crawler.serve.review.checks import load_output_folders
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


def search_database(db_path: Path, message: str, limit: int = 10) -> list[DatabaseHit]:
    """Records whose template fits a message a user pasted, best first: `crawler lookup --db`'s
    answer (`lookup.lookup_database`, the same reading of the message and the same ranking),
    as plain hits; when no regex fits, the closest, not exact."""
    from crawler.serve.lookup.sources import lookup_database

    return [DatabaseHit(m.wording.record_id, m.wording.repo, m.wording.status,
                        m.wording.exception, m.wording.template, m.wording.path, m.wording.line,
                        m.wording.url, m.exact)
            for m in lookup_database(db_path, message, limit).matches]


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
