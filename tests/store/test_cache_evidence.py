"""The evidence cache: a test file's assertions by (path, blob) and the assertion reader."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from crawler.parse.outcomes import FileAssertions
from crawler.records import Skipped, TestAssertion
from crawler.store import cache as cache_module
from crawler.store import parse_cache
from crawler.store.parse_cache import EvidenceCache, ResultCache, assertion_reader_digest

FOUND = FileAssertions("tests/test_a.py", (
    TestAssertion("tests/test_a.py", 7, "T.test_x", "assertRaisesRegex", "match", ("ValueError",
                  "jax.errors.X"), r"bad \d+ é"),), unread=2, positions="ast")
CRASHED = FileAssertions("tests/test_b.py", (), failure=Skipped(
    "tests/test_b.py", "parser_crashed", "the parser killed its worker process: SIGSEGV"))


def test_assertions_and_failures_come_back_as_they_were_stored(tmp_path: Path) -> None:
    writer = EvidenceCache(tmp_path)
    writer.put("a" * 40, FOUND)
    writer.put("b" * 40, CRASHED)
    writer.close()
    reader = EvidenceCache(tmp_path)
    assert reader.get("tests/test_a.py", "a" * 40) == FOUND
    assert reader.get("tests/test_b.py", "b" * 40) == CRASHED
    assert reader.get("tests/test_a.py", "c" * 40) is None  # another blob
    assert reader.get("tests/other.py", "a" * 40) is None  # another path
    assert (reader.hits, reader.misses) == (2, 2)


def test_an_other_assertion_reader_never_reads_an_entry(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    EvidenceCache(tmp_path).put("a" * 40, FOUND)
    monkeypatch.setattr(parse_cache, "assertion_reader_digest", lambda: "edited")
    cache = EvidenceCache(tmp_path)
    assert cache.get("tests/test_a.py", "a" * 40) is None


def test_the_reader_digest_covers_what_the_assertion_reader_imports() -> None:
    root = Path(cache_module.__file__).resolve().parent.parent
    files = parse_cache.crawler_imports(root, root / "parse" / "assertions.py")
    names = {f.relative_to(root).as_posix() for f in files}
    assert {"parse/assertions.py", "parse/_walk.py", "parse/message/flow.py", "records/__init__.py",
            "records/sites.py", "records/record.py", "records/manifest.py"} <= names
    assert "parse/visitor.py" not in names  # imported for the type checker only
    # the digest reads a fixed list: it must be what the reader imports, no more, no less
    assert sorted(names) == sorted(parse_cache.ASSERTION_READER_SOURCES), \
        "the assertion reader's imports changed: list them in ASSERTION_READER_SOURCES"
    assert len(assertion_reader_digest()) == 64


def test_an_edit_of_a_module_the_assertion_reader_imports_changes_its_digest(
        tmp_path: Path) -> None:
    root = Path(cache_module.__file__).resolve().parent.parent
    copy = tmp_path / "crawler"
    for name in parse_cache.ASSERTION_READER_SOURCES:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((root / name).read_bytes())
    files = [copy / name for name in parse_cache.ASSERTION_READER_SOURCES]
    before = parse_cache.sources_digest(copy, files)
    assert parse_cache.sources_digest(copy, reversed(files)) == before  # in path order
    with (copy / "records" / "sites.py").open("a") as sites:
        sites.write("\n# an edit\n")
    assert parse_cache.sources_digest(copy, files) != before


def test_a_corrupt_entry_is_ignored_counted_and_replaced(tmp_path: Path) -> None:
    cache = EvidenceCache(tmp_path)
    cache.put("a" * 40, FOUND)
    cache.close()
    key = cache.key("tests/test_a.py", "a" * 40)
    with sqlite3.connect(tmp_path / cache_module.DATABASE) as db:
        broken = {"key": key, "path": "tests/test_a.py", "blob": "a" * 40, "assertions": 3}
        db.execute("UPDATE entries SET entry = ? WHERE key = ?", (json.dumps(broken), key))
    again = EvidenceCache(tmp_path)
    assert again.get("tests/test_a.py", "a" * 40) is None and again.corrupt == 1
    again.put("a" * 40, FOUND)
    assert again.get("tests/test_a.py", "a" * 40) == FOUND


def test_evidence_and_results_do_not_share_keys(tmp_path: Path) -> None:
    assert EvidenceCache(tmp_path).key("p.py", "a" * 40) != ResultCache(tmp_path).key("p.py", "a" * 40)


def test_a_pattern_json_cannot_hold_exactly_is_not_stored_and_fails_nothing(tmp_path: Path) -> None:
    odd = FileAssertions("tests/test_u.py", (TestAssertion(
        "tests/test_u.py", 3, "test_u", "pytest.raises", "match", ("UnicodeError",), "\udc80 bad"),))
    cache = EvidenceCache(tmp_path)
    cache.put("a" * 40, odd)
    cache.put("b" * 40, FOUND)
    cache.close()
    again = EvidenceCache(tmp_path)
    assert cache.unstorable == 1 and again.get("tests/test_u.py", "a" * 40) is None
    assert again.get("tests/test_a.py", "b" * 40) == FOUND
