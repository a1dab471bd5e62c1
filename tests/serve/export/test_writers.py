"""Exports loaded back and checked against the records and their schemas; the database queried."""

from __future__ import annotations

import json
import sqlite3
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from crawler.catalogue.merge import merge
from crawler.cli.commands import main
from crawler.parse.visitor import find_raise_sites
from crawler.records import Counts, ExtractOptions, Manifest, Pin
from crawler.serve.export import writers as export
from crawler.store import manifest_file, record_files, schemas
from tests.helpers.datasette_server import serving
from tests.helpers.export import PIN, SHA


def loaded(root: Path) -> dict[str, dict[str, object]]:
    """Every record of an output root as the JSON document it should export to, by id."""
    return {r.id: json.loads(json.dumps(export.record_document(r)))
            for repo in export.load_output(root) for r in repo.records}


def test_fixture_has_evidence_and_related(output_root: Path) -> None:
    records = [r for repo in export.load_output(output_root) for r in repo.records]
    assert len(records) == 5
    with_evidence = {r.site.message.template: [e.test for e in r.evidence] for r in records if r.evidence}
    assert with_evidence == {
        "expected at most 3 dimensions, got {len(dims)}": ["test_dims"],
        "cannot convert {x} to dtype {dtype}": ["test_convert"],
        "cannot convert {x} to dtype {dtype.name}": ["test_convert"],
    }
    related = {r.site.message.template: sorted(x.reason for x in r.related) for r in records}
    assert related["cannot convert {x} to dtype {dtype}"] == ["same_shape"]
    assert related["negative dimension in {dims}"] == ["same_scope"]
    assert related["reshape is not supported for sparse shapes"] == []


def test_jsonl_round_trip(output_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "records.jsonl"
    assert export.export(output_root, "jsonl", target) == 5
    lines = target.read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line) for line in lines]
    assert [d["id"] for d in documents] == sorted(d["id"] for d in documents)
    expected = loaded(output_root)
    for document in documents:
        assert schemas.schema_problems(document, "record") == []
        assert document == expected[document["id"]]
    first = target.read_bytes()
    export.export(output_root, "jsonl", target)
    assert target.read_bytes() == first


