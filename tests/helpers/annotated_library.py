"""A small annotated library extracted once, and the outcome of a full check of its folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler.errors import CrawlerError
from crawler.store import record_files
from crawler.store.cache import LoadCache


def outcome(path: Path, cache: LoadCache | None) -> Any:
    """What loading gives: the record, or the error's exact message."""
    try:
        return record_files.load_record(path, cache)
    except CrawlerError as error:
        return f"{type(error).__name__}: {error}"


ANNOTATED = ("annotation:\n"
             "  # reviewed by a person: keep this comment\n"
             "  written_for: 'bad {x}: {{literal}}'\n"
             "  what_it_means: >\n    Ünïcödé, 漢字 and 🙂\n    folded\n"
             "  solutions: [one,   two]\n"
             "  notes: {count: 3, ratio: 0.5, flag: yes}\n")
CASES = Path(__file__).resolve().parents[1] / "cases"
ODD_TEXT = '''\
def odd(value):
    if value is None or value == "ünïcödé":
        raise ValueError("naïve café: 漢字 🙂 {value}")
    raise RuntimeError("lone \\udcff and \\ud800 escapes, a\\x85line\\u2028break")


def blank_lines(value):
    raise KeyError("""tail


""")
'''


def full_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record files that go through every check from now on, by name."""
    checked: list[str] = []
    real = record_files.check_record_bytes

    def counted(raw: bytes, path: Path) -> Any:
        checked.append(path.name)
        return real(raw, path)

    monkeypatch.setattr(record_files, "check_record_bytes", counted)
    return checked


def a_library(make_repo: Any) -> Any:
    repo = make_repo("lib")
    for case in sorted(CASES.glob("*.py")):
        repo.write(f"pkg/{case.name}", case.read_text(encoding="utf-8"))
    repo.write("pkg/odd.py", ODD_TEXT)
    repo.commit("first")
    return repo
