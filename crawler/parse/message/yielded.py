"""Factories a local name takes from a generator of the module: `e, *_ = prefix_errors(...)`
then `raise e('in_specs')`, where `prefix_errors` returns `list(_prefix_error(...))` and
`_prefix_error` yields `lambda name: ValueError(f"... {name} ...")`.

The local name is bound once where the raise reads it, by `name = next(CALL)` or
`name = next(CALL, default)`, or as the first target of an unpacking `name, *rest = CALL` (its
block's statements walked back from the raise). CALL is a call of a function of this module
(`Follower._callee`) that is a generator whose every `yield` is a statement yielding a lambda,
or `yield from` such a generator, or a function whose every `return` is `list(...)` or
`tuple(...)` of such a call. Each lambda yielded is one factory (`LocalLambda`), its names other
than its parameters read in the generator as placeholders. Anything else gives None: the raise
keeps its `dynamic` template and the reason the local name was not followed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from crawler.parse.message import flow
from crawler.parse.message.function_facts import LocalLambda
from crawler.parse.message.pieces import MAX_ALTERNATIVES, Unreadable
from crawler.parse.message.reading import Reader

if TYPE_CHECKING:
    from crawler.parse.message.calls import Built, Followed, Follower, FunctionScope

MAX_GENERATORS = 4  # generators and list-returning functions read for one local name
_BLOCKS = {cst.For: (("body", "loop"), ("orelse", "loop")),
           cst.While: (("body", "loop"), ("orelse", "loop")),
           cst.With: (("body", "with"),),
           cst.Try: (("body", "try"), ("handlers", "handler"), ("orelse", "try_else"),
                     ("finalbody", "finally"))}


def yielded_factory(follower: Follower, reader: Reader, node: cst.Call, position: flow.Position
                    ) -> Followed | None:
    """The exceptions `raise e(...)` raises, `e` a lambda a generator of this module yields (see
    the module's docstring); None when `e` is no such name, or a lambda is not read exactly."""
    from crawler.parse.message.calls import MAX_DEPTH, Context, Followed, _context

    context = _context(reader)
    if context.depth >= MAX_DEPTH or not isinstance(node.func, cst.Name) \
            or not follower.is_local(node.func.value, context.scopes):
        return None
    read = yielded_lambdas(follower, node.func, position, context.scopes)
    if read is None:
        return None
    lambdas, functions = read
    mark = len(context.followed)
    built: list[Built] = []
    try:
        for local, generator in lambdas:
            bindings = follower._bind(reader, node, position, local.params, False, set())
            callee = follower.reader((generator,), set(), Context(
                (generator,), bindings, context.depth + 1, context.followed))
            built.extend(follower.returned(callee, local, local.body, local.at))
    except Unreadable:
        del context.followed[mark:]
        return None
    if not built or len(built) > MAX_ALTERNATIVES:
        del context.followed[mark:]
        return None
    for function in functions:  # the outermost first
        follower._note_function(context, function, len(context.followed))
    return Followed(tuple(built), via=follower.function_qualname(lambdas[0][1]))


def yielded_lambdas(follower: Follower, func: cst.BaseExpression, position: flow.Position,
                    scopes: tuple[FunctionScope, ...]
                    ) -> tuple[list[tuple[LocalLambda, FunctionScope]], list[FunctionScope]] | None:
    """Each lambda the local name called as `func` may be, with the generator yielding it, and
    every function read to find them, the outermost first."""
    if not isinstance(func, cst.Name) or not position:
        return None
    value = _bound_value(func.value, position)
    if value is None:
        return None
    found: list[tuple[LocalLambda, FunctionScope]] = []
    seen: list[FunctionScope] = []
    return (found, seen) if _from_call(follower, value, scopes, found, seen) and found else None


def _bound_value(name: str, position: flow.Position) -> cst.BaseExpression | None:
    """The call the name takes its item from: `name = next(CALL[, default])`, or the first
    target of `name, *rest = CALL` met walking back through the raise's own block."""
    found = flow.definitions(name, position)
    if not found or len(found) != 1 or len(found[0]) != 1:
        return None
    value, where = found[0][0]
    if where and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            and value.func.value == "next" and 1 <= len(value.args) <= 2 \
            and all(a.keyword is None and not a.star for a in value.args):
        return value.args[0].value
    if where or not isinstance(value, cst.Name):
        return None  # not the opaque binding of an unpacking
    statements, index, _ = position[-2] if position[-1][2] == "line" and len(position) > 1 \
        else position[-1]
    for statement in reversed(statements[:index]):
        if isinstance(statement, cst.SimpleStatementLine):
            smalls: Sequence[cst.CSTNode] = statement.body
        elif isinstance(statement, cst.BaseSmallStatement):
            smalls = (statement,)  # `if x: e, *_ = f(); raise e("y")`
        else:
            return None  # a block between: the flow search already said it binds nothing
        for small in reversed(smalls):
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, (cst.Tuple, cst.List)) and target.elements \
                        and isinstance(target.elements[0].value, cst.Name) \
                        and target.elements[0].value.value == name \
                        and not isinstance(target.elements[0], cst.StarredElement):
                    return small.value
    return None


