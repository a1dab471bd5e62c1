"""The command line over a hostile output folder: exit code 1 and one line, never a traceback."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from crawler.cli.commands import main
from crawler.pipeline import Collected, extract_run
from crawler.records import Pin
from crawler.store import atomic
from tests.helpers.outputkit import SHA_B, collected, folder_of, module
from tests.helpers.processes import start

V1 = {"pkg/a.py": module("a", 3), "pkg/b.py": module("b", 2)}
V2 = {"pkg/a.py": module("a", 3, offset=1), "pkg/b.py": module("b", 2, offset=1)}


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., Result]:
    """`crawler extract` with `collect` replaced by a fixed result: no git, no network."""
    state: dict[str, Collected] = {}

    def fake_collect(source: str, **_: object) -> Collected:
        return state["next"]

    monkeypatch.setattr(extract_run, "collect", fake_collect)

    def invoke(what: Collected, *args: str) -> Result:
        state["next"] = what
        return CliRunner().invoke(main, ["extract", "x", "-o", str(tmp_path / "out"), "-q", *args])

    return invoke


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and "Traceback" not in result.output
    return lines[0]


def test_clean_runs_exit_zero(run: Callable[..., Result]) -> None:
    assert run(collected(V1)).exit_code == 0
    assert run(collected(V2, SHA_B)).exit_code == 0


def test_lock_held(run: Callable[..., Result], tmp_path: Path) -> None:
    assert run(collected(V1)).exit_code == 0
    holder = start("hold", str(folder_of(tmp_path / "out")))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        line = one_error_line(run(collected(V2, SHA_B)))
        assert "another crawler run" in line and f"pid {holder.pid}" in line
        line = one_error_line(run(collected(V2, SHA_B), "--wait", "0.2"))
        assert "after waiting 0.2s" in line
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    assert run(collected(V2, SHA_B), "--wait", "5").exit_code == 0


def test_broken_record(run: Callable[..., Result], tmp_path: Path) -> None:
    assert run(collected(V1)).exit_code == 0
    victim = sorted((folder_of(tmp_path / "out") / "errors").glob("*.yaml"))[0]
    victim.write_text(victim.read_text().replace("status: active", "status: !!python/object:os.system"))
    line = one_error_line(run(collected(V2, SHA_B)))
    assert line.startswith(f"Error: {victim}:3: ")


def test_several_broken_records(run: Callable[..., Result], tmp_path: Path) -> None:
    assert run(collected(V1)).exit_code == 0
    errors = folder_of(tmp_path / "out") / "errors"
    for path in sorted(errors.glob("*.yaml"))[:3]:
        path.write_text("")
    (errors / "evil\nname.yaml").write_text("x: 1\n")
    line = one_error_line(run(collected(V2, SHA_B)))
    assert "(and 3 more: `crawler validate" in line
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert result.exit_code == 1
    problems = result.stdout.splitlines()[:-1]  # validate's findings on stdout, then the count
    assert len(problems) == 4 and result.stderr == ""  # one per file, the odd name on one line too
    assert "evil\\nname.yaml" in result.stdout


def test_disk_full(run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(collected(V1)).exit_code == 0

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    line = one_error_line(run(collected(V2, SHA_B)))
    assert "disk full" in line and "the next run finishes the job" in line


def test_hostile_folder_name(run: Callable[..., Result]) -> None:
    hostile = collected(V1)
    pinned = Pin(source="x", host="github.com", owner="../..", name="etc", ref="HEAD", sha="c" * 40)
    line = one_error_line(run(Collected(pinned, hostile.options, hostile.total, hostile.skipped,
                                        hostile.outcomes, 0.0)))
    assert "refused output folder name '..'" in line


def test_output_is_a_file(run: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "github.com").write_text("not a folder\n")
    line = one_error_line(run(collected(V1)))
    assert "lock file" in line and "github.com" in line


def test_validate_clean_folder(run: Callable[..., Result], tmp_path: Path) -> None:
    assert run(collected(V1)).exit_code == 0
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert result.exit_code == 0 and "6 files checked, 0 problems" in result.output


def test_dry_run_creates_nothing(run: Callable[..., Result], tmp_path: Path) -> None:
    result = run(collected(V1), "--dry-run")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out").exists()


def test_wait_has_help() -> None:
    result = CliRunner().invoke(main, ["extract", "--help"])
    assert "--wait SECONDS" in result.output and "holds the output folder" in result.output
