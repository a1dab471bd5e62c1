"""One bad file blinds nothing else; regexes written by others are bounded.

Two real repositories are extracted under one output root; one record of one of them is
broken by hand. `lookup` (folder and `--db`) and `export` name it on stderr, serve every other
record of both repositories, and exit 1 at the end. Lookup answers any query within a second:
200 records of an eight-placeholder template, and a record whose regex a person edited.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler import pipeline
from crawler.catalogue.merge import merge
from crawler.cli.commands import main
from crawler.parse.visitor import find_raise_sites
from crawler.records import Counts, ExtractOptions, Manifest, Pin
from crawler.serve.export import writers as export
from crawler.serve.lookup.sources import LookupIndex, load_records
from crawler.store import manifest_file, record_files
from tests.helpers.gitrepo import GitRepo

ALPHA = '''\
def open_door(door):
    raise ValueError(f"door {door} is locked")


def close_door(door):
    raise ValueError(f"door {door} is already closed")
'''
BETA = '''\
def fly(height):
    raise RuntimeError(f"cannot fly at {height} metres")
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output root with two repositories, extracted from real git repositories."""
    base = tmp_path_factory.mktemp("two")
    for name, source in (("alpha", ALPHA), ("beta", BETA)):
        repo = GitRepo(base / name)
        repo.write(f"{name}.py", source)
        repo.commit("first")
        pipeline.extract(str(repo.path), ref=repo.head(), output_root=base / "out",
                         cache_dir=base / "cache", jobs=1, evidence=False)
    return base / "out"


@pytest.fixture
def root(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(built, copy)
    return copy


def record_with(root: Path, words: str) -> Path:
    records, _ = load_records(root)
    (record,) = [r for r in records if words in r.site.message.template]
    return next(root.rglob(f"errors/{record.id}.yaml"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def break_one(root: Path) -> Path:
    """Break alpha's `locked` record by hand, and copy beta's record under another name."""
    broken = record_with(root, "locked")
    broken.write_text(broken.read_text(encoding="utf-8").replace("status: active", "status: [x"),
                      encoding="utf-8")
    flying = record_with(root, "fly")
    shutil.copyfile(flying, flying.with_name(flying.stem + " (copy).yaml"))
    return broken


def test_lookup_serves_every_other_record_and_names_the_bad_files(root: Path) -> None:
    broken = break_one(root)
    for message, words in (("RuntimeError: cannot fly at 9 metres", "fly"),
                           ("door 3 is already closed", "closed")):
        code, out, err = run("lookup", message, str(root), "--json")
        assert code == 1
        found = json.loads(out)["matches"][0]
        assert words in found["template"] and found["exact"]
        lines = err.splitlines()
        assert len(lines) == 2 and lines[0].startswith(f"skipped: {broken}:")
        assert "(copy).yaml: a renamed copy of record" in lines[1]


def test_export_and_lookup_db_serve_every_other_record(root: Path, tmp_path: Path) -> None:
    broken = break_one(root)
    database = tmp_path / "errors.db"
    code, out, err = run("export", str(root), "--format", "sqlite", "--to", str(database))
    assert code == 1 and out.startswith("2 records exported")
    assert err.splitlines()[0].startswith(f"skipped: {broken}:")
    with sqlite3.connect(database) as db:
        assert sorted(r[0] for r in db.execute("SELECT template FROM records")) == [
            "cannot fly at {height} metres", "door {door} is already closed"]
    code, out, err = run("lookup", "cannot fly at 3 metres", "--db", str(database), "--json")
    assert code == 0 and json.loads(out)["matches"][0]["exact"]
    code, out, err = run("export", str(root), "--format", "jsonl", "--to", "-")
    assert code == 1 and len(out.splitlines()) == 2 and f"skipped: {broken}:" in err


def test_a_broken_manifest_leaves_out_its_repository_only(root: Path) -> None:
    manifest = next(root.rglob("alpha/manifest.yaml"))
    manifest.write_text("files: [\n", encoding="utf-8")
    code, out, err = run("export", str(root), "--format", "jsonl", "--to", "-")
    assert code == 1 and [json.loads(line)["extracted"]["function"] for line in out.splitlines()] == ["fly"]
    assert err.startswith(f"skipped: {manifest}") and "its repository was left out" in err


# ---------------------------------------------------------------- bounded regexes

EIGHT = "".join("    raise ValueError(f\"" + " a ".join(f"{{{x}{i}}}" for x in "abcdefgh") + "!\")\n"
                for i in range(200))
HOSTILE = "a " * 32 + "?"  # 65 bytes; `re` took 0.8 s on each record (2-core machine, shared)
FITS = "1 a 2 a 3 a 4 a 5 a 6 a 7 a 8!"
PIN = Pin(source="x", host="local", owner="o", name="eight", ref="HEAD", sha="0" * 40)


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 records of an eight-placeholder template, one of them with an edited regex."""
    source = ("def f(" + ", ".join(f"{x}{i}" for i in range(200) for x in "abcdefgh") + "):\n"
              + EIGHT).encode("utf-8")
    records = merge(PIN, [], find_raise_sites("m.py", source).sites).records
    assert len(records) == 200
    root = tmp_path_factory.mktemp("eight") / "out"
    folder = root / "local" / "o" / "eight"
    for record in records:
        record_files.write_record(folder, record)
    edited = record_files.record_path(folder, records[0].id)
    text = edited.read_text(encoding="utf-8")
    start = text.index("  regex: ")
    end = text.index("\n", start)
    edited.write_text(text[:start] + "  regex: '^(a|aa)+$'" + text[end:], encoding="utf-8")
    manifest_file.write_manifest(folder, Manifest(PIN, "0.1.0", ExtractOptions(),
                                                  Counts(records=200), (), ()))
    return root


@pytest.mark.parametrize("query", [HOSTILE, "a" * 60 + "b", "x" * 100_000 + "!"],
                         ids=["eight-placeholders", "catastrophic", "100k-characters"])
def test_lookup_answers_any_query_within_a_second(eight: Path, query: str) -> None:
    records, problems = load_records(eight)
    assert len(records) == 200 and problems == []
    index = LookupIndex(records)
    started = time.perf_counter()
    answer = index.answer(query)
    assert time.perf_counter() - started < 1.0
    assert all(not m.exact for m in answer.matches)


def test_an_edited_catastrophic_regex_is_counted_not_waited_for(eight: Path) -> None:
    code, out, err = run("lookup", "a" * 60 + "b", str(eight))
    # nothing matches: exit 1 since issue 18 (it was 0)
    assert code == 1 and "1 records' regexes ran out of time" in err
    assert out.startswith("no raise site of the catalogued repositories prints this message")
    code, out, _ = run("lookup", FITS, str(eight), "--json")
    # 199 fit: the first ten come back, as the closest (exit 1): their only words, ` a `, are a
    # phrase every library prints (`rarity`), which earns no trust
    assert code == 1 and len(json.loads(out)["matches"]) == 10


def test_lookup_db_is_bounded_too(eight: Path, tmp_path: Path) -> None:
    database = tmp_path / "eight.db"
    export.export(eight, "sqlite", database)
    started = time.perf_counter()
    hits = export.search_database(database, HOSTILE)
    assert time.perf_counter() - started < 1.0 and not any(h.exact for h in hits)
    assert export.search_database(database, FITS)[0].exact
