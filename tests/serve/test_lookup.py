"""Lookup: a runtime message to its records, best first; closest templates when none match."""

from __future__ import annotations

import gc
import json
import statistics
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.catalogue.merge import merge
from crawler.cli import main
from crawler.parse.visitor import find_raise_sites
from crawler.records import ErrorRecord, Pin
from crawler.serve.lookup import LookupIndex, literal_runs, lookup, parse_message
from crawler.store import record_files

PIN = Pin(source=".", host="local", owner="o", name="n", ref="HEAD", sha="a" * 40)
SOURCE = b'''
def f(shape, name, key, n):
    raise ValueError(f"bad shape {shape}")
    raise ValueError(f"bad shape {shape} for {name}")
    raise ValueError("bad shape")
    raise KeyError(f"missing column {key}")
    raise TypeError("expected %d items, got %d" % (n, len(name)))
    raise ValueError(name)
'''


@pytest.fixture
def records() -> list[ErrorRecord]:
    sites = find_raise_sites("m.py", SOURCE, "m").sites
    return merge(PIN, [], sites).records


def templates(matches: list) -> list[str]:
    return [m.record.site.message.template for m in matches]


def test_best_first_by_literal_characters(records: list[ErrorRecord]) -> None:
    matches = lookup("bad shape (3, 4) for x", records)
    assert templates(matches) == ["bad shape {shape} for {name}", "bad shape {shape}"]
    assert all(m.exact for m in matches)
    assert matches[0].captures == {"shape": "(3, 4)", "name": "x"}


def test_traceback_line_and_key_error_repr(records: list[ErrorRecord]) -> None:
    (match,) = lookup("KeyError: 'missing column x'", records)
    assert match.record.site.exception == "KeyError"
    assert match.captures == {"key": "x"}
    traceback = "Traceback (most recent call last):\n  File \"m.py\", line 3\nValueError: bad shape\n"
    assert templates(lookup(traceback, records)) == ["bad shape"]


def test_a_dynamic_template_is_not_a_match(records: list[ErrorRecord]) -> None:
    assert "{name}" not in templates(lookup("expected 3 items, got 2", records))


def test_closest_when_nothing_matches(records: list[ErrorRecord]) -> None:
    matches = lookup("expected items but got none", records)
    assert matches and not any(m.exact for m in matches)
    assert templates(matches)[0] == "expected {n} items, got {len(name)}"


def test_parse_message() -> None:
    assert parse_message("ValueError: x: y") == ("ValueError", ["x: y", "ValueError: x: y"])
    assert parse_message("plain text") == (None, ["plain text"])


def test_literal_runs() -> None:
    assert literal_runs(r"^bad (?P<x>[\s\S]*?) shape\.$") == ["bad ", " shape."]
    assert literal_runs(r"""^['"]it\\?'s (?P<k>[\s\S]*?)['"]$""") == ["it", "'s "]


def test_ten_thousand_records_answer_well_under_a_second(records: list[ErrorRecord]) -> None:
    """Timed in CPU seconds of this process, so that a busy machine does not fail it."""
    lines = []
    for i in range(2000):
        lines += [f"    raise ValueError(f'failure number {i} in {{thing}} of kind {{kind}}')",
                  f"    raise KeyError('key {i} missing: %s' % key)",
                  f"    raise TypeError('expected {i} things, got {{}}'.format(n))",
                  f"    raise ValueError('literal message number {i}')",
                  f"    raise RuntimeError(msg_{i})"]
    source = ("def f(thing, kind, key, n):\n" + "\n".join(lines) + "\n").encode()
    many = merge(PIN, [], find_raise_sites("big.py", source, "big").sites).records
    assert len(many) == 10_000
    gc.collect()
    started = time.process_time()
    lookup("literal message number 77", many)  # index built, one query: the cold path
    cold = time.process_time() - started
    index = LookupIndex(many)
    timings = []
    for message in ["failure number 1999 in x of kind y", "'key 5 missing: z'",
                    "literal message number 77", "nothing like any of them at all"] * 5:
        started = time.process_time()
        assert index.lookup(message)
        timings.append(time.process_time() - started)
    median = statistics.median(timings)
    assert median < 0.1 and cold < 1.0, (median, cold)


def test_cli_lookup(tmp_path: Path, records: list[ErrorRecord]) -> None:
    folder = tmp_path / "local" / "o" / "n"
    for record in records:
        record_files.write_record(folder, record)
    runner = CliRunner()
    result = runner.invoke(main, ["lookup", "ValueError: bad shape 3", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "bad shape {shape}" in result.output and result.output.startswith("= ")
    result = runner.invoke(main, ["lookup", "bad shape 3", str(tmp_path), "--json"])
    data = json.loads(result.output)
    assert data[0]["template"] == "bad shape {shape}" and data[0]["exact"] is True
    result = runner.invoke(main, ["lookup", "completely different words", str(tmp_path)])
    assert result.exit_code == 0


def test_cli_lookup_help_has_an_example() -> None:
    result = CliRunner().invoke(main, ["lookup", "--help"])
    assert "Example" in result.output
