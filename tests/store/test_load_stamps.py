"""A folder's load by its files' stats: a file whose stat is the one noted when it last loaded,
and old enough to stand for its bytes, is not read; every other file is, and an edit is seen."""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from crawler.records import ErrorRecord
from crawler.store import atomic, record_files, repo_output
from crawler.store.cache import DATABASE, LoadCache
from tests.helpers.records import a_record

HOUR = 3600 * 10**9


def a_folder(root: Path, count: int = 4) -> list[ErrorRecord]:
    records = [replace(a_record(), id=f"{i:016x}") for i in range(count)]
    record_files.write_records(root, records)
    (root / "errors" / "notes.txt").write_text("a stray file\n", encoding="utf-8")
    (root / "errors" / f"{2:016x}.yaml").write_text("id: [broken\n", encoding="utf-8")
    return records


def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record files a load reads from now on, by name."""
    seen: list[str] = []
    real = record_files.read_capped

    def counted(path: Path, *args: object) -> bytes:
        seen.append(Path(path).name)
        return real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(record_files, "read_capped", counted)
    return seen


def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock an hour on: every file of the test is old enough for its stat to be trusted."""
    monkeypatch.setattr(repo_output, "clock", lambda: time.time_ns() + HOUR)


def loaded(root: Path, loads: LoadCache | None) -> tuple[object, object]:
    found = repo_output.load_folder(root, loads=loads)
    return found.records, found.broken


def edited_condition(path: Path, new: str) -> None:
    """The record's condition `x < 0` changed in place to `new`, of the same length, mtime kept."""
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    assert len(new) == len("x < 0") and text.count("condition: x < 0") == 1
    with open(path, "r+", encoding="utf-8") as handle:  # the same inode and the same size
        handle.write(text.replace("condition: x < 0", f"condition: {new}"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` would


def test_a_warm_load_reads_no_file_and_gives_what_a_load_without_cache_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "out"
    a_folder(root)
    later(monkeypatch)
    cache = LoadCache(tmp_path / "cache")
    cold = loaded(root, cache)
    assert cold == loaded(root, None)
    stamps = cache.stamps(os.path.abspath(root))
    assert sorted(stamps) == [f"{i:016x}.yaml" for i in (0, 1, 3)]  # the broken one is not noted
    seen = reads(monkeypatch)
    assert loaded(root, LoadCache(tmp_path / "cache")) == cold
    # the stray file and the broken record alone are read again, and said again
    assert seen == ["notes.txt", f"{2:016x}.yaml"]


def test_a_file_just_written_is_read_so_an_edit_within_its_second_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real clock: a file whose ctime is within `STAMP_MARGIN_NS` is not noted, since a
    write in the same tick of a coarse clock may leave its whole stat as it was."""
    root = tmp_path / "out"
    a_folder(root)
    cache = LoadCache(tmp_path / "cache")
    loaded(root, cache)
    assert cache.stamps(os.path.abspath(root)) == {}
    path = root / "errors" / f"{1:016x}.yaml"
    edited_condition(path, "x > 9")
    seen = reads(monkeypatch)
    records = repo_output.load_folder(root, loads=cache).records
    assert {r.id: r.site.condition for r in records}[f"{1:016x}"] == "x > 9"
    assert f"{1:016x}.yaml" in seen


@pytest.mark.parametrize("how", ["in place", "renamed over it"])
def test_an_edit_of_a_noted_file_with_its_size_and_mtime_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    root = tmp_path / "out"
    a_folder(root)
    later(monkeypatch)
    cache = LoadCache(tmp_path / "cache")
    loaded(root, cache)
    path = root / "errors" / f"{1:016x}.yaml"
    assert path.name in cache.stamps(os.path.abspath(root))
    time.sleep(0.05)  # a tick of the file system's clock: its ctime moves
    if how == "in place":
        edited_condition(path, "x > 9")
    else:  # an editor's save: a new file renamed over the old one, the old mtime set on it
        before = os.stat(path)
        text = path.read_text(encoding="utf-8").replace("condition: x < 0", "condition: x > 9")
        atomic.write_all([(path, text)])
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert os.stat(path).st_size == before.st_size
    seen = reads(monkeypatch)
    records = repo_output.load_folder(root, loads=LoadCache(tmp_path / "cache")).records
    assert {r.id: r.site.condition for r in records}[f"{1:016x}"] == "x > 9"
    assert path.name in seen and f"{0:016x}.yaml" not in seen


def test_a_noted_key_whose_entry_is_gone_is_loaded_in_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "out"
    a_folder(root)
    later(monkeypatch)
    cache = LoadCache(tmp_path / "cache")
    cold = loaded(root, cache)
    path = root / "errors" / f"{3:016x}.yaml"
    key = cache.key(path.read_bytes())
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as connection:  # a row lost
        connection.execute("DELETE FROM entries WHERE key = ?", (key,))
    connection.close()
    fresh = LoadCache(tmp_path / "cache")
    seen = reads(monkeypatch)
    assert loaded(root, fresh) == cold
    assert path.name in seen
    assert fresh.get(path.read_bytes()) is not None  # stored again


def test_a_load_leaves_the_cyclic_collector_as_it_found_it(tmp_path: Path) -> None:
    root = tmp_path / "out"
    a_folder(root)
    assert gc.isenabled()
    loaded(root, LoadCache(tmp_path / "cache"))
    assert gc.isenabled()
    gc.disable()  # a caller that manages the collector itself
    try:
        loaded(root, None)
        assert not gc.isenabled()
    finally:
        gc.enable()
