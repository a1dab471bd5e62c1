"""The release history in the SQLite export: tables `versions` and `wordings`.

Written for every record that `crawler history` gave a release history (others have no row),
so a page or a datasette query can say "raised since v0.4.14" or "reworded in v0.5.0".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from crawler.records import ErrorRecord

DDL = """
CREATE TABLE versions (
  record_id TEXT PRIMARY KEY REFERENCES records(id),
  first_release TEXT,             -- the first release tag with the site; NULL: after the last one
  last_release TEXT               -- the last one once the site is gone; NULL while it is there
);
CREATE TABLE wordings (
  record_id TEXT NOT NULL REFERENCES records(id),
  position INTEGER NOT NULL,      -- oldest first
  template TEXT NOT NULL,
  first_release TEXT,             -- the first release that printed it; NULL: none yet
  last_release TEXT,              -- the last one; NULL while the site still prints it
  exception TEXT NOT NULL,        -- the class raised in those releases
  path TEXT NOT NULL,             -- the file it was in
  PRIMARY KEY (record_id, position)
);
CREATE INDEX wordings_template ON wordings(template);
"""


def insert_versions(db: sqlite3.Connection, records: Iterable[ErrorRecord]) -> None:
    """The two tables, filled from the records in the order given (repo, then id)."""
    db.executescript(DDL)
    for record in records:
        if record.versions is None:
            continue
        db.execute("INSERT INTO versions VALUES (?,?,?)",
                   (record.id, record.versions.first, record.versions.last))
        spans = record.history.templates if record.history is not None else ()
        db.executemany("INSERT INTO wordings VALUES (?,?,?,?,?,?,?)", [
            (record.id, position, s.template, s.first, s.last, s.exception, s.path)
            for position, s in enumerate(spans)])
