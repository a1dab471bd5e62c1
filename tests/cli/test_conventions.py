"""One command-line convention: where a command writes (-o/--output), what it reads (a positional
OUTPUT, its default shown), --json and -q everywhere, one exit code per outcome (0, 1, 2, 130)
with no traceback, a quiet end on a closed pipe, and any revision for --commit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from crawler.cli.commands import INTERRUPTED, main
from crawler.cli.common import TERMINATED
from tests.helpers import killprocs
from tests.helpers.gitrepo import GitRepo
from tests.helpers.killlib import library
from tests.helpers.outputkit import annotate
from tests.helpers.processes import ROOT, child_env, ctrl_c_default

WRITERS = {"extract", "update", "batch", "export"}  # adopt writes the records it reads, in place
READERS = {"check", "validate", "lookup", "export", "adopt"}


def options(command: str) -> set[str]:
    return {opt for param in main.commands[command].params for opt in param.opts}


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_json_and_quiet(command: str) -> None:
    assert {"--json", "-q", "--quiet"} <= options(command)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_every_command_that_writes_takes_output(command: str) -> None:
    assert {"-o", "--output"} <= options(command)


def test_export_takes_to_as_output(tmp_path: Path, extracted: Path) -> None:
    for flag, name in (("-o", "a.jsonl"), ("--output", "b.jsonl"), ("--to", "c.jsonl")):
        result = CliRunner().invoke(main, ["export", str(extracted), "--format", "jsonl",
                                           flag, str(tmp_path / name), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["records"] == 1
        assert (tmp_path / name).read_text().count("\n") == 1


@pytest.mark.parametrize("command", sorted(READERS))
def test_the_folder_a_command_reads_shows_its_default(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert "[OUTPUT=output]" in result.output


@pytest.mark.parametrize("argv", [
    ["check", "{missing}"], ["validate", "{missing}"], ["export", "{missing}", "--format", "json"],
    ["lookup", "bad 1", "{missing}"], ["adopt", "a" * 16, "b" * 16, "{missing}"],
    ["update", "{repo}", "-o", "{missing}"], ["lookup", "bad 1", "--db", "{missing}"],
])
def test_a_missing_output_folder_exits_2_with_one_line(argv: list[str], tmp_path: Path,
                                                        small_repo: GitRepo) -> None:
    missing = tmp_path / "nowhere"
    args = [a.format(missing=missing, repo=small_repo.path) for a in argv]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [result.output.strip()]
    assert str(missing) in result.output and "Traceback" not in result.output


@pytest.fixture
def small_repo(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("small")
    repo.write("m.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit()
    repo.git("tag", "-a", "v1.0", "-m", "release")
    repo.write("m.py", "def f(x):\n    raise ValueError(f'worse {x}')\n")
    repo.commit()
    return repo


@pytest.fixture
def extracted(small_repo: GitRepo, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["extract", str(small_repo.path), "-o", str(out), "-q",
                                       "--no-evidence"])
    assert result.exit_code == 0, result.output
    return out


def test_lookup_exit_codes_and_quiet(extracted: Path) -> None:
    runner = CliRunner()
    found = runner.invoke(main, ["lookup", "ValueError: worse 3", str(extracted)])
    assert found.exit_code == 0 and found.output.startswith("= ")
    close = runner.invoke(main, ["lookup", "ValueError: worse than ever before", str(extracted)])
    assert close.exit_code == 1 and "the closest" in close.output
    quiet = runner.invoke(main, ["lookup", "ValueError: worse 3", str(extracted), "-q"])
    assert (quiet.exit_code, quiet.output) == (0, "")
    assert runner.invoke(main, ["lookup", "nothing", str(extracted), "-q"]).exit_code == 1


@pytest.mark.parametrize(("revision", "template"), [
    ("HEAD~1", "bad {x}"), ("v1.0^{commit}", "bad {x}"), ("HEAD", "worse {x}")])
def test_commit_takes_any_revision_rev_parse_reads(small_repo: GitRepo, tmp_path: Path,
                                                  revision: str, template: str) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["extract", str(small_repo.path), "--commit", revision,
                                       "-o", str(out), "--json", "--no-evidence"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["commit"] == small_repo.git("rev-parse", f"{revision}^{{commit}}")
    assert summary["ref"] == revision
    (record,) = (Path(summary["folder"]) / "errors").iterdir()
    assert f"template: {template}" in record.read_text()


def test_commit_a_short_sha_and_never_an_option(small_repo: GitRepo, tmp_path: Path) -> None:
    short = small_repo.git("rev-parse", "--short", "HEAD~1")
    result = CliRunner().invoke(main, ["extract", str(small_repo.path), "--commit", short,
                                       "-o", str(tmp_path / "out"), "--json", "--no-evidence"])
    assert result.exit_code == 0 and json.loads(result.output)["ref"] == short
    result = CliRunner().invoke(main, ["extract", str(small_repo.path), "--commit=--output=x",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "would read as an option" in result.output
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------- real processes


def crawler(*args: str) -> list[str]:
    return [sys.executable, "-m", "crawler", *args]


@pytest.mark.parametrize("argv", [
    ["lookup", "ValueError: worse 3", "{out}", "-n", "5"],
    ["lookup", "ValueError: worse 3", "{out}", "--json"],
    ["export", "{out}", "--format", "jsonl", "-o", "-"],
])
def test_a_closed_pipe_ends_quietly(extracted: Path, argv: list[str]) -> None:
    """`crawler lookup ... | head -1`: the reader is gone before the command writes."""
    args = [a.format(out=extracted) for a in argv]
    process = subprocess.Popen(crawler(*args), cwd=ROOT, env=child_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # as `head` does when it has its line
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0, stderr
    assert stderr == ""


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A library that takes the parser's workers a few seconds: time to press Ctrl-C."""
    repo = GitRepo(tmp_path_factory.mktemp("big") / "lib")
    for path, text in library(files=80, seed=18).items():
        repo.write(path, text)
    repo.commit()
    return repo


