"""scripts/corpus.py: its list, its choice of templates, and a run on two generated libraries."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "corpus.py"

# A crawler that is the installed one, except for the library named `faulty`: a stray key is
# planted in one of its records after extract (validate must fail), its lookups raise (a
# Traceback), and its SQLite export dies of SIGSEGV (a crash).
FAULTY_CRAWLER = '''
import os, signal, subprocess, sys
from pathlib import Path
args = sys.argv[1:]
faulty = any(arg == "faulty" or f"{os.sep}faulty{os.sep}" in arg for arg in args)
if faulty and args[0] == "lookup":
    raise RuntimeError("a planted fault")
if faulty and args[0] == "export" and any(arg.endswith(".sqlite") for arg in args):
    os.kill(os.getpid(), signal.SIGSEGV)
code = subprocess.call([sys.executable, "-m", "crawler", *args])
if faulty and args[0] == "extract":
    output = Path(args[args.index("-o") + 1])
    record = sorted(output.rglob("errors/*.yaml"))[0]
    record.write_text(record.read_text() + "stray_key: 1\\n")
sys.exit(code)
'''

GOOD = '''\
def parse(text):
    if not text:
        raise ValueError("the text to parse is empty, give it at least one line")
    if text.startswith("#"):
        raise ValueError("a comment cannot start the document")
    if len(text) > 80:
        raise TypeError("the text is too long")
    if text == "x":
        raise TypeError("the text is too long")
    if text == "y":
        raise RuntimeError("the parser is not ready for this input")
    raise KeyError(f"no key {text}")
'''


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _record(record_id: str, template: str, kind: str = "literal", status: str = "active",
            display: str = "str", placeholders: tuple[str, ...] = ()) -> dict:
    regex = "^" + re.escape(template) + "$"
    for placeholder in placeholders:
        regex = regex.replace(re.escape("{" + placeholder + "}"), "([\\s\\S]*?)")
    return {"id": record_id, "status": status, "extracted": {
        "exception": "ValueError", "factory": False,
        "message": {"kind": kind, "template": template, "display": display,
                    "placeholders": list(placeholders), "regex": regex}}}


def test_the_three_messages_are_unique_ones_with_most_literal_words_whatever_the_order() -> None:
    script = _script()
    records = [
        _record("a1", "one two three four five six"),
        _record("a2", "one two three four five six"),  # the same template twice: left out
        _record("b1", "alpha beta gamma delta"),
        _record("b0", "alpha beta {x} gamma epsilon", kind="fstring", placeholders=("x",)),
        _record("c1", "{x}{y}{z} bad words", kind="fstring",  # its groups cannot be told apart
                placeholders=("x", "y", "z")),
        _record("d1", "removed one with many many words in it", status="removed"),
        _record("e1", "shown as repr with many many words in it", display="repr"),
        _record("e2", "dynamic with many many words in it", kind="dynamic"),
        _record("f1", "a control\x1b[31m character with many words in it"),
        _record("g1", "short {one}", kind="fstring", placeholders=("one",)),
    ]
    chosen = [(record["id"], text) for record, text in script.pick_templates(records)]
    assert chosen == [("b0", "alpha beta spam gamma epsilon"), ("b1", "alpha beta gamma delta"),
                      ("g1", "short spam")]
    assert [(r["id"], text) for r, text in script.pick_templates(records[::-1])] == chosen
    assert [r["id"] for r, _ in script.pick_templates(records[5:])] == ["g1"]
    odd = _record("h1", "a {x!r} b c d e f", kind="fstring", placeholders=("x",))
    odd["extracted"]["message"]["regex"] = "^a (?P<x>[\\s\\S]*?) b c d e f$"  # not filled: left out
    assert script.pick_templates([odd]) == []


def test_a_failure_names_its_command_exit_stderr_ends_and_a_recursion_s_frames() -> None:
    script = _script()
    frames = ['  File "/x/pkg/classes.py", line 9, in canonical\n    a\n'
              '  File "/x/pkg/classes.py", line 5, in star_class\n    b\n'] * 400
    step = script.Step("extract", ["crawler", "extract", "a b"], 0, exit=1, stderr=(
        "Traceback (most recent call last):\n" + "".join(frames) + "RecursionError: deep\n"))
    assert step.failed and step.traceback and not step.crashed
    assert step.describe().splitlines() == [
        "extract: exit 1 (expected 0) [Traceback]", '    $ crawler extract "a b"',
        "    | Traceback (most recent call last):",
        '    |   File "/x/pkg/classes.py", line 9, in canonical', "    |     a",
        '    |   File "/x/pkg/classes.py", line 5, in star_class', "    |     b",
        "    | ... (1592 lines)",
        '    |   File "/x/pkg/classes.py", line 9, in canonical', "    |     a",
        '    |   File "/x/pkg/classes.py", line 5, in star_class', "    |     b",
        "    | RecursionError: deep",
        "    frames repeated most: classes.py:canonical x400, classes.py:star_class x400"]
    killed = script.Step("lookup-1", ["crawler"], 0, exit=139, signal=11)
    assert killed.crashed and killed.describe().startswith("lookup-1: killed by signal 11 [crash]")
    timed_out = script.Step("extract", ["crawler"], 0, note="killed at the timeout (4 s)")
    assert timed_out.crashed and timed_out.describe().startswith(
        "extract: killed at the timeout (4 s) [crash]\n")
    assert script.Step("validate", ["crawler"], 0, exit=2).describe().startswith(
        "validate: exit 2 (expected 0)\n")


def test_the_list_is_read_from_the_docs_table_and_a_bad_row_is_named(tmp_path: Path) -> None:
    script = _script()
    libraries = script.read_list(ROOT / "docs" / "corpus.md")
    assert len(libraries) >= 40
    assert {"numerics", "web", "data", "parsing", "packaging", "testing", "CLI"} <= {
        library.kind for library in libraries}
    assert "networkx" in {library.name for library in libraries}
    bad = tmp_path / "list.md"
    bad.write_text("## Libraries\n\n| library | kind | source | commit |\n| --- | --- | --- | --- |"
                   "\n| one | web | github:a/b | v1.0 |\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--list", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"corpus: {bad}:5: commit 'v1.0' is not a 40-hex sha\n"


@pytest.mark.slow
def test_a_library_that_reads_well_passes_and_a_faulty_one_is_failed_step_by_step(
        tmp_path: Path) -> None:
    good = GitRepo(tmp_path / "repos" / "good")
    good.write("pkg/__init__.py", "")
    good.write("pkg/core.py", GOOD)
    good_commit = good.commit("good")
    faulty = GitRepo(tmp_path / "repos" / "faulty")
    faulty.write("pkg/core.py", GOOD)
    faulty_commit = faulty.commit("faulty")
    listing = tmp_path / "list.md"
    listing.write_text(
        "# corpus\n\n## Libraries\n\n| library | kind | source | commit | note |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| good | parsing | repos/good | {good_commit} | |\n"
        f"| faulty | parsing | repos/faulty | {faulty_commit} | |\n\n## After\n\n| not | a row |\n")
    crawler = tmp_path / "crawler.py"
    crawler.write_text(FAULTY_CRAWLER)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--list", str(listing), "--work", str(tmp_path / "work"),
         "--jobs", "2", "--crawler", f"{sys.executable} {crawler}", "--json", str(report),
         "--timeout", "120"],  # the script kills a command of its own that runs longer
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")
            for line in done.stdout.splitlines() if line.startswith("| ")}
    assert [rows["good"][i] for i in (2, 3)] == ["2", "6"] and rows["good"][-1] == "0 |"
    libraries = {entry["name"]: entry for entry in json.loads(report.read_text())["libraries"]}
    good_steps = {step["name"]: step for step in libraries["good"]["steps"]}
    assert list(good_steps) == ["extract", "validate", "update-check", "export-jsonl",
                                "export-sqlite", "lookup-1", "lookup-db", "lookup-2", "lookup-3"]
    assert not any(step["failed"] for step in good_steps.values())
    assert good_steps["extract"]["cpu_seconds"] > 0 and good_steps["extract"]["peak_mib"] > 5
    faulty_steps = {step["name"]: step for step in libraries["faulty"]["steps"]}
    assert faulty_steps["validate"]["exit"] == 1 and faulty_steps["validate"]["failed"]
    assert faulty_steps["export-jsonl"]["exit"] == 1  # the planted record left out
    assert "export-jsonl: exit 1 (expected 0): 5 records exported, the extract said 6" in done.stdout
    assert faulty_steps["export-sqlite"]["crashed"] and faulty_steps["export-sqlite"]["signal"] == 11
    lookups = [step for name, step in faulty_steps.items() if name.startswith("lookup")]
    assert len(lookups) == 3 and all(step["traceback"] and not step["crashed"] for step in lookups)
    assert "2 libraries: 1 crashes, 3 Tracebacks, 1 not validated" in done.stdout
    assert "faulty: validate: exit 1 (expected 0)" in done.stdout
    assert "faulty: lookup-1: exit 1 (expected 0) [Traceback]" in done.stdout
    assert "    | RuntimeError: a planted fault" in done.stdout
    assert "faulty: export-sqlite: killed by signal 11 [crash]" in done.stdout
