"""Lookup's ranking: a runtime message to its records, best first; closest templates when none
match. (The stored index and the command are in test_index.py and test_lookup_cli.py.)"""

from __future__ import annotations

import gc
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.catalogue.merge import merge
from crawler.cli.commands import main
from crawler.parse.visitor import find_raise_sites
from crawler.records import REMOVED, ErrorRecord, Pin
from crawler.serve.lookup.matching import repeats_agree
from crawler.serve.lookup.sources import LookupIndex, describe, literal_runs, lookup, parse_message
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
    return [m.wording.template for m in matches]


def test_best_first_by_literal_characters(records: list[ErrorRecord]) -> None:
    matches = lookup("bad shape (3, 4) for x", records)
    # "bad shape {shape}" fits too, but its placeholder takes most of the paste and its literal
    # text is too short to be an answer: only close, and a confident answer stands alone
    assert templates(matches) == ["bad shape {shape} for {name}"]
    assert [(m.kind, m.confident) for m in matches] == [("exact", True)]
    assert matches[0].captures == {"shape": "(3, 4)", "name": "x"}


def test_traceback_line_and_key_error_repr(records: list[ErrorRecord]) -> None:
    match = lookup("KeyError: 'missing column x'", records)[0]
    assert match.wording.exception == "KeyError"
    assert match.captures == {"key": "x"}
    traceback = "Traceback (most recent call last):\n  File \"m.py\", line {}\nValueError: bad shape\n"
    assert templates(lookup(traceback.format(5), records))[0] == "bad shape"
    # "bad shape {shape}" prints the same words (its placeholder empty): the frame decides
    assert templates(lookup(traceback.format(3), records))[0] == "bad shape {shape}"


def test_a_dynamic_template_is_not_a_match(records: list[ErrorRecord]) -> None:
    assert "{name}" not in templates(lookup("expected 3 items, got 2", records))


def test_closest_when_nothing_matches(records: list[ErrorRecord]) -> None:
    matches = lookup("expected items but got none", records)
    assert matches and not any(m.exact for m in matches)
    assert templates(matches)[0] == "expected {n} items, got {len(name)}"


def test_parse_message() -> None:
    assert parse_message("ValueError: x: y") == ("ValueError", ["x: y", "y"])
    assert parse_message("note: x: y") == (None, ["note: x: y", "x: y"])
    # every prefix off first, then one fewer: a message may begin with a class's name itself
    # (sympy's SympifyError prints `SympifyError: 'a'` as its message)
    assert parse_message("FilteredStackTrace: pkg.BadThing: x") == ("pkg.BadThing",
                                                                    ["x", "pkg.BadThing: x"])
    assert parse_message("sympy.core.sympify.SympifyError: SympifyError: 'a'") == (
        "SympifyError", ["'a'", "SympifyError: 'a'"])
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
        assert index.answer(message).verdict in ("found", "none")
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
    first = data["matches"][0]
    assert first["template"] == "bad shape {shape}" and first["match"] == "exact"
    assert (data["verdict"], data["exit"], first["rank"]) == ("found", 0, 1)
    result = runner.invoke(main, ["lookup", "completely different words", str(tmp_path)])
    assert result.exit_code == 1  # nothing matches: exit 1, the closest still printed


def test_cli_lookup_help_has_an_example() -> None:
    result = CliRunner().invoke(main, ["lookup", "--help"])
    assert "Example" in result.output


RANKED = b'''
class Machine:
    def step(self, key, x):
        raise RuntimeError(f"{self._state}: {self}")
        raise KeyError(key)
        raise ValueError(f"odd gizmo {x}")
        raise TypeError(f"odd {x}")
        raise ValueError(f"value {x} is out of range")
        raise IndexError(f"value {x} is out of range")
'''


@pytest.fixture(scope="module")
def ranked() -> list[ErrorRecord]:
    return merge(PIN, [], find_raise_sites("r.py", RANKED, "r").sites).records


def test_the_exception_of_a_traceback_line_is_no_message_text(ranked: list[ErrorRecord]) -> None:
    """`KeyError: 'k'` is a KeyError saying 'k', never `{self._state}: {self}` with
    `_state = 'KeyError'`; and a template that is all placeholders explains no paste."""
    answer = LookupIndex(ranked).answer("KeyError: 'k'")
    assert not answer.found
    assert "{self._state}: {self}" not in [m.wording.template for m in answer.matches]
    assert LookupIndex(ranked).answer("Idle: <Machine 3>").verdict == "none"