@pytest.fixture
def run_group() -> Iterator[Callable[[list[str], Path], subprocess.Popen[bytes]]]:
    """Start a command in a process group of its own, its output in files; every process of
    the group still alive at the end is killed by its id."""
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], logs: Path) -> subprocess.Popen[bytes]:
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "stdout", "wb") as out, open(logs / "stderr", "wb") as err:
            child = subprocess.Popen(argv, cwd=ROOT, env=child_env(), stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=True,
                                     preexec_fn=ctrl_c_default)
        started.append(child)
        return child

    yield start
    for child in started:
        for proc in killprocs.alive(killprocs.family(child.pid)):
            os.kill(proc.pid, signal.SIGKILL)
        if child.poll() is None:
            child.kill()
            child.wait()


def interrupt_when(child: subprocess.Popen[bytes], ready: Callable[[], bool]) -> None:
    """Ctrl-C as a terminal sends it: SIGINT to the whole process group, once `ready`."""
    deadline = time.monotonic() + 120
    while not ready():
        assert child.poll() is None, "the command ended before it could be interrupted"
        assert time.monotonic() < deadline, "the command never got to work"
        time.sleep(0.02)
    os.killpg(child.pid, signal.SIGINT)


def assert_interrupted(child: subprocess.Popen[bytes], logs: Path) -> None:
    family = killprocs.family(child.pid)
    code = child.wait(timeout=60)
    stderr = (logs / "stderr").read_text()
    assert code == INTERRUPTED, stderr
    assert stderr.splitlines() == ["Error: interrupted"], stderr
    deadline = time.monotonic() + killprocs.grace()
    while killprocs.alive(family) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not killprocs.alive(family), [killprocs.describe(p.pid) for p in family]


def test_ctrl_c_in_extract_exits_130_without_a_traceback(big_repo: GitRepo, tmp_path: Path,
                                                         run_group: Callable[..., Any]) -> None:
    child = run_group(crawler("extract", str(big_repo.path), "-o", str(tmp_path / "out"),
                              "-j", "2", "--cache-dir", str(tmp_path / "cache")), tmp_path / "logs")
    interrupt_when(child, lambda: bool(killprocs.pool_workers(child.pid)))
    assert_interrupted(child, tmp_path / "logs")


