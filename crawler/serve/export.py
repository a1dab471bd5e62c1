"""Exports of an output folder for the site and API projects: JSON Lines, JSON documents, SQLite.

Every export is deterministic: records in (repo, id) order, JSON with keys in the records' own
order, no timestamps; the same records give byte-identical files. The record documents are the
YAML records as JSON (valid against schemas/record.schema.json); the JSON index and the SQLite
database carry EXPORT_SCHEMA_VERSION (schemas/export-index.schema.json, schemas/export.sql).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from crawler import __version__
from crawler.errors import OutputError
from crawler.git.permalink import permalink
from crawler.records import REMOVED, SCHEMA_VERSION, ErrorRecord, Manifest
from crawler.regexes import BoundedRegex, Budget
from crawler.serve import export_target
from crawler.serve.export_versions import insert_versions
from crawler.serve.review import load_output_folders
from crawler.store.atomic import sync_folder, write_atomic
from crawler.store.documents import extracted_data, history_data, versions_data
from crawler.store.plain_files import refuse_links_below, refuse_replacing, text_or_none
from crawler.store.repo_output import REBUILT
from crawler.store.schemas import SCHEMA_DIR

EXPORT_SCHEMA_VERSION = 1
FORMATS = ("jsonl", "json", "sqlite")
DDL = SCHEMA_DIR / "export.sql"
_ID_FILE = re.compile(r"[0-9a-f]{16}\.json\Z")


@dataclass(frozen=True)
class Repository:
    """One repository folder of an output root: its manifest and records, in id order."""

    folder: Path
    manifest: Manifest
    records: tuple[ErrorRecord, ...]


@dataclass(frozen=True)
class Output:
    """What an output root holds for an export: its repositories, and one line for each file
    left out (a broken record, a renamed copy, a stray file, a broken manifest's repository)."""

    repositories: tuple[Repository, ...]
    skipped: tuple[str, ...] = ()


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


def _records(repositories: Sequence[Repository]) -> Iterator[tuple[Repository, ErrorRecord]]:
    for repository in repositories:
        for record in repository.records:
            yield repository, record


def _json_line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _json_file(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------- JSON Lines


def write_jsonl(repositories: Sequence[Repository], out: TextIO) -> int:
    """One record document a line; returns how many."""
    count = 0
    for _, record in _records(repositories):
        out.write(_json_line(record_document(record)) + "\n")
        count += 1
    return count


def export_jsonl(repositories: Sequence[Repository], target: Path) -> int:
    lines = [_json_line(record_document(r)) + "\n" for _, r in _records(repositories)]
    write_atomic(target, "".join(lines))
    sync_folder(target.parent)
    return len(lines)


def _jsonl_chunks(repositories: Sequence[Repository]) -> Iterator[bytes]:
    for _, record in _records(repositories):
        yield (_json_line(record_document(record)) + "\n").encode("utf-8")


# ---------------------------------------------------------------- JSON documents and index


def index_entry(record: ErrorRecord) -> dict[str, Any]:
    site = record.site
    return {"id": record.id, "repo": record.repo, "exception": site.exception,
            "template": site.message.template, "status": record.status, "path": site.path,
            "line": site.line}


def index_document(repositories: Sequence[Repository]) -> dict[str, Any]:
    """The listing of every record, with the repositories they come from."""
    return {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "record_schema_version": SCHEMA_VERSION,
        "repositories": [
            {"repo": r.manifest.pin.repo, "commit": r.manifest.pin.sha, "ref": r.manifest.pin.ref,
             "records": r.manifest.counts.records, "removed": r.manifest.counts.removed}
            for r in repositories
        ],
        "records": [index_entry(record) for _, record in _records(repositories)],
    }


def export_json(repositories: Sequence[Repository], target: Path) -> int:
    """TARGET/errors/<id>.json for every record and TARGET/index.json; stale record files go.

    Files whose content is already right are not rewritten. Returns how many records.
    """
    errors = target / "errors"
    refuse_links_below(target, errors)  # its writes stay in the folder given
    errors.mkdir(parents=True, exist_ok=True)
    wanted: set[str] = set()
    for _, record in _records(repositories):
        name = f"{record.id}.json"
        wanted.add(name)
        _write_if_changed(errors / name, _json_file(record_document(record)))
    for stale in sorted(errors.iterdir()):
        if _ID_FILE.match(stale.name) and stale.name not in wanted:
            stale.unlink()
    _write_if_changed(target / "index.json", _json_file(index_document(repositories)))
    sync_folder(errors)
    return len(wanted)


def _write_if_changed(path: Path, text: str) -> None:
    if text_or_none(path) != text:  # a link or a FIFO is never read, and refused by the write
        write_atomic(path, text)


# ---------------------------------------------------------------- SQLite


def export_sqlite(repositories: Sequence[Repository], target: Path) -> int:
    """Write the database to a temporary file beside TARGET, then put it in place."""
    refuse_replacing(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)  # sqlite creates it afresh
    try:
        count = _build_database(repositories, tmp)
        os.replace(tmp, target)
        sync_folder(target.parent)
    except sqlite3.Error as error:
        _remove(tmp)
        raise OutputError(f"{target}: cannot write the database ({error}); nothing there was changed"
                          ) from error
    except BaseException:
        _remove(tmp)
        raise
    return count


def _stream_sqlite(repositories: Sequence[Repository], target: export_target.Target) -> int:
    """The database built in a private temp folder, then its bytes written to a device or pipe.

    SQLite needs a file it can seek in; streaming the finished file gives a pipe's reader (`ssh`,
    `gzip`) the very bytes a file target would hold.
    """
    with tempfile.TemporaryDirectory(prefix="crawler-export-") as folder:
        built = os.path.join(folder, "export.db")
        try:
            count = _build_database(repositories, built)
        except sqlite3.Error as error:
            raise OutputError(f"{target.given}: cannot build the database ({error}); nothing "
                              "was written") from error
        with open(built, "rb") as handle:
            export_target.stream(target, iter(partial(handle.read, 1 << 20), b""))
    return count


def _build_database(repositories: Sequence[Repository], path: str) -> int:
    connection = sqlite3.connect(path)
    try:
        count = _fill(connection, repositories)
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


def _fill(db: sqlite3.Connection, repositories: Sequence[Repository]) -> int:
    db.executescript(DDL.read_text(encoding="utf-8"))
    db.execute(f"PRAGMA user_version = {EXPORT_SCHEMA_VERSION}")
    db.execute(f"PRAGMA application_id = {export_target.APPLICATION_ID}")  # tells our files apart
    db.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("schema_version", str(EXPORT_SCHEMA_VERSION)),
        ("record_schema_version", str(SCHEMA_VERSION)),
        ("crawler_version", __version__),
    ])
    count = 0
    for repository in repositories:
        m, pin = repository.manifest, repository.manifest.pin
        db.execute("INSERT INTO repositories VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
            pin.repo, pin.host, pin.owner, pin.name, pin.source, pin.ref, pin.sha,
            int(pin.reachable), m.crawler_version, m.counts.files, m.counts.parsed,
            m.counts.skipped, m.counts.records, m.counts.removed))
        classes: Counter[tuple[str, str | None, bool]] = Counter()
        for record in repository.records:
            _insert_record(db, repository, record)
            classes[(record.site.exception, record.site.exception_qualname,
                     record.status == REMOVED)] += 1
            count += 1
        _insert_classes(db, pin.repo, classes)
    insert_versions(db, (record for _, record in _records(repositories)))  # `crawler history`
    db.execute("INSERT INTO records_fts(records_fts) VALUES ('rebuild')")
    db.execute("INSERT INTO annotations_fts(annotations_fts) VALUES ('rebuild')")
    return count


