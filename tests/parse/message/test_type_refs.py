"""The TypeRef of a chain of attributes and calls: each link read once, without recursion."""

from __future__ import annotations

import ast
import time

import pytest

from crawler.parse.call_edges import METHOD, read_calls
from crawler.parse.file_tasks import visit_file


def calls_of(source: str) -> set[tuple[str, str, str]]:
    facts = read_calls(source.encode(), "pkg.mod")
    assert facts is not None
    return {(c.kind, c.target, c.name) for f in facts.functions for c in f.calls}


@pytest.mark.parametrize(("expression", "expected"), [
    ("Known().run()", {("call", "pkg.mod.Known", ""), ("method", "R pkg.mod.Known", "run")}),
    ("known_factory().run()", {("call", "pkg.mod.known_factory", ""),
                               ("method", "R pkg.mod.known_factory", "run")}),
    ("self.helper.run()", {("method", "A pkg.mod.Known helper", "run"),
                           ("property", "S pkg.mod.Known", "helper")}),
    ("self.x.y", {("property", "A pkg.mod.Known x", "y"), ("property", "S pkg.mod.Known", "x")}),
    ("self.run()", {("method", "S pkg.mod.Known", "run")}),
    ("unknown.a.m().run()", {("method", "", "m"), ("method", "", "run")}),
])
def test_a_chain_reads_as_before(expression: str, expected: set[tuple[str, str, str]]) -> None:
    """One case per kind of link; the same facts as the recursive reading gave on 778 files of
    networkx and the standard library (compared before this change)."""
    source = ("class Known:\n    helper: 'Known'\n\n    def run(self):\n        pass\n\n"
              "    def go(self):\n        " + expression + "\n\n\n"
              "def known_factory():\n    pass\n")
    assert calls_of(source) == expected


def test_a_chain_of_a_thousand_attributes_is_read() -> None:
    """`pkg.a.a....a.run()`, 1,000 links: `type_of` recursed once a link, and the worker died on
    it (the file listed parser_crashed, its raise lost)."""
    source = ("import pkg\n\n\ndef g():\n    y = pkg" + ".a" * 1000 + ".run()\n"
              "    raise ValueError('after')\n")
    assert calls_of(source) == {("call", "pkg" + ".a" * 1000 + ".run", "")}
    outcome = visit_file("pkg/deep.py", "0" * 40, source.encode())
    assert outcome.failure is None
    assert [s.message.template for s in outcome.sites] == ["after"]


def test_a_long_method_chain_on_an_unknown_receiver_reads_each_link_once() -> None:
    """A method called on what no reader can type read its receiver twice: 2**n for n calls
    (20 calls took 2.8 s of CPU, 30 would take about 50 minutes)."""
    tree = ast.parse("def g(x):\n    return x" + ".m()" * 60 + "\n")
    started = time.process_time()
    facts = read_calls(ast.unparse(tree).encode(), "pkg.mod")
    assert time.process_time() - started < 1.0
    assert facts is not None
    (function,) = facts.functions
    assert [(c.kind, c.target, c.name) for c in function.calls] == [(METHOD, "", "m")]
