"""What the follower reads off a function statement: whether it may be followed, its
parameters, the class it is a method of, and the names it declares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from crawler.parse.message import flow
from crawler.parse.names import dotted

if TYPE_CHECKING:
    from crawler.parse.message.calls import FunctionScope

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


def is_parameter_class(func: cst.BaseExpression, scopes: Sequence[FunctionScope]) -> bool:
    """`exc_type(...)`: a parameter of the innermost function, never assigned in it, called."""
    return isinstance(func, cst.Name) and _is_parameter(func.value, scopes) \
        and func.value not in _innermost_assigned(scopes)


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



# ---------------------------------------------------------------- local names for classes


def class_alias(name: str, position: flow.Position) -> list[cst.BaseExpression] | None:
    """The classes a local name stands for where a raise reads it (`err = ValueError if hw else
    NotImplementedError`): each definition reaching the raise binds one class (`ValueError`,
    `errors.Bad`, capitalised by convention) or a conditional choice of classes. None for anything
    else (a call, a parameter, a loop): not guessed at."""
    found = flow.definitions(name, position)
    if not found or any(len(definition) != 1 or not definition[0][1] for definition in found):
        return None  # several parts, or an opaque binding (unpacking): not one class
    classes: list[cst.BaseExpression] = []
    for definition in found:
        value = definition[0][0]
        choices = _class_choices(value) if isinstance(value, cst.BaseExpression) else None
        if choices is None:
            return None
        classes.extend(choices)
    return classes


def _class_choices(value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(value, cst.IfExp):
        body, orelse = _class_choices(value.body), _class_choices(value.orelse)
        return None if body is None or orelse is None else [*body, *orelse]
    parts = dotted(value)
    return [value] if parts is not None and parts[-1].lstrip("_")[:1].isupper() else None


# ---------------------------------------------------------------- local lambdas


@dataclass
class LocalLambda:
    """A local name bound once to a lambda (`err = lambda name: ValueError(f"{name}...")`),
    standing as a `FunctionScope` for the follower: it has no statements of its own."""

    name: str
    params: cst.Parameters
    body: cst.BaseExpression
    at: flow.Position  # where the lambda is written
    scopes: int | None = None  # of the scopes around the call, those around the lambda (None: all)
    is_class: bool = False
    node: cst.CSTNode | None = None
    names: dict[str, str] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)
    returns: list[tuple[cst.BaseExpression | None, flow.Position]] = field(default_factory=list)
    generator: bool = False
    followable: bool = False


def local_lambda(func: cst.BaseExpression, position: flow.Position, assigned: set[str] | None,
                 scopes: Sequence[FunctionScope] = ()) -> LocalLambda | None:
    """The lambda a called local name is bound to, when every definition reaching the call is
    that one lambda, or, for a name of an enclosing function (a closure), when that function's
    body binds it once, by `name = lambda ...` at its top level; None for anything else."""
    if not isinstance(func, cst.Name) or not position or assigned is None:
        return None
    if func.value not in assigned:
        return _enclosing_lambda(func.value, scopes)
    found = flow.definitions(func.value, position)
    if not found or len(found) != 1 or len(found[0]) != 1:
        return None
    value, at = found[0][0]
    if not isinstance(value, cst.Lambda) or not at:
        return None
    return LocalLambda(func.value, value.params, value.body, at)


def _enclosing_lambda(name: str, scopes: Sequence[FunctionScope]) -> LocalLambda | None:
    functions = [s for s in scopes if not s.is_class and isinstance(s.node, cst.FunctionDef)]
    if len(functions) < 2 or _declares(name, functions[-1]):
        return None
    for scope in reversed(functions[:-1]):
        node = scope.node
        held = list(scopes).index(scope) + 1  # the scopes the lambda's names are read in
        assert isinstance(node, cst.FunctionDef)
        if not _declares(name, scope):
            continue
        body = node.body.body
        if flow.top_bindings(body)[name] != 1 or flow.ANY_NAME in flow.top_bindings(body):
            return None
        for index, statement in enumerate(body):
            small = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
            for assign in small:
                if isinstance(assign, cst.Assign) and len(assign.targets) == 1 \
                        and isinstance(assign.targets[0].target, cst.Name) \
                        and assign.targets[0].target.value == name \
                        and isinstance(assign.value, cst.Lambda):
                    lambda_ = assign.value
                    return LocalLambda(name, lambda_.params, lambda_.body,
                                       ((body, index, "body"),), held)
        return None
    return None
