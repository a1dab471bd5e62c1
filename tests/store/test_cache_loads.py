"""The cache of checked record loads: hits skip the checks, everything else loads as before."""

from __future__ import annotations

import datetime
import json
import math
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.cli.commands import main
from crawler.errors import CrawlerError
from crawler.pipeline import extract, update, update_run
from crawler.records import Annotation, ErrorRecord, Evidence, Related, empty_annotation
from crawler.store import manifest_file, record_files, render, repo_output, safe_yaml, schemas
from crawler.store.annotation_edits import edited_annotation
from crawler.store.cache import DATABASE, MANIFEST, LoadCache, is_plain
from tests.helpers.annotated_library import ANNOTATED, CASES, ODD_TEXT, a_library, full_checks, outcome
from tests.helpers.output_faults import BREAKS, _break
from tests.helpers.outputkit import snapshot
from tests.helpers.records import a_record

pytestmark = pytest.mark.runs_long


def exact(value: Any) -> Any:
    """A value with every type and every key order spelled out: `==` then means identical."""
    if isinstance(value, dict):
        return ("dict", [(exact(k), exact(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [exact(item) for item in value])
    return (type(value).__name__, repr(value))


def written(root: Path, text_of_annotation: str | None = None) -> Path:
    """A record file as the crawler writes it, with a person's annotation block if given."""
    record = a_record()
    record_files.write_record(root, record)
    path = root / "errors" / f"{record.id}.yaml"
    if text_of_annotation is not None:
        text = path.read_text(encoding="utf-8")
        start, end = text.index("annotation:"), text.index("history:")
        path.write_text(text[:start] + text_of_annotation + text[end:], encoding="utf-8")
    return path


@pytest.mark.parametrize("annotation", [None, ANNOTATED])
def test_a_second_load_is_a_hit_and_gives_the_same_record(tmp_path: Path,
                                                          annotation: str | None) -> None:
    path = written(tmp_path / "out", annotation)
    cache = LoadCache(tmp_path / "cache")
    first = record_files.load_record(path, cache)
    assert (cache.hits, cache.misses, cache.stored) == (0, 1, 1)
    second = record_files.load_record(path, cache)
    assert cache.hits == 1
    assert second == first == record_files.load_record(path)
    assert second.annotation.text == first.annotation.text
    assert exact(second.annotation.data) == exact(first.annotation.data)
    cache.flush()
    assert stored_keys(tmp_path / "cache") == {cache.key(path.read_bytes())}


def test_a_hit_runs_no_yaml_and_no_schema_check(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = written(tmp_path / "out", ANNOTATED)
    cache = LoadCache(tmp_path / "cache")
    expected = record_files.load_record(path, cache)

    def refuse(*args: object) -> None:
        raise AssertionError("checked again")

    for name in ("safe_load_text", "check_schema", "annotation_block", "yaml_text"):
        for module in (record_files, render, schemas, safe_yaml):  # wherever it is looked up
            if hasattr(module, name):
                monkeypatch.setattr(module, name, refuse)
    assert record_files.load_record(path, cache) == expected


def test_the_same_bytes_under_another_name_fail_as_without_a_cache(tmp_path: Path) -> None:
    path = written(tmp_path / "out")
    cache = LoadCache(tmp_path / "cache")
    record_files.load_record(path, cache)
    copy = path.with_name("fedcba9876543210.yaml")
    shutil.copyfile(path, copy)
    expected = outcome(copy, None)
    assert "is not the file's name" in expected
    assert outcome(copy, cache) == expected
    assert cache.hits == 1
    odd = path.with_name("not-an-id.yaml")
    shutil.copyfile(path, odd)
    assert outcome(odd, cache) == outcome(odd, None)


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_broken_file_is_never_a_hit(tmp_path: Path, name: str) -> None:
    """A person's edit gives other bytes: every check runs, with the message it gives today."""
    path = written(tmp_path / "out", ANNOTATED)
    cache = LoadCache(tmp_path / "cache")
    record_files.load_record(path, cache)
    _break(path, name, tmp_path / "marker")
    expected = outcome(path, None)
    assert isinstance(expected, str), name  # broken: an error message
    hits = cache.hits
    assert outcome(path, cache) == expected
    assert cache.hits == hits
    assert outcome(path, cache) == expected, "a refused file is not stored either"


def stored_keys(root: Path) -> set[str]:
    """The keys of checked loads written to the cache's database so far (not visit results)."""
    with sqlite3.connect(root / DATABASE) as connection:
        return {key for key, entry in connection.execute("SELECT key, entry FROM entries")
                if "block" in json.loads(entry)}


def rewrite_entry(root: Path, key: str, spoil: Any) -> None:
    with sqlite3.connect(root / DATABASE) as connection:
        (entry,) = connection.execute("SELECT entry FROM entries WHERE key = ?", (key,)).fetchone()
        connection.execute("UPDATE entries SET entry = ? WHERE key = ?",
                           (spoil(json.loads(entry)), key))


@pytest.mark.parametrize("spoil", [
    lambda entry: "{not json",
    lambda entry: "",
    lambda entry: json.dumps({**entry, "key": "0" * 64}),
    lambda entry: json.dumps({**entry, "data": []}),
    lambda entry: json.dumps({**entry, "block": 7}),
    lambda entry: json.dumps({k: v for k, v in entry.items() if k != "data"}),
    lambda entry: json.dumps({**entry, "data": {"id": "0123456789abcdef"}}),
    lambda entry: json.dumps([entry]),
])
def test_an_entry_that_is_not_what_its_name_says_is_rebuilt(tmp_path: Path, spoil: Any) -> None:
    path = written(tmp_path / "out", ANNOTATED)
    cache = LoadCache(tmp_path / "cache")
    expected = record_files.load_record(path, cache)
    cache.close()
    rewrite_entry(tmp_path / "cache", cache.key(path.read_bytes()), spoil)
    fresh = LoadCache(tmp_path / "cache")
    assert record_files.load_record(path, fresh) == expected
    assert (fresh.hits, fresh.corrupt) == (0, 1)
    assert record_files.load_record(path, fresh) == expected
    assert fresh.hits == 1, "rebuilt by the full load"


def test_a_cache_that_cannot_be_written_never_fails_a_load(tmp_path: Path) -> None:
    path = written(tmp_path / "out")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be\n")
    cache = LoadCache(blocked)
    load = record_files.load_record
    assert load(path, cache) == load(path, cache) == load(path)
    assert cache.hits == 0
    assert LoadCache(None).get(path.read_bytes()) is None
    assert record_files.load_record(path, LoadCache(None)) == record_files.load_record(path)


def test_data_that_json_cannot_hold_exactly_loads_but_is_not_stored(tmp_path: Path) -> None:
    dated = ANNOTATED.replace("  solutions:", "  reviewed: 2024-05-01\n  solutions:")
    path = written(tmp_path / "out", dated)
    cache = LoadCache(tmp_path / "cache")
    record = record_files.load_record(path, cache)
    assert record.annotation.data["reviewed"] == datetime.date(2024, 5, 1)
    assert (cache.stored, cache.unstorable) == (0, 1)
    assert record_files.load_record(path, cache) == record and cache.hits == 0


def test_the_key_holds_the_crawler_and_the_schema(tmp_path: Path) -> None:
    raw = written(tmp_path / "out").read_bytes()
    assert LoadCache(tmp_path, "1.0").key(raw) != LoadCache(tmp_path, "1.1").key(raw)
    assert LoadCache(tmp_path).key(raw) != LoadCache(tmp_path).key(raw + b"\n")


@pytest.mark.parametrize("value", [
    datetime.date(2024, 1, 1), math.nan, math.inf, {1: "int key"}, {"k": (1, 2)}, b"bytes",
    "\ud83d\ude00", "lone \udcff", {"k": {"deeper": [set()]}}, {"\udc80": 1},
])
def test_what_json_would_not_give_back_is_not_plain(value: Any) -> None:
    assert not is_plain(value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(st.characters(exclude_categories=("Cs",)), max_size=5), inner,
                      max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_plain_values_come_back_from_json_exactly(value: Any) -> None:
    assert is_plain(value)
    assert exact(json.loads(json.dumps(value, ensure_ascii=False))) == exact(value)


# ---------------------------------------------------------------- priming from written records


def real_records(make_repo: Any, tmp_path: Path) -> list[ErrorRecord]:
    """Every record of a real extraction of the test cases, as the crawler loads them back."""
    repo = make_repo("cases")
    for case in sorted(CASES.glob("*.py")):
        repo.write(f"pkg/{case.name}", case.read_text(encoding="utf-8"))
    repo.write("pkg/odd.py", ODD_TEXT)
    repo.commit("cases")
    result = extract(str(repo.path), output_root=tmp_path / "extracted",
                     cache_dir=tmp_path / "extract-cache", evidence=False)
    return [record_files.load_record(path) for path in record_files.iter_record_paths(result.folder)]


def varied(records: list[ErrorRecord]) -> list[ErrorRecord]:
    """The records, and the shapes a run writes: kept blocks, removals, derived parts, surrogates."""
    block = ANNOTATED
    data = yaml.safe_load(block)["annotation"]
    out = list(records)
    for index, record in enumerate(records):
        if index % 4 == 1:  # a person's block, comments and all, carried over as it stands
            record = replace(record, annotation=Annotation(data=data, text=block))
        elif index % 4 == 2:  # annotated data with no text to keep: dumped from the data
            record = replace(record, annotation=Annotation(
                data={**empty_annotation().data, "what_it_means": "é\n\nblank lines\n"}))
        elif index % 4 == 3:  # removed, in review, with derived parts
            record = replace(
                record, status="removed",
                history=replace(record.history, removed_in="c" * 40, previous_template="old {x}"),
                related=(Related(id="0" * 16, reason="same_scope"),),
                evidence=(Evidence("tests/test_x.py", 3, "test_x", "pytest.raises", "match",
                                   "ValueError", "bad \udc80 pattern", 1),))
        if index % 5 == 0:  # text read off a file may hold a lone surrogate: written as its escape
            record = replace(record, site=replace(
                record.site, snippet=record.site.snippet + "# \udcff\n", condition="x == '\ud800'"))
        out.append(replace(record, id=f"{index:016x}"))
    return out


def test_primed_entries_are_what_a_full_load_finds(make_repo: Any, tmp_path: Path) -> None:
    records = varied(real_records(make_repo, tmp_path))
    assert len(records) > 100
    cache = LoadCache(tmp_path / "cache")
    root = tmp_path / "out"
    assert record_files.write_records(root, records, loads=cache) == len(records)
    assert (cache.stored, cache.hits, cache.misses) == (len(records), 0, 0)
    for path in record_files.iter_record_paths(root):
        raw = path.read_bytes()
        primed = cache.get(raw)
        assert primed is not None, path
        full = record_files.check_record_bytes(raw, path)
        assert exact(primed[0]) == exact(full[0]), path
        assert primed[1] == full[1], path
        assert record_files.load_record(path, cache) == record_files.load_record(path)
    assert cache.hits == 2 * len(records)


def test_what_cannot_be_vouched_for_is_not_primed(tmp_path: Path) -> None:
    cache = LoadCache(tmp_path / "cache")
    floats = a_record(annotation=Annotation(data={"ratio": 0.5}))  # dumped and read back: maybe not
    invalid = a_record(id="fedcba9876543210", commit="not a sha")  # a full load would refuse it
    assert record_files.write_records(tmp_path / "out", [floats, invalid], loads=cache) == 2
    assert cache.stored == 0
    for record in (floats, invalid):
        path = tmp_path / "out" / "errors" / f"{record.id}.yaml"
        assert cache.get(path.read_bytes()) is None
    assert isinstance(outcome(tmp_path / "out" / "errors" / f"{invalid.id}.yaml", cache), str)


any_text = st.text(st.characters(exclude_categories=()), max_size=40)  # surrogates too
some_text = st.text(st.characters(exclude_categories=()), min_size=1, max_size=20)
annotation_values = st.recursive(
    st.none() | st.booleans() | st.integers() | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8), inner,
        max_size=3),
    max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(snippet=any_text, template=any_text, condition=st.none() | any_text,
       cause=st.none() | any_text, function=st.none() | some_text, exception=some_text,
       placeholders=st.lists(any_text, max_size=3), pattern=any_text,
       annotation=st.dictionaries(st.sampled_from(["what_it_means", "notes", "solutions", "x"]),
                                  annotation_values, max_size=3),
       kept=st.booleans(), line=st.integers(-1, 10**6))
def test_priming_agrees_with_a_full_load_of_any_record(
        snippet: str, template: str, condition: str | None, cause: str | None,
        function: str | None, exception: str, placeholders: list[str], pattern: str,
        annotation: dict[str, Any], kept: bool, line: int) -> None:
    """Whatever the record holds, a primed entry is the full load's result, or there is none."""
    base = a_record()
    message = replace(base.site.message, template=template, placeholders=tuple(placeholders))
    site = replace(base.site, snippet=snippet, condition=condition, cause=cause,
                   function=function, exception=exception, message=message, line=line)
    record = replace(base, site=site, evidence=(Evidence("t.py", 1, "t", "pytest.raises", "match",
                                                         "E", pattern, 1),))
    data = {**empty_annotation().data, **annotation}
    text_of_block = None
    if kept:  # a person's block: what the file would hold after a load, a comment added
        dumped = safe_yaml.dump_yaml({"annotation": data})
        text_of_block = dumped.replace("annotation:\n", "annotation:\n  # ünï comment\n", 1)
        try:
            data = safe_yaml.safe_load_text(text_of_block, "block")["annotation"]
        except (CrawlerError, TypeError):
            return
    record = replace(record, annotation=Annotation(data=data, text=text_of_block))
    text = render.record_text(record)
    primed = record_files.checked_of_written(record, text)
    try:
        full = record_files.check_record_bytes(text.encode("utf-8"), Path(f"{record.id}.yaml"))
    except CrawlerError:
        assert primed is None
        return
    if primed is not None:
        assert exact(primed[0]) == exact(full[0])
        assert primed[1] == full[1]


def test_load_folder_uses_the_cache_it_is_given_and_no_other(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "out"
    records = [replace(a_record(), id=f"{i:016x}") for i in range(4)]
    record_files.write_records(root, records)
    cache = LoadCache(tmp_path / "cache")
    first = repo_output.load_folder(root, loads=cache)
    assert (cache.hits, cache.misses) == (0, 4)
    seen: list[str] = []
    real = record_files.load_keyed
    # A wrapper sees each load, and the cache it is given (files just written are read: their
    # stat cannot stand for their bytes yet, `repo_output.STAMP_MARGIN_NS`).
    monkeypatch.setattr(repo_output, "load_keyed",
                        lambda p, loads, listed=False: seen.append(p.stem) or real(p, loads, listed))
    assert repo_output.load_folder(root, loads=cache).records == first.records
    assert cache.hits == 4 and len(seen) == 4
    # a user's check passes none: every load is a full one, whatever cache a run holds
    assert repo_output.load_folder(root).records == first.records
    assert cache.hits == 4


# ---------------------------------------------------------------- the runs that use it


def test_an_update_after_an_extract_checks_only_the_files_edited_by_hand(
        make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = a_library(make_repo)
    cache = tmp_path / "cache"
    first = extract(str(repo.path), output_root=tmp_path / "out", cache_dir=cache, evidence=False)
    paths = list(record_files.iter_record_paths(first.folder))
    assert len(stored_keys(cache)) == len(paths) + 1  # primed as written, and the manifest
    edited = next(p for p in paths if record_files.load_record(p).site.path == "pkg/literals.py")
    text = edited.read_text(encoding="utf-8")
    start, end = text.index("annotation:"), text.index("history:")
    edited.write_text(text[:start] + ANNOTATED + text[end:], encoding="utf-8")
    for case in ("literals.py", "scopes.py", "odd.py"):  # every record of these moves
        repo.write(f"pkg/{case}", "\n\n" + (repo.path / "pkg" / case).read_text(encoding="utf-8"))
    repo.commit("shift")
    checked = full_checks(monkeypatch)
    result = update(str(repo.path), output_root=tmp_path / "out", cache_dir=cache)
    assert result.problems == () and result.files_written > 10
    assert set(checked) <= {edited.name}
    checked.clear()
    monkeypatch.setattr(record_files, "check_record_bytes", lambda raw, path: pytest.fail("checked"))
    for path in record_files.iter_record_paths(first.folder):  # written and primed, or loaded and kept
        assert record_files.load_record(path, LoadCache(cache)) is not None


def test_an_update_writes_the_same_files_with_or_without_the_cache(
        make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = a_library(make_repo)
    cache = tmp_path / "cache"
    extract(str(repo.path), output_root=tmp_path / "cached", cache_dir=cache, evidence=False)
    shutil.copytree(tmp_path / "cached", tmp_path / "plain")
    for case in ("literals.py", "concat.py"):
        repo.write(f"pkg/{case}", "\n" + (repo.path / "pkg" / case).read_text(encoding="utf-8"))
    repo.write("pkg/odd.py", ODD_TEXT.replace("naïve", "naïf"))
    repo.commit("second")
    cached = update(str(repo.path), output_root=tmp_path / "cached", cache_dir=cache)
    monkeypatch.setattr(update_run, "load_cache", lambda cache_dir: LoadCache(None))
    plain = update(str(repo.path), output_root=tmp_path / "plain", cache_dir=cache)
    assert cached.files_written == plain.files_written > 0
    assert snapshot(cached.folder) == snapshot(plain.folder)


def test_a_manifest_written_is_primed_with_what_a_full_load_finds(
        make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = a_library(make_repo)
    cache = LoadCache(tmp_path / "cache")
    first = extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "cache",
                    evidence=False)
    raw = (first.folder / manifest_file.MANIFEST).read_bytes()
    primed = cache.get(raw, MANIFEST)
    assert primed is not None and primed[1] is None
    full = safe_yaml.safe_load_text(raw.decode("utf-8"), "manifest")
    assert exact(primed[0]) == exact(full)
    assert cache.get(raw) is None  # the same bytes as a record: another key
    monkeypatch.setattr(manifest_file, "safe_load_text", lambda text, where: pytest.fail("parsed"))
    assert manifest_file.load_manifest(first.folder, cache) == first.manifest


def test_a_manifest_edited_by_hand_is_checked_in_full(make_repo: Any, tmp_path: Path) -> None:
    repo = a_library(make_repo)
    cache = LoadCache(tmp_path / "cache")
    first = extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "cache",
                    evidence=False)
    path = first.folder / manifest_file.MANIFEST
    path.write_text(path.read_text(encoding="utf-8").replace("counts:", "counts: 3\nx:"),
                    encoding="utf-8")
    with pytest.raises(CrawlerError):
        manifest_file.load_manifest(first.folder, cache)
    path.write_text("# a comment\n" + render.manifest_text(first.manifest), encoding="utf-8")
    misses = cache.misses
    assert manifest_file.load_manifest(first.folder, cache) == first.manifest
    assert cache.misses == misses + 1
    assert manifest_file.load_manifest(first.folder, cache) == first.manifest  # now learnt
    assert cache.misses == misses + 1


def test_load_folder_reads_its_manifest_through_the_cache_it_is_given(
        make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` loads a folder with the run's cache: the manifest an extract wrote is not parsed
    again; one edited by hand is, and what it now holds is what the folder's load gives."""
    repo = a_library(make_repo)
    first = extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "cache",
                    evidence=False)
    assert first.manifest is not None and first.manifest.exception_classes
    parse = manifest_file.safe_load_text
    monkeypatch.setattr(manifest_file, "safe_load_text", lambda text, where: pytest.fail("parsed"))
    assert repo_output.load_folder(first.folder, loads=LoadCache(tmp_path / "cache")).manifest \
        == first.manifest
    edited = replace(first.manifest, exception_classes=())
    (first.folder / manifest_file.MANIFEST).write_text(render.manifest_text(edited),
                                                       encoding="utf-8")
    parsed: list[str] = []
    monkeypatch.setattr(manifest_file, "safe_load_text",
                        lambda text, where: parsed.append(where) or parse(text, where))
    loaded = repo_output.load_folder(first.folder, loads=LoadCache(tmp_path / "cache"))
    assert loaded.manifest == edited != first.manifest and len(parsed) == 1


def test_validate_checks_every_file_in_full(make_repo: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = a_library(make_repo)
    result = extract(str(repo.path), output_root=tmp_path / "out",
                     cache_dir=tmp_path / "cache", evidence=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the primed cache is the default one
    checked = full_checks(monkeypatch)
    outcome = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert outcome.exit_code == 0, outcome.output
    assert sorted(checked) == sorted(p.name for p in record_files.iter_record_paths(result.folder))


def test_a_database_that_cannot_be_read_is_moved_aside_and_started_again(tmp_path: Path) -> None:
    path = written(tmp_path / "out", ANNOTATED)
    cache = LoadCache(tmp_path / "cache")
    expected = record_files.load_record(path, cache)
    cache.close()
    (tmp_path / "cache" / DATABASE).write_bytes(b"not a database, " * 1000)
    broken = LoadCache(tmp_path / "cache")
    assert record_files.load_record(path, broken) == expected  # a full load, as without a cache
    assert broken.corrupt == 1 and broken.hits == 0
    assert (tmp_path / "cache" / f"{DATABASE}.broken").is_file()
    again = LoadCache(tmp_path / "cache")
    assert record_files.load_record(path, again) == expected
    again.flush()
    assert record_files.load_record(path, LoadCache(tmp_path / "cache")) == expected
    assert stored_keys(tmp_path / "cache") == {again.key(path.read_bytes())}


def test_put_answers_the_key_the_file_is_noted_by(tmp_path: Path) -> None:
    """A written record is hashed once: `put` answers the key it stored under, and the note of
    the file's name points to that entry (an edited block is a hit)."""
    path = written(tmp_path / "out")
    raw = path.read_bytes()
    cache = LoadCache(tmp_path / "cache")
    checked = record_files.check_record_bytes(raw, path)
    key = cache.put(raw, checked)
    assert key == cache.key(raw) and cache.get(raw) == checked
    text = raw.decode("utf-8")
    cache.note_file(path, key)
    edited = text.replace("what_it_means: null", "what_it_means: an edit", 1)
    assert edited != text
    found = edited_annotation(cache, edited, path)
    assert found is not None and found[0]["annotation"]["what_it_means"] == "an edit"
    assert LoadCache(None).put(raw, checked) == "" and LoadCache(None).get(raw) is None
