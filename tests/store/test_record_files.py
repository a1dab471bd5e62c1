"""Records to YAML and back: round trips, kept annotation text, safe loading, atomic writes."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.errors import RecordError
from crawler.records import Annotation, ErrorRecord, History, TemplateSpan
from crawler.store import atomic, documents, record_files, render, safe_yaml
from tests.helpers.records import SHA, a_record


def test_round_trip_and_schema(tmp_path: Path) -> None:
    record = a_record()
    assert record_files.write_record(tmp_path, record)
    path = tmp_path / "errors" / f"{record.id}.yaml"
    loaded = record_files.load_record(path)
    assert loaded.site == record.site
    assert loaded.annotation.data == record.annotation.data
    assert render.record_text(loaded) == path.read_text()
    assert not record_files.write_record(tmp_path, loaded), "unchanged text is not written again"


def test_annotation_text_is_kept_byte_for_byte(tmp_path: Path) -> None:
    record = a_record()
    record_files.write_record(tmp_path, record)
    path = tmp_path / "errors" / f"{record.id}.yaml"
    hand = (
        "annotation:\n"
        "  # reviewed by a person, keep this comment\n"
        "  written_for: 'bad {x}: {{literal}}'\n"
        "  what_it_means: >\n"
        "    folded text\n"
        "    over lines\n"
        "  solutions: [one,   two]\n"
    )
    text = path.read_text()
    start, end = text.index("annotation:"), text.index("history:")
    path.write_text(text[:start] + hand + text[end:])
    loaded = record_files.load_record(path)
    assert loaded.annotation.data["solutions"] == ["one", "two"]
    moved = ErrorRecord(**{**loaded.__dict__, "site": a_record().site.__class__(
        **{**loaded.site.__dict__, "line": 20, "end_line": 22})})
    record_files.write_record(tmp_path, moved)
    assert hand in path.read_text()
    assert record_files.load_record(path).site.line == 20


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("schema_version: 1\nid: [unclosed\n", 3),
        ("!!python/object/apply:os.system ['touch pwned']\n", 1),
        ("a: &x [1, 2]\nb: *x\n", 2),
    ],
)
def test_unsafe_or_broken_yaml_is_refused_with_its_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(RecordError) as caught:
        safe_yaml.load_yaml_file(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert not (tmp_path / "pwned").exists()


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "x.yaml"
    atomic.write_atomic(target, "one\n")
    atomic.write_atomic(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.yaml"]


def test_empty_annotation_starts_with_every_slot() -> None:
    data = Annotation(data={}).data
    assert data == {}
    text = render.record_text(a_record())
    for slot in ("written_for", "what_it_means", "solutions", "example_fix", "defensive_patterns",
                 "prevention", "when_it_happens", "related"):
        assert f"\n  {slot}:" in text


@settings(max_examples=300, deadline=None)
@given(snippet=st.text(), template=st.text(), condition=st.none() | st.text(),
       kept=st.booleans())
def test_any_text_round_trips_through_a_record_file(snippet: str, template: str,
                                                    condition: str | None, kept: bool) -> None:
    """Whatever the source holds (blank lines, trailing spaces, `...`, control characters)."""
    base = a_record()
    site = replace(base.site, snippet=snippet, condition=condition,
                   message=replace(base.site.message, template=template))
    record = replace(base, site=site)
    if kept:
        record = replace(record, annotation=Annotation(
            data={"what_it_means": "x"}, text="annotation:\n  what_it_means: x  # mine\n"))
    text = render.record_text(record)
    if not kept:  # the blocks joined are the one document dumped whole, byte for byte
        assert text == safe_yaml.dump_yaml({
            "schema_version": 1, "id": record.id, "status": record.status,
            "extracted": documents.extracted_data(record), "annotation": record.annotation.data,
            "history": documents.history_data(record.history)})
    data = yaml.safe_load(text)
    assert data["extracted"]["snippet"] == snippet
    assert data["extracted"]["message"]["template"] == template
    assert data["extracted"]["condition"] == condition
    assert data["history"]["first_seen"] == SHA
    if kept:
        assert "  what_it_means: x  # mine\n" in text


# Strings near the edge of what YAML writes plain: words it reads as other types, leading and
# trailing spaces, indicators, numbers, and any text at all.
edge_strings = st.sampled_from([
    "", " ", "a ", " a", "yes", "No", "on", "OFF", "null", "Null", "~", "true", "y", "n", "1",
    "-1", "0x1f", "0o17", "017", "1_000", "1e5", "1.5", ".5", "1:20", "2001-12-14", "=", "<<",
    ".inf", ".NaN", "a: b", "a #b", "a,b", "(x)", "x.y/z", "a  b", "-", "- a", "a-", "*a", "a*",
    "<x>", "a=b", "+1", "_", "__init__", "f(x, y)", "12e4567890123456", "0000000000000000",
    "abcdefabcdefabcd", "-a", "?a", "? a", ":a", "a:", "#a", "a#b", "---x", "...x", "..x",
    "a - b", "it's", "'q'", '"q"', "^a\\.b$", "a\tb", "%x", "@x", "`x", "!x", "&x", "|x", ">x",
    "[x]", "{x}", "x]", "a,", "é", "a\x85b", "a\nb", "a\nb\n", "a\n\nb\n", "  a\nb\n", "a\n  b\n",
    "a \nb", "a\nb\n\n", "\na", "a\n", "a\n ", "a\n\n", "a\r\nb", "a\n\tb\n", "#\n", "a\n#b\n"]) \
    | st.text(alphabet="ab1 -_.,:#=?()[]{}<>*+/~\\\t\n'\"", max_size=8) | st.text()
scalars = st.none() | st.booleans() | st.integers() | edge_strings
values = st.recursive(scalars | st.lists(edge_strings, max_size=3)
                      | st.lists(st.integers(), max_size=4).map(safe_yaml.FlowList),
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(edge_strings, inner, min_size=0, max_size=3), max_leaves=8)


@settings(max_examples=250, deadline=None)
@given(data=st.dictionaries(edge_strings, values, max_size=6))
def test_a_block_is_what_pyyaml_dumps(data: dict[str, object]) -> None:
    """Plain scalars are written without PyYAML's representer: byte for byte its output.
    A plain `pytest` draws 250 blocks (new ones each run); `-m slow` 1,000 more."""
    assert safe_yaml.block_text(data) == safe_yaml.dump_yaml(data)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(data=st.dictionaries(edge_strings, values, max_size=6))
def test_a_block_is_what_pyyaml_dumps_long(data: dict[str, object]) -> None:
    assert safe_yaml.block_text(data) == safe_yaml.dump_yaml(data)


def test_plain_scalars_skip_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"path": "pkg/mod.py", "line": 3, "class": None, "factory": False,
            "message": {"kind": "literal", "placeholders": ["x", "y_z"], "argument": "message"}}
    expected = safe_yaml.dump_yaml(data)
    monkeypatch.setattr(safe_yaml, "dump_yaml", None)  # any call would fail
    assert safe_yaml.block_text(data) == expected


def test_a_lone_surrogate_anywhere_is_written_as_its_escape() -> None:
    """Test patterns, conditions, snippets: any text read off a file may hold one."""
    text = safe_yaml.dump_yaml({"evidence": [{"pattern": "x\udc80y"}], "plain": "é"})
    assert yaml.safe_load(text) == {"evidence": [{"pattern": "x\\udc80y"}], "plain": "é"}


@pytest.mark.parametrize("history", [
    None,
    History(first_seen="a" * 40),
    History("a" * 40, "b" * 40, "old {x}", "1" * 16, "2" * 16, "KeyError", "old.py", "C.f",
            "template 0.91", (TemplateSpan("old {x}", "v1", "v2", "KeyError", "old.py"),
                              TemplateSpan("new {x}", "v3", None, "ValueError", "m.py"))),
])
def test_history_data_is_the_dataclass_s_fields_in_order(history: History | None) -> None:
    """`history_data` reads History's fields in their order (what `asdict` gave, without its
    deep copy): the keys written only when set are left out, `templates` comes last."""
    source = history or History(first_seen="")
    expected = {f.name: getattr(source, f.name) for f in fields(History) if f.name != "templates"}
    expected = {k: v for k, v in expected.items()
                if v is not None or k not in documents._HISTORY_WHEN_SET}
    if source.templates:
        expected["templates"] = [asdict(span) for span in source.templates]
    got = documents.history_data(history)
    assert list(got.items()) == list(expected.items())
    assert (history is None) or set(got) >= {"first_seen", "removed_in", "previous_template"}
