"""The site-shaped SQLite export (issue 18): the pages view, faceting by qualified name, every
link a foreign key with an index, the runtime-message query that needs no plugin, and datasette
serving it all with the metadata written beside the database."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.pipeline import extract
from crawler.regexes import literal_shape
from crawler.serve.export import datasette_metadata
from crawler.serve.export import writers as export
from crawler.serve.export.message_glob import message_glob
from tests.helpers.datasette_server import serving
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import annotate

SHAPE = '''\
class Shape:
    def check(self, dims):
        if len(dims) > 3:
            raise ValueError(
                f"expected at most 3 dimensions, got {len(dims)}")
        if min(dims) < 0:
            raise ValueError(f"negative dimension in {dims}")

    def glob(self, pattern, n):
        raise ValueError(f"bad [pattern*] {pattern}? got {n} of *them*")


def convert(x, dtype):
    if dtype not in ("int32", "float32"):
        raise TypeError(f"cannot convert {x!r} to dtype {dtype}")
    raise KeyError(f"{x}: {dtype}")
'''
TESTS = '''\
import pytest
from lib.shape import Shape

def test_dims():
    with pytest.raises(ValueError, match="got 5"):
        Shape().check([1] * 5)
'''


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real repository with a GitHub remote, extracted, one record annotated, exported."""
    base = tmp_path_factory.mktemp("site")
    repo = GitRepo(base / "lib")
    repo.write("lib/shape.py", SHAPE)
    repo.write("tests/test_shape.py", TESTS)
    repo.commit("first")
    repo.git("remote", "add", "origin", "https://github.com/example/lib.git")
    result = extract(str(repo.path), output_root=base / "out", cache_dir=base / "cache", jobs=1)
    [path] = [p for p in (result.folder / "errors").glob("*.yaml") if "template: negative" in p.read_text()]
    annotate(path, "A dimension below zero.")
    db = base / "errors.db"
    assert export.export(base / "out", "sqlite", db) == 5
    return db


def rows(db: Path, sql: str, *args: object) -> list[dict[str, Any]]:
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql, args)]
    finally:
        connection.close()


def test_a_page_shows_title_permalink_place_marked_snippet_and_counts(database: Path) -> None:
    [page] = rows(database, "SELECT * FROM pages WHERE template LIKE 'expected%'")
    sha = page["commit_sha"]
    assert page["title"] == "ValueError: expected at most 3 dimensions, got {len(dims)}"
    assert page["exception"] == "builtins.ValueError"
    assert page["permalink"] == f"https://github.com/example/lib/blob/{sha}/lib/shape.py#L4-L5"
    assert page["location"] == "lib/shape.py:4"
    assert (page["evidence_count"], page["related_count"], page["annotated"]) == (1, 2, 0)
    lines = page["snippet"].splitlines()
    marked = [n for n, line in enumerate(lines, page["snippet_line"]) if line.endswith("# <- raised here")]
    assert marked == [5]  # the raise's last line, so the snippet stays valid Python
    [document] = rows(database, "SELECT document FROM documents WHERE record_id = ?", page["id"])
    original = json.loads(document["document"])["extracted"]["snippet"]
    assert page["snippet"].replace("  # <- raised here", "") == original
    [annotated] = rows(database, "SELECT * FROM pages WHERE annotated = 1")
    assert annotated["what_it_means"] == "A dimension below zero."
    assert json.loads(annotated["solutions"]) == ["check the value first"]


def test_the_main_table_is_compact_and_faceted_by_qualified_name(database: Path) -> None:
    columns = {row["name"] for row in rows(database, "PRAGMA table_info(records)")}
    assert not columns & {"snippet", "document"}
    classes = rows(database, "SELECT exception_class, count(*) AS n FROM records GROUP BY 1 ORDER BY 1")
    assert classes == [{"exception_class": "builtins.KeyError", "n": 1},
                       {"exception_class": "builtins.TypeError", "n": 1},
                       {"exception_class": "builtins.ValueError", "n": 3}]


def test_every_link_is_a_foreign_key_with_an_index(database: Path) -> None:
    connection = sqlite3.connect(database)
    try:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL%'")]
        links = 0
        for table in tables:
            keys: dict[int, list[str]] = {}
            for key in connection.execute(f"PRAGMA foreign_key_list({table})"):
                keys.setdefault(key[0], []).append(key[3])
            indexed = [[c[2] for c in connection.execute(f"PRAGMA index_info({index[1]})")]
                       for index in connection.execute(f"PRAGMA index_list({table})")]
            for columns in keys.values():
                links += 1
                assert any(index[:len(columns)] == columns for index in indexed), (table, columns)
        # related_id, pages.id and entry_points' record among them, and the release history's two
        assert links == 12
        assert ["related_id"] in [[c[2] for c in connection.execute(f"PRAGMA index_info({i[1]})")]
                                  for i in connection.execute("PRAGMA index_list(related)")]
    finally:
        connection.close()


def test_full_text_search_reads_literal_words_only(database: Path) -> None:
    def search(words: str) -> list[str]:
        return [r["template"] for r in rows(
            database, "SELECT r.template FROM records_fts JOIN records AS r ON r.rowid = records_fts.rowid "
                      "WHERE records_fts MATCH ?", words)]
    assert search("literal_words: dimensions") == ["expected at most 3 dimensions, got {len(dims)}"]
    assert search("literal_words: dims") == []  # a placeholder's source is no word of the message
    assert search("literal_words: len") == []