def test_the_named_exception_breaks_the_tie_of_equal_texts(ranked: list[ErrorRecord]) -> None:
    # "odd {x}" of the named TypeError explains too little of the text to win over "odd gizmo
    # {x}" (words no library of lookup's background prints, so that the test is of the tie)
    matches = lookup("TypeError: odd gizmo 3", ranked)
    assert [(m.wording.exception, m.kinship, m.confident) for m in matches[:2]] == [
        ("ValueError", "other", True), ("TypeError", "same", False)]
    # no class pasted: the confident answer stands alone, without the close "odd {x}"
    assert templates(lookup("odd gizmo 3", ranked)) == ["odd gizmo {x}"]
    assert [m.wording.exception for m in lookup("IndexError: value 9 is out of range", ranked)
            ][:2] == ["IndexError", "ValueError"]


def test_a_whole_traceback_finds_its_last_exception(records: list[ErrorRecord]) -> None:
    pasted = '''Traceback (most recent call last):
  File "m.py", line 6, in f
    raise KeyError(f"missing column {key}")
KeyError: 'missing column x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "app.py", line 9, in <module>
    f((3, 4), "x", "k", 2)
    ~^^^^^^^^^^^^^^^^^^^^^
  File "m.py", line 3, in f
    raise ValueError(f"bad shape {shape}")
ValueError: bad shape (3, 4)
'''
    first = lookup(pasted, records)[0]
    assert (first.wording.template, first.same_exception) == ("bad shape {shape}", True)
    assert first.captures == {"shape": "(3, 4)"}


def test_removed_records_are_found_and_marked(records: list[ErrorRecord]) -> None:
    gone = "b" * 40
    removed = [replace(r, status=REMOVED, history=replace(r.history, removed_in=gone))
               if r.site.message.template == "bad shape {shape}" else r for r in records]
    answer = LookupIndex(removed).answer("bad shape (3, 4)")
    (match,) = [m for m in answer.matches if m.wording.template == "bad shape {shape}"]
    assert (match.wording.status, match.wording.removed_in) == (REMOVED, gone)
    (data,) = [d for d in describe(answer)["matches"] if d["id"] == match.wording.record_id]
    assert (data["status"], data["removed_in"], data["repo"]) == (REMOVED, gone, "local/o/n")


def test_a_live_record_comes_before_a_removed_one_of_the_same_score(
        records: list[ErrorRecord]) -> None:
    twin = next(r for r in records if r.site.message.template == "bad shape {shape}")
    removed = replace(twin, id="f" * 16, status=REMOVED)
    matches = lookup("bad shape 3", [removed, *records])
    assert [m.wording.status for m in matches[:2]] == ["active", REMOVED]


def test_limit_bounds_the_matches_and_the_closest(ranked: list[ErrorRecord],
                                                  records: list[ErrorRecord]) -> None:
    everything = LookupIndex([*ranked, *records])
    assert len(everything.lookup("bad shape 3 for 4", limit=1)) == 1
    closest = everything.lookup("value shape bad items column range", limit=7)
    assert len(closest) == 7 and not any(m.exact for m in closest)  # more than the old fixed 5
    assert len(everything.lookup("value shape bad items column range", limit=2)) == 2


def test_one_scale_for_every_kind(ranked: list[ErrorRecord], records: list[ErrorRecord]) -> None:
    """Exact and close alike: the share of the paste the template's literal text explains
    (whitespace left out), and the share of the template the paste shows."""
    everything = LookupIndex([*ranked, *records])
    exact = everything.lookup("bad shape (3, 4) for x")
    close = everything.lookup("the shape was wrong")
    assert exact[0].exact and not close[0].exact
    assert all(0 < m.explained <= 1 and 0 < m.coverage <= 1 for m in exact + close)
    assert exact[0].explained == round(len("badshapefor") / len("badshape(3,4)forx"), 3)
    assert exact[0].coverage == 1.0


