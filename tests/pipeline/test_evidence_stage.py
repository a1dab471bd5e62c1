"""Test evidence in whole runs: cached per blob, refreshed by update, crashes listed, regexes
from the tests bounded, and every stage reported."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.parse.workers import Limits, WorkerPool
from crawler.pipeline import (
    CLASSES,
    EVIDENCE,
    MATCHING,
    PARSING,
    WRITING,
    applying,
    evidence_stage,
    extract,
    update,
)
from crawler.records import ErrorRecord, ExtractOptions
from crawler.store import record_files
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import record_texts

LIB = '''\
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    raise TypeError("expected a number")


def other():
    raise KeyError("no such key")
'''

TEST_CHECK = '''\
import pytest
from lib import check


def helper():
    return 1


def test_negative():
    with pytest.raises(ValueError, match="x must be positive"):
        check(-1)
'''

TEST_OTHER = '''\
import unittest


class T(unittest.TestCase):
    def test_key(self):
        with self.assertRaisesRegex(KeyError, "no such key"):
            other()
'''

NO_EVIDENCE = "def test_plain():\n    assert 1 + 1 == 2\n"
CRASHER = "import pytest  # pytest.raises\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n"


def by_exception(folder: Path) -> dict[str, ErrorRecord]:
    records = [record_files.load_record(p) for p in record_files.iter_record_paths(folder)]
    return {r.site.exception: r for r in records}



@pytest.fixture
def repo(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("lib")
    repo.write("lib.py", LIB)
    repo.write("tests/test_check.py", TEST_CHECK)
    repo.write("tests/test_other.py", TEST_OTHER)
    repo.write("tests/test_plain.py", NO_EVIDENCE)
    repo.commit("library and tests")
    return repo


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The test files handed to a worker, run after run."""
    handed: list[str] = []
    real = WorkerPool.read_tests

    def counting(self: WorkerPool, files):  # type: ignore[no-untyped-def]
        def seen():  # type: ignore[no-untyped-def]
            for path, blob, data in files:
                handed.append(path)
                yield path, blob, data
        return real(self, seen())

    monkeypatch.setattr(WorkerPool, "read_tests", counting)
    return handed


def test_a_test_file_whose_blob_did_not_change_is_never_parsed_again(
        repo: GitRepo, tmp_path: Path, parsed: list[str]) -> None:
    first = extract(str(repo.path), output_root=tmp_path / "out")
    assert sorted(parsed) == ["tests/test_check.py", "tests/test_other.py", "tests/test_plain.py"]
    assert first.evidence is not None and first.evidence.records == 2
    before = record_texts(first.folder)
    parsed.clear()
    again = extract(str(repo.path), output_root=tmp_path / "out")
    assert parsed == [] and again.files_written == 0 and record_texts(again.folder) == before
    assert again.manifest.evidence_digest == first.manifest.evidence_digest is not None
    update(str(repo.path), output_root=tmp_path / "out")
    assert parsed == []
    # another output folder: the cache is by blob, not by folder
    extract(str(repo.path), output_root=tmp_path / "elsewhere")
    assert parsed == []


def test_update_refreshes_the_evidence_of_changed_tests_and_rewrites_only_those_records(
        repo: GitRepo, tmp_path: Path, parsed: list[str]) -> None:
    first = extract(str(repo.path), output_root=tmp_path / "out")
    records = by_exception(first.folder)
    assert [e.pattern for e in records["ValueError"].evidence] == ["x must be positive"]
    assert records["TypeError"].evidence == ()
    before = record_texts(first.folder)
    repo.write("tests/test_check.py", TEST_CHECK + '''

def test_type():
    with pytest.raises(TypeError, match="expected a number"):
        check("a")
''')
    repo.commit("a test of the TypeError")
    parsed.clear()
    result = update(str(repo.path), output_root=tmp_path / "out")
    assert parsed == ["tests/test_check.py"]  # the others from the cache
    after = record_texts(result.folder)
    records = by_exception(result.folder)
    assert [e.pattern for e in records["TypeError"].evidence] == ["expected a number"]
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {f"{records['TypeError'].id}.yaml"}
    # the same as a fresh extract of that commit
    fresh = extract(str(repo.path), output_root=tmp_path / "fresh")
    assert {k: r.evidence for k, r in by_exception(fresh.folder).items()} == \
        {k: r.evidence for k, r in records.items()}
    assert fresh.manifest.evidence_digest == result.manifest.evidence_digest


