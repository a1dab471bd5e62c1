"""The datasette metadata written beside a SQLite export: `datasette serve DB -m DB.metadata.json`.

Facets on the exception (by qualified name), the path, the kind and the status; the bulky side
table hidden; full-text search on the templates' literal words for the records table and the
`pages` view; and a canned query, "Find by runtime message", that needs no plugin: each
record's regex is also a GLOB pattern (`export_sqlite.glob_pattern`), which SQLite matches as
exactly as the regex, so the placeholders' values in a pasted message do not have to be words
of any template (full-text search would require every word).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from crawler.errors import OutputError
from crawler.serve.export.data import json_file
from crawler.store.atomic import write_atomic
from crawler.store.plain_files import text_or_none

SUFFIX = ".metadata.json"

FIND_BY_MESSAGE = """\
SELECT p.id, p.title, p.permalink, p.location, p.status, p.repo, r.literal_length, r.regex
FROM records AS r JOIN pages AS p ON p.id = r.id
WHERE r.glob IS NOT NULL AND r.literal_length > 0
  AND (rtrim(:message, char(10, 13)) GLOB r.glob
       OR rtrim(:message, char(10, 13)) GLOB ('*' || r.exception_name || ': ' || r.glob))
ORDER BY (rtrim(:message, char(10, 13)) GLOB ('*' || r.exception_name || ': ' || r.glob)) DESC,
         r.literal_length DESC, r.id
LIMIT 50"""

FIND_BY_MESSAGE_NOTE = (
    "Paste a message as Python printed it, with or without its traceback line's exception "
    "name (`ValueError: ...`). A record fits when the message fits its regex: each regex is "
    "kept as a GLOB pattern, literal text escaped and each placeholder a `*`, so the values "
    "in the message need not match anything. Records whose exception name prefixes the "
    "message come first, then those with the most literal text. A record whose regex is not "
    "of the generated shape (its glob is null) is not listed: narrow by regex with Python's "
    "`re.fullmatch(regex, message)` on the regex column, or `crawler lookup MESSAGE --db DB`.")

# What a `pages` listing shows (the rest is on each row's page), and the row page's labels.
LISTED = ("id", "title", "location", "qualname", "kind", "status", "snippet_short", "annotated",
          "evidence_count", "related_count")
ON_THE_PAGE = {"title": "Error", "template": "Message template", "permalink": "Permalink",
               "location": "Thrown at", "qualname": "In", "exception": "Exception class",
               "kind": "Message kind", "status": "Status", "snippet": "Source",
               "what_it_means": "What it means", "when_it_happens": "When it happens",
               "solutions": "Solutions", "example_fix": "Example fix",
               "defensive_patterns": "Defensive patterns", "prevention": "Prevention",
               "related_errors": "Related errors (annotation)",
               "evidence": "Tests that assert on the message", "related_records": "Related records",
               "entry_points": "Public calls that reach it"}
_PAGE_COLUMNS = (*ON_THE_PAGE, "snippet_short", "repo", "path", "line", "snippet_line",
                 "annotated", "evidence_count", "related_count", "commit_sha", "first_seen",
                 "removed_in", "record_rowid")
_FACETS = ["exception_class", "path", "kind", "status"]
_SEARCH = {"fts_table": "records_fts", "fts_pk": "record_rowid"}  # for the views


def metadata_path(database: Path) -> Path:
    """`<db>.metadata.json` beside the database."""
    return database.with_name(database.name + SUFFIX)


def page_css() -> str:
    """The `pages` table's layout, without a plugin or a template: a listing shows the LISTED
    columns (code in monospace), a row page the ON_THE_PAGE ones, one under the other, labelled."""
    listing, page = "body.table.table-pages", "body.row.table-pages"
    rules = [f"{listing} .col-{name} {{ display: none; }}"
             for name in _PAGE_COLUMNS if name not in LISTED]
    rules += [f"{page} .col-{name} {{ display: none; }}"
              for name in _PAGE_COLUMNS if name not in ON_THE_PAGE]
    rules += [f"{page} thead {{ display: none; }}",
              f"{page} tr, {page} td {{ display: block; border: none; }}",  # below the hiding
              f"{page} td:before {{ display: block; margin: 0.8em 0 0.2em; font-weight: bold; "
              "color: #555; font: bold 0.8rem sans-serif; white-space: normal; }",
              ".table-pages td.col-snippet_short, .table-pages td.col-snippet "
              "{ font-family: monospace; white-space: pre; font-size: 0.8rem; line-height: 1.3; }",
              f"{listing} td.col-title {{ min-width: 18em; }}"]
    rules += [f'{page} td.col-{name}:before {{ content: "{label}"; }}'
              for name, label in ON_THE_PAGE.items()]
    return "\n".join(rules) + "\n"


def _data_url(css: str) -> str:
    """A stylesheet as a `data:` URL: metadata can name it, and nothing is served beside it."""
    return "data:text/css;base64," + base64.b64encode(css.encode("utf-8")).decode("ascii")


def metadata(database_name: str) -> dict[str, Any]:
    """The metadata for a database that datasette names `database_name` (the file's stem)."""
    return {
        "title": "Raise sites",
        "extra_css_urls": [_data_url(page_css())],
        "description": "One record per raise site that carries a message, pinned to a commit. "
                       "`pages` holds what an error page shows; `records` lists them compactly.",
        "databases": {database_name: {
            "tables": {
                "pages": {**_SEARCH, "facets": ["exception", "path", "kind", "status"],
                          "facet_size": 8, "label_column": "title",
                          "description": "What one error page shows, one row per record: "
                                         "follow a row's id to its page."},
                "records": {"facets": _FACETS, "facet_size": 8, "label_column": "template",
                            "description": "One compact row per record; search reads the "
                                           "templates' literal words."},
                "errors": {**_SEARCH, "facets": ["exception", "status"]},
                "exception_classes": {"facets": ["repo"], "label_column": "name"},
                "documents": {"hidden": True},
                "annotations": {"fts_table": "annotations_fts"},
                "meta": {"hidden": True},
            },
            "queries": {
                "find_by_runtime_message": {
                    "title": "Find by runtime message",
                    "sql": FIND_BY_MESSAGE,
                    "description": FIND_BY_MESSAGE_NOTE,
                },
            },
        }},
    }


def check_beside(database: Path, force: bool = False) -> None:
    """Refuse, before the database is built, to replace a `<db>.metadata.json` that the
    crawler did not write (unless `force`), as the export itself refuses a person's file."""
    path = metadata_path(database)
    if force or not os.path.lexists(path):
        return
    text = text_or_none(path)  # None: not UTF-8, or a link or special file (the write refuses it)
    if text is None and not path.is_file():
        return
    try:
        ours = text == "" or json.loads(text or "").get("title") == metadata("")["title"]
    except (ValueError, AttributeError):
        ours = False
    if not ours:
        raise OutputError(f"{path}: a file the crawler did not write is where the database's "
                          "datasette metadata goes; move it, or give --force to replace it")


def write_beside(database: Path) -> Path:
    """Write `<db>.metadata.json` beside the database (unchanged text is not rewritten)."""
    path = metadata_path(database)
    text = json_file(metadata(database.stem))
    if text_or_none(path) != text:
        write_atomic(path, text)
    return path
