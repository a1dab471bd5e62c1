"""The command line: help with examples, one-line errors and exit codes, JSON summaries."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from crawler.cli import main
from tests.gitrepo import GitRepo


def commands() -> list[str]:
    return sorted(main.commands)


@pytest.mark.parametrize("command", commands())
def test_every_command_has_help_with_an_example(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output
    cmd = main.commands[command]
    assert isinstance(cmd, click.Command) and cmd.help


def test_top_level_help_lists_commands() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in commands():
        assert command in result.output


@pytest.fixture
def small_repo(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("small")
    repo.write("m.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit()
    return repo


def test_extract_then_validate(small_repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["extract", str(small_repo.path), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["records"] == 1 and summary["commit"] == small_repo.head()
    result = CliRunner().invoke(main, ["validate", str(out)])
    assert result.exit_code == 0 and "2 files checked, 0 problems" in result.output


def test_validate_names_the_bad_file_and_field(small_repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    CliRunner().invoke(main, ["extract", str(small_repo.path), "-o", str(out), "-q"])
    (record,) = out.rglob("errors/*.yaml")
    record.write_text(record.read_text().replace("line: 2\n", "line: two\n", 1))
    result = CliRunner().invoke(main, ["validate", str(out)])
    assert result.exit_code == 1
    line = record.read_text().splitlines().index("  line: two") + 1
    assert f"{record}:{line}: extracted.line: 'two' is not of type 'integer'" in result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["extract", "{repo}", "--commit", "v9.9"], "v9.9"),
        (["extract", "{tmp}/not-a-repo"], "not-a-repo"),
    ],
)
def test_errors_are_one_line_with_exit_code_1(small_repo: GitRepo, tmp_path: Path, args: list[str],
                                               needle: str) -> None:
    (tmp_path / "not-a-repo").mkdir()
    argv = [a.format(repo=small_repo.path, tmp=tmp_path) for a in args] + ["-o", str(tmp_path / "o")]
    process = subprocess.run([sys.executable, "-m", "crawler", *argv], capture_output=True, text=True)
    assert process.returncode == 1
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in process.stderr


def test_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(main, ["extract", "--jobs", "0"])
    assert result.exit_code == 2


def test_lookup_over_the_folder_and_over_the_database(small_repo: GitRepo, tmp_path: Path) -> None:
    out, db = tmp_path / "out", tmp_path / "errors.sqlite"
    runner = CliRunner()
    assert runner.invoke(main, ["extract", str(small_repo.path), "-o", str(out), "-q"]).exit_code == 0
    assert runner.invoke(main, ["export", str(out), "--format", "sqlite", "--to", str(db)]).exit_code == 0
    for where in ([str(out)], ["--db", str(db)]):
        result = runner.invoke(main, ["lookup", "ValueError: bad 42", *where, "--json"])
        assert result.exit_code == 0, result.output
        (hit,) = [h for h in json.loads(result.output) if h["exact"]]
        assert hit["template"] == "bad {x}" and hit["path"] == "m.py"
