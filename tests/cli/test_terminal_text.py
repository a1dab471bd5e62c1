"""Text of the catalogue is shown escaped by every command that prints it, exact in `--json`.

A repository writes what its messages, paths and tags hold: here a template that carries an
OSC 52 sequence (a clipboard write), an OSC 0 (the window title), a carriage return and a CSI
that erases the line, a file name and a tag with a right-to-left override, an annotation with
one. `lookup` (the installed command and the full command line), `check`, `update`, `adopt`
and `history` must print none of those characters raw, on a pipe as on a terminal
(`crawler.cli.terminal.one_line`); their JSON carries the text exactly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.store import record_files
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"
FULL = "import sys\nfrom crawler.cli.commands import main\nmain(sys.argv[1:], prog_name='crawler')\n"
ESCAPES = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\r\x1b[2K"
TEMPLATE = ESCAPES + "bad shape {x} for the widget"
SHOWN = r"\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\r\x1b[2Kbad shape {x} for the widget"
OVERRIDE = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: reorders what follows on a terminal
ODD_FILE = f"odd{OVERRIDE}yp.py"
RAW = ("\x1b", "\x07", "\r", OVERRIDE)
SOURCE = ("def f(x):\n"
          "    raise ValueError(f'\\x1b]52;c;aGVsbG8=\\x07\\x1b]0;pwned\\x07\\r\\x1b[2K"
          "bad shape {x} for the {thing}')\n").replace("{thing}", "widget")
ODD_SOURCE = "def g(path):\n    raise OSError(f'cannot open {path} for writing')\n"


def crawler(*args: str | Path, cwd: Path, full: bool = False) -> subprocess.CompletedProcess[str]:
    """The installed command (or the full command line), its output read as the bytes it is."""
    command = [sys.executable, "-c", FULL] if full else [CRAWLER]
    return subprocess.run([*command, *map(str, args)], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=300)


def assert_escaped(done: subprocess.CompletedProcess[str]) -> None:
    for stream in (done.stdout, done.stderr):
        raw = [char for char in RAW if char in stream]
        assert not raw, (raw, stream)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("terminal")
    repo = GitRepo(base / "lib")
    repo.write("m.py", SOURCE)
    repo.write(ODD_FILE, ODD_SOURCE)
    repo.commit("messages and names with control characters")
    done = crawler("extract", "lib", "-o", "out", "-q", "--no-evidence", cwd=base)
    assert done.returncode == 0, done.stderr
    return base


@pytest.fixture
def base(extracted: Path, tmp_path: Path) -> Path:
    """A copy of the repository and its records, for a test to change."""
    for name in ("lib", "out"):
        shutil.copytree(extracted / name, tmp_path / name, symlinks=True)
    return tmp_path


def record_path(base: Path, function: str) -> Path:
    folder = next((base / "out").rglob("manifest.yaml")).parent
    for path in record_files.iter_record_paths(folder):
        if record_files.load_record(path).site.function == function:
            return path
    raise AssertionError(function)


def annotate(path: Path, written_for: str | None, words: str) -> None:
    """A person's annotation, its words written raw (a right-to-left override is valid YAML)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("annotation:\n")
    end = text.index("\nhistory:", start) if "\nhistory:" in text else len(text)
    block = ("annotation:\n"
             f"  written_for: {json.dumps(written_for)}\n"
             f"  what_it_means: '{words}'\n"
             "  solutions: []\n  example_fix: null\n  defensive_patterns: []\n"
             "  prevention: []\n  when_it_happens: null\n  related: []")
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


@pytest.mark.parametrize("full", [False, True], ids=["installed", "full command line"])
def test_lookup_shows_the_template_and_the_path_escaped_and_json_exact(
        extracted: Path, full: bool) -> None:
    done = crawler("lookup", "bad shape 3 for the widget", "out", cwd=extracted, full=full)
    assert_escaped(done)
    assert f"    {SHOWN}" in done.stdout.splitlines(), done.stdout
    odd = crawler("lookup", "OSError: cannot open a.txt for writing", "out", cwd=extracted,
                  full=full)
    assert_escaped(odd)
    assert r"odd\u202eyp.py:2" in odd.stdout, odd.stdout
    answer = json.loads(crawler("lookup", "bad shape 3 for the widget", "out", "--json",
                                cwd=extracted, full=full).stdout)
    assert answer["matches"][0]["template"] == TEMPLATE