def _from_call(follower: Follower, value: cst.BaseExpression, scopes: tuple[FunctionScope, ...],
               found: list[tuple[LocalLambda, FunctionScope]], seen: list[FunctionScope]) -> bool:
    """Adds the lambdas `value` yields (a call of a generator, or of a function returning a
    list of one) to `found`; False when any part of it is not followed."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            and value.func.value in ("list", "tuple") and len(value.args) == 1:
        value = value.args[0].value  # `list(gen(...))` made where the name is bound
    if not isinstance(value, cst.Call):
        return False
    function = _module_function(follower, value.func, scopes)
    if function is None:
        return False
    if any(s is function for s in seen):
        return True  # `yield from` itself: the same lambdas
    if len(seen) >= MAX_GENERATORS:
        return False
    seen.append(function)
    own = (function,)
    if not function.generator:
        returns = function.returns
        return bool(returns) and all(
            value is not None and _from_call(follower, value, own, found, seen)
            for value, _ in returns)
    node = function.node
    yields = _yields(node) if isinstance(node, cst.FunctionDef) else None
    if yields is None:
        return False
    for yielded, is_from, at in yields:
        if is_from:
            if not _from_call(follower, yielded, own, found, seen):
                return False
        elif isinstance(yielded, cst.Lambda):
            found.append((LocalLambda(function.name, yielded.params, yielded.body, at), function))
        else:
            return False
    return True


def _module_function(follower: Follower, func: cst.BaseExpression,
                     scopes: tuple[FunctionScope, ...]) -> FunctionScope | None:
    """The module-level function a name calls, a generator or not, when undecorated, not
    `async`, bound once at the top level and by no function around the call."""
    if not isinstance(func, cst.Name):
        return None
    function = follower.index.functions.get(func.value)
    if function is None or follower.is_local(func.value, scopes) \
            or not follower.bound_once_at_top(func.value):
        return None
    node = function.node
    if not isinstance(node, cst.FunctionDef) or node.asynchronous or node.decorators \
            or not function.followable:
        return None
    follower.touched.append(follower.function_qualname(function))
    return function


def _yields(node: cst.FunctionDef
            ) -> list[tuple[cst.BaseExpression, bool, flow.Position]] | None:
    """Every `yield` of a function, each a statement of its own (`yield x`, `yield from x`),
    with its position; None when one is part of another statement, or yields nothing."""
    found: list[tuple[cst.BaseExpression, bool, flow.Position]] = []
    _walk(node.body, (), "function", found)
    every = 0
    stack: list[cst.CSTNode] = [node.body]
    while stack:  # a yield elsewhere (`x = yield`) would be missed: then nothing is guessed
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        every += isinstance(current, cst.Yield)
        stack.extend(current.children)
    return found if every == len(found) else None


def _walk(suite: cst.BaseSuite, levels: flow.Position, role: str,
          found: list[tuple[cst.BaseExpression, bool, flow.Position]]) -> None:
    statements: Sequence[cst.CSTNode] = suite.body
    for index, statement in enumerate(statements):
        level = (*levels, (statements, index, role))
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small_index, small in enumerate(statement.body):
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) \
                        and small.value.value is not None:
                    yielded = small.value.value
                    is_from = isinstance(yielded, cst.From)
                    found.append((yielded.item if isinstance(yielded, cst.From) else yielded,
                                  is_from, (*level, (statement.body, small_index, "line"))))
        elif isinstance(statement, cst.If):
            branch: cst.If | cst.Else | None = statement
            while branch is not None:
                _walk(branch.body, level, "if", found)
                branch = branch.orelse if isinstance(branch, cst.If) else None
        else:
            for attribute, block_role in _BLOCKS.get(type(statement), ()):
                child = getattr(statement, attribute, None)
                for part in child if isinstance(child, (list, tuple)) else [child]:
                    if part is not None:
                        _walk(part if isinstance(part, cst.BaseSuite) else part.body,
                              level, block_role, found)
