"""The SQLite export's `pages` table: one row per record holding what its published page shows.

A table, not a view, so that datasette links each listed row to a page of its own (its row page,
`/<db>/pages/<id>`) with nothing but `datasette serve DB -m DB.metadata.json`. A listing shows
`snippet_short`, a few lines around the raise; the row page shows the whole `snippet`, the
annotation, the evidence, the related records and the first entry points
(`datasette_metadata.PAGE_CSS` lays them out). Filled by SQL from the tables `export_sqlite`
wrote, after them.
"""

from __future__ import annotations

import sqlite3
import textwrap

RAISED_HERE = "  # <- raised here"
AROUND = 2  # lines of the snippet shown before and after the raise's last line in a listing
ON_A_PAGE = 3  # entry points a record's page lists (the table holds them all)

INSERT_PAGES = f"""
INSERT INTO pages
SELECT r.id,
       r.exception_name || ': ' || r.template,
       r.template,
       r.url,
       r.path || ':' || r.line,
       r.qualname,
       r.exception_class,
       r.kind,
       r.status,
       snippet_around(marked.snippet, r.end_line - r.snippet_line, {AROUND}),
       marked.snippet,
       a.what_it_means,
       a.when_it_happens,
       a.solutions,
       a.example_fix,
       a.defensive_patterns,
       a.prevention,
       a.related,
       (SELECT group_concat(line, char(10)) FROM (
          SELECT e.test || ' (' || e.path || ':' || e.line || '): ' || e."check" || ' '
                 || e.pattern AS line
          FROM evidence AS e WHERE e.record_id = r.id ORDER BY e.position)),
       (SELECT group_concat(line, char(10)) FROM (
          SELECT rel.related_id || ' (' || rel.reason || '): ' || o.exception_name || ': '
                 || o.template AS line
          FROM related AS rel JOIN records AS o ON o.id = rel.related_id
          WHERE rel.record_id = r.id ORDER BY rel.position)),
       (SELECT group_concat(line, char(10)) FROM (
          SELECT ep.name || ': ' || (SELECT group_concat(value, ' -> ') FROM json_each(ep.chain))
                 || coalesce(' (stops at ' || ep.stops || ')', '')
                 || coalesce(' (caught by ' || ep.caught_by || ')', '') AS line
          FROM entry_points AS ep WHERE ep.record_id = r.id AND ep.position < {ON_A_PAGE}
          ORDER BY ep.position)),
       r.repo,
       r.path,
       r.line,
       r.snippet_line,
       r.annotated,
       r.evidence_count,
       r.related_count,
       r.commit_sha,
       r.first_seen,
       r.removed_in,
       r.rowid
FROM records AS r
JOIN (SELECT d.record_id,
             CASE WHEN k.mark_at IS NULL THEN json_extract(d.document, '$.extracted.snippet')
                  ELSE substr(json_extract(d.document, '$.extracted.snippet'), 1, k.mark_at)
                       || '{RAISED_HERE}'
                       || substr(json_extract(d.document, '$.extracted.snippet'), k.mark_at + 1)
             END AS snippet
      FROM documents AS d JOIN records AS k ON k.id = d.record_id) AS marked
  ON marked.record_id = r.id
LEFT JOIN annotations AS a ON a.record_id = r.id
ORDER BY r.rowid
"""


def snippet_around(snippet: str | None, index: int, around: int) -> str | None:
    """Lines `index - around` to `index + around` (0-based) of the snippet: the raise with a
    few lines of context, dedented, for a listing whose rows stay a few lines high."""
    if snippet is None:
        return None
    lines = snippet.split("\n")
    start = max(0, min(index, len(lines) - 1) - around)
    return textwrap.dedent("\n".join(lines[start:index + around + 1])).rstrip("\n")


def insert_pages(db: sqlite3.Connection) -> None:
    """Fill `pages` from the records, documents, annotations, evidence and related tables."""
    db.create_function("snippet_around", 3, snippet_around, deterministic=True)
    db.execute(INSERT_PAGES)
