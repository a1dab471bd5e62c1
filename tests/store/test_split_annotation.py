"""`split_at_annotation` and `top_level_keys` search a text for lines ended by `\\n` alone
instead of splitting it: the search must answer as the line-by-line reading does, and every
other break `str.splitlines` knows (U+2028, U+0085, `\\r`...) stays inside its line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.store import render
from tests.helpers.records import a_record

# The pieces of a record's lines that decide where a key starts (or seem to).
_PIECES = ["annotation:", "annotation: x", "history:", "  note: y", "# c", "- a", "...", "..x",
           ".", "", " ", "\t", "\u00a0k", "\u3000", "\x1f", "id: 1", "é:", "annotation",
           "  annotation: z", "---", "\x85", "\u2028", "\r", "\x0c",
           "\x0b", "\x1c", "\x1d", "\x1e", "\u2029"]


def _starts_top_level_key(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("#", "-", "..."))


def _by_lines(text: str) -> tuple[tuple[str, str, str] | None, int]:
    """Both answers the long way, every line (ended by `\\n` alone) split off and tested alone."""
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    start = next((i for i, line in enumerate(lines) if line.startswith("annotation:")), None)
    keys = sum(_starts_top_level_key(line.removesuffix("\n")) for line in lines)
    if start is None:
        return None, keys
    end = start + 1
    while end < len(lines) and not _starts_top_level_key(lines[end]):
        end += 1
    return ("".join(lines[:start]), "".join(lines[start:end]), "".join(lines[end:])), keys


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.booleans())
def test_search_answers_as_the_lines_do(pieces: list[str], final_newline: bool) -> None:
    text = "\n".join(pieces) + ("\n" if final_newline else "")
    assert (render.split_at_annotation(text), render.top_level_keys(text)) == _by_lines(text)


def test_a_written_record_splits_at_its_annotation_block() -> None:
    text = render.record_text(a_record())
    parts = render.split_at_annotation(text)
    assert parts is not None and (parts, render.top_level_keys(text)) == _by_lines(text)
    assert parts[1].startswith("annotation:") and parts[2].startswith("history:")


def test_other_line_breaks_stay_inside_their_line() -> None:
    block = "annotation:\n  what: 'a\u2028b'\n  # note\x85 more\n  fix: \"c\u2029d\"\r\n"
    text = "id: 1\rstatus: x\n" + block + "history: []\n"
    assert render.split_at_annotation(text) == _by_lines(text)[0] == (
        "id: 1\rstatus: x\n", block, "history: []\n")
    assert render.top_level_keys(text) == _by_lines(text)[1] == 3