def _insert_record(db: sqlite3.Connection, repository: Repository, record: ErrorRecord) -> None:
    site, message = record.site, record.site.message
    history = history_data(record.history)
    document = record_document(record)
    db.execute("INSERT INTO records VALUES (" + ",".join("?" * 30) + ")", (
        record.id, record.repo, record.status, site.exception, site.exception_qualname,
        message.template, message.kind, _json_line(list(message.placeholders)), message.regex,
        site.path, site.line, site.end_line, site.column, site.class_name, site.function,
        site.qualname, int(site.factory), message.argument, message.defined_at, site.cause,
        site.condition, record.url, record.commit, site.snippet_line, site.snippet,
        history["first_seen"], history["removed_in"], history["previous_template"],
        len(record.evidence), _json_line(document)))
    data = record.annotation.data

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    db.execute("INSERT INTO annotations VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
        record.id, int(record.annotation.is_empty), text("written_for"), text("what_it_means"),
        text("when_it_happens"), text("example_fix"),
        *(_json_line(data.get(key) or []) for key in
          ("solutions", "defensive_patterns", "prevention", "related")),
        _json_line(data)))
    pin = repository.manifest.pin
    db.executemany('INSERT INTO evidence VALUES (?,?,?,?,?,?,?,?,?,?,?)', [
        (record.id, position, e.path, e.line, e.test, e.form, e.check, e.exception, e.pattern,
         e.fits, permalink(pin, e.path, e.line, e.line))
        for position, e in enumerate(record.evidence)])
    db.executemany("INSERT INTO related VALUES (?,?,?,?)", [
        (record.id, position, r.id, r.reason) for position, r in enumerate(record.related)])


def _insert_classes(db: sqlite3.Connection, repo: str,
                    classes: Counter[tuple[str, str | None, bool]]) -> None:
    rows: dict[str, list[Any]] = {}
    for (written, qualname, removed), number in classes.items():
        name = qualname or written
        row = rows.setdefault(name, [repo, name, name.rsplit(".", 1)[-1], qualname, 0, 0])
        row[5 if removed else 4] += number
        if qualname and not row[3]:
            row[3] = qualname
    db.executemany("INSERT INTO exception_classes VALUES (?,?,?,?,?,?)",
                   [rows[name] for name in sorted(rows)])


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
    words = sorted(set(_WORD.findall(message)), key=lambda w: (-len(w), w))[:64]
    if not words:
        return []
    query = "{template} : (" + " OR ".join(f'"{w}"' for w in words) + ")"
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
    repositories = list(output.repositories)
    if fmt == "json":
        return export_json(repositories, where.real)
    if where.how == export_target.STREAM:
        if fmt == "sqlite":
            return _stream_sqlite(repositories, where)
        export_target.stream(where, _jsonl_chunks(repositories))
        return sum(len(r.records) for r in repositories)
    if fmt == "sqlite":
        return export_sqlite(repositories, where.real)
    return export_jsonl(repositories, where.real)


__all__ = ["EXPORT_SCHEMA_VERSION", "FORMATS", "DatabaseHit", "Output", "Repository",
           "export", "export_output", "export_json", "export_jsonl", "export_sqlite", "index_document",
           "load_output", "read_output", "record_document", "search_database", "write_jsonl"]
