"""A batch of atomic writes renames its files several at once: each file whole, the manifest last."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.pipeline import apply
from crawler.store import atomic
from crawler.store.held_folder import JOURNAL, finish_checkpoint
from tests.helpers.outputkit import SHA_B, collected, folder_of, module, snapshot

RECORDS = 40  # more than the renames in flight at once


def _texts(folder: Path, version: str) -> list[tuple[Path, str]]:
    return [(folder / f"{i:016x}.yaml", f"id: {i:016x}\nversion: {version}\n" * (i + 1))
            for i in range(RECORDS)]


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(atomic.TEMP_SUFFIX))


@pytest.fixture
def renamed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The targets `os.replace` renamed over, in the order the renames finished."""
    done: list[str] = []
    real: Callable[..., Any] = os.replace

    def recording(source: Any, target: Any) -> None:
        real(source, target)
        done.append(os.path.basename(target))

    monkeypatch.setattr(os, "replace", recording)
    yield done


def test_a_batch_writes_every_file_whole_and_leaves_no_temp_file(tmp_path: Path,
                                                                  renamed: list[str]) -> None:
    atomic.write_all(_texts(tmp_path, "one"))
    atomic.write_all(_texts(tmp_path, "two"))  # over files that are there
    for path, text in _texts(tmp_path, "two"):
        assert path.read_text(encoding="utf-8") == text
    assert _temp_files(tmp_path) == []
    assert sorted(renamed) == sorted(2 * [path.name for path, _ in _texts(tmp_path, "two")])


def test_a_failed_rename_is_raised_after_the_others_ran(tmp_path: Path) -> None:
    """One target that cannot be replaced (a folder that is not empty) stops none of the others:
    each file is as it was or as it should be, and the first error is raised."""
    files = _texts(tmp_path, "one")
    staged = atomic.stage_batch(files)
    blocked = files[7][0]
    blocked.mkdir()
    (blocked / "inside").write_text("a person's file\n", encoding="utf-8")
    with pytest.raises(OSError):
        atomic.replace_all(list(zip(staged, (path for path, _ in files))))
    for path, text in files:
        if path != blocked:
            assert path.read_text(encoding="utf-8") == text
    assert (blocked / "inside").read_text(encoding="utf-8") == "a person's file\n"
    assert _temp_files(tmp_path) == [os.path.basename(staged[7])]  # for its caller to discard


def test_a_checkpoint_renames_its_records_before_its_manifest(tmp_path: Path,
                                                              renamed: list[str]) -> None:
    errors = tmp_path / "errors"
    errors.mkdir()
    files = [*_texts(errors, "checkpoint"), (tmp_path / "manifest.yaml", "commit: new\n")]
    staged = atomic.stage_batch(files)
    journal = [[os.path.relpath(tmp, tmp_path), str(path.relative_to(tmp_path))]
               for tmp, (path, _) in zip(staged, files)]
    (tmp_path / JOURNAL).write_text(json.dumps({"renames": journal}), encoding="utf-8")
    assert finish_checkpoint(tmp_path)
    assert renamed[-1] == "manifest.yaml" and len(renamed) == RECORDS + 1
    for path, text in files:
        assert path.read_text(encoding="utf-8") == text
    assert not (tmp_path / JOURNAL).exists() and _temp_files(errors) == []


def test_an_update_writes_only_files_whose_bytes_change(tmp_path: Path, renamed: list[str]) -> None:
    """Records moved, added, removed and untouched: every file renamed into place holds other
    bytes than the file it replaced (or is new), and the untouched ones are not written."""
    before = {"pkg/a.py": module("a", 6), "pkg/b.py": module("b", 6), "pkg/c.py": module("c", 3)}
    after = {"pkg/a.py": module("a", 7, offset=2), "pkg/b.py": module("b", 4),
             "pkg/c.py": module("c", 3)}
    apply(collected(before), tmp_path)
    old = snapshot(folder_of(tmp_path))
    renamed.clear()
    result = apply(collected(after, SHA_B), tmp_path)
    new = snapshot(folder_of(tmp_path))
    written = [rel for rel in new if any(rel.endswith(name) for name in renamed)]
    assert len(renamed) == len(written) == result.files_written > 0
    assert all(old.get(rel) != new[rel] for rel in written)
    assert {rel for rel in new if old.get(rel) != new[rel]} == set(written)
    assert len([rel for rel in new if rel.startswith("errors/") and rel not in written]) >= 3


def test_a_short_write_is_finished_and_the_text_kept_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temp file's bytes go to its descriptor in as many writes as the kernel takes: each
    file holds its text in UTF-8, its line ends as they are (no translation)."""
    real = os.write
    calls: list[int] = []

    def short(fd: int, data: Any) -> int:
        calls.append(fd)
        return real(fd, bytes(data[:5]))  # never more than five bytes at once

    monkeypatch.setattr(atomic.os, "write", short)
    files = [(tmp_path / f"{i:016x}.yaml", f"note: «{i}» ⟶ ok\r\nnext: \u00e9\n" * (i + 1))
             for i in range(3)]
    atomic.write_all(files)
    monkeypatch.undo()
    for path, text in files:
        assert path.read_bytes() == text.encode("utf-8")
    assert len(calls) >= sum(len(text.encode("utf-8")) // 5 for _, text in files)
    assert _temp_files(tmp_path) == []
