"""The weak fit's search (`evidence.coverage`) against its definition, written as a recursion."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue.evidence import WILD, Glob, coverage

SYMBOLS = st.one_of(st.none(), st.sampled_from("ab c"))


def by_definition(template: Glob, pattern: Glob) -> int:
    """The most literal pattern characters that equal template characters, in order, over every
    way the wilds of both sides can take text; -1 where the two cannot give the same message."""

    @cache
    def best(i: int, j: int) -> int:
        if i == len(template) and j == len(pattern):
            return 0
        ways = [-1]
        a = template[i] if i < len(template) else False
        b = pattern[j] if j < len(pattern) else False
        if a is WILD:  # takes nothing, or the pattern's next symbol
            ways += [best(i + 1, j)] + ([best(i, j + 1)] if j < len(pattern) else [])
        if b is WILD:
            ways += [best(i, j + 1)] + ([best(i + 1, j)] if i < len(template) else [])
        elif a is not WILD and a is not False and a == b and best(i + 1, j + 1) >= 0:
            ways.append(best(i + 1, j + 1) + 1)
        return max(ways)

    return best(0, 0)


@settings(max_examples=400, deadline=None)
@given(st.lists(SYMBOLS, max_size=10).map(tuple), st.lists(SYMBOLS, max_size=10).map(tuple))
def test_coverage_is_its_definition(template: Glob, pattern: Glob) -> None:
    assert coverage(template, pattern) == by_definition(template, pattern)


def test_coverage_on_a_message_and_a_pattern() -> None:
    template = (*"bad shape ", WILD, *" for x")
    assert coverage(template, (WILD, *"shape ", WILD, *" for", WILD)) == 10  # a search pattern
    assert coverage(template, (*"shape ", WILD, *" for")) == -1  # no message starts with it