def find(database: Path, message: str) -> list[str]:
    return [r["title"] for r in rows(database, datasette_metadata.FIND_BY_MESSAGE.replace(
        ":message", "?"), *[message] * datasette_metadata.FIND_BY_MESSAGE.count(":message"))]


@pytest.mark.parametrize(("message", "title"), [
    ("expected at most 3 dimensions, got 7", "ValueError: expected at most 3 dimensions, got {len(dims)}"),
    ("ValueError: negative dimension in [1, -2]", "ValueError: negative dimension in {dims}"),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\nTypeError: cannot convert "
     "1.5 to dtype int8\n", "TypeError: cannot convert {x} to dtype {dtype}"),
    ("bad [pattern*] a*[? got 3 of *them*", "ValueError: bad [pattern*] {pattern}? got {n} of *them*"),
])
def test_the_runtime_message_query_finds_the_record_first(database: Path, message: str, title: str) -> None:
    assert find(database, message)[0] == title


def test_a_traceback_line_fits_only_with_the_repr_its_class_prints(database: Path) -> None:
    """`KeyError: 'k'` is no hit on `{x}: {dtype}` (a KeyError shows its message's repr: the
    quotes are part of the pattern), while `KeyError: 'a: b'` is."""
    assert find(database, "KeyError: 'k'") == []
    assert find(database, "KeyError: 'a: b'") == ["KeyError: {x}: {dtype}"]
    assert find(database, "a: b") == []
    assert find(database, "nothing like any template") == []


def test_the_glob_fits_exactly_the_messages_the_regex_fits(database: Path) -> None:
    """Random messages made of each template's literal runs and of values holding GLOB's
    special characters, newlines and nothing: GLOB and the regex agree on every one."""
    generator = random.Random(18)
    values = ["", "x", "*", "?", "[", "]", "[*]", "a\nb", "ü", " got ", "dims", "'", '"']
    checked = 0
    for record in rows(database, "SELECT regex, glob FROM records"):
        shape = literal_shape(record["regex"])
        glob = message_glob(record["regex"])
        assert glob is not None and glob.pattern == record["glob"]
        for _ in range(200):
            parts = [glob.runs[0]]
            for run in glob.runs[1:]:
                parts += [generator.choice(values), run]
            message = "".join(parts)
            if generator.random() < 0.3:  # a mutation: a character changed or dropped
                at = generator.randrange(len(message) + 1)
                message = message[:at] + generator.choice(["", "X", "*"]) + message[at + 1:]
            [(fits,)] = sqlite3.connect(":memory:").execute("SELECT ? GLOB ?", (message, record["glob"]))
            fits_regex = re.fullmatch(record["regex"], message) is not None
            if message.endswith("\n"):  # `$` lets a final newline through; the query trims it
                continue
            assert bool(fits) == fits_regex, (message, record["glob"])
            if shape is not None:
                assert fits_regex == (shape.fullmatch(message) is not None)
            checked += 1
    assert checked > 900


def test_the_metadata_is_written_beside_the_database(database: Path) -> None:
    data = json.loads((database.parent / "errors.db.metadata.json").read_text(encoding="utf-8"))
    tables = data["databases"]["errors"]["tables"]
    assert tables["pages"]["facets"] == ["exception", "path", "kind", "status"]
    assert tables["records"]["facets"] == ["exception_class", "path", "kind", "status"]
    assert tables["documents"]["hidden"] is True
    assert "GLOB" in data["databases"]["errors"]["queries"]["find_by_runtime_message"]["sql"]


def test_a_persons_file_where_the_metadata_goes_is_kept(database: Path, tmp_path: Path) -> None:
    out = database.parent / "out"
    target = tmp_path / "site.db"
    person = datasette_metadata.metadata_path(target)
    person.write_text('{"title": "my own settings"}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["export", str(out), "--format", "sqlite", "--to", str(target)])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert f"{person}: a file the crawler did not write" in result.output
    assert not target.exists() and person.read_text(encoding="utf-8") == '{"title": "my own settings"}\n'
    result = CliRunner().invoke(main, ["export", str(out), "--format", "sqlite", "--to", str(target),
                                       "--force"])
    assert result.exit_code == 0, result.output
    assert json.loads(person.read_text(encoding="utf-8"))["title"] == "Raise sites"


# ---------------------------------------------------------------- datasette, as a site serves it


@pytest.fixture
def served(database: Path) -> Iterator[str]:
    """`datasette serve DB -m DB.metadata.json` on 127.0.0.1, stopped by its id."""
    with serving(database, datasette_metadata.metadata_path(database), wait=30) as base:
        yield base + "/errors"


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_datasette_serves_pages_facets_and_the_runtime_message_query(served: str) -> None:
    page = get(served + "/pages.json?_shape=objects&location=lib/shape.py:4")
    [row] = page["rows"]
    assert row["title"] == "ValueError: expected at most 3 dimensions, got {len(dims)}"
    assert row["permalink"].startswith("https://github.com/example/lib/blob/")
    assert "# <- raised here" in row["snippet"]
    assert set(page["facet_results"]) >= {"exception", "path", "kind", "status"}
    message = urllib.parse.quote("ValueError: negative dimension in [1, -2]")
    found = get(served + f"/find_by_runtime_message.json?_shape=array&message={message}")
    assert found[0]["title"] == "ValueError: negative dimension in {dims}"
    searched = get(served + "/pages.json?_shape=array&_search=" + urllib.parse.quote("dimensions"))
    assert [r["template"] for r in searched] == ["expected at most 3 dimensions, got {len(dims)}"]
    tables = {t["name"]: t for t in get(served + ".json")["tables"]}
    assert tables["documents"]["hidden"] is True
