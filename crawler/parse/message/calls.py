"""Messages built through the module's own code: helpers, factories and module constants.

A raise's text is often made elsewhere in its module: `raise ValueError(_msg(x))` where `_msg`
returns an f-string, `raise _shape_error('reshape', s)` where `_shape_error` returns
`TypeError(f'{name} got shape {shape}')`, `raise ValueError(MESSAGE.format(x))` with `MESSAGE` a
module constant. `Follower` reads each of them where it is defined, to a bounded depth:

- a call's arguments are bound to the callee's parameters; a placeholder that is a parameter
  becomes the caller's argument (its text when the argument is text and shown by `str()`, else
  a placeholder named by the argument's source), and a parameter inside a placeholder's
  expression is renamed to the argument's source;
- every `return` of the callee is one alternative, as every branch of an `if` is;
- a module constant is a name bound once at the module's top level, never declared `global`,
  and bound by none of the functions around the raise.

Only functions of this module are followed: module-level functions, methods of the enclosing
class called on `self` or `cls`, and methods of a module class called on the class, when none
is decorated (but `staticmethod` and `classmethod`) and none is a generator. Anything else is
not guessed at: the reader gives up (a `dynamic` template), and a factory says why (`Followed`).

What the follower reads off a function statement: whether it may be followed, its
parameters, the class it is a method of, and the names it declares.

Factories a local name takes from a generator of the module: `e, *_ = prefix_errors(...)`
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

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from crawler.parse._source import exact
from crawler.parse.message import flow, rules
from crawler.parse.message.known_names import PLAIN_DECORATORS
from crawler.parse.message.pieces import MAX_ALTERNATIVES, Alternative, Piece, Unreadable
from crawler.parse.message.reading import Reader
from crawler.parse.message.substitution import (
    Binding,
    _reads_none,
    _renamed,
    substitute,
)
from crawler.parse.names import dotted

MAX_DEPTH = 4  # calls followed one inside another; beyond, the message is not followed


class FunctionScope(Protocol):
    """What the follower needs of a function the visitor met (`visitor.Scope`)."""

    name: str
    is_class: bool
    node: cst.CSTNode | None
    names: dict[str, str]
    assigned: set[str]
    returns: list[tuple[cst.BaseExpression | None, flow.Position]]
    generator: bool
    followable: bool  # False: a stub standing for a function not followed (`skeleton.unfollowable`)


@dataclass
class ModuleIndex:
    """The functions, methods and constants of one module, as the visitor found them."""

    module_name: str | None = None
    functions: dict[str, FunctionScope | None] = field(default_factory=dict)  # None: defined twice
    methods: dict[tuple[str, str], FunctionScope | None] = field(default_factory=dict)
    constants: dict[str, tuple[cst.BaseExpression, flow.Position]] = field(default_factory=dict)
    classes: set[str] = field(default_factory=set)  # classes defined at the module's top level
    declared_global: set[str] = field(default_factory=set)
    indents: dict[int, str] = field(default_factory=dict)  # block statements (by id): indentation
    body: Sequence[cst.CSTNode] = ()  # the module's statements


@dataclass(frozen=True)
class Built:
    """One exception a factory returns: its class, the call that makes it, and how to read it."""

    call: cst.Call
    position: flow.Position
    exception_qualname: str | None
    reader: Reader
    function: FunctionScope


@dataclass(frozen=True)
class Followed:
    """What following a factory gave: the exceptions it builds, or why it was not followed."""

    built: tuple[Built, ...] = ()
    reason: str | None = None  # set when `built` is empty
    via: str | None = None  # the function followed
    parameter_class: bool = False  # `exc_type(message)`: a class the function was given
    # `raise self.error_class(msg)`, `raise errors.bad(msg)`: no function of this module, nor a
    # local name; a class or a factory, which one is not known here (the argument's template
    # is kept, and `crawler.catalogue.factories` tells from the repository's classes)
    unknown_callee: bool = False


@dataclass
class Context:
    """Where a reader reads: the scopes around it and the callee's parameters bound to values."""

    scopes: tuple[FunctionScope, ...]
    bindings: dict[str, Binding] = field(default_factory=dict)
    depth: int = 0
    followed: list[str] = field(default_factory=list)  # shared along one chain of calls


