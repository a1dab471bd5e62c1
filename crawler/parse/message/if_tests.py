"""Names an `if` test binds with a walrus (`if (msg := check(x)): raise ValueError(msg)`), for
`crawler.parse.message.flow`: which tests of an `if`/`elif` chain run before a branch, and the value a
test surely binds a name to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from crawler.parse.message.flow import Position


def tests_before(node: cst.If, block: Sequence[cst.CSTNode] | None) -> list[cst.BaseExpression]:
    """The tests of an `if`/`elif` chain evaluated before `block` (a branch's statements) runs;
    every test of the chain for None."""
    tests: list[cst.BaseExpression] = []
    branch: cst.If = node
    while True:
        tests.append(branch.test)
        if branch.body.body is block:
            return tests
        orelse = branch.orelse
        if type(orelse) is cst.If:
            branch = orelse  # type: ignore[assignment]
            continue
        if orelse is not None and orelse.body.body is block or block is None:
            return tests
        return []


def walrus_value(test: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    """`value` of a `(name := value)` that evaluating `test` surely runs: the test itself, the
    left of a comparison or of `and`/`or`, under `not`."""
    node: cst.BaseExpression = test
    while True:
        kind = type(node)
        if kind is cst.NamedExpr:
            walrus: cst.NamedExpr = node  # type: ignore[assignment]
            if type(walrus.target) is cst.Name and walrus.target.value == name:  # type: ignore[attr-defined]
                return walrus.value
            node = walrus.value
        elif kind is cst.BooleanOperation or kind is cst.Comparison:
            node = node.left  # type: ignore[attr-defined]
        elif kind is cst.UnaryOperation:
            node = node.expression  # type: ignore[attr-defined]
        else:
            return None


def walrus_binds(node: cst.CSTNode, name: str) -> bool:
    """Whether a `(name := ...)` appears in the expression (a lambda's or comprehension's own
    are counted too: a comprehension's walrus binds in the function)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.NamedExpr:
            target = current.target  # type: ignore[attr-defined]
            if type(target) is cst.Name and target.value == name:
                return True
        stack.extend(current.children)
    return False


def binds_in_test(name: str, position: Position) -> bool:
    """Whether a test of an `if` around `position` binds `name` with a walrus (the visitor's
    assigned names hold only statements' targets)."""
    for depth in range(1, len(position)):
        statements, _, role = position[depth]
        parent_statements, parent_index, _ = position[depth - 1]
        parent = parent_statements[parent_index]
        if role == "if" and type(parent) is cst.If \
                and any(walrus_binds(t, name) for t in tests_before(parent, statements)):  # type: ignore[arg-type]
            return True
    return False
