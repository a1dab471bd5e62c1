"""The strong fit's prefilter (`_Group.strong_candidates`): a record it leaves out is one the
pattern cannot find, held against `re` itself on generated patterns and messages."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue.evidence import Pattern, Target, _Group
from tests.helpers.evidence import record

TEXT = st.text(alphabet="ab c(", max_size=12)
# pieces of a regex over the same letters: what `pattern_globs` reads as literal text, and the
# rest (classes, repeats, alternatives, look-arounds, case flags) that it must not trust
ATOMS = st.sampled_from(["a", "b", "c", " ", "ab", "\\(", ".", "[ab]", "[^a]", "\\w", "\\b",
                         "^", "$", "(?=a)", "(?!b)", "(?<=a)"])


@st.composite
def patterns(draw: st.DrawFn) -> str:
    def piece() -> str:
        atom = draw(ATOMS)
        shape = draw(st.sampled_from(["", "*", "+", "?", "{2}", "group", "case", "either"]))
        if shape == "group":
            return f"({atom}{draw(ATOMS)})"
        if shape == "case":
            return f"(?i:{atom})"
        if shape == "either":
            return f"(?:{atom}|{draw(ATOMS)})"
        return atom + shape

    body = "".join(piece() for _ in range(draw(st.integers(1, 6))))
    alternatives = [body, *("".join(piece() for _ in range(3)) for _ in range(draw(st.integers(0, 1))))]
    flags = draw(st.sampled_from(["", "(?i)", "(?s)"]))
    return flags + "|".join(alternatives)


@settings(max_examples=250, deadline=None)
@given(patterns(), st.lists(TEXT, min_size=1, max_size=6))
def test_a_record_left_out_is_one_the_pattern_cannot_find(pattern: str, texts: list[str]) -> None:
    compiled = Pattern.of(pattern)
    if compiled is None:
        return
    group = grouped(texts)
    kept = set(group.strong_candidates(compiled))
    assert list(group.strong_candidates(compiled)) == sorted(kept)  # in the templates' order
    for text in texts:
        if re.search(pattern, text) is not None:
            assert group.targets.index(Target.of(text, ())) in kept, (pattern, text)


def test_the_needles_are_the_longest_literal_runs_and_absent_where_case_is_ignored() -> None:
    found = Pattern.of(r"bad (shape|size) for \w+: expected")
    assert found is not None and found.needles == (": expected",)
    assert Pattern.of("no such key|unknown name").needles == ("no such key", "unknown name")
    assert Pattern.of("(?i)no such key").needles is None
    assert Pattern.of("no (?i:such) key").needles is None
    group = grouped(["no such key", "unknown name: x", "other"])
    found = group.strong_candidates(Pattern.of("no such key|unknown name"))
    assert [group.targets[at].example for at in found] == ["no such key", "unknown name: x"]


def grouped(texts: list[str]) -> _Group:
    group = _Group()
    for n, text in enumerate(texts, 1):
        group.add(record(n, text), Target.of(text, ()))
    return group
