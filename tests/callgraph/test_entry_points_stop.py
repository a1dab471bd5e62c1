"""A walk that stops once its first entry points and its count are known finds what a walk to
the end finds: generated call graphs, with bounds small enough that walks stop early, and names
of two kinds of publicness, so that the best are not the nearest. The same for a walk that
leaves out the states that cannot change its answer (`Graph._leading_on`), against one that
follows them all."""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crawler.callgraph import entry_points
from crawler.callgraph.entry_points import Graph
from crawler.parse.call_edges import read_calls
from crawler.records import EntryPoint
from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo

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


class _Unbounded(dict):  # type: ignore[type-arg]
    """`nearest_public` as if every node were one call from a name better than any: a walk
    with it leaves no state out."""

    def get(self, key: object, default: object = None) -> tuple[tuple[int, int], ...]:
        return ((-1, -1),) * (entry_points.MAX_DEPTH + 1)


def unbounded(graph: Graph) -> Graph:
    """The graph, its walks following every state (`Graph._leading_on` keeps them all)."""
    graph._nearest = (_Unbounded(), _Unbounded(), _Unbounded())
    return graph


def walked(facts: list, left_out_bound: int, bounded: bool = True, depth: int = entry_points.MAX_DEPTH
           ) -> dict[str, tuple[tuple[EntryPoint, ...], int]]:
    """Every function's entry points (items, count left out) with these bounds."""
    with mock.patch.object(entry_points, "MAX_ENTRIES", FIRST), \
            mock.patch.object(entry_points, "MAX_LEFT_OUT", left_out_bound), \
            mock.patch.object(entry_points, "MAX_DEPTH", depth):
        graph = Graph(facts) if bounded else unbounded(Graph(facts))
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
    assert early == walked(facts, COUNTED, bounded=False)  # every state followed, up to the stops
    assert whole == walked(facts, 10**6, bounded=False)
    for depth in (3, 5):  # walks that end at their last step, where few calls are left
        assert walked(facts, COUNTED, depth=depth) == walked(facts, COUNTED, bounded=False, depth=depth)
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


def test_a_rule_s_walk_follows_only_the_callers_that_lead_to_a_better_name(
        make_repo: Callable[[str], GitRepo]) -> None:
    """A rule `p.bind()` runs, called by five names of a subpackage (`pkg.sub.s1`..`s5`), one
    of which a top-level name reaches four calls farther (`pkg.t1`), the others only a
    module's names (`pkg.mod.u2`..`u5`). With the count full at once (2 first, 3 counted), the
    walk follows only `s1`'s callers, and finds what a walk following every caller finds."""
    files = {"pkg/__init__.py": "from pkg._top import t1\n__all__ = ['t1']\n",
             "pkg/sub/__init__.py": "from pkg._core import s1, s2, s3, s4, s5\n"
                                    "__all__ = ['s1', 's2', 's3', 's4', 's5']\n",
             "pkg/_core.py": PRIMITIVE + "def _rule(x):\n    raise ValueError(x)\np.def_impl(_rule)\n"
                             + "".join(f"def s{i}():\n    p.bind()\n" for i in range(1, 6)),
             "pkg/_top.py": "from pkg._core import s1\ndef t1():\n    h1()\ndef h1():\n    h2()\n"
                            "def h2():\n    h3()\ndef h3():\n    s1()\n",
             "pkg/mod.py": "from pkg._core import s2, s3, s4, s5\n"
                           + "".join(f"def u{i}():\n    s{i}()\ndef w{i}():\n    u{i}()\n"
                                     for i in range(2, 6))}
    with mock.patch.object(entry_points, "MAX_ENTRIES", FIRST), \
            mock.patch.object(entry_points, "MAX_LEFT_OUT", COUNTED):
        bounded, whole = graph_of(make_repo("bounded"), files), unbounded(graph_of(make_repo("whole"), files))
        asked: dict[str, list[str]] = {"bounded": [], "whole": []}
        for name, graph in (("bounded", bounded), ("whole", whole)):
            edges = graph._edges
            graph._edges = lambda callee, edges=edges, name=name: asked[name].append(callee) or edges(callee)
        found = entries(bounded, "pkg._core._rule")
        assert found == entries(whole, "pkg._core._rule")
        assert bounded.entry_points("pkg._core._rule", "ValueError", 0).left_out == COUNTED
    stop = "p.bind(...) runs a function registered for p"
    assert found == [("pkg.t1", ("pkg._top.t1", "pkg._top.h1", "pkg._top.h2", "pkg._top.h3",
                                 "pkg._core.s1", "pkg._core._rule"), stop, None),
                     ("pkg.sub.s1", ("pkg._core.s1", "pkg._core._rule"), stop, None)]
    assert {"pkg.mod.u2", "pkg._core.s2"} <= set(asked["whole"])
    assert not {"pkg.mod.u2", "pkg._core.s2"} & set(asked["bounded"])  # no better name beyond them
