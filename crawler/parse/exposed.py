"""What a module exposes for following: its functions as a raise in another module reads them.

A worker sees one file, so `from ._errors import make_error; raise make_error('gpu', x)` or
`raise ValueError(msgs.too_many(n))` cannot be followed where the raise is. Two halves meet in
the repository-wide pass (`crawler.catalogue.factories`):

- `exposed_functions`: every module-level function that may build text or an exception, read
  where it is defined (its own module's helpers and constants followed, one call deep already)
  with its parameters left as placeholders: the readings of what it returns, or the
  exceptions it builds; or why it cannot be read exactly;
- `cross_call`: at the raise, a call of a name the module imports, with its arguments read in
  the caller's terms (their source, and their text when they are text).

The pass binds one to the other as `crawler.parse.message.calls` binds a same-module call: the same
substitution of literal arguments, the same names for what is not literal, the same depth.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

import libcst as cst

from crawler.parse.message import flow
from crawler.parse.message.calls import Context, Follower, FunctionScope, _followable, _parameters
from crawler.parse.message.pieces import Unreadable, reading
from crawler.parse.message.reading import Reader
from crawler.parse.message.substitution import Binding
from crawler.parse.message.templates import MESSAGE_KEYWORDS
from crawler.parse.names import dotted
from crawler.records import (
    ArgumentText,
    BuiltException,
    CrossCall,
    ExposedFunction,
)

_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)


def exposed_functions(follower: Follower, defined_at: Callable[[cst.FunctionDef], str],
                      after_each: Callable[[cst.FunctionDef], None] | None = None
                      ) -> tuple[ExposedFunction, ...]:
    """The module's top-level functions another module's raise may follow, by qualified name.

    A function is exposed when one of its `return`s may be text or an exception call, it is
    bound once at the module's top level, undecorated (but `staticmethod`/`classmethod`), not a
    generator, and takes no `*args`/`**kwargs`. This is the one place that says so: a reader that
    stubs functions keeps those for which `may_be_exposed` holds. `after_each` is told of each
    function once it is read (what it looked up is then its own)."""
    exposed = []
    for name, function in sorted(follower.index.functions.items()):
        if function is None or not may_be_exposed(function, follower.index.functions) \
                or not follower.bound_once_at_top(name):
            continue
        assert isinstance(function.node, cst.FunctionDef)
        exposed.append(_exposed(follower, function, function.node, defined_at(function.node)))
        if after_each is not None:
            after_each(function.node)
    return tuple(exposed)


def may_be_exposed(function: FunctionScope, functions: Collection[str] = ()) -> bool:
    """Whether a function may build text or an exception that another module's raise takes:
    one of its `return`s is text, a name it assigns, a class call (by its capital), a
    `.format`/`.join`, or a call of one of the module's `functions`; cheap, read off the
    syntax only."""
    node = function.node
    if not isinstance(node, cst.FunctionDef) or not _followable(function):
        return False
    params = node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return False
    callables = {*functions, *(p.name.value for p in _parameters(node))}  # a class passed in
    return any(value is not None and _may_be_text(value, function.assigned, callables)
               for value, _ in function.returns)


def _may_be_text(value: cst.BaseExpression, assigned: Collection[str],
                 functions: Collection[str]) -> bool:
    if isinstance(value, _STRINGS):
        return True
    if isinstance(value, cst.Name):
        return value.value in assigned
    if isinstance(value, cst.IfExp):
        return any(_may_be_text(v, assigned, functions) for v in (value.body, value.orelse))
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Modulo)):
        return any(_may_be_text(v, assigned, functions) for v in (value.left, value.right))
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in ("format", "join") or func.attr.value.lstrip("_")[:1].isupper()
    return isinstance(func, cst.Name) and (func.value.lstrip("_")[:1].isupper()
                                           or func.value in functions)


def _exposed(follower: Follower, function: FunctionScope, node: cst.FunctionDef, where: str
             ) -> ExposedFunction:
    qualname = follower.function_qualname(function)
    positional = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params))
    keywords = tuple(p.name.value for p in node.params.kwonly_params)
    base = ExposedFunction(qualname, where, positional, keywords)
    rebound = sorted(p.name.value for p in _parameters(node) if p.name.value in function.assigned)
    if rebound:
        return _refused(base, f"`{qualname}` assigns its parameter `{rebound[0]}` again")
    defaults = []
    for param in _parameters(node):
        if param.default is not None:
            binding = follower.binding(follower.reader((), None), param.default, ())
            defaults.append((param.name.value, argument_text(None, binding)))
    base = ExposedFunction(qualname, where, positional, keywords, tuple(defaults))
    context = Context((function,), depth=1)
    reader = follower.reader((function,), function.assigned, context)
    try:
        texts = [a for value, at in function.returns if value is not None
                 for a in reader.read(value, at)]
        if texts and len(function.returns) == sum(1 for v, _ in function.returns if v is not None):
            return _with(base, texts=tuple(map(reading, texts)), via=tuple(context.followed))
    except (Unreadable, RecursionError):
        del context.followed[:]
    return _factory(follower, function, base, context)


def _factory(follower: Follower, function: FunctionScope, base: ExposedFunction, context: Context
             ) -> ExposedFunction:
    """A function that returns an exception call: each exception and its message's readings."""
    reader = follower.reader((function,), function.assigned, context)
    built: list[BuiltException] = []
    classes: list[str] = []  # every class it builds, read or not: a raise of it raises one
    params = {p.name.value for p in _parameters(function.node)}  # type: ignore[arg-type]
    try:
        for value, at in function.returns:
            head = dotted(value.func) if isinstance(value, cst.Call) else None
            if head is not None and head[0] in params:
                raise Unreadable(f"`{base.qualname}` builds its exception with `{head[0]}`, a "
                                 "class passed as a parameter")
            for one in follower.returned(reader, function, value, at):
                assert one.exception_qualname is not None
                classes.append(one.exception_qualname)
                argument, message = _message_argument(one.call)
                if message is None:
                    raise Unreadable(f"`{base.qualname}` builds `{one.exception_qualname}` with no "
                                     "one message argument")
                readings = one.reader.message(message, one.position)
                if not any(kind == "dynamic" for kind, _ in readings):
                    built.append(BuiltException(one.exception_qualname,
                                                tuple(map(reading, readings)), argument))
    except (Unreadable, RecursionError) as error:
        return _refused(base, str(error) or f"`{base.qualname}` returns neither text nor an "
                        "exception that is read exactly")
    if len(built) < len(classes):
        unread = _refused(base, f"`{base.qualname}` builds a message that is not read exactly")
        return _with(unread, builds=tuple(dict.fromkeys(classes)))
    return _with(base, built=tuple(built), via=tuple(context.followed))


