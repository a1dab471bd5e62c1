"""Writing many records at once: only changed texts are written, each atomically, none left half."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.parse.visitor import find_raise_sites
from crawler.records import ACTIVE, ErrorRecord, Evidence, History, Related
from crawler.store import (
    documents,
    manifest_file,
    plain_files,
    record_files,
    render,
    repo_output,
    safe_yaml,
)

SOURCE = b"".join(b"def f%d():\n    raise ValueError('message %d')\n" % (i, i) for i in range(5))


def records() -> list[ErrorRecord]:
    sites = find_raise_sites("m.py", SOURCE, "m").sites
    return [ErrorRecord(id=f"{i:016x}", status=ACTIVE, repo="local/o/n", commit="0" * 40,
                        url=None, site=site, history=History(first_seen="0" * 40))
            for i, site in enumerate(sites)]


def test_only_changed_records_are_written_and_no_temp_file_is_left(tmp_path: Path) -> None:
    first = records()
    assert record_files.write_records(tmp_path, first) == 5
    folder = tmp_path / record_files.ERRORS_DIR
    paths = sorted(folder.iterdir())
    assert [p.name for p in paths] == [f"{i:016x}.yaml" for i in range(5)]
    for record, path in zip(first, paths):
        assert path.read_text(encoding="utf-8") == render.record_text(record)
        assert record_files.load_record(path).site == record.site
    before = {p.name: p.stat().st_mtime_ns for p in paths}

    assert record_files.write_records(tmp_path, first) == 0
    changed = list(first)
    changed[2] = replace(changed[2], status="needs_review")
    assert record_files.write_records(tmp_path, changed) == 1
    after = {p.name: p.stat().st_mtime_ns for p in sorted(folder.iterdir())}
    assert {name for name in before if before[name] != after[name]} == {f"{2:016x}.yaml"}
    assert not [p for p in folder.iterdir() if p.suffix == ".tmp"]


def test_nothing_to_write_creates_no_folder(tmp_path: Path) -> None:
    assert record_files.write_records(tmp_path, []) == 0
    assert not (tmp_path / record_files.ERRORS_DIR).exists()


def one_dump_text(record: ErrorRecord) -> str:
    """The record file as a single YAML mapping (how record_text first wrote it)."""
    return (safe_yaml.dump_yaml({"schema_version": 1, "id": record.id, "status": record.status,
                            "extracted": documents.extracted_data(record)})
            + safe_yaml.dump_yaml({"annotation": record.annotation.data})
            + safe_yaml.dump_yaml({"history": documents.history_data(record.history)}))


def test_record_text_is_the_same_rendered_ahead_or_not() -> None:
    tricky = [replace(r, id=i) for r, i in zip(records(), ["1234567890123456", "12e4567890123456",
                                                          "0000000000000000", "abcdefabcdefabcd",
                                                          "0x00000000000001"])]
    plain = [render.record_text(r) for r in tricky]
    assert plain == [one_dump_text(r) for r in tricky]


@pytest.mark.parametrize("snippet", ["x\n\n", "x\n\n\n", "x\n \n\n", "    a\n\n", "x\n"])
def test_a_snippet_ending_in_blank_lines_reads_back(tmp_path: Path, snippet: str) -> None:
    """PyYAML ends such a text with `...`; joined with the next block it must still load."""
    record = replace(records()[0], site=replace(records()[0].site, snippet=snippet))
    record_files.write_records(tmp_path, [record])
    (path,) = (tmp_path / record_files.ERRORS_DIR).iterdir()
    assert record_files.load_record(path).site.snippet == snippet


def test_an_update_reads_each_rewritten_file_once(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`pending_writes` compares each new text with its file; the write does not read it again."""
    from crawler import pipeline
    from tests.helpers.outputkit import SHA_B, collected, folder_of, module

    root = tmp_path / "out"
    pipeline.apply(collected({"pkg/a.py": module("a", 3)}), root)
    reads: list[str] = []
    real_text_of = plain_files.text_or_none

    def counted(path: Path | str) -> str | None:  # every comparison of a text with its file
        if str(path).endswith(".yaml"):
            reads.append(Path(path).name)
        return real_text_of(path)

    monkeypatch.setattr(record_files, "text_or_none", counted)
    monkeypatch.setattr(repo_output, "text_or_none", counted)
    result = pipeline.apply(collected({"pkg/a.py": module("a", 3, offset=2)}, SHA_B), root)
    assert result.files_written == 4  # three moved records and the manifest
    assert sorted(reads) == sorted({*reads}), f"a file read twice: {reads}"
    assert manifest_file.MANIFEST in reads and len(reads) == 4
    monkeypatch.undo()
    assert manifest_file.load_manifest(folder_of(root)) == result.manifest


# Ids that YAML would read as numbers are quoted; the items rendered once must say so too.
tricky_ids = st.sampled_from(["1234567890123456", "0123456701234567", "12e4567890123456",
                              "0000000000000000", "abcdefabcdefabcd", "1e10000000000000"]
                             ) | st.text("0123456789abcdef", min_size=16, max_size=16)


@settings(max_examples=200, deadline=None)
@given(related=st.lists(st.tuples(tricky_ids, st.sampled_from(["same_scope", "same_shape"])),
                        max_size=6),
       patterns=st.lists(st.text(max_size=30), max_size=2), first_seen=st.sampled_from(["a", "b"]))
def test_related_items_and_history_rendered_once_are_the_whole_dump(
        related: list[tuple[str, str]], patterns: list[str], first_seen: str) -> None:
    record = replace(records()[0], related=tuple(Related(i, reason) for i, reason in related),
                     evidence=tuple(Evidence("t.py", 1, "t", "pytest.raises", "match", "E", p, 1)
                                    for p in patterns),
                     history=History(first_seen=first_seen * 40))
    assert render.record_text(record) == one_dump_text(record)
    assert render.record_text(record) == one_dump_text(record), "and again, from the memo"
