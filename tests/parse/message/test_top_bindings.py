"""`flow.top_bindings`: how many statements of a block (a module's top level, a function's
body) may bind each name, in one walk."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst as cst

from crawler.parse.message import flow

CASES = Path(__file__).resolve().parents[2] / "cases"

SOURCE = '''
import os.path, json as j
from a import (b, c as d)
from e import *
x = y = 1
(p, [q, *r]) = 1, [2, 3]
z: int = 1
z += 1
del z
obj.attr = 1
seq[0] = 1
if x:
    def f(): pass
    for i, k in []:
        pass
    else:
        f = 2
try:
    with open(n) as (h, g):
        pass
except OSError as err:
    pass
finally:
    class C:
        inner = 1
        def method(self): pass
    global w
while x:
    match x:
        case [m]:
            pass
def outer():
    hidden = 1
'''


def test_each_name_is_counted_once_per_statement_that_may_bind_it():
    counts = flow.top_bindings(cst.parse_module(SOURCE).body)
    expected = {"os": 1, "j": 1, "b": 1, "d": 1, "x": 1, "y": 1, "p": 1, "q": 1, "r": 1,
                "z": 3, "f": 2, "i": 1, "k": 1, "h": 1, "g": 1, "err": 1, "C": 1, "w": 1,
                "outer": 1, flow.ANY_NAME: 2}  # the star import and the `case`
    assert dict(counts) == expected


def test_bodies_of_functions_and_classes_bind_their_own_names():
    counts = flow.top_bindings(cst.parse_module(SOURCE).body)
    assert counts["hidden"] == counts["inner"] == counts["method"] == 0
    assert counts["attr"] == counts["seq"] == counts["obj"] == 0  # no name bound by these


def _function_body(source: str) -> cst.BaseSuite:
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    return function.body


def _binds_per_name(name: str, body: cst.BaseSuite) -> bool:
    """The walk per name asked that a function body's one walk replaced, statement by statement."""
    return any(bound in (name, flow.ANY_NAME) for node in body.body
               for statement in flow._statements(node) for bound in flow._bound_names(statement))


def test_a_function_bodys_bindings_answer_as_a_walk_per_name_does():
    body = _function_body("def f():\n" + "".join("    " + line + "\n" for line in SOURCE.splitlines()))
    bindings = flow.top_bindings(body.body)
    for name in ["os", "z", "f", "err", "C", "w", "hidden", "inner", "attr", "nowhere", "m"]:
        asked = name in bindings or flow.ANY_NAME in bindings
        assert asked == _binds_per_name(name, body)


def test_a_body_without_a_star_binding_does_not_bind_every_name():
    body = _function_body("def f(a):\n    b = a\n    def g(): c = 1\n")
    assert set(flow.top_bindings(body.body)) == {"b", "g"}
    assert not _binds_per_name("c", body)


def _every_block_asked(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`flow._statements` as it was: each of the five block names asked of every node."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        kind = type(current)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            stack.extend(current.body)
            continue
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind in flow._SMALL_NOT_BINDING:
            continue
        flow.push_named(current, ("body", "orelse", "handlers", "finalbody", "cases"), stack)
    return found


def test_the_walk_asks_each_type_only_for_its_blocks_and_meets_what_asking_all_met():
    sources = [SOURCE, *(path.read_text() for path in sorted(CASES.glob("*.py")))]
    bodies = 0
    for source in sources:
        module = cst.parse_module(source)
        blocks = [module.body, *(f.body.body for f in _functions(module))]
        for block in blocks:
            bodies += 1
            for node in block:
                assert [id(s) for s in flow._statements(node)] == \
                    [id(s) for s in _every_block_asked(node)]
            walked = [s for node in block for s in _every_block_asked(node)]
            assert flow.top_bindings(block) == Counter(
                name for s in walked for name in set(flow._bound_names(s)))
    assert bodies > 200 and flow._BLOCKS_OF[cst.Try] == ("body", "orelse", "handlers", "finalbody")
    assert flow._BLOCKS_OF[cst.Match] == ("cases",) and flow._BLOCKS_OF[cst.Else] == ("body",)


def _functions(module: cst.Module) -> list[cst.FunctionDef]:
    found: list[cst.FunctionDef] = []

    class Functions(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    module.visit(Functions())
    return found
