"""Which paths of a message method a raise runs: the `if` tests `TextSlot.guards` records,
decided by what the raise's call gives the class.

A message method (`__str__`, a message property) is read once, with its class, into one template
per path, each with the tests its path decides (`class_text.method_slot`). A raise decides a test
of `self`'s attributes where its call says what they hold: `self.x is None`, `self.x is not None`,
and the truth of `self.x` where it is None or literal text, under `not`, `and` and `or`, three-
valued. A path whose tests the raise decides otherwise is not the one that runs; a test nothing
decides keeps every path (pyyaml's MarkedYAMLError compares two marks: both lines are kept).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from crawler.parse.python_ast import parse_expression
from crawler.records import Template, TextSlot


def open_paths(slot: TextSlot, is_none: Callable[[str], bool | None],
               literal: Callable[[str], bool]) -> list[Template]:
    """The slot's templates whose tests the raise does not decide against them.

    `is_none(name)`: `self.name` is None (True), is not (False), or not known (None);
    `literal(name)`: `self.name` is literal text, none of it empty."""
    if not slot.guards:
        return list(slot.templates)
    return [template for template, guard in zip(slot.templates, slot.guards, strict=True)
            if all(decided(test, is_none, literal) in (None, outcome) for test, outcome in guard)]


def decided(test: str, is_none: Callable[[str], bool | None],
            literal: Callable[[str], bool]) -> bool | None:
    """The value of an `if` test (its source) at a raise; None: not known."""
    try:
        node = parse_expression(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _truth(node, is_none, literal)


def _truth(node: ast.expr, is_none: Callable[[str], bool | None],
           literal: Callable[[str], bool]) -> bool | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, is_none, literal)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [_truth(value, is_none, literal) for value in node.values]
        stop = isinstance(node.op, ast.Or)  # the value that decides the whole: True for `or`
        if stop in values:
            return stop
        return None if None in values else not stop
    if isinstance(node, ast.Compare) and len(node.ops) == 1 \
            and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
        name = _self_attribute(node.left)
        none = is_none(name) if name is not None else None
        return None if none is None else none == isinstance(node.ops[0], ast.Is)
    name = _self_attribute(node)
    if name is not None:
        if is_none(name):
            return False
        if literal(name):
            return True
    return None


def _self_attribute(node: ast.expr) -> str | None:
    """`self.name`: the name."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self":
        return node.attr
    return None