def test_a_test_file_that_kills_the_parser_is_listed_as_evidence_crashed(
        repo: GitRepo, tmp_path: Path) -> None:
    repo.write("tests/test_crash.py", CRASHER)
    repo.commit("a test file that kills LibCST")
    result = extract(str(repo.path), output_root=tmp_path / "out")
    entries = {s.path: s for s in result.manifest.skipped}
    crash = entries["tests/test_crash.py"]
    assert crash.reason == evidence_stage.EVIDENCE_CRASHED
    assert crash.detail is not None and crash.detail.startswith("parser_crashed: ")
    assert "SIGSEGV" in crash.detail
    assert entries["tests/test_check.py"].reason == "test_file"  # the others as before
    assert result.manifest.counts.skipped == len(result.manifest.skipped)
    assert by_exception(result.folder)["ValueError"].evidence  # the rest still read
    manifest_text = (result.folder / "manifest.yaml").read_text()
    assert "evidence_crashed" in manifest_text
    # the crash is cached with the blob: listed again by update, with no parse
    again = update(str(repo.path), output_root=tmp_path / "out")
    assert {s.path: s.reason for s in again.manifest.skipped}["tests/test_crash.py"] == \
        evidence_stage.EVIDENCE_CRASHED


def test_a_test_file_over_the_time_limit_is_listed_as_evidence_crashed(
        repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_slow.py", "import pytest  # pytest.raises\nx = [" + "1, " * 400_000 + "]\n")
    repo.commit("a test file that parses for long")
    monkeypatch.setattr(evidence_stage, "WorkerPool", lambda jobs: WorkerPool(jobs, Limits(seconds=0.5)))
    started = time.monotonic()
    result = extract(str(repo.path), output_root=tmp_path / "out")
    assert time.monotonic() - started < 60
    slow = {s.path: s for s in result.manifest.skipped}["tests/test_slow.py"]
    assert slow.reason == evidence_stage.EVIDENCE_CRASHED
    assert slow.detail == "timed_out: parse took over 0.5 s of CPU; the worker was stopped"
    assert by_exception(result.folder)["ValueError"].evidence


def test_a_backtracking_match_pattern_is_cut_counted_and_the_lock_released(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("lib.py", "def f():\n    raise ValueError('bad value " + "a" * 60 + "b')\n")
    repo.write("tests/test_f.py", "import pytest\nfrom lib import f\n\n\ndef test_f():\n"
               "    with pytest.raises(ValueError, match=r'bad value (a|aa)+$'):\n        f()\n")
    repo.commit("a pattern that backtracks for ages on the message")
    from click.testing import CliRunner

    from crawler.cli import commands as cli

    started = time.monotonic()
    shown = CliRunner().invoke(cli.main, ["extract", str(repo.path), "-o", str(tmp_path / "out")])
    assert time.monotonic() - started < 30  # `re` alone would run for years on 60 a's
    assert shown.exit_code == 0, shown.output
    assert "1 test patterns cut by their step bound" in shown.stdout
    result = extract(str(repo.path), output_root=tmp_path / "fresh")
    assert result.evidence is not None and result.evidence.cut == 1
    assert result.manifest.counts.test_patterns_cut == 1
    written = (result.folder / "manifest.yaml").read_text(encoding="utf-8")
    assert "test_patterns_cut: 1\n" in written
    kept = update(str(repo.path), output_root=tmp_path / "fresh", evidence=False)
    assert kept.manifest.counts.test_patterns_cut == 1  # nothing matched: the count is kept
    assert by_exception(result.folder)["ValueError"].evidence == ()
    # the folder's lock was released: a run that does not wait gets in at once
    update(str(repo.path), output_root=tmp_path / "out", wait=0.0)


def test_every_stage_is_reported_with_counts(repo: GitRepo, tmp_path: Path) -> None:
    seen: dict[str, list[tuple[int, int]]] = {}

    def progress(done: int, total: int, stage: str = PARSING) -> None:
        seen.setdefault(stage, []).append((done, total))

    monkey_chunk = applying.WRITE_CHUNK
    applying.WRITE_CHUNK = 1  # every record its own report
    try:
        result = extract(str(repo.path), output_root=tmp_path / "out", progress=progress)
    finally:
        applying.WRITE_CHUNK = monkey_chunk
    assert list(seen) == [PARSING, EVIDENCE, CLASSES, MATCHING, WRITING]
    assert seen[PARSING][-1] == (1, 1)  # lib.py
    assert seen[EVIDENCE][-1] == (3, 3)  # three test files
    assert seen[CLASSES] == [(0, 1), (1, 1)]
    assert seen[MATCHING][-1] == (2, 2)  # two assertions
    records = result.manifest.counts.records
    assert seen[WRITING] == [(i, records) for i in range(1, records + 1)]
    for reports in seen.values():
        assert all(0 <= done <= total for done, total in reports)
        assert [d for d, _ in reports] == sorted(d for d, _ in reports)


def test_progress_goes_to_stderr_on_a_terminal_and_stdout_stays_clean(
        repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import json

    from click.testing import CliRunner
    from rich.console import Console

    from crawler.cli import commands as cli
    from crawler.cli import common

    terminal = io.StringIO()
    monkeypatch.setattr(common, "stderr_console",
                        lambda: Console(file=terminal, force_terminal=True, width=120))
    runner = CliRunner()
    result = runner.invoke(cli.main, ["extract", str(repo.path), "-o", str(tmp_path / "out"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["records_with_evidence"] == 2  # stdout: the summary alone
    quiet = runner.invoke(cli.main, ["extract", str(repo.path), "-o", str(tmp_path / "out"), "-q"])
    assert quiet.exit_code == 0 and quiet.stdout == ""
    terminal.truncate(0)
    shown = runner.invoke(cli.main, ["update", str(repo.path), "-o", str(tmp_path / "out")])
    assert shown.exit_code == 0 and "test evidence" not in shown.stdout
    assert "test evidence" in terminal.getvalue()


def test_extract_again_at_the_same_commit_reads_only_what_changed(
        repo: GitRepo, tmp_path: Path, parsed: list[str]) -> None:
    """Nothing changed: no file parsed, no record loaded or written, as update; a record file
    deleted is remade as a full run would."""
    first = extract(str(repo.path), output_root=tmp_path / "out")
    before = record_texts(first.folder)
    parsed.clear()
    again = extract(str(repo.path), output_root=tmp_path / "out")
    assert again.parsed == 0 and parsed == [] and again.files_written == 0
    assert record_texts(again.folder) == before and again.manifest == first.manifest
    gone = sorted(before)[0]
    (first.folder / "errors" / gone).unlink()
    healed = extract(str(repo.path), output_root=tmp_path / "out")
    assert record_texts(healed.folder) == before and parsed == []
    # other options: a full run
    other = extract(str(repo.path), output_root=tmp_path / "out",
                    options=ExtractOptions(exclude=("tests/test_plain.py",)))
    assert other.parsed == 1


HOSTILE_LIB = """\
def parse(x):
    if x:
        raise ValueError("bad value aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab")
    raise ValueError(f"x must be positive, got {x} of {x!r}")


def other(key):
    raise KeyError(f"no such key: {key}, tried aaaa then aaaaa then aaaaaab")
"""

HOSTILE_TESTS = """\
import pytest
import unittest
from lib import other, parse


def test_bad():
    with pytest.raises(ValueError, match=r"bad value (a+)+$"):
        parse(1)
    with pytest.raises(ValueError, match=r"bad value (a|aa)+b"):
        parse(1)
    with pytest.raises(ValueError, match=r"x must be .*, got .* of .*"):
        parse(0)
    with pytest.raises(KeyError, match=r"no such key: .*tried (a*)*b"):
        other(1)


class T(unittest.TestCase):
    def test_key(self):
        with self.assertRaisesRegex(KeyError, r"no such key: .*then a.*a.*b"):
            other(2)
"""
BUSY_LOOP = "while True:\n    pass\n"


def folder_bytes(root: Path) -> dict[str, bytes]:
    """Every file's bytes but the lookup index's, a cache of the files' signatures (inodes)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "lookup.sqlite"}


def test_the_default_extract_gives_the_same_bytes_with_every_core_busy(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """Test patterns are bounded in steps, never in seconds: a run beside a busy loop on every
    core writes the same folder, byte for byte, with the catastrophic patterns cut and counted."""
    repo = make_repo("lib")
    repo.write("lib.py", HOSTILE_LIB)
    repo.write("tests/test_lib.py", HOSTILE_TESTS)
    repo.commit("a library whose tests hold catastrophic patterns and ordinary ones")

    def run(name: str) -> dict[str, bytes]:
        out = tmp_path / name
        done = subprocess.run(["crawler", "extract", str(repo.path), "-o", str(out), "-q",
                               "--cache-dir", str(tmp_path / f"cache-{name}")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return folder_bytes(out)

    quiet = run("quiet")
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(os.cpu_count() or 1)]
    try:
        busy = run("busy")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert busy == quiet
    manifest = next(text for path, text in quiet.items() if path.endswith("manifest.yaml"))
    assert b"test_patterns_cut: 3\n" in manifest  # (a+)+$, (a|aa)+b and (a*)*b
    records = by_exception(next(tmp_path.joinpath("quiet").rglob("errors")).parent)
    assert [e.pattern for e in records["KeyError"].evidence] == [r"no such key: .*then a.*a.*b"]
    assert [e.pattern for e in records["ValueError"].evidence] == [r"x must be .*, got .* of .*"]
