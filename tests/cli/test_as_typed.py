"""The command line as a user types it (issue 35): the installed `crawler`, run as a process.

A source folder that is not there is a usage error (exit 2, one line naming it); `export`
infers its format from the target's name and writes JSON Lines to `-`; the batch table off a
terminal keeps each repository on one line, however long its name.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`crawler ARGS` in `cwd`, its output captured (a pipe: not a terminal)."""
    return subprocess.run([CRAWLER, *map(str, args)], cwd=cwd, env=child_env(), text=True,
                          capture_output=True, timeout=120)


@pytest.fixture
def extracted(tmp_path: Path) -> Path:
    """A one-raise repository, extracted to `out` beside it."""
    repo = GitRepo(tmp_path / "lib")
    repo.write("m.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit("first")
    assert run("extract", "lib", "-o", "out", "-q", cwd=tmp_path).returncode == 0
    return tmp_path / "out"


@pytest.mark.parametrize("argv", [
    ["extract", "{missing}"],
    ["extract", "file://{missing}"],
    ["update", "{missing}", "--commit", "HEAD", "-o", "out"],
    ["history", "{missing}", "--tags", "v*"],
])
def test_a_source_folder_that_is_not_there_exits_2_with_one_line(argv: list[str],
                                                                 tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    missing = tmp_path / "no such repo"
    result = run(*(arg.format(missing=missing) for arg in argv), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and str(missing) in result.stderr, result.stderr
    assert "no such folder" in result.stderr and not list((tmp_path / "out").iterdir())


def test_a_batch_entry_whose_folder_is_not_there_fails_with_one_line_naming_it(
        tmp_path: Path) -> None:
    """In a batch the entry fails and the others go on (exit 1), as any failing repository."""
    (tmp_path / "repos.yaml").write_text("repos:\n  - source: ./gone\n", encoding="utf-8")
    result = run("batch", "repos.yaml", "-o", "out", "-j", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"repos[0]: [{tmp_path / 'gone'}] no such folder: give a repository's path, its URL, or "
        "github:OWNER/NAME for a repository on GitHub"]


def test_export_to_a_pipe_needs_no_format(extracted: Path) -> None:
    """`crawler export -o - | head -1`, as the README writes it: one JSON record, exit 0."""
    pipeline = subprocess.run(f'"{CRAWLER}" export out -o - | head -1', shell=True,
                              cwd=extracted.parent, env=child_env(), text=True,
                              capture_output=True, timeout=60)
    assert pipeline.returncode == 0 and pipeline.stderr == "", pipeline.stderr
    assert json.loads(pipeline.stdout)["extracted"]["message"]["template"] == "bad {x}"


def test_export_infers_the_format_from_the_target_name(extracted: Path) -> None:
    base = extracted.parent
    (base / "site").mkdir()
    for target, fmt in (("all.jsonl", "jsonl"), ("all.json", "json"), ("site", "json"),
                        ("all.sqlite", "sqlite"), ("all.db", "sqlite")):
        result = run("export", "out", "-o", target, "--json", cwd=base)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["format"] == fmt, target
    assert json.loads((base / "all.jsonl").read_text(encoding="utf-8"))["id"]
    assert (base / "site" / "index.json").is_file() and (base / "all.json" / "index.json").is_file()
    for database in ("all.sqlite", "all.db"):
        connection = sqlite3.connect(base / database)
        try:
            assert connection.execute("SELECT count(*) FROM records").fetchone() == (1,)
        finally:
            connection.close()


@pytest.mark.parametrize("argv", [["-o", "records.txt"], []])
def test_export_with_no_format_and_a_name_that_says_none_is_one_usage_line(
        argv: list[str], extracted: Path) -> None:
    result = run("export", "out", *argv, cwd=extracted.parent)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--format" in result.stderr, result.stderr
    assert not (extracted.parent / "records.txt").exists()


def test_the_batch_table_off_a_terminal_keeps_each_repository_on_one_line(
        tmp_path: Path) -> None:
    names = [f"lib-{n}-" + "with-a-long-descriptive-folder-name-" * 3 + str(n) for n in range(2)]
    for name in names:
        repo = GitRepo(tmp_path / name)
        repo.write("m.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
        repo.commit("first")
    entries = "".join(f"  - source: ./{name}\n    name: {name}\n" for name in names)
    (tmp_path / "repos.yaml").write_text(f"repos:\n{entries}", encoding="utf-8")
    result = run("batch", "repos.yaml", "-o", "out", "-j", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if "local/local/" in line]
    assert len(rows) == 2 and all(len(line) > 80 for line in rows), result.stdout
    for row, name in zip(rows, names):
        cells = [cell.strip() for cell in row.strip("│ ").split("│")]
        assert cells[0] == f"local/local/{name}" and cells[-1] == "done", row
