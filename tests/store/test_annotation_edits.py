"""Record files whose annotation block alone a person edited: only the block is loaded, and
what a load finds is what a full check finds."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from crawler.pipeline import extract, update, update_run
from crawler.store import annotation_edits, record_files
from crawler.store.cache import LoadCache
from crawler.store.render import empty_annotation_text, split_at_annotation
from tests.helpers.annotated_library import ANNOTATED, a_library, full_checks, outcome
from tests.helpers.outputkit import snapshot
from tests.helpers.records import a_record


def primed(root: Path, cache: LoadCache) -> Path:
    """A record file as the crawler writes it, its checked load stored as it was written."""
    record = a_record()
    record_files.write_records(root, [record], loads=cache)
    return root / "errors" / f"{record.id}.yaml"


def with_block(path: Path, block: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index("annotation:"), text.index("history:")
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


# (the annotation block a person wrote, whether a load may take it alone)
BLOCKS = {
    "annotated": (ANNOTATED, True),
    "comments and blank lines": ("annotation:\n# at the margin\n\n  what_it_means: |\n"
                                 "    two\n\n    paragraphs\n  solutions: []\n", True),
    "flow mapping": ("annotation: {what_it_means: short, solutions: [a, b]}\n", True),
    "a list at the margin": ("annotation:\n- one\n- two\n", False),
    "a document marker": ("annotation:\n  what_it_means: x\n---\n", False),
    "a key at the margin": ("annotation:\n  what_it_means: x\nstatus: removed\n", False),
    "a second annotation": ("annotation: {}\nannotation:\n  what_it_means: y\n", False),
    "a key named otherwise": ("annotation:x: 1\n", False),
    "not a mapping": ("annotation: 5\n", False),
    "a wrong field": ("annotation:\n  solutions: 5\n", False),
    "bad yaml": ("annotation:\n  what_it_means: [unclosed\n", False),
    "an alias": ("annotation:\n  a: &x 1\n  b: *x\n", False),
    "a tag": ("annotation:\n  what_it_means: !!python/name:os.system ''\n", False),
    "a tab": ("annotation:\n\twhat_it_means: x\n", False),
    "a carriage return": ("annotation:\r\n  what_it_means: x\r\n", False),
    "a line separator": ("annotation:\n  what_it_means: 'a\u2028b'\n", False),
}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_an_edited_block_loads_as_a_full_check_finds(tmp_path: Path, name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    block, alone = BLOCKS[name]
    cache = LoadCache(tmp_path / "cache")
    path = primed(tmp_path / "out", cache)
    with_block(path, block)
    expected = outcome(path, None)
    checked = full_checks(monkeypatch)
    assert outcome(path, cache) == expected
    if isinstance(expected, str):
        assert checked == [path.name], "a broken file is reported by the full check"
    else:
        assert checked == ([] if alone else [path.name])
        assert not alone or expected.annotation.text == block
    if not isinstance(expected, str):  # stored: its bytes are a hit from now on
        assert outcome(path, cache) == expected and checked.count(path.name) <= 1


def test_the_block_alone_is_loaded_only_beside_text_that_passed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = LoadCache(tmp_path / "cache")
    path = primed(tmp_path / "out", cache)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: active", "status: removed")
                    .replace("annotation:\n", "annotation:\n  what_it_means: x\n", 1),
                    encoding="utf-8")
    expected = outcome(path, None)
    checked = full_checks(monkeypatch)
    assert outcome(path, cache) == expected
    assert checked == [path.name]
    other = primed(tmp_path / "out2", LoadCache(tmp_path / "other"))  # noted in another cache
    with_block(other, ANNOTATED)
    assert outcome(other, LoadCache(tmp_path / "empty")) == outcome(other, LoadCache(None))
    assert checked == [path.name, other.name, other.name]


def edit_every_annotation(folder: Path) -> int:
    """An annotation written on every record, in the layouts people use."""
    layouts = [ANNOTATED, BLOCKS["comments and blank lines"][0], BLOCKS["flow mapping"][0]]
    paths = sorted(record_files.iter_record_paths(folder))
    for number, path in enumerate(paths):
        with_block(path, layouts[number % len(layouts)])
    return len(paths)


def test_the_first_update_after_annotations_are_written_checks_no_file_in_full(
        make_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an extract, people annotate every record; the next update reads each file, finds
    its bytes new, and loads only the annotation blocks, with the result of full checks."""
    repo = a_library(make_repo)
    cache = tmp_path / "cache"
    first = extract(str(repo.path), output_root=tmp_path / "cached", cache_dir=cache,
                    evidence=False)
    assert edit_every_annotation(first.folder) > 40
    shutil.copytree(tmp_path / "cached", tmp_path / "plain")
    for case in ("literals.py", "concat.py"):  # their records move; the others are verified
        repo.write(f"pkg/{case}", "\n" + (repo.path / "pkg" / case).read_text(encoding="utf-8"))
    repo.commit("second")
    checked = full_checks(monkeypatch)
    cached = update(str(repo.path), output_root=tmp_path / "cached", cache_dir=cache)
    assert checked == []
    assert cached.problems == () and cached.files_written > 5
    monkeypatch.setattr(update_run, "load_cache", lambda cache_dir: LoadCache(None))
    plain = update(str(repo.path), output_root=tmp_path / "plain", cache_dir=cache)
    assert len(checked) > 40  # without the cache, every file is checked in full
    assert snapshot(cached.folder) == snapshot(plain.folder)


