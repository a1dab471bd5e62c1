"""The SQLite export: a database shaped for an error-documentation site, served by datasette.

The tables are in schemas/export.sql; one small function fills each, so a table can be added
beside them. What a page shows is the `pages` view; the record's whole JSON is a side table
(`documents`) so the main table's rows stay one line high; a record's exception is faceted by
its qualified name (`exception_class`). For search by a runtime message without Python
functions (a plain `datasette serve`), each record carries its regex as a GLOB pattern and its
template's literal words; `datasette_metadata` writes the canned query that uses them.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from crawler import __version__
from crawler.errors import OutputError
from crawler.git.permalink import permalink
from crawler.records import REMOVED, SCHEMA_VERSION, ErrorRecord
from crawler.serve.export import datasette_metadata
from crawler.serve.export import target as export_target
from crawler.serve.export.data import (
    EXPORT_SCHEMA_VERSION,
    Repository,
    json_line,
    record_document,
    records_of,
)
from crawler.serve.export.message_glob import message_glob
from crawler.serve.export.pages import insert_pages
from crawler.serve.export.versions import insert_versions
from crawler.store.atomic import sync_folder
from crawler.store.documents import history_data
from crawler.store.plain_files import refuse_replacing
from crawler.store.schemas import SCHEMA_DIR

DDL = SCHEMA_DIR / "export.sql"


def export_sqlite(repositories: Sequence[Repository], target: Path) -> int:
    """Write the database to a temporary file beside TARGET, then put it in place, and its
    datasette metadata beside it (`<target>.metadata.json`)."""
    refuse_replacing(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)  # sqlite creates it afresh, with the umask's permissions
    try:
        count = build_database(repositories, tmp)
        os.replace(tmp, target)
        sync_folder(target.parent)
    except sqlite3.Error as error:
        _remove(tmp)
        raise OutputError(f"{target}: cannot write the database ({error}); nothing there was changed"
                          ) from error
    except BaseException:
        _remove(tmp)
        raise
    datasette_metadata.write_beside(target)
    return count


def stream_sqlite(repositories: Sequence[Repository], target: export_target.Target) -> int:
    """The database built in a private temp folder, then its bytes written to a device or pipe.

    SQLite needs a file it can seek in; streaming the finished file gives a pipe's reader (`ssh`,
    `gzip`) the very bytes a file target would hold.
    """
    with tempfile.TemporaryDirectory(prefix="crawler-export-") as folder:
        built = os.path.join(folder, "export.db")
        try:
            count = build_database(repositories, built)
        except sqlite3.Error as error:
            raise OutputError(f"{target.given}: cannot build the database ({error}); nothing "
                              "was written") from error
        with open(built, "rb") as handle:
            export_target.stream(target, iter(partial(handle.read, 1 << 20), b""))
    return count


def build_database(repositories: Sequence[Repository], path: str) -> int:
    """Create and fill the database at `path`; returns how many records it holds."""
    connection = sqlite3.connect(path)
    try:
        count = fill(connection, repositories)
        connection.commit()
        connection.execute("VACUUM")
    finally:
        connection.close()
    return count


def _remove(path: str) -> None:
    for suffix in ("", "-journal"):
        try:
            os.unlink(path + suffix)
        except OSError:
            pass


def fill(db: sqlite3.Connection, repositories: Sequence[Repository]) -> int:
    """Every table, in a fixed order; the full-text indexes last."""
    db.executescript(DDL.read_text(encoding="utf-8"))
    _insert_meta(db)
    exported = {record.id for _, record in records_of(repositories)}
    for repository in repositories:
        _insert_repository(db, repository)
        _insert_classes(db, repository)
        for record in repository.records:
            _insert_record(db, repository, record, exported)
    insert_versions(db, (record for _, record in records_of(repositories)))  # `crawler history`
    insert_pages(db)  # from the tables above: one page per record
    db.execute("INSERT INTO records_fts(records_fts) VALUES ('rebuild')")
    db.execute("INSERT INTO annotations_fts(annotations_fts) VALUES ('rebuild')")
    return len(exported)


def _insert_meta(db: sqlite3.Connection) -> None:
    db.execute(f"PRAGMA user_version = {EXPORT_SCHEMA_VERSION}")
    db.execute(f"PRAGMA application_id = {export_target.APPLICATION_ID}")  # tells our files apart
    db.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("schema_version", str(EXPORT_SCHEMA_VERSION)),
        ("record_schema_version", str(SCHEMA_VERSION)),
        ("crawler_version", __version__),
    ])


def _insert_repository(db: sqlite3.Connection, repository: Repository) -> None:
    m, pin = repository.manifest, repository.manifest.pin
    annotated = sum(not r.annotation.is_empty for r in repository.records)
    _insert_row(db, "repositories", (
        repository.repo, pin.web_url, pin.forge, pin.host, pin.owner, pin.name, pin.public_source,
        pin.ref, pin.sha, int(pin.reachable), m.crawler_version, m.counts.files, m.counts.parsed,
        m.counts.skipped, m.counts.records, m.counts.removed, annotated))


def _insert_row(db: sqlite3.Connection, table: str, row: tuple[object, ...]) -> None:
    db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)


def exception_class(record: ErrorRecord) -> str:
    """The name a record's exception is faceted by: qualified when known, else as written."""
    return record.site.exception_qualname or record.site.exception