def _message_argument(call: cst.Call) -> tuple[str, cst.BaseExpression | None]:
    """The argument that holds an exception call's message: its only positional one, or a
    message keyword when it has none."""
    positional = [arg for arg in call.args if arg.keyword is None]
    if positional:
        if len(positional) != 1 or positional[0].star:
            return "0", None
        return "0", positional[0].value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS:
            return arg.keyword.value, arg.value
    return "", None


def _with(base: ExposedFunction, **changes: object) -> ExposedFunction:
    return replace(base, **changes)  # type: ignore[arg-type]


def _refused(base: ExposedFunction, reason: str) -> ExposedFunction:
    return _with(base, reason=reason)


# ---------------------------------------------------------------- at the raise


def cross_call(follower: Follower, reader: Reader, call: cst.Call, position: flow.Position
               ) -> CrossCall | None:
    """A call of a name this module imports (not a builtin, not its own), with its arguments."""
    context = reader.context
    assert isinstance(context, Context)
    parts = dotted(call.func)
    if parts is None or context.depth != 0 or context.bindings:
        return None
    scopes = context.scopes
    if follower.is_local(parts[0], scopes) or parts[0] in follower.index.functions \
            or parts[0] in follower.index.classes:
        return None
    callee = follower.qualify(list(parts), scopes)
    if callee is None or callee.startswith("builtins.") or "." not in callee:
        return None
    args = []
    for arg in call.args:
        if arg.star:
            return None
        keyword = arg.keyword.value if arg.keyword is not None else None
        args.append(argument_text(keyword, follower.binding(reader, arg.value, position)))
    return CrossCall(reader.source_at(call, position), callee, tuple(args))


def argument_text(keyword: str | None, binding: Binding) -> ArgumentText:
    readings = None if binding.alternatives is None or any(
        p.group for _, pieces in binding.alternatives for p in pieces) else tuple(
        map(reading, binding.alternatives))
    return ArgumentText(keyword, binding.source, readings)