def test_a_file_never_noted_with_the_empty_block_is_found_by_its_own_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file a first extract wrote (the empty block), copied where nothing was noted: the
    edited copy is still loaded by its block alone, as a full check finds it."""
    cache = LoadCache(tmp_path / "cache")
    written = primed(tmp_path / "out", cache)
    path = tmp_path / "copy" / "errors" / written.name
    path.parent.mkdir(parents=True)
    shutil.copyfile(written, path)
    assert split_at_annotation(path.read_text(encoding="utf-8"))[1] == empty_annotation_text()
    assert cache.noted_key(path) is None and cache.noted_key(written) is not None
    with_block(path, ANNOTATED)
    text = path.read_text(encoding="utf-8")
    found = annotation_edits.edited_annotation(cache, text, path)
    assert found == record_files.check_record_bytes(text.encode("utf-8"), path)
    misses, hits = cache.misses, cache.hits
    checked = full_checks(monkeypatch)
    assert outcome(path, cache) == outcome(path, None) and checked == [path.name]
    assert (cache.misses, cache.hits) == (misses + 1, hits), "the lookup for another counts not"


def test_each_file_written_or_loaded_is_noted_by_name_and_its_edit_loads_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing notes each file's key under its name, in one entry for the folder that a new
    cache on the same folder reads; an edit of that file's block is then loaded by the block
    alone, and the edited file is noted in turn, so the next edit is too."""
    cache = LoadCache(tmp_path / "cache")
    path = primed(tmp_path / "first", LoadCache(tmp_path / "first-cache"))
    with_block(path, ANNOTATED)
    record = record_files.load_record(path, None)
    record_files.write_texts(tmp_path / "again", [record_files.RecordText(
        record, path.read_text(encoding="utf-8"))], loads=cache)
    again = tmp_path / "again" / "errors" / path.name
    assert cache.noted_key(again) == cache.key(again.read_bytes())
    fresh = LoadCache(tmp_path / "cache")  # what the next run reads
    assert fresh.noted_key(again) == cache.key(again.read_bytes())
    checked = full_checks(monkeypatch)
    for number, block in enumerate([BLOCKS["comments and blank lines"][0],
                                    BLOCKS["flow mapping"][0]]):
        with_block(again, block)
        assert outcome(again, fresh) == outcome(again, None)
        assert checked == [again.name] * (number + 1), "only the load without a cache checks"
        assert fresh.noted_key(again) == fresh.key(again.read_bytes())
