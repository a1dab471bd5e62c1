"""What every export format is built from: the repositories read, each record as its document.

Shared by the JSON Lines, JSON and SQLite writers (`export`, `export_json`, `export_sqlite`),
so that each format is one module that only lays the same data out.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.errors import OutputError
from crawler.records import SCHEMA_VERSION, ErrorRecord, Manifest
from crawler.store.documents import extracted_data, history_data, versions_data

EXPORT_SCHEMA_VERSION = 2  # 2: the site-shaped database and the JSON index split by repository


@dataclass(frozen=True)
class Repository:
    """One repository folder of an output root: its manifest and records, in id order."""

    folder: Path
    manifest: Manifest
    records: tuple[ErrorRecord, ...]

    @property
    def repo(self) -> str:
        """The repository's one identity, which every export names it by (a record written by
        an older crawler may still spell it otherwise until its folder is updated)."""
        return self.manifest.pin.repo


@dataclass(frozen=True)
class Output:
    """What an output root holds for an export: its repositories, and one line for each file
    left out (a broken record, a renamed copy, a stray file, a broken manifest's repository)."""

    repositories: tuple[Repository, ...]
    skipped: tuple[str, ...] = ()


def record_document(record: ErrorRecord) -> dict[str, Any]:
    """A record as the JSON document the exports write: the YAML record's data, same keys."""
    return {
        "schema_version": SCHEMA_VERSION,
        "id": record.id,
        "status": record.status,
        "extracted": extracted_data(record),
        "annotation": record.annotation.data,
        "history": history_data(record.history),
        **versions_data(record.versions),
    }


def records_of(repositories: Sequence[Repository]) -> Iterator[tuple[Repository, ErrorRecord]]:
    """Every record with its repository, in the export's order (repository, then id)."""
    for repository in repositories:
        for record in repository.records:
            yield repository, record


def json_line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def json_file(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def check_version(connection: sqlite3.Connection, db_path: Path) -> None:
    """Refuse a database of another export schema version, in one line."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or row[0] != str(EXPORT_SCHEMA_VERSION):
        found = row[0] if row else "none"
        raise OutputError(f"{db_path}: export schema version {found}, this crawler reads "
                          f"{EXPORT_SCHEMA_VERSION}; export the database again")
