"""A walk that stops once its first entry points and its count are known finds what a walk to
the end finds: generated call graphs, with bounds small enough that walks stop early, and names
of two kinds of publicness, so that the best are not the nearest."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crawler.callgraph import entry_points
from crawler.callgraph.entry_points import Graph
from crawler.parse.call_edges import read_calls
from crawler.records import EntryPoint

Package = tuple[str, str, str]  # the `__init__`, the module's source, the module's name

FIRST, COUNTED = 2, 3  # the bounds of the walks that stop early (10 and 99 in a run)
# From f0: five public callers across a returned closure (maker, a1..a4) fill the count two calls
# away, while the two first entry points (d1, d2: no dynamic call crossed) are four calls away.
CROSSING_FIRST = ("from pkg._core import a1, a2, a3, a4, d1, d2, maker\n"
                  "__all__ = ['a1', 'a2', 'a3', 'a4', 'd1', 'd2', 'maker']\n",
                  "def f0():\n    pass\n"
                  "def maker():\n    def inner():\n        f0()\n    return inner\n"
                  + "".join(f"def a{i}():\n    maker()\n" for i in range(1, 5))
                  + "def m1():\n    f0()\ndef m2():\n    m1()\ndef m3():\n    m2()\n"
                  "def d1():\n    m3()\ndef d2():\n    m3()\n", "pkg._core")
# From f0 in a public module: its own functions n1..n5 one call away, each a public name of the
# module (publicness 2), while the two exports (e1, e2: top-level names) are three calls away.
MODULE_NAMES_FIRST = ("from pkg.core import e1, e2\n__all__ = ['e1', 'e2']\n",
                      "def f0():\n    pass\n"
                      + "".join(f"def n{i}():\n    f0()\n" for i in range(1, 6))
                      + "def m1():\n    f0()\ndef m2():\n    m1()\n"
                      "def e1():\n    m2()\ndef e2():\n    m2()\n", "pkg.core")
# From f0, a rule kept for the object `p`: every chain crosses the registry, so the walk stops
# once the top-level names met across it fill the first ones (r1..r4 call `p.bind()`; the
# closure maker's callers a1, a2 cross a second, other kind of dynamic call).
PRIMITIVE = """\
class Prim:
    def def_impl(self, impl):
        self.impl = impl
    def bind(self):
        pass
p = Prim()
"""
REGISTRY_ONLY = ("from pkg._core import a1, a2, r1, r2, r3, r4, r5\n"
                 "__all__ = ['a1', 'a2', 'r1', 'r2', 'r3', 'r4', 'r5']\n",
                 PRIMITIVE + "def f0():\n    pass\np.def_impl(f0)\n"
                 + "".join(f"def r{i}():\n    p.bind()\n" for i in range(1, 6))
                 + "def maker():\n    def inner():\n        r1()\n    return inner\n"
                 "def a1():\n    maker()\ndef a2():\n    maker()\n", "pkg._core")


@st.composite
def packages(draw: st.DrawFn) -> Package:
    """A module of functions that call one another, some through a closure they return (a
    call a chain crosses: "called later"), and a package `__init__` that exports some. The
    module is private, or public: then every function is public, the exported ones as top-level
    names (publicness 0) and the others as the module's (2), which the walk ranks apart."""
    count = draw(st.integers(min_value=2, max_value=24))
    names = [f"f{i}" for i in range(count)]
    lines = []
    for name in names:
        calls = draw(st.lists(st.sampled_from(names), max_size=5))
        body = [f"    {callee}()" for callee in calls] or ["    pass"]
        if draw(st.booleans()) and calls:  # the calls run later, from the closure it returns
            body = ["    def inner():", *("    " + line for line in body), "    return inner"]
        lines += [f"def {name}():", *body, ""]
    if draw(st.booleans()):  # some run by `p.bind()`, a registry's rules kept for the object `p`
        lines = [PRIMITIVE, *lines, *(f"p.def_impl({name})" for name in names if draw(st.booleans()))]
        for index, line in enumerate(lines):
            if line.startswith("    pass") and draw(st.booleans()):
                lines[index] = "    p.bind()"
    exported = [name for name in names if draw(st.booleans())]
    module = draw(st.sampled_from(["pkg._core", "pkg.core"]))
    init = (f"from {module} import {', '.join(exported)}\n__all__ = {exported!r}\n" if exported
            else "")
    return init, "\n".join(lines), module


def walked(facts: list, left_out_bound: int) -> dict[str, tuple[tuple[EntryPoint, ...], int]]:
    """Every function's entry points (items, count left out) with these bounds."""
    with mock.patch.object(entry_points, "MAX_ENTRIES", FIRST), \
            mock.patch.object(entry_points, "MAX_LEFT_OUT", left_out_bound):
        graph = Graph(facts)
        found: dict[str, tuple[tuple[EntryPoint, ...], int]] = {}
        for node in sorted(graph.functions):
            points = graph.entry_points(node, "ValueError", 0)
            found[node] = (points.items, points.left_out)
    return found


@settings(max_examples=100, deadline=None)
@given(packages())
@example(CROSSING_FIRST)
@example(MODULE_NAMES_FIRST)
@example(REGISTRY_ONLY)
def test_a_walk_that_stops_early_finds_what_a_walk_to_the_end_finds(package: Package) -> None:
    """100 packages in a plain `pytest` (new ones each run); 300 more under `-m slow`."""
    stops_early_as_a_whole_walk(package)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(packages())
def test_a_walk_that_stops_early_finds_what_a_walk_to_the_end_finds_long(package: Package) -> None:
    stops_early_as_a_whole_walk(package)


def stops_early_as_a_whole_walk(package: Package) -> None:
    init, core, module = package
    facts = [read_calls(init.encode(), "pkg", True), read_calls(core.encode(), module, False)]
    assert all(f is not None for f in facts)
    early = walked(facts, COUNTED)
    whole = walked(facts, 10**6)  # a count no walk fills: every walk goes to its end
    assert early == {node: (items, min(COUNTED, left_out)) for node, (items, left_out) in whole.items()}
    if package == CROSSING_FIRST:
        assert [e.name for e in early["pkg._core.f0"][0]] == ["pkg.d1", "pkg.d2"]
        assert early["pkg._core.f0"][1] == COUNTED
    if package == REGISTRY_ONLY:
        assert [(e.name, e.stops) for e in early["pkg._core.f0"][0]] == [
            ("pkg.r1", "p.bind(...) runs a function registered for p"),
            ("pkg.r2", "p.bind(...) runs a function registered for p")]
        assert early["pkg._core.f0"][1] == COUNTED
    if package == MODULE_NAMES_FIRST:  # m1 and m2 are public too (pkg.core.m1), two calls away
        assert [e.name for e in early["pkg.core.f0"][0]] == ["pkg.e1", "pkg.e2"]
        assert early["pkg.core.f0"][1] == COUNTED