def test_the_two_lookups_print_the_same_bytes_on_a_pipe(extracted: Path) -> None:
    """Nothing lookup prints is left for click to strip off a pipe: the installed command,
    which does not use click, prints what the full command line prints."""
    for args in (["bad shape 3 for the widget", "out"], ["bad shape 3 for the widget", "out",
                                                          "--json"]):
        quick, full = (crawler("lookup", *args, cwd=extracted, full=f) for f in (False, True))
        assert (quick.returncode, quick.stdout, quick.stderr) == \
            (full.returncode, full.stdout, full.stderr)


def test_lookup_escapes_on_a_terminal_too(extracted: Path) -> None:
    """Standard output a terminal (a pseudo-terminal here): the same escaped text."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([CRAWLER, "lookup", "bad shape 3 for the widget", "out"],
                                   cwd=extracted, env=child_env(), stdout=follower,
                                   stderr=subprocess.PIPE)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the command is done
                break
            if not chunk:
                break
            shown += chunk
        process.wait(timeout=120)
    finally:
        os.close(leader)
    text = shown.decode()
    assert SHOWN in text and not any(char in text.replace("\r\n", "\n") for char in RAW), text


def test_check_shows_the_template_escaped(base: Path) -> None:
    annotate(record_path(base, "f"), None, "the shape is wrong")
    done = crawler("check", "out", cwd=base)
    assert done.returncode == 1
    assert_escaped(done)
    assert "bad shape {x} for the widget" in done.stdout
    found = json.loads(crawler("check", "out", "--json", cwd=base).stdout)
    assert [finding["template"] for finding in found["findings"]] == [TEMPLATE]


def test_update_shows_a_reworded_template_escaped(base: Path) -> None:
    annotate(record_path(base, "f"), TEMPLATE, "the shape is wrong")
    repo = GitRepo(base / "lib")
    repo.write("m.py", SOURCE.replace("widget", "gadget"))
    repo.commit("reworded")
    done = crawler("update", "lib", "-o", "out", "--no-evidence", cwd=base)
    assert done.returncode == 0, done.stderr
    assert_escaped(done)
    assert "bad shape {x} for the gadget" in done.stdout, done.stdout
    again = crawler("update", "lib", "-o", "out", "--no-evidence", "--json", "--dry-run",
                    cwd=base)
    stale = json.loads(again.stdout)["stale_annotations"]
    assert [entry["template"] for entry in stale] == [TEMPLATE.replace("widget", "gadget")]


def test_adopt_shows_paths_and_the_replaced_annotation_escaped(base: Path) -> None:
    old, new = record_path(base, "f"), record_path(base, "g")
    annotate(old, TEMPLATE, "the shape is wrong")
    annotate(new, None, f"open it {OVERRIDE}txt.exe first")
    done = crawler("adopt", old.stem, new.stem, "out", "--force", "--dry-run", cwd=base)
    assert done.returncode == 0, done.stderr
    assert_escaped(done)
    assert r"what_it_means: 'open it \u202etxt.exe first'" in done.stdout, done.stdout
    assert r"odd\u202eyp.py:2" in done.stdout
    moved = json.loads(crawler("adopt", old.stem, new.stem, "out", "--force", "--dry-run",
                               "--json", cwd=base).stdout)
    assert moved["replaced"].count(OVERRIDE) == 1


def test_history_shows_a_tag_escaped(base: Path) -> None:
    repo = GitRepo(base / "lib")
    repo.git("tag", "v1.0")
    repo.git("tag", f"nightly{OVERRIDE}")
    done = crawler("history", "lib", "--tags", "*", "-o", "walked", "--no-evidence", cwd=base)
    assert done.returncode == 0, done.stderr
    assert_escaped(done)
    assert r"left out nightly\u202e" in done.stdout, done.stdout