class Follower:
    """Follows the names and calls of one module's messages into the module's own code."""

    def __init__(self, module: cst.Module, index: ModuleIndex,
                 qualify: Callable[[list[str], tuple[FunctionScope, ...]], str | None]) -> None:
        self.module = module
        self.index = index
        self.qualify = qualify  # a dotted name in a function to a qualified name, via the visitor
        self._shadowed: dict[tuple[int, str], bool] = {}
        self._body_bindings: dict[int, Counter[str]] = {}  # `flow.top_bindings` of a body
        self._top_bindings: Counter[str] | None = None  # `flow.top_bindings`, once asked
        # What each followed qualname is: its function statement, or its constant's position.
        self.defined: dict[str, cst.FunctionDef | flow.Position] = {}
        self.touched: list[str] = []  # every function and constant looked into, in order
        # A call of a name this module does not define, met by a read at the raise: worth a
        # second read that keeps it as a placeholder (`defer`), for the repository-wide pass.
        self.cross_seen = False
        self.defer: Callable[[Reader, cst.Call, flow.Position], list[Alternative] | None] | None = None

    def followed(self, reader: Reader) -> list[str]:
        """The functions and constants a reader's reads went through, in the order met."""
        return list(_context(reader).followed)

    def reader(self, scopes: tuple[FunctionScope, ...], assigned: set[str] | None,
               context: Context | None = None) -> Reader:
        """A reader of expressions in `scopes` that follows this module's helpers and constants."""
        reader = Reader(self.module, assigned)
        reader.follower = self
        reader.indents = self.index.indents
        reader.context = context if context is not None else Context(scopes)
        return reader

    def finish(self, reader: Reader, alternatives: list[Alternative]) -> list[Alternative]:
        """A whole read of a callee's expression, put in its caller's terms."""
        bindings = _context(reader).bindings
        if not bindings:
            return alternatives
        found = [a for kind, pieces in alternatives for a in substitute(pieces, kind, bindings)]
        if len(found) > MAX_ALTERNATIVES:
            raise Unreadable
        # `parse_err(None, ...)` under `if tok is not None: msg += f"{tok.line}"`: that text
        # would raise before it is printed, so it is no message of this call
        return [a for a in found if not _reads_none(a[1])] or found

    # ------------------------------------------------ names

    def name(self, reader: Reader, name: str, position: flow.Position) -> list[Alternative]:
        """A bound parameter (as a placeholder the caller's argument replaces), or a constant."""
        context = _context(reader)
        if name in context.bindings:
            return [("variable", [Piece(name, True)])]
        constant = self.constant(reader, name)
        if constant is None:
            raise Unreadable
        value, where = constant
        constant_reader = self.reader((), None, Context((), depth=context.depth,
                                                        followed=context.followed))
        mark = len(context.followed)
        try:
            found = constant_reader.read(value, where)
        except Unreadable:
            del context.followed[mark:]
            raise
        self.note_constant(reader, name, mark)
        return found

    def constant(self, reader: Reader, name: str
                 ) -> tuple[cst.BaseExpression, flow.Position] | None:
        """The value of a module constant the name means where `reader` reads, and where it
        is bound; None when the name is no constant there (a local, bound more than once)."""
        constant = self.index.constants.get(name)
        if constant is None or self.is_local(name, _context(reader).scopes) \
                or not self.bound_once_at_top(name):
            return None
        self.touched.append(self._qualname(name))
        return constant

    def note_constant(self, reader: Reader, name: str, at: int | None = None) -> None:
        """A constant read through, among the read's followed names (at `at`, else last)."""
        rules.note("call.constant")
        followed, qualname = _context(reader).followed, self._qualname(name)
        self.defined[qualname] = self.index.constants[name][1]
        if qualname not in followed:
            followed.insert(len(followed) if at is None else at, qualname)

    # ------------------------------------------------ helpers that return text

    def call(self, reader: Reader, node: cst.Call, position: flow.Position) -> list[Alternative]:
        """The text a helper of this module returns, read where it is defined."""
        context = _context(reader)
        function, skip_first = self._callee(node.func, context.scopes)
        local = local_lambda(node.func, position, reader.assigned, context.scopes) \
            if function is None else None
        if local is not None and context.depth < MAX_DEPTH:
            found = self._lambda_reader(reader, node, position, local).read(local.body, local.at)
            rules.note("call.local-lambda")
            return found
        if function is None and context.depth == 0:
            self.cross_seen = True
            deferred = self.defer(reader, node, position) if self.defer is not None else None
            if deferred is not None:
                return deferred
        if function is None or context.depth >= MAX_DEPTH:
            raise Unreadable
        mark = len(context.followed)
        try:
            callee = self._callee_reader(reader, node, position, function, skip_first)
            alternatives: list[Alternative] = []
            for value, where in function.returns:
                if value is None:
                    raise Unreadable  # `return` of None: not text
                alternatives.extend(callee.read(value, where))
            if not alternatives or len(alternatives) > MAX_ALTERNATIVES:
                raise Unreadable
        except Unreadable:
            del context.followed[mark:]  # what a failed read went through gave nothing
            raise
        self._note_function(context, function, mark)
        rules.note("call.helper")
        return alternatives

    # ------------------------------------------------ factories that return exceptions

    def factory(self, reader: Reader, node: cst.Call, position: flow.Position) -> Followed:
        """The exceptions `raise f(...)` raises, when `f` is a function of this module."""
        context = _context(reader)
        function, skip_first = self._callee(node.func, context.scopes)
        lambda_ = local_lambda(node.func, position, reader.assigned, context.scopes) \
            if function is None else None
        if lambda_ is not None and context.depth < MAX_DEPTH:
            return self._lambda_factory(reader, node, position, lambda_)
        if function is None:  # a local called may be a lambda a generator of this module yields
            head = dotted(node.func)
            local = head is not None and len(head) == 1 and self.is_local(head[0], context.scopes)
            return yielded_factory(self, reader, node, position) or Followed(
                reason=self._why_not(node.func, context.scopes, local), unknown_callee=not local,
                parameter_class=is_parameter_class(node.func, context.scopes))
        via = self.function_qualname(function)
        if context.depth >= MAX_DEPTH:
            return Followed(reason=f"built by `{via}` past {MAX_DEPTH} calls deep: not followed",
                            via=via)
        mark = len(context.followed)
        try:
            callee = self._callee_reader(reader, node, position, function, skip_first)
            built: list[Built] = []
            for value, where in function.returns:
                built.extend(self.returned(callee, function, value, where))
        except Unreadable as error:
            del context.followed[mark:]
            return Followed(reason=str(error) or f"`{via}` returns an exception that is not read "
                            "exactly", via=via)
        if not built or len(built) > MAX_ALTERNATIVES:
            del context.followed[mark:]
            return Followed(reason=f"`{via}` returns no exception that is read exactly", via=via)
        self._note_function(context, function, mark)
        rules.note("call.factory")
        return Followed(tuple(built), via=via)

    def returned(self, callee: Reader, function: FunctionScope, value: cst.BaseExpression | None,
                  where: flow.Position) -> list[Built]:
        """What one `return` of a factory hands back: an exception call, maybe through a name."""
        if isinstance(value, cst.Name):
            found = flow.definitions(value.value, where) if value.value in function.assigned \
                else None
            if not found or any(len(definition) != 1 for definition in found):
                raise Unreadable
            built: list[Built] = []
            for (returned, at), in found:
                if not isinstance(returned, cst.BaseExpression):
                    raise Unreadable
                built.extend(self.returned(callee, function, returned, at))
            return built
        if not isinstance(value, cst.Call):
            raise Unreadable
        scopes = _context(callee).scopes
        inner, _ = self._callee(value.func, scopes)
        if inner is not None:  # a factory that returns another factory's exception
            followed = self.factory(callee, value, where)
            if not followed.built:
                raise Unreadable(followed.reason or "")
            return list(followed.built)
        parts = dotted(value.func)
        if parts is None:
            raise Unreadable
        if parts[0] in _context(callee).bindings:
            raise Unreadable(f"`{self.function_qualname(function)}` builds its exception with "
                             f"`{parts[0]}`, a class passed as a parameter")
        if self.is_local(parts[0], scopes):
            raise Unreadable
        qualname = self.qualify(parts, scopes)
        if qualname is None or not parts[-1].lstrip("_")[:1].isupper():
            raise Unreadable  # not a class by its name: not guessed at
        return [Built(value, where, qualname, callee, function)]

    def _lambda_factory(self, reader: Reader, node: cst.Call, position: flow.Position,
                        local: LocalLambda) -> Followed:
        """`raise error(...)`, `error = lambda name: ValueError(f"...")` a local of the function."""
        try:
            callee = self._lambda_reader(reader, node, position, local)
            built = self.returned(callee, local, local.body, local.at)
        except Unreadable as error:
            return Followed(reason=str(error) or f"`{local.name}`, a local lambda, returns an "
                            "exception that is not read exactly", via=local.name)
        rules.note("call.local-lambda")
        return Followed(tuple(built), via=local.name)

    def _lambda_reader(self, reader: Reader, node: cst.Call, position: flow.Position,
                       local: LocalLambda) -> Reader:
        """A reader of a local lambda's body, its parameters bound to the call's arguments. Its
        other names are read where it is called, so a local is a placeholder (it may have
        changed since the lambda was made); a module constant is read."""
        context = _context(reader)
        bindings = self._bind(reader, node, position, local.params, False, set())
        scopes = context.scopes[:local.scopes]  # a closure's: those around the lambda
        return self.reader(scopes, set(),
                           Context(scopes, bindings, context.depth + 1, context.followed))

    # ------------------------------------------------ finding the callee

    def _callee(self, func: cst.BaseExpression, scopes: tuple[FunctionScope, ...]
                ) -> tuple[FunctionScope | None, bool]:
        """The function of this module a call runs, and whether its first parameter is bound."""
        function, skip_first = self._find_callee(func, scopes)
        if function is not None:
            self.touched.append(self.function_qualname(function))
        return function, skip_first

    def _find_callee(self, func: cst.BaseExpression, scopes: tuple[FunctionScope, ...]
                     ) -> tuple[FunctionScope | None, bool]:
        if isinstance(func, cst.Name):
            name = func.value
            function = self.index.functions.get(name)
            if function is None or self.is_local(name, scopes) or not self.bound_once_at_top(name):
                return None, False
            return (function, False) if _followable(function) else (None, False)
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None, False
        owner, attr = func.value.value, func.attr.value
        enclosing = _enclosing_class(scopes)
        if enclosing is not None and owner == _first_parameter(scopes[-1]):
            method = self.index.methods.get((enclosing, attr))
        elif owner not in self.index.classes or self.is_local(owner, scopes) \
                or not self.bound_once_at_top(owner):
            return None, False
        else:
            method = self.index.methods.get((owner, attr))
        if method is None or not _followable(method):
            return None, False
        return method, not _is_static(method)

    def _why_not(self, func: cst.BaseExpression, scopes: Sequence[FunctionScope], local: bool) -> str:
        source = exact(self.module, func)
        if is_parameter_class(func, scopes):
            return f"`{source}` is an exception class passed as a parameter"
        if local:
            return f"`{source}` is a local name: what it builds is not followed"
        return (f"built by `{source}`, no function of this module: not followed; the template "
                "is its argument's")

    def _callee_reader(self, reader: Reader, node: cst.Call, position: flow.Position,
                       function: FunctionScope, skip_first: bool) -> Reader:
        """A reader of the callee's body, its parameters bound to the call's arguments."""
        context = _context(reader)
        assert isinstance(function.node, cst.FunctionDef)
        bindings = self._bind(reader, node, position, function.node.params, skip_first,
                              function.assigned)
        scopes = (function,)
        return self.reader(scopes, function.assigned,
                           Context(scopes, bindings, context.depth + 1, context.followed))

    def _bind(self, reader: Reader, call: cst.Call, position: flow.Position,
              params: cst.Parameters, skip_first: bool, assigned: set[str]
              ) -> dict[str, Binding]:
        """Each parameter to the argument the call passes it, or its default."""
        if params.star_arg is not None and isinstance(params.star_arg, cst.Param) \
                or params.star_kwarg is not None:
            raise Unreadable
        positional = [*params.posonly_params, *params.params][1 if skip_first else 0:]
        keyword_only = {p.name.value: p for p in params.kwonly_params}
        given: dict[str, cst.BaseExpression] = {}
        index = 0
        for arg in call.args:
            if arg.star:
                raise Unreadable
            if arg.keyword is None:
                if index >= len(positional):
                    raise Unreadable
                given[positional[index].name.value] = arg.value
                index += 1
            else:
                given[arg.keyword.value] = arg.value
        bindings: dict[str, Binding] = {}
        for param in [*positional, *keyword_only.values()]:
            name = param.name.value
            if name in given:
                bindings[name] = self.binding(reader, given[name], position)
            elif param.default is not None:
                bindings[name] = self.binding(self.reader((), None), param.default, ())
            else:
                raise Unreadable  # the call would fail before it built a message
        # A parameter the callee assigns again is not the argument everywhere: left unbound.
        return {name: b for name, b in bindings.items() if name not in assigned}

    def binding(self, reader: Reader, value: cst.BaseExpression, position: flow.Position
                 ) -> Binding:
        """An argument in the caller's caller's terms, when the caller is a callee itself."""
        outer = _context(reader).bindings
        if isinstance(value, cst.Name) and value.value in outer \
                and value.value not in (reader.assigned or ()):
            return outer[value.value]
        source = _renamed(reader.source_at(value, position), outer)
        try:
            alternatives = reader.read(value, position)
        except Unreadable:
            return Binding(source, None)
        if reader.nested and outer:  # the caller's own read has not put it in its terms yet
            alternatives = [a for kind, pieces in alternatives
                            for a in substitute(pieces, kind, outer)]
        if any(kind == "dynamic" for kind, _ in alternatives):
            return Binding(source, None)
        return Binding(source, tuple(alternatives))

    # ------------------------------------------------ what a name is bound to

    def is_local(self, name: str, scopes: Sequence[FunctionScope]) -> bool:
        """Whether a function around the read binds the name (then it is not the module's)."""
        for scope in scopes:
            if scope.is_class or not isinstance(scope.node, cst.FunctionDef):
                continue
            key = (id(scope), name)
            if key not in self._shadowed:
                self._shadowed[key] = _declares(name, scope) or self._body_binds(name, scope)
            if self._shadowed[key]:
                return True
        return False

    def _body_binds(self, name: str, scope: FunctionScope) -> bool:
        """Whether a statement of the function's body binds the name: the body walked once for
        every name asked of it."""
        bindings = self._body_bindings.get(id(scope))
        if bindings is None:
            assert isinstance(scope.node, cst.FunctionDef)
            bindings = self._body_bindings[id(scope)] = flow.top_bindings(scope.node.body.body)
        return name in bindings or flow.ANY_NAME in bindings

    def bound_once_at_top(self, name: str) -> bool:
        """Bound by one statement of the module's top level, and by no `global` anywhere."""
        if self._top_bindings is None:
            self._top_bindings = flow.top_bindings(self.index.body)
        return name not in self.index.declared_global and \
            self._top_bindings[name] + self._top_bindings[flow.ANY_NAME] == 1

    def _note_function(self, context: Context, function: FunctionScope, at: int) -> None:
        """A function read through, before those it called: the outermost comes first."""
        qualname = self.function_qualname(function)
        assert isinstance(function.node, cst.FunctionDef)
        self.defined[qualname] = function.node
        if qualname not in context.followed:
            context.followed.insert(at, qualname)

    def _qualname(self, name: str) -> str:
        prefix = f"{self.index.module_name}." if self.index.module_name else ""
        return prefix + name

    def function_qualname(self, function: FunctionScope) -> str:
        for (owner, name), method in self.index.methods.items():
            if method is function:
                return self._qualname(f"{owner}.{name}")
        return self._qualname(function.name)


def _context(reader: Reader) -> Context:
    context = reader.context
    assert isinstance(context, Context)
    return context


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
    rules.note("call.yielded-lambdas")
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