def test_a_paste_of_a_templates_first_sentence_ties_with_a_template_it_is_all_of() -> None:
    # pydantic's shape: an issue's title quotes the first sentence of _unknown_type_schema's
    # message, which _pattern_schema's whole message also reads as
    source = b'''
def pattern_schema(pattern_type):
    raise SchemaError(f"Unable to generate pydantic-core schema for {pattern_type}.")


def unknown_type_schema(obj):
    raise SchemaError(f"Unable to generate pydantic-core schema for {obj!r}. Set "
                      "`arbitrary_types_allowed=True` in the model_config to ignore this "
                      "error.\\n\\nIf you got this error by calling handler(<some type>) ...")
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("gen.py", source, "gen").sites).records)
    title = ("pydantic.errors.SchemaError: Unable to generate pydantic-core schema for <class "
             "'starlette.requests.Request'>.")
    answer = index.answer(title)
    assert answer.found and answer.group == 2
    assert sorted(m.wording.qualname for m in answer.matches if m.rank == 1) == [
        "pattern_schema", "unknown_type_schema"]
    # the first line pasted whole (its two sentences): the same
    line = title.removesuffix(".") + (". Set `arbitrary_types_allowed=True` in the "
                                      "model_config to ignore this error.")
    answer = index.answer(line)
    assert answer.found and [m.wording.qualname for m in answer.matches][:1] == [
        "unknown_type_schema"] and answer.group == 1
    # a paste that stops inside a sentence is no sentence of it: the whole fit stands alone
    cut = index.answer(title.removesuffix(".") + ". Set `arbitrary")
    assert cut.group == 1
    assert [(m.wording.qualname, m.head) for m in cut.matches][:1] == [("unknown_type_schema", 0)]


def test_a_template_the_text_fits_whole_is_listed_however_long_its_value() -> None:
    # sqlalchemy's shape: `raise exc.ObjectNotExecutableError(statement)`, the words in the
    # class's __init__; a user's SQL text is most of the pasted line
    source = b'''
def execute(statement):
    raise NotExecutable("Not an executable object: %r" % (statement,))


def scalar(statement):
    raise NotExecutable("Not an executable object: %r" % (statement,))
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("base.py", source, "base").sites).records)
    pasted = ('Not an executable object: "\\nSELECT \\n    ELECTRY_NAME,\\n    METER_READING\\n'
              "FROM \\n    M_Y_ENERGY\\nWHERE \\n    BUILDING_NAME LIKE '%12%'\\nORDER BY \\n"
              '    METER_READING DESC\\nLIMIT 5;\\n"')
    answer = index.answer(pasted)
    # trusted however long the run-time part: the phrase is rare (two records hold its words),
    # and the two that print it are told as a tie
    assert answer.verdict == "found" and answer.group == 2
    assert sorted((m.wording.qualname, m.rank) for m in answer.matches) == [
        ("execute", 1), ("scalar", 1)]
    assert all(m.by_rarity for m in answer.matches)
    # words that fit no template whole, and share little with any: still nothing
    assert index.answer("Not a table: users").verdict == "none"
    # three records hold the words: no longer rare, and the run-time part is most of the
    # paste: listed, not trusted
    three = source + b'''

def first(statement):
    raise NotExecutable("Not an executable object: %r" % (statement,))
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("base.py", three, "base").sites).records)
    answer = index.answer(pasted)
    assert answer.verdict == "closest" and len(answer.matches) == 3


def test_a_placeholder_written_twice_fits_only_one_text_at_both_places() -> None:
    # redis-py 4.5's two connections: the async copy's `_error_message` writes `e.args[0]` twice
    # (redis/asyncio/connection.py), the sync one `e.args[0]`, then `e.args[1]`
    # (redis/connection.py); real message-only pastes of the sync one's words
    # (github.com/pinterest/snappass/issues/6, github.com/redis/redis-py/issues/1474)
    redis = b'''
class Connection:
    def connect(self, e, host_error):
        raise ConnectionError(f"Error {e.args[0]} connecting to {host_error}. {e.args[1]}.")