def test_json_documents_and_index(output_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "json"
    (target / "errors").mkdir(parents=True)
    (target / "errors" / ("f" * 16 + ".json")).write_text("{}")  # stale, from an older export
    (target / "errors" / "README.txt").write_text("kept")  # not ours
    assert export.export(output_root, "json", target) == 5
    expected = loaded(output_root)
    names = sorted(p.name for p in (target / "errors").iterdir())
    assert names == sorted([f"{i}.json" for i in expected] + ["README.txt"])
    for record_id, document in expected.items():
        assert json.loads((target / "errors" / f"{record_id}.json").read_text()) == document
    index = json.loads((target / "index.json").read_text())
    schema = json.loads((schemas.SCHEMA_DIR / "export-index.schema.json").read_text())
    jsonschema.validate(index, schema)
    # split by repository (issue 18): the index lists repositories, each listing its records
    [repository] = index["repositories"]
    assert (repository["repo"], repository["annotated"]) == (PIN.repo, 1)
    listing = json.loads((target / repository["listing"]).read_text())
    jsonschema.validate(listing, json.loads((schemas.SCHEMA_DIR / "export-listing.schema.json").read_text()))
    assert [e["id"] for e in listing["records"]] == sorted(expected)
    for entry in listing["records"]:
        document = expected[entry["id"]]
        assert entry["template"] == document["extracted"]["message"]["template"]  # type: ignore[index]
        assert entry["status"] == document["status"]
        assert entry["url"] == document["extracted"]["url"]  # type: ignore[index]
        assert entry["kind"] == document["extracted"]["message"]["kind"]  # type: ignore[index]
        assert entry["annotated"] == ("sparse" in entry["template"])
    before = {p.name: p.read_bytes() for p in sorted(target.rglob("*.json"))}
    export.export(output_root, "json", target)
    assert {p.name: p.read_bytes() for p in sorted(target.rglob("*.json"))} == before


def test_sqlite_tables_match_the_records(output_root: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "errors.db"
    assert export.export(output_root, "sqlite", db_path) == 5
    expected = loaded(output_root)
    db = sqlite3.connect(db_path)
    try:
        assert db.execute("PRAGMA user_version").fetchone() == (export.EXPORT_SCHEMA_VERSION,)
        assert dict(db.execute("SELECT key, value FROM meta"))["schema_version"] == "2"
        assert db.execute("SELECT repo, commit_sha, records FROM repositories").fetchall() == [
            (PIN.repo, SHA, 5)]
        rows = db.execute("SELECT id, template, document FROM records JOIN documents ON record_id = id "
                          "ORDER BY records.rowid").fetchall()
        assert [r[0] for r in rows] == sorted(expected)
        for record_id, template, document in rows:
            assert json.loads(document) == expected[record_id]
            assert template == expected[record_id]["extracted"]["message"]["template"]  # type: ignore[index]
        assert db.execute("SELECT name, records FROM exception_classes ORDER BY name").fetchall() == [
            ("builtins.NotImplementedError", 1), ("builtins.TypeError", 2), ("builtins.ValueError", 2)]
        evidence = db.execute("SELECT test, url FROM evidence ORDER BY record_id, position").fetchall()
        assert sorted(t for t, _ in evidence) == ["test_convert", "test_convert", "test_dims"]
        assert all(url.startswith(f"https://github.com/example/lib/blob/{SHA}/tests/") for _, url in evidence)
        assert db.execute("SELECT count(*) FROM related").fetchone() == (4,)
        # full text: templates, and the annotations
        found = db.execute("SELECT r.id FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
                           "WHERE records_fts MATCH 'dimensions'").fetchall()
        assert len(found) == 1
        found = db.execute("SELECT a.record_id FROM annotations_fts JOIN annotations a ON a.rowid = "
                           "annotations_fts.rowid WHERE annotations_fts MATCH 'densify'").fetchall()
        assert len(found) == 1
        assert db.execute("SELECT count(*) FROM errors WHERE what_it_means IS NOT NULL").fetchone() == (1,)
    finally:
        db.close()
    first = db_path.read_bytes()
    export.export(output_root, "sqlite", db_path)
    assert db_path.read_bytes() == first


@pytest.mark.parametrize("message, template", [
    ("expected at most 3 dimensions, got 7", "expected at most 3 dimensions, got {len(dims)}"),
    ("cannot convert 1.5 to dtype int8", "cannot convert {x} to dtype {dtype}"),
    ("reshape is not supported for sparse shapes", "reshape is not supported for sparse shapes"),
])
def test_search_by_runtime_message(output_root: Path, tmp_path: Path, message: str, template: str) -> None:
    db_path = tmp_path / "errors.db"
    export.export(output_root, "sqlite", db_path)
    hits = export.search_database(db_path, message)
    assert hits[0].template == template and hits[0].exact


def test_search_puts_templates_of_placeholders_only_after_real_fits(tmp_path: Path) -> None:

    pin = Pin("x", "local", "o", "n", "HEAD", "0" * 40)
    source = b"def f(msg, n):\n    raise ValueError(f'{msg}')\n    raise ValueError(f'got {n} items')\n"
    records = merge(pin, [], find_raise_sites("a.py", source).sites).records
    folder = tmp_path / "out" / "local" / "o" / "n"
    for record in records:
        record_files.write_record(folder, record)
    manifest_file.write_manifest(folder, Manifest(pin, "0.1.0", ExtractOptions(), Counts(records=2), (), ()))
    export.export(tmp_path / "out", "sqlite", tmp_path / "e.db")
    hits = export.search_database(tmp_path / "e.db", "got 3 items")
    assert [(h.template, h.exact) for h in hits] == [("got {n} items", True)]


def test_search_refuses_a_missing_database(tmp_path: Path) -> None:
    with pytest.raises(export.OutputError, match="no such database"):
        export.search_database(tmp_path / "none.db", "x")


def test_cli_export(output_root: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["export", str(output_root), "--format", "jsonl", "--to", "-"])
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) == 5
    result = runner.invoke(main, ["export", str(output_root), "--format", "sqlite", "--to",
                                  str(tmp_path / "e.db")])
    assert result.exit_code == 0 and result.output == f"5 records exported as sqlite to {tmp_path / 'e.db'}\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(main, ["export", str(empty), "--format", "json", "--to", str(tmp_path / "j")])
    assert result.exit_code == 1 and "no manifest.yaml found" in result.output


# ---------------------------------------------------------------- datasette, when installed


@pytest.fixture
def datasette(output_root: Path, tmp_path: Path) -> Iterator[str]:
    db_path = tmp_path / "errors.db"
    export.export(output_root, "sqlite", db_path)
    with serving(db_path, wait=30) as base:
        yield base + "/errors"


def test_datasette_serves_the_database(datasette: str) -> None:
    def get(path: str) -> dict[str, object]:
        with urllib.request.urlopen(datasette + path, timeout=10) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    rows = get("/records.json?_shape=array&_search=" + urllib.parse.quote("dimensions"))
    assert [r["template"] for r in rows] == ["expected at most 3 dimensions, got {len(dims)}"]  # type: ignore[index, union-attr]
    query = urllib.parse.quote("select value from meta where key = 'schema_version'")
    assert get(f".json?sql={query}&_shape=array") == [{"value": "2"}]
    assert len(get("/errors.json?_shape=array")) == 5  # the view