def _insert_classes(db: sqlite3.Connection, repository: Repository) -> None:
    counts: Counter[tuple[str, bool]] = Counter(
        (exception_class(r), r.status == REMOVED) for r in repository.records)
    qualnames = {exception_class(r): r.site.exception_qualname for r in repository.records}
    db.executemany("INSERT INTO exception_classes VALUES (?,?,?,?,?,?)", [
        (repository.repo, name, name.rsplit(".", 1)[-1], qualnames[name],
         counts[(name, False)], counts[(name, True)])
        for name in sorted(qualnames)])


def _insert_record(db: sqlite3.Connection, repository: Repository, record: ErrorRecord,
                   exported: set[str]) -> None:
    """The record's row and its rows in the side tables."""
    site, message = record.site, record.site.message
    history = history_data(record.history)
    glob = message_glob(message.regex)
    runs = glob.runs if glob is not None else (message.template,)
    related = [r for r in record.related if r.id in exported]  # a broken record is not there
    name = exception_class(record)
    _insert_row(db, "records", (
        record.id, repository.repo, record.status, name, site.exception, name.rsplit(".", 1)[-1],
        message.template, message.kind, json_line(list(message.placeholders)), message.regex,
        literal_words(runs), glob.pattern if glob is not None else None,
        sum(len(run) for run in runs), site.path, site.line, site.end_line, site.column,
        site.class_name, site.function, site.qualname, int(site.factory), message.argument,
        message.defined_at, site.cause, site.condition, record.url, record.commit,
        site.snippet_line, mark_at(site.snippet, site.end_line - site.snippet_line),
        history["first_seen"], history["removed_in"], history["previous_template"],
        int(not record.annotation.is_empty), len(record.evidence), len(related)))
    db.execute("INSERT INTO documents VALUES (?, ?)", (record.id, json_line(record_document(record))))
    _insert_annotation(db, record)
    _insert_evidence(db, repository, record)
    db.executemany("INSERT INTO related VALUES (?,?,?,?)", [
        (record.id, position, r.id, r.reason) for position, r in enumerate(related)])
    _insert_entry_points(db, record)


def _insert_entry_points(db: sqlite3.Connection, record: ErrorRecord) -> None:
    found = record.entry_points.items if record.entry_points is not None else ()
    db.executemany("INSERT INTO entry_points VALUES (?,?,?,?,?,?,?)", [
        (record.id, position, e.name, json_line(list(e.chain)), len(e.chain) - 1, e.stops, e.caught_by)
        for position, e in enumerate(found)])


def _insert_annotation(db: sqlite3.Connection, record: ErrorRecord) -> None:
    data = record.annotation.data

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    db.execute("INSERT INTO annotations VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
        record.id, int(record.annotation.is_empty), text("written_for"), text("what_it_means"),
        text("when_it_happens"), text("example_fix"),
        *(json_line(data.get(key) or []) for key in
          ("solutions", "defensive_patterns", "prevention", "related")),
        json_line(data)))


def _insert_evidence(db: sqlite3.Connection, repository: Repository, record: ErrorRecord) -> None:
    pin = repository.manifest.pin
    db.executemany("INSERT INTO evidence VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
        (record.id, position, e.path, e.line, e.test, e.form, e.check, e.exception, e.pattern,
         e.fits, permalink(pin, e.path, e.line, e.line))
        for position, e in enumerate(record.evidence)])


# ---------------------------------------------------------------- derived columns


def literal_words(runs: Iterable[str]) -> str:
    """The template's literal text, runs apart: what full-text search indexes."""
    return " ".join(run for run in runs if run.strip())


def mark_at(snippet: str, index: int) -> int | None:
    """The character offset where line `index` (0-based) of the snippet ends; None outside."""
    lines = snippet.split("\n")
    if not 0 <= index < len(lines):
        return None
    return sum(len(line) + 1 for line in lines[:index]) + len(lines[index].rstrip("\r"))