class AsyncConnection:
    def connect(self, e):
        raise ConnectionError(
            f"Error {e.args[0]} connecting to {self.host}:{self.port}. {e.args[0]}.")
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("connection.py", redis, "connection"
                                                        ).sites).records)
    for pasted in ("ConnectionError: Error 111 connecting to localhost:6379. Connection refused.",
                   "redis.exceptions.ConnectionError: Error 111 connecting to 127.0.0.1:6379. "
                   "Connection refused."):
        answer = index.answer(pasted)
        exact = [m.wording.qualname for m in answer.matches if m.exact]
        assert exact == ["Connection.connect"] and answer.group == 1
    # one text at both places: the async copy fits (what it printed for an errno alone)
    answer = index.answer("ConnectionError: Error 111 connecting to localhost:6379. 111.")
    assert [m.wording.qualname for m in answer.matches if m.exact and m.rank == 1] == [
        "AsyncConnection.connect"]
    # pymongo 3's `__getattr__`s: Database's `%r` written three times, Collection's `%s` twice;
    # a real paste of Collection's words (github.com/pinpoint-apm/pinpoint-c-agent/pull/477)
    # fits Database's words only with three names at its one `name`
    pymongo = b'''
class Database:
    def __getattr__(self, name):
        raise AttributeError("Database has no attribute %r. To access the %s"
                             " collection, use database[%r]." % (name, name, name))


class Collection:
    def __getattr__(self, name):
        raise AttributeError("Collection has no attribute %r. To access the %s"
                             " collection, use database['%s']." % (name, full_name, full_name))


class Other:
    def __getattr__(self, name):
        raise AttributeError("%s has no attribute %r. To access the %s"
                             " collection, use database[%r]." % (kind, name, name, name))
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("collection.py", pymongo, "collection"
                                                        ).sites).records)
    pasted = ("AttributeError: Collection has no attribute '_MongoClientPlugin__database'. To "
              "access the collection._MongoClientPlugin__database collection, use database["
              "'collection._MongoClientPlugin__database'].")
    answer = index.answer(pasted)
    assert [m.wording.qualname for m in answer.matches if m.exact] == ["Collection.__getattr__"]
    # a str's repr at one place and the str at the other are one value (`{url!r}`, `{url}`: the
    # template keeps no conversion): requests' MissingSchema as a user pasted it
    # (github.com/mirabarukaso/ComfyUI_Mira/issues/8)
    requests = b'''
def prepare_url(url):
    raise MissingSchema(f"Invalid URL {url!r}: No scheme supplied. Perhaps you meant https://{url}?")
'''
    index = LookupIndex(merge(PIN, [], find_raise_sites("models.py", requests, "models"
                                                        ).sites).records)
    answer = index.answer("requests.exceptions.MissingSchema: Invalid URL 'local': No scheme "
                          "supplied. Perhaps you meant https://local?")
    assert answer.found and answer.matches[0].wording.qualname == "prepare_url"
    assert repeats_agree(["u'//host/a.torrent'", "//host/a.torrent"])  # Python 2's repr
    assert repeats_agree(["PosixPath('/a')", "/a"]) and repeats_agree(["0.50", "0.5"])
    assert not repeats_agree(["111", "Connection refused"])


def test_a_repeated_part_of_a_template_explains_no_more_than_its_own_literal_text() -> None:
    # gunicorn 25.0's header folding: `value = [value.strip(" \t")]`, then a loop appends each
    # continuation line and `" ".join(value)` is raised, a template `{...} {...}` whose regex
    # repeats its group; `re` reports a repeated group's last round only, so every word between
    # a paste's first and last counted as the template's literal text and the record took any
    # line as a whole fit, ranked first (github.com/benoitc/gunicorn/issues/3111's HaltServer
    # line: HaltServer's own raise ranked third). fastapi's `{n} validation errors:\n  {err}\n`
    # is the same shape: its repeated errors are no literal text of it either.
    gunicorn = b'''
def parse_headers(lines, value, name):
    value = [value.strip(" \\t")]
    while lines and lines[0].startswith((" ", "\\t")):
        curr = lines.pop(0)
        value.append(curr.strip("\\t "))
    value = " ".join(value)
    if name == "EXPECT":
        raise ExpectationFailed(value)


def reap_workers(reason):
    raise HaltServer(f"{reason} Worker failed to boot.")
'''
    records = merge(PIN, [], find_raise_sites("message.py", gunicorn, "message").sites).records
    folding = next(r for r in records if r.site.qualname == "parse_headers")
    assert ")*" in folding.site.message.regex  # the repeated part this is about
    index = LookupIndex(records)
    answer = index.answer("gunicorn.errors.HaltServer: App Worker failed to boot.")
    assert answer.matches[0].wording.qualname == "reap_workers"
    # its literal text is a space, which explains nothing of a line of words
    answer = index.answer("ExpectationFailed: one two three four five six seven eight nine")
    assert not [m for m in answer.matches if m.wording.qualname == "parse_headers" and m.exact]
