"""`crawler lookup` as a user types it: the installed command answers a lookup itself, without
click (`crawler.cli.fast_lookup`), and says exactly what the full command line (`crawler.cli.commands`) says,
on stdout and stderr, with the same exit code, for every way of typing it and every failure."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from crawler.cli import fast_lookup
from crawler.cli.commands import main
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"
FULL = "import sys\nfrom crawler.cli.commands import main\nmain(sys.argv[1:], prog_name='crawler')\n"
SOURCE = ("def f(x):\n    raise ValueError(f'bad shape {x} for the widget')\n\n\n"
          "def g(x):\n    raise KeyError(f'missing column {x}')\n")


def both(args: list[str], cwd: Path, stdin: str | None = None
         ) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The installed command and the full command line, each run as a process on `args`."""
    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, *args], cwd=cwd, env=child_env(), input=stdin,
                              capture_output=True, text=True, timeout=120)
    return run([CRAWLER]), run([sys.executable, "-c", FULL])


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-raise repository extracted to `out`, its lookup index built."""
    base = tmp_path_factory.mktemp("typed")
    repo = GitRepo(base / "lib")
    repo.write("m.py", SOURCE)
    repo.commit("first")
    done = subprocess.run([CRAWLER, "extract", "lib", "-o", "out", "-q"], cwd=base,
                          env=child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (base / "empty").mkdir()
    (base / "a file").write_text("not a folder\n", encoding="utf-8")
    subprocess.run([CRAWLER, "lookup", "x", "out"], cwd=base, env=child_env(),
                   capture_output=True, timeout=120, check=False)
    return base / "out"


PASTE = "ValueError: bad shape (3, 4) for the widget"
TYPED = [
    ["lookup", PASTE, "out"],
    ["lookup", PASTE, "out", "--json"],
    ["lookup", PASTE, "out", "-q"],
    ["lookup", "--quiet", PASTE, "out"],
    ["lookup", PASTE, "out", "-n", "1"],
    ["lookup", PASTE, "out", "--limit=1", "--json"],
    ["lookup", "-n", "2", "--limit", "1", PASTE, "out"],
    ["lookup", "bad shape", "out"],  # only close
    ["lookup", "KeyError: 'missing column \x1b[31mx\x1b[0m'", "out"],  # ANSI: stripped off a tty
    ["lookup", "operands could not be broadcast together", "out", "--json"],  # nothing
    ["lookup", "!!! ???", "out"],  # no word at all
    ["lookup", "- item: bad shape 3 for the widget", "out"],  # a paste beginning with `-`
    ["lookup", "--", "-n", "out"],
    ["lookup", PASTE],  # OUTPUT is `output`: not there
    ["lookup", PASTE, "gone"],
    ["lookup", PASTE, "a file"],
    ["lookup", PASTE, "empty"],  # no records
    ["lookup", PASTE, "out", "-n", "0"],
    ["lookup", PASTE, "out", "-n", "x"],
    ["lookup", PASTE, "out", "-n"],
    ["lookup", PASTE, "out", "-n5"],
    ["lookup", PASTE, "out", "--json=yes"],
    ["lookup", PASTE, "out", "--jsn"],
    ["lookup", PASTE, "out", "extra"],
    ["lookup"],
    ["lookup", "--help"],
    ["lookup", PASTE, "out", "-h"],
    ["lookup", PASTE, "--db", "none.sqlite"],
    ["--version"],
]


@pytest.mark.parametrize("args", TYPED, ids=[" ".join(args)[:60] for args in TYPED])
def test_the_installed_lookup_says_what_the_full_command_line_says(out: Path,
                                                                   args: list[str]) -> None:
    quick, full = both(args, out.parent)
    assert (quick.returncode, quick.stdout, quick.stderr) == \
        (full.returncode, full.stdout, full.stderr)


def test_a_paste_from_standard_input_and_a_broken_record_alike(out: Path) -> None:
    pasted = "Traceback (most recent call last):\r\n  File \"m.py\", line 2, in f\r\n" \
             f"{PASTE}\r\n"
    for args in (["lookup", "-", "out"], ["lookup", "-", "out", "--json"]):
        quick, full = both(args, out.parent, stdin=pasted)
        assert quick.returncode == 0, quick.stderr
        assert (quick.returncode, quick.stdout, quick.stderr) == \
            (full.returncode, full.stdout, full.stderr)
    broken = out.parent / "broken"
    shutil.copytree(out, broken)
    next(broken.rglob("errors/*.yaml")).write_text("id: [\n", encoding="utf-8")
    quick, full = both(["lookup", PASTE, "broken"], out.parent)
    assert quick.returncode == 1 and quick.stderr.startswith("skipped: "), quick.stderr
    assert (quick.stdout, quick.stderr) == (full.stdout, full.stderr)


def test_the_quick_parser_knows_the_options_lookup_has() -> None:
    """`fast_lookup` reads lookup's arguments as `_PasteCommand` does: the same options, each
    taking a value or not. (What click.echo strips off a pipe is never printed by lookup, so
    the two paths print alike whatever click's release: `tests/cli/test_terminal_text.py`.)"""
    command = main.commands["lookup"]
    with click.Context(main, **main.context_settings) as parent, \
            click.Context(command, parent=parent) as ctx:
        known = {name: not (param.is_flag or param.count) for param in command.get_params(ctx)
                 if isinstance(param, click.Option) for name in param.opts + param.secondary_opts}
    assert known == fast_lookup.OPTIONS


UNDECODABLE = b"ValueError: bad shape (3, \xff4) for the widget"
NOTE = ("note: the paste is not all UTF-8: its undecodable bytes were read as U+FFFD, the "
        "replacement character: 1")


@pytest.mark.parametrize("on_stdin", [False, True], ids=["argument", "stdin"])
@pytest.mark.parametrize("options", [[], ["--json"]], ids=["text", "json"])
def test_bytes_that_are_not_utf8_are_read_as_replacement_characters_and_said(
        out: Path, on_stdin: bool, options: list[str]) -> None:
    """An argument or a standard input that is not UTF-8: the answer, with one line saying so,
    from the installed command and the full command line alike; never a Traceback."""
    args: list[str | bytes] = ["lookup", "-" if on_stdin else UNDECODABLE, "out", *options]
    runs = [subprocess.run([*command, *args], cwd=out.parent, env=child_env(),
                           input=UNDECODABLE if on_stdin else b"", capture_output=True,
                           timeout=120)
            for command in ([CRAWLER], [sys.executable, "-c", FULL])]
    for run in runs:
        stderr = run.stderr.decode()
        assert "Traceback" not in stderr and stderr.splitlines() == [NOTE], stderr
        assert run.returncode == 0, stderr
        said = run.stdout.decode()
        if options:
            reported = json.loads(said)["paste"]["exceptions"][0]
            assert reported["text"] == "bad shape (3, \ufffd4) for the widget"
        else:
            assert said.startswith("= "), said  # found: the template explains it still
    assert (runs[0].returncode, runs[0].stdout, runs[0].stderr) == \
        (runs[1].returncode, runs[1].stdout, runs[1].stderr)


QUICK_IMPORTS = (
    "import sys\n"
    "sys.argv = ['crawler', 'lookup', 'bad shape 3 for the widget', sys.argv[1], '--json']\n"
    "from crawler.cli.entry import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(sorted(name for name in {heavy!r} if name in sys.modules))\n"
)


def test_the_installed_lookup_imports_no_command_line(out: Path) -> None:
    """Neither click nor the other commands' modules: a lookup is the interpreter's start, its
    own modules and the answer."""
    heavy = ("click", "crawler.cli.commands", "crawler.cli.common", "crawler.cli.summaries",
             "crawler.cli.options", "yaml", "rich", "crawler.records", "libcst", "git",
             "jsonschema", "regex")
    done = subprocess.run([sys.executable, "-c", QUICK_IMPORTS.format(heavy=heavy), str(out)],
                          env=child_env(), capture_output=True, text=True, timeout=120,
                          check=True)
    *answer, imported = done.stdout.splitlines()
    assert json.loads("\n".join(answer))["verdict"] == "found"
    assert imported == "[]"
