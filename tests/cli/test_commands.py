"""The command line: help with examples, one-line errors and exit codes, JSON summaries."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import crawler
from crawler.cli.commands import main
from tests.helpers.gitrepo import GitRepo


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
        # `bad` is a word every library prints (`rarity`): listed first, not trusted, either way
        assert result.exit_code == 1 and json.loads(result.output)["verdict"] == "closest", \
            result.output
        (hit,) = [h for h in json.loads(result.output)["matches"] if h["exact"]]
        assert hit["template"] == "bad {x}" and hit["path"] == "m.py"


def test_an_option_shared_by_commands_is_described_once() -> None:
    """Declared once (crawler/cli/options.py), an option cannot say two things in two commands."""
    helps: dict[str, set[str]] = {}
    for command in main.commands.values():
        for param in command.params:
            if isinstance(param, click.Option):
                helps.setdefault(max(param.opts, key=len), set()).add(param.help or "")
    shared = {name: texts for name, texts in helps.items() if name != "--json"}
    assert {"--output", "--cache-dir", "--jobs", "--dry-run", "--quiet"} <= shared.keys()
    assert {name: texts for name, texts in shared.items() if len(texts) > 1} == {}
    # --json names what it prints: the summary, the findings, the records
    assert {text.split()[2] for text in helps["--json"]} == {"summary", "findings", "records"}


EXTRACT_KEYS = ["repo", "ref", "commit", "folder", "files", "parsed", "skipped", "records",
                "added", "moved", "changed", "removed", "revived", "files_written",
                "test_assertions", "records_with_evidence", "test_patterns_cut",
                "test_files_crashed", "seconds", "dry_run", "problems", "notes"]
UPDATE_KEYS = ["repo", "ref", "commit", "folder", "files", "files_read_again", "records",
               "added", "moved", "changed", "removed", "revived", "cleared", "stale_annotations",
               "files_to_write", "files_written", "paired_by", "git_diff", "records_with_evidence",
               "test_patterns_cut", "test_files_crashed", "seconds", "dry_run", "problems",
               "notes"]


def test_extract_and_update_summaries_keep_their_keys_in_order(small_repo: GitRepo,
                                                                tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    extracted = CliRunner().invoke(main, ["extract", str(small_repo.path), "-o", out, "--json"])
    summary = json.loads(extracted.output)
    assert list(summary) == EXTRACT_KEYS
    assert (summary["added"], summary["files_written"], summary["dry_run"]) == (1, 2, False)
    small_repo.write("m.py", "def f(x):\n    raise ValueError(f'very bad {x}')\n")
    small_repo.commit()
    updated = CliRunner().invoke(main, ["update", str(small_repo.path), "-o", out, "--json",
                                        "--check"])
    assert updated.exit_code == 1  # --check: the records are stale
    summary = json.loads(updated.output)
    assert list(summary) == UPDATE_KEYS
    (changed,) = summary["changed"]
    assert summary["files_to_write"] == [f"errors/{changed}.yaml", "manifest.yaml"]
    assert (summary["files_written"], summary["dry_run"]) == (0, True)


def test_only_the_command_line_prints_or_exits() -> None:
    """The library returns what it found; the command line (the package `crawler.cli`, and
    `crawler/__main__.py`, which is `python -m crawler`) prints it."""
    root = Path(crawler.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.parent == root / "cli" or path == root / "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            name = (called.id if isinstance(called, ast.Name)
                    else called.attr if isinstance(called, ast.Attribute) else None)
            if name in {"print", "echo", "exit", "_exit"} or (
                    isinstance(node, ast.Raise) and "SystemExit" in ast.unparse(node)):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
