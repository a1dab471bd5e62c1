"""What the follower reads off a function statement: whether it may be followed, its
parameters, the class it is a method of, and the names it declares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from crawler.parse.calls import FunctionScope

PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


def _followable(function: FunctionScope) -> bool:
    node = function.node
    if not isinstance(node, cst.FunctionDef) or function.generator or node.asynchronous \
            or not function.followable:
        return False
    return all(isinstance(d.decorator, cst.Name) and d.decorator.value in PLAIN_DECORATORS
               for d in node.decorators)


def _is_static(function: FunctionScope) -> bool:
    node = function.node
    assert isinstance(node, cst.FunctionDef)
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in node.decorators)


def _enclosing_class(scopes: Sequence[FunctionScope]) -> str | None:
    """The `__qualname__` of the class whose method is the innermost scope, if it is one."""
    if len(scopes) < 2 or not scopes[-2].is_class or scopes[-1].is_class:
        return None
    parts: list[str] = []
    for scope in scopes[:-1]:
        parts.append(scope.name)
        if not scope.is_class:
            parts.append("<locals>")
    return ".".join(parts)


def _first_parameter(scope: FunctionScope) -> str | None:
    node = scope.node
    if not isinstance(node, cst.FunctionDef):
        return None
    params = [*node.params.posonly_params, *node.params.params]
    return params[0].name.value if params else None


def _innermost_assigned(scopes: Sequence[FunctionScope]) -> set[str]:
    scope = next((s for s in reversed(scopes) if not s.is_class), None)
    return scope.assigned if scope is not None else set()


def _is_parameter(name: str, scopes: Sequence[FunctionScope]) -> bool:
    scope = next((s for s in reversed(scopes) if not s.is_class), None)
    if scope is None or not isinstance(scope.node, cst.FunctionDef):
        return False
    return any(p.name.value == name for p in _parameters(scope.node))


def _parameters(node: cst.FunctionDef) -> list[cst.Param]:
    params = node.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return every


def _declares(name: str, scope: FunctionScope) -> bool:
    """Bound by what the visitor has met of the function so far, or one of its parameters."""
    node = scope.node
    assert isinstance(node, cst.FunctionDef)
    if name in scope.assigned or name in scope.names:
        return True
    return any(p.name.value == name for p in _parameters(node))

