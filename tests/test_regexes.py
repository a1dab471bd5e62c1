"""Bounded regexes: the linear path and the `regex` path give what `re` gives, within a bound."""

from __future__ import annotations

import re
import time
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from crawler import regexes
from crawler.parse.message.pieces import Piece
from crawler.parse.message.templates import build_template, redisplay
from crawler.regexes import BoundedRegex, Budget, RegexTimeout, _sre, as_re_reads, literal_shape

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))

# Few letters, so the texts between placeholders repeat and the message finds them often.
_TEXT = st.text(alphabet="ab :{}'\"\\.()*\n", max_size=6)
_NAMES = st.sampled_from(["x", "y", "self.value", "x", "n[0]"])


@st.composite
def templates(draw: st.DrawFn) -> list[Piece]:
    pieces = []
    for _ in range(draw(st.integers(0, 6))):
        pieces.append(Piece(draw(_TEXT)))
        pieces.append(Piece(draw(_NAMES), True))
    pieces.append(Piece(draw(_TEXT)))
    return [p for p in pieces if p.is_placeholder or p.text]


@st.composite
def messages(draw: st.DrawFn, pieces: list[Piece]) -> str:
    """A message the template gives (each placeholder some text), often mutated a little."""
    text = "".join(draw(_TEXT) if p.is_placeholder else p.text for p in pieces)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_TEXT) + text[at + draw(st.integers(0, 2)):]
    return text


def same_as_re(pattern: str, text: str) -> None:
    expected = re.fullmatch(pattern, text)
    bounded = BoundedRegex.compile(pattern)
    assert bounded is not None
    found = bounded.fullmatch(text, timeout=5.0)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert found.spans == tuple(expected.regs[1:])
    assert dict(found.captures) == {k: v for k, v in expected.groupdict().items() if v is not None}


@SETTINGS
@given(st.data())
def test_generated_regexes_match_as_re_does(data: st.DataObject) -> None:
    pieces = data.draw(templates())
    template = build_template("fstring", pieces)
    assert literal_shape(template.regex) is not None  # the generated shape: the linear path
    for _ in range(3):
        same_as_re(template.regex, data.draw(messages(pieces)))


@SETTINGS
@given(st.data())
def test_other_displays_match_as_re_does(data: st.DataObject) -> None:
    """KeyError's repr display has classes and optional parts: the `regex` path, as `re`."""
    pieces = data.draw(templates())
    template = redisplay(build_template("fstring", pieces), "repr")
    assume(literal_shape(template.regex) is None)
    quote = data.draw(st.sampled_from(["'", '"']))
    for _ in range(3):
        same_as_re(template.regex, quote + data.draw(messages(pieces)) + quote)


@SETTINGS
@given(st.from_regex(r"(?:[ab{}\[\]:^,0-9e<=|()*+?.]|\\[\[\]{}]){0,12}", fullmatch=True),
       st.text(alphabet="ab{}[]:^,0e<=", max_size=8), st.booleans())
def test_regex_reads_what_re_reads(monkeypatch: pytest.MonkeyPatch, pattern: str, text: str,
                                   in_regex: bool) -> None:
    """`{e<=1}`, `{1,}` and `[[:a:]]` mean to `regex` what they mean to `re`, once escaped;
    and a pattern `re` runs itself (its steps proved few) finds what it finds."""
    monkeypatch.setattr(regexes, "FAST_STEPS", 0 if in_regex else regexes.FAST_STEPS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = re.search(pattern, text)
    except (re.error, OverflowError):
        assert BoundedRegex.compile(pattern) is None
        return
    bounded = BoundedRegex.compile(pattern)
    assert bounded is not None
    assert bounded.search(text, timeout=5.0) == (expected is not None)


def test_re_runs_itself_only_where_its_steps_are_bounded() -> None:
    def cost(pattern: str) -> tuple[int, int] | None:
        found = regexes._Cost.of(_sre.parse(pattern))
        return None if found is None else (found.repeats, found.paths)

    assert cost(r"value \d must be (positive|negative)") == (0, 2)
    assert cost(r"bad .* value [a-z]{2}") == (1, 1)
    assert cost(r"(a|aa)+$") is None  # a repeated alternation
    assert cost(r"(a*)*") is None  # nested repeats
    assert cost(r".*a.*b") == (2, 1)  # two in a row: polynomial, bounded all the same
    assert cost(r"(a)\1") is None  # a back reference


def test_re_specials_are_escaped_only_where_regex_differs() -> None:
    assert as_re_reads("a{e<=1}") == r"a\{e<=1}"
    assert as_re_reads("a{1,2}b{,}c{}") == r"a{1,2}b{,}c\{}"
    assert as_re_reads("[[:alpha:]]") == r"[\[:alpha:]]"
    assert as_re_reads("[]a[]x\\{e}") == r"[]a\[]x\{e}"


EIGHT = "^" + " ".join(f"(?P<g{i}>[\\s\\S]*?)" for i in range(8)) + "!$"


def test_eight_placeholders_on_a_hostile_message_are_linear() -> None:
    """One such record took 1.2 s in `re` on this 65-byte message; 200 of them take 240 s."""
    message = "a " * 32 + "?"
    bounded = BoundedRegex.compile(EIGHT)
    assert bounded is not None and bounded.linear
    started = time.perf_counter()
    for _ in range(200):
        assert bounded.fullmatch(message) is None
    assert time.perf_counter() - started < 0.1
    found = bounded.fullmatch("a b c d e f g h i!")
    assert found is not None and found.captures["g0"] == "a" and found.captures["g7"] == "h i"


def test_a_catastrophic_pattern_times_out_and_is_counted() -> None:
    bounded = BoundedRegex.compile("(a|aa)+$")
    assert bounded is not None and not bounded.linear
    with pytest.raises(RegexTimeout):
        bounded.search("a" * 60 + "b", timeout=0.05)
    budget = Budget(0.2)
    started = time.perf_counter()
    for _ in range(50):
        assert budget.fullmatch(bounded, "a" * 60 + "b") is None
    assert time.perf_counter() - started < 1.0  # 0.2 s of budget, and 50 ms a call at most past it
    assert len(budget.timed_out) == 50


def test_what_re_refuses_is_refused() -> None:
    assert BoundedRegex.compile("(") is None
    assert BoundedRegex.compile(r"\p{L}") is None  # `regex` would take it
    assert BoundedRegex.compile("^(?P<a>[\\s\\S]*?)(?P<a>[\\s\\S]*?)$") is None
