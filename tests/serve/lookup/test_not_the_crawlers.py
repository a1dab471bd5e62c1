"""What lookup meets that the crawler did not write: a database with a recursive view behind
`--db`, a pipe, a device, a link, a folder or another file as a folder's `lookup.sqlite`, and a
record edited in place behind its index's back.

Every command runs as a real `python -m crawler` process with a time limit (a pipe opened by
SQLite, or a recursive view, would wait or run forever); `subprocess.run` kills it by its id
when the limit passes. Device nodes are made with `os.mknod` in the test's folder (1,3: the null
device's numbers), as root only.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crawler.errors import OutputError
from crawler.serve import sqlite_guard
from crawler.serve.export.writers import export
from crawler.serve.lookup import index as lookup_index
from crawler.serve.lookup.sources import repository_folders
from tests.helpers.processes import ROOT, child_env

LIMIT = 60  # seconds for one command; each takes about one
TEMPLATE = "bad shape {shape}"


def crawler(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "crawler", *map(str, args)], cwd=ROOT,
                          env=child_env(), capture_output=True, text=True, timeout=LIMIT)


def one_line(process: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert process.returncode == code, (process.stdout, process.stderr)
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in process.stderr, process.stderr
    return lines[0]


# ---------------------------------------------------------------- lookup --db


@pytest.fixture
def database(out: Path, tmp_path: Path) -> Path:  # noqa: F811
    db = tmp_path / "errors.db"
    export(out, "sqlite", db)
    return db


def test_a_recursive_view_as_records_is_refused_in_one_line(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        connection.execute("ALTER TABLE records RENAME TO real_records")
        connection.execute("CREATE VIEW records AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                           "SELECT i + 1 FROM n) SELECT r.* FROM n, real_records AS r")
    connection.close()
    before = database.read_bytes()
    started = time.monotonic()
    line = one_line(crawler("lookup", "--db", database, "bad shape 3"))
    assert time.monotonic() - started < LIMIT / 2
    assert line.startswith(f"Error: {database}: `records` is a recursive view, where a plain "
                           "table is read; nothing was queried and it was left as it is")
    assert database.read_bytes() == before


def test_a_missing_column_is_refused_before_any_query(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        connection.execute("ALTER TABLE wordings DROP COLUMN first_release")
    connection.close()
    line = one_line(crawler("lookup", "--db", database, "bad shape 3"))
    assert f"{database}: table `wordings` has no column first_release" in line


def test_a_runaway_statement_stops_at_the_same_step_every_time() -> None:
    """The bound is counted in SQLite's steps, never in seconds: the same statement stops at the
    same count on any machine, however busy."""
    left = []
    for _ in range(2):
        budget = sqlite_guard.Budget(300_000)
        with sqlite3.connect(":memory:") as connection, pytest.raises(
                OutputError, match=r"^here: reading it took more than 300,000 SQLite steps"):
            with sqlite_guard.bounded(connection, Path("here"), budget, "export it again"):
                connection.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
                                   "FROM n) SELECT count(*) FROM n").fetchone()
        connection.close()
        left.append(budget.left)
    assert left[0] == left[1] < 0


def test_db_names_what_is_not_a_database(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    assert "pipe.db: a named pipe (FIFO), not an SQLite database file; it was left as it is" in (
        one_line(crawler("lookup", "--db", fifo, "bad shape 3")))
    notes = tmp_path / "notes.db"
    notes.write_text("my notes\n")
    assert "notes.db: a plain file, not an SQLite database" in one_line(
        crawler("lookup", "--db", notes, "bad shape 3"))
    assert "no such database" in one_line(crawler("lookup", "--db", tmp_path / "x.db", "x"), 2)


# ---------------------------------------------------------------- the folder's lookup.sqlite


def _state(path: Path) -> tuple[object, ...]:
    """What a file is and holds: its type and inode, and its bytes, target or listing."""
    found = os.lstat(path)
    if stat.S_ISLNK(found.st_mode):
        held: object = os.readlink(path)
    elif stat.S_ISDIR(found.st_mode):
        held = sorted(os.listdir(path))
    elif stat.S_ISREG(found.st_mode):
        held = path.read_bytes()
    else:
        held = None  # a pipe or a device: never opened
    return stat.S_IFMT(found.st_mode), found.st_ino, held


def _another_database(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE mine (note TEXT)")
        connection.execute("INSERT INTO mine VALUES ('weeks of work')")
    connection.close()


def _node(path: Path) -> None:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("os.mknod of a device node needs root")


PLACED = {
    "pipe": os.mkfifo,
    "device": _node,
    "link": lambda path: path.symlink_to(path.parent.parent / "elsewhere.sqlite"),
    "folder": lambda path: (path.mkdir(), (path / "kept").write_text("kept")),
    "text": lambda path: path.write_text("# my notes\n"),
    "database": _another_database,
}


@pytest.mark.parametrize("kind", sorted(PLACED))
def test_what_the_crawler_did_not_write_as_the_index_is_named_and_left(
        out: Path, kind: str) -> None:  # noqa: F811
    (folder,) = repository_folders(out)
    index = folder / lookup_index.INDEX_FILE
    elsewhere = out.parent / "elsewhere.sqlite"
    _another_database(elsewhere)
    index.unlink(missing_ok=True)  # the one extract made
    PLACED[kind](index)
    before, target = _state(index), elsewhere.read_bytes()
    done = crawler("lookup", "bad shape 3", out)
    line = one_line(done)
    assert line.startswith(f"skipped: {index}: ") and "it was left as it is" in line
    assert TEMPLATE in done.stdout  # answered all the same, from the records
    assert _state(index) == before and elsewhere.read_bytes() == target


def test_a_record_edited_in_place_is_seen_by_the_next_lookup(out: Path) -> None:  # noqa: F811
    """As nano or VS Code save: the same file truncated and written, the same size, its mtime
    put back; the folder's listing does not change, the file's ctime does."""
    (folder,) = repository_folders(out)
    assert crawler("lookup", "bad shape 3", out).returncode == 0  # builds the index
    time.sleep(lookup_index.RACY_NS / 1e9 + 0.1)  # past the racy window: signatures trusted
    assert crawler("lookup", "bad shape 3", out).returncode == 0
    (path,) = [p for p in (folder / "errors").iterdir() if TEMPLATE in p.read_text()]
    found = os.stat(path)
    text = path.read_text()
    with path.open("r+") as handle:
        handle.truncate(0)
        handle.write(text.replace("bad shape", "bad shope"))
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns))
    assert os.stat(path).st_size == found.st_size and os.stat(path).st_ino == found.st_ino
    edited = crawler("lookup", "bad shope 3", out)
    assert edited.returncode == 0 and "bad shope {shape}" in edited.stdout, edited


def test_keeping_the_index_refuses_a_link_and_leaves_it(out: Path, tmp_path: Path) -> None:  # noqa: F811
    """extract and update keep an index they find (`refresh`), but only the crawler's own: a
    link to one is refused (the run notes it and goes on) and left, and so is its target."""
    (folder,) = repository_folders(out)
    assert crawler("lookup", "bad shape 3", out).returncode == 0
    real = tmp_path / "real.sqlite"
    shutil.move(folder / lookup_index.INDEX_FILE, real)
    (folder / lookup_index.INDEX_FILE).symlink_to(real)
    before = real.read_bytes()
    with pytest.raises(OutputError, match="a symbolic link, not the lookup index"):
        lookup_index.refresh(folder)
    assert real.read_bytes() == before and (folder / lookup_index.INDEX_FILE).is_symlink()
