"""A record whose snippet ends in blank lines reads back: no `...` between its parts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from crawler.catalogue.merge import merge
from crawler.records import Pin, RaiseSite, Template
from crawler.store import record_files


def test_snippet_ending_in_blank_lines_round_trips(tmp_path: Path) -> None:
    pin = Pin("x", "github.com", "o", "n", "HEAD", "a" * 40, "https://github.com/o/n")
    site = RaiseSite("m.py", 2, 2, 4, None, "f", "f", "ValueError", "builtins.ValueError",
                     Template("literal", "bad", (), "^bad$"), None, None,
                     "def f():\n    raise ValueError('bad')\n\n\n", 1)
    [record] = merge(pin, [], [site]).records
    record_files.write_record(tmp_path, record)
    text = (tmp_path / record_files.ERRORS_DIR / f"{record.id}.yaml").read_text(encoding="utf-8")
    assert "\n...\n" not in text
    loaded = record_files.load_record(tmp_path / record_files.ERRORS_DIR / f"{record.id}.yaml")
    assert loaded.site == record.site
    assert replace(loaded, annotation=record.annotation) == record
