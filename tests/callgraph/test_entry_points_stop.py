"""A walk that stops once its first entry points and its count are known finds what a walk to
the end finds: generated call graphs, with bounds small enough that walks stop early."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crawler.callgraph import entry_points
from crawler.callgraph.entry_points import Graph
from crawler.parse.call_edges import read_calls

FIRST, COUNTED = 2, 3  # the bounds of the walks that stop early (10 and 99 in a run)
# From f0: five public callers across a returned closure (maker, a1..a4) fill the count two calls
# away, while the two first entry points (d1, d2: no dynamic call crossed) are four calls away.
CROSSING_FIRST = ("from pkg._core import a1, a2, a3, a4, d1, d2, maker\n"
                  "__all__ = ['a1', 'a2', 'a3', 'a4', 'd1', 'd2', 'maker']\n",
                  "def f0():\n    pass\n"
                  "def maker():\n    def inner():\n        f0()\n    return inner\n"
                  + "".join(f"def a{i}():\n    maker()\n" for i in range(1, 5))
                  + "def m1():\n    f0()\ndef m2():\n    m1()\ndef m3():\n    m2()\n"
                  "def d1():\n    m3()\ndef d2():\n    m3()\n")


@st.composite
def packages(draw: st.DrawFn) -> tuple[str, str]:
    """A private module of functions that call one another, some through a closure they return
    (a call a chain crosses: "called later"), and a package `__init__` that exports some."""
    count = draw(st.integers(min_value=2, max_value=24))
    names = [f"f{i}" for i in range(count)]
    lines = []
    for name in names:
        calls = draw(st.lists(st.sampled_from(names), max_size=5))
        body = [f"    {callee}()" for callee in calls] or ["    pass"]
        if draw(st.booleans()) and calls:  # the calls run later, from the closure it returns
            body = ["    def inner():", *("    " + line for line in body), "    return inner"]
        lines += [f"def {name}():", *body, ""]
    exported = [name for name in names if draw(st.booleans())]
    init = (f"from pkg._core import {', '.join(exported)}\n__all__ = {exported!r}\n" if exported
            else "")
    return init, "\n".join(lines)


def walked(facts: list, left_out_bound: int) -> dict[str, tuple[object, int]]:
    """Every function's entry points (items, count left out) with these bounds."""
    with mock.patch.object(entry_points, "MAX_ENTRIES", FIRST), \
            mock.patch.object(entry_points, "MAX_LEFT_OUT", left_out_bound):
        graph = Graph(facts)
        found = {}
        for node in sorted(graph.functions):
            points = graph.entry_points(node, "ValueError", 0)
            found[node] = (points.items, points.left_out)
    return found


@settings(max_examples=100, deadline=None)
@given(packages())
@example(CROSSING_FIRST)
def test_a_walk_that_stops_early_finds_what_a_walk_to_the_end_finds(package: tuple[str, str]) -> None:
    """100 packages in a plain `pytest` (new ones each run); 300 more under `-m slow`."""
    stops_early_as_a_whole_walk(package)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(packages())
def test_a_walk_that_stops_early_finds_what_a_walk_to_the_end_finds_long(package: tuple[str, str]) -> None:
    stops_early_as_a_whole_walk(package)


def stops_early_as_a_whole_walk(package: tuple[str, str]) -> None:
    init, core = package
    facts = [read_calls(init.encode(), "pkg", True), read_calls(core.encode(), "pkg._core", False)]
    assert all(f is not None for f in facts)
    early = walked(facts, COUNTED)
    whole = walked(facts, 10**6)  # a count no walk fills: every walk goes to its end
    assert early == {node: (items, min(COUNTED, left_out)) for node, (items, left_out) in whole.items()}
    if package == CROSSING_FIRST:
        assert [e.name for e in early["pkg._core.f0"][0]] == ["pkg.d1", "pkg.d2"]
        assert early["pkg._core.f0"][1] == COUNTED