@pytest.mark.parametrize("command", ["extract", "history"])
def test_sigterm_ends_a_command_with_143_and_one_line(big_repo: GitRepo, tmp_path: Path,
                                                      run_group: Callable[..., Any],
                                                      command: str) -> None:
    """SIGTERM (a service manager's stop, `kill PID`) to the crawler alone, mid-parse: one line
    and 143, as a batch already did, where its default action ended it with no word (-15)."""
    extra = []
    if command == "history":
        if not big_repo.git("tag", "--list", "v1.0"):
            big_repo.git("tag", "v1.0")  # a release to walk; the other tests read HEAD
        extra = ["--tags", "v*"]
    child = run_group(crawler(command, str(big_repo.path), *extra, "-o", str(tmp_path / "out"),
                              "-j", "2", "--cache-dir", str(tmp_path / "cache")), tmp_path / "logs")
    deadline = time.monotonic() + 120
    while not killprocs.pool_workers(child.pid):
        assert child.poll() is None, (tmp_path / "logs" / "stderr").read_text()
        assert time.monotonic() < deadline, "the command never got to work"
        time.sleep(0.02)
    family = killprocs.family(child.pid)
    os.kill(child.pid, signal.SIGTERM)
    code = child.wait(timeout=60)
    stderr = (tmp_path / "logs" / "stderr").read_text()
    assert code == TERMINATED, stderr
    assert stderr.splitlines()[-1:] == ["Error: terminated"] and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + killprocs.grace()
    while killprocs.alive(family) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not killprocs.alive(family), [killprocs.describe(p.pid) for p in family]


def test_ctrl_c_in_a_batch_with_workers_exits_130_without_a_traceback(
        big_repo: GitRepo, tmp_path: Path, run_group: Callable[..., Any]) -> None:
    repos = tmp_path / "repos.yaml"
    repos.write_text(f"repos:\n  - source: {big_repo.path}\n    name: one\n"
                     f"  - source: {big_repo.path}\n    name: two\n", encoding="utf-8")
    child = run_group(crawler("batch", str(repos), "-o", str(tmp_path / "out"), "-j", "2",
                              "--scheduler", "local", "--cache-dir", str(tmp_path / "cache")),
                      tmp_path / "logs")
    interrupt_when(child, lambda: bool(killprocs.pool_workers(child.pid)))
    assert_interrupted(child, tmp_path / "logs")


def test_usage_errors_exit_2_and_failures_1(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["lookup"]).exit_code == 2  # MESSAGE missing
    assert CliRunner().invoke(main, ["export", str(tmp_path), "--format", "yaml"]).exit_code == 2
    assert isinstance(main, click.Group)


def test_lookup_db_needs_no_output_folder(extracted: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "errors.db"
    assert CliRunner().invoke(main, ["export", str(extracted), "--format", "sqlite", "-o",
                                     str(db), "-q"]).exit_code == 0
    monkeypatch.chdir(tmp_path)  # no output/ here
    result = CliRunner().invoke(main, ["lookup", "ValueError: worse 3", "--db", str(db)])
    assert result.exit_code == 0 and result.output.startswith("= "), result.output


def test_an_interrupt_prints_one_line_even_when_a_finalizer_raises(tmp_path: Path) -> None:
    """What a Ctrl-C leaves half-read (GitPython's `cat-file` stream raised "read of closed
    file" from `__del__` under load) must not add an "Exception ignored" trace to its line."""
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import click\n"
        "from crawler.cli.commands import CrawlerGroup\n"
        "class Stream:\n"
        "    def __del__(self):\n"
        "        raise ValueError('read of closed file')\n"
        "@click.group(cls=CrawlerGroup)\n"
        "def main(): pass\n"
        "@main.command()\n"
        "def read():\n"
        "    stream = Stream()\n"
        "    raise KeyboardInterrupt\n"
        "main(['read'])\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=child_env(), timeout=60)
    assert done.returncode == INTERRUPTED, done.stderr
    assert done.stderr.splitlines() == ["Error: interrupted"], done.stderr


def test_check_quiet_still_prints_each_finding(extracted: Path) -> None:
    """`crawler check -q` in a site's CI: the job fails, and its log says why (as ruff's -q)."""
    [record] = sorted(extracted.rglob("errors/*.yaml"))
    annotate(record, "an annotation written before the message was reworded")
    # the installed command, as the CI job types it
    loud = subprocess.run(["crawler", "check", str(extracted)], cwd=extracted, env=child_env(),
                          capture_output=True, text=True, timeout=120)
    quiet = subprocess.run(["crawler", "check", str(extracted), "-q"], cwd=extracted,
                           env=child_env(), capture_output=True, text=True, timeout=120)
    assert loud.returncode == quiet.returncode == 1, (loud.stderr, quiet.stderr)
    findings = quiet.stdout.splitlines()
    assert len(findings) == 1 and record.stem in findings[0], quiet.stdout
    assert loud.stdout.splitlines()[:-1] == findings  # all but the count line
    assert "records checked" in loud.stdout.splitlines()[-1]
