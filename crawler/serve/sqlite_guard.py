"""SQL on a database the crawler did not write (`lookup --db FILE`, a file at an export's target):
bounded, and run only on the tables the crawler's writer makes.

A database is a program as much as data: `records` may be a recursive view, a query may scan
without end. Before any query, `require_tables` checks in `sqlite_master` that every object
the reader touches is a plain table with the columns it reads (no view, no virtual table); and
`bounded` counts SQLite's virtual-machine steps through a progress handler and aborts the
statement past a budget that grows with the file's size. Steps, never seconds: the same file
is read or refused the same way on any machine, under any load.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from crawler.errors import OutputError

SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
STEP_EVERY = 1_000  # virtual-machine instructions between two calls of the progress handler
BASE_STEPS = 1_000_000  # instructions any small database may take (its schema, a few rows)
# lookup --db reads an export of the standard library (18 MB) in 0.0175 steps a byte: a margin of 100
STEPS_PER_BYTE = 2


class Budget:
    """The steps one connection may still take: the progress handler's count."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.left = steps

    def tick(self) -> int:
        """Called every STEP_EVERY instructions: non-zero aborts the running statement."""
        self.left -= STEP_EVERY
        return int(self.left < 0)


def budget_for(path: Path) -> Budget:
    """The steps a reader of `path` may take: BASE_STEPS, and STEPS_PER_BYTE for each byte."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    return Budget(BASE_STEPS + STEPS_PER_BYTE * size)


@contextmanager
def bounded(connection: sqlite3.Connection, where: Path, budget: Budget,
            remedy: str) -> Iterator[None]:
    """Run the statements of the block within `budget`; past it, one line naming `where`."""
    connection.set_progress_handler(budget.tick, STEP_EVERY)
    try:
        yield
    except sqlite3.OperationalError as error:
        if budget.left >= 0:
            raise
        raise OutputError(f"{where}: reading it took more than {budget.steps:,} SQLite steps, "
                          f"far more than a database of its size needs; it was left as it is; "
                          f"{remedy}") from error
    finally:
        connection.set_progress_handler(None, 0)


def require_tables(connection: sqlite3.Connection, where: Path,
                   tables: Mapping[str, tuple[str, ...]], remedy: str) -> None:
    """Refuse, in one line, a database where an object the reader touches is not a plain table
    with the columns it reads (a view, maybe recursive; a virtual table; a missing column)."""
    marks = ",".join("?" * len(tables))
    found = {name: (kind, sql or "") for name, kind, sql in connection.execute(
        f"SELECT name, type, sql FROM sqlite_master WHERE name IN ({marks})", tuple(tables))}
    for name, columns in tables.items():
        kind, sql = found.get(name, ("", ""))
        if kind != "table" or sql.upper().startswith("CREATE VIRTUAL"):
            raise OutputError(f"{where}: `{name}` is {_what(kind, sql)}, where a plain table is "
                              f"read; nothing was queried and it was left as it is; {remedy}")
        have = {row[0] for row in connection.execute(
            "SELECT name FROM pragma_table_info(?)", (name,))}
        missing = [column for column in columns if column not in have]
        if missing:
            raise OutputError(f"{where}: table `{name}` has no column {', '.join(missing)}; "
                              f"nothing was queried and it was left as it is; {remedy}")



def _what(kind: str, sql: str) -> str:
    """What an object of `sqlite_master` is, as a message names it."""
    if not kind:
        return "missing"
    if kind == "view" and "RECURSIVE" in sql.upper():
        return "a recursive view"
    return "a virtual table" if kind == "table" else f"a {kind}"


__all__ = ["BASE_STEPS", "STEPS_PER_BYTE", "STEP_EVERY", "Budget", "budget_for", "bounded",
           "require_tables"]
