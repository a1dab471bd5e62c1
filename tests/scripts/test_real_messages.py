"""scripts/real_messages.py on a small package: both ways evaluate real messages, and a record
whose regex is wrong is reported by each way with the message the raise really printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.pipeline import apply
from tests.helpers import outputkit

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "real_messages.py"

SOURCES = {
    "demo/__init__.py": "",
    "demo/errors.py": (
        "class SuffixError(ValueError):\n"
        "    def __init__(self, message):\n"
        "        super().__init__(f'{message}\\nSee the error page')\n"
        "\n"
        "\n"
        "class Closed(Exception):\n"
        "    def __init__(self):\n"
        "        super().__init__('the widget is closed')\n"
    ),
    "demo/widgets.py": (
        "from demo.errors import Closed, SuffixError\n"
        "\n"
        "\n"
        "def check_size(size):\n"
        "    if size < 0:\n"
        "        raise SuffixError(f'negative size {size}')\n"
        "    return size\n"
        "\n"
        "\n"
        "def look_up(table, key):\n"
        "    if key not in table:\n"
        "        raise KeyError(f'no widget {key}')\n"
        "    return table[key]\n"
        "\n"
        "\n"
        "def close():\n"
        "    raise Closed()\n"
        "\n"
        "\n"
        "def held(name):\n"
        "    message = 'bad name ' + name\n"
        "    raise ValueError(message)\n"
        "\n"
        "\n"
        "def tampered(count):\n"
        "    raise ValueError(f'count {count} too high')\n"
        "\n"
        "\n"
        "def passed_on(message):\n"
        "    raise RuntimeError(message)\n"
    ),
}

TESTS = (
    "import unittest\n"
    "from demo import widgets\n"
    "\n"
    "\n"
    "class WidgetTest(unittest.TestCase):\n"
    "    def test_raises(self):\n"
    "        for call in (lambda: widgets.check_size(-2), lambda: widgets.look_up({}, 'k'),\n"
    "                     widgets.close, lambda: widgets.held('x'),\n"
    "                     lambda: widgets.tampered(7), lambda: widgets.passed_on('any text')):\n"
    "            with self.assertRaises(Exception):\n"
    "                call()\n"
)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, object]]]:
    """The script's output and mismatches on the package, one record's regex made wrong."""
    base = tmp_path_factory.mktemp("real")
    source = base / "source"
    for path, text in {**SOURCES, "test_demo.py": TESTS}.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf-8")
    apply(outputkit.collected(SOURCES), base / "out")
    folder = outputkit.folder_of(base / "out")
    record = next(p for p in (folder / "errors").glob("*.yaml")
                  if "too high" in p.read_text(encoding="utf-8"))
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("too high$", "too low$"), encoding="utf-8")
    mismatches = base / "mismatches.jsonl"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), "--source", str(source),
         "--unittest", "test_demo", "--mismatches", str(mismatches)],
        capture_output=True, text=True, timeout=120, check=True, cwd=base,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = mismatches.read_text(encoding="utf-8").splitlines()
    return run.stdout, [json.loads(line) for line in lines]


def test_before_compares_dynamic_counts_and_changed_templates(tmp_path: Path) -> None:
    """--before: an earlier folder of the same raises, one of them read as dynamic there."""
    earlier = {**SOURCES, "demo/widgets.py": SOURCES["demo/widgets.py"].replace(
        "f'count {count} too high'", "describe(count)")}
    apply(outputkit.collected(earlier), tmp_path / "before")
    apply(outputkit.collected(SOURCES), tmp_path / "after")
    (tmp_path / "source").mkdir()
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(outputkit.folder_of(tmp_path / "after")),
         "--source", str(tmp_path / "source"), "--no-construct",
         "--before", str(outputkit.folder_of(tmp_path / "before"))],
        capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout.splitlines()[1:] == [
        "dynamic records: before 2, after 1",
        "records: before 6, after 6; raises at the same place 6",
        "raises whose templates changed: 1 (dynamic->fstring 1)",
        "  demo/widgets.py:26 ValueError",
        "    before dynamic: '{describe(count)}'",
        "    after  fstring: 'count {count} too high'",
    ]


def test_each_way_evaluates_every_raise_and_counts_the_wrong_regex(
        checked: tuple[str, list[dict[str, object]]]) -> None:
    out, _ = checked
    assert out.splitlines()[:3] == [
        "widgets: 6 records; kinds: class_default 2, fstring 2, variable 1, dynamic 1",
        "  a. construct: evaluated 6 of 6, matched 5 (1 with no text of their own), "
        "mismatched 1 (1 unflagged, 0 say not followed)",
        "  b. trace (unittest test_demo): evaluated 6 sites with 6 distinct messages, "
        "matched 5 (1 with no text of their own), mismatched 1 (1 unflagged, 0 say not followed)",
    ]


def test_a_mismatch_names_the_site_its_template_and_the_real_message(
        checked: tuple[str, list[dict[str, object]]]) -> None:
    _, mismatches = checked
    assert [(m["way"], m["path"], m["line"], m["template"]) for m in mismatches] == [
        ("construct", "demo/widgets.py", 26, "count {count} too high"),
        ("trace", "demo/widgets.py", 26, "count {count} too high"),
    ]
    # way a's stand-in prints the expression; way b's is the value the test passed
    assert [m["message"] for m in mismatches] == ["count count too high", "count 7 too high"]
