"""Raise statements as `RaiseSite` records: one per exception and template a raise may raise.

`sites` reads one raise the visitor found: its exception's qualified name, its message's
templates (through the module's helpers, factories and constants, `crawler.parse.message.calls`), its
condition, cause and snippet. A message-less raise of a class that is not a builtin is a site
of kind `PENDING`, settled by the repository-wide class pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from crawler.parse import _source
from crawler.parse._source import Guard
from crawler.parse.exposed import cross_call
from crawler.parse.message import flow, rules
from crawler.parse.message.calls import Followed, Follower, class_alias
from crawler.parse.message.exception_call import call_templates
from crawler.parse.message.pieces import Alternative, Piece
from crawler.parse.message.reading import Reader
from crawler.parse.message.templates import build_template
from crawler.parse.positions import Span
from crawler.parse.raise_visitor import (
    FoundRaise,
    RaiseVisitor,
    class_qualname,
    exception_qualname_of,
    qualname,
)
from crawler.records import CallArgument, CrossCall, RaiseCounts, RaiseSite, Template

# A snippet longer than this is cut to a window around the raise.
SNIPPET_MAX_LINES = 150
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 20

PENDING = "pending"  # the kind of a message-less raise waiting for its class's template


@dataclass(frozen=True)
class Place:
    """What every site of one raise statement shares: its file, lines and reading context."""

    path: str
    module: cst.Module
    found: FoundRaise
    span: Span
    snippet: tuple[str, int]
    follower: Follower
    visitor: RaiseVisitor
    where: Callable[[str], str | None]  # a followed function or constant to its path:line
    tests: dict[int, str]  # the source of each `if` test already written, by `id`


def sites_of(place: Place) -> tuple[list[RaiseSite], RaiseCounts]:
    """One site per template of one raise, and how the raise counts; none when it has no message.

    `raise (a if c else b)` is read as two raises, under `c` and under `not (c)`.
    """
    exc = place.found.node.exc
    if exc is None:
        return [], _BARE_RAISE
    made: list[RaiseSite] = []
    counted: RaiseCounts | None = None
    for branch, guards in _branches(exc, place.found.indent):
        sites, raised = _branch_sites(place, branch, (*place.found.guards, *guards))
        made.extend(sites)
        if counted is None or raised == _WITH_MESSAGE:
            counted = raised
    assert counted is not None
    return made, counted


def _branches(exc: cst.BaseExpression, indent: str
              ) -> list[tuple[cst.BaseExpression, tuple[Guard, ...]]]:
    """The exceptions a raise may raise, each with the conditional expressions' tests.

    `raise exc.with_traceback(tb)` raises `exc`: its message is `exc`'s, never `tb`."""
    exc = _without_traceback(exc)
    if not isinstance(exc, cst.IfExp):
        return [(exc, ())]
    return [*((e, (Guard(exc.test, True, indent), *g)) for e, g in _branches(exc.body, indent)),
            *((e, (Guard(exc.test, False, indent), *g)) for e, g in _branches(exc.orelse, indent))]


def _without_traceback(exc: cst.BaseExpression) -> cst.BaseExpression:
    """`X.with_traceback(tb)` (any number of times over) as `X`: the call returns X itself."""
    while (isinstance(exc, cst.Call) and isinstance(exc.func, cst.Attribute)
           and exc.func.attr.value == "with_traceback" and len(exc.args) == 1):
        exc = exc.func.value
    return exc


def _branch_sites(place: Place, exc: cst.BaseExpression, guards: tuple[Guard, ...]
                  ) -> tuple[list[RaiseSite], RaiseCounts]:
    """The sites of one exception a raise statement raises."""
    found, visitor, module = place.found, place.visitor, place.module
    if isinstance(exc, cst.Call):
        aliased = _aliased_classes(place, exc)
        if aliased is not None:
            return _alias_sites(place, exc, aliased, guards)
    func = exc.func if isinstance(exc, cst.Call) else exc
    exception_qualname = exception_qualname_of(func, found.scopes, visitor)
    if not isinstance(exc, cst.Call):
        if not _looks_like_class(exc):
            return _constructed_sites(place, exc, guards)
        if exception_qualname is None or exception_qualname.startswith("builtins."):
            return [], _WITHOUT_MESSAGE
        return [_site(place, exc, guards, exception_qualname, build_template(PENDING, []))], \
            _WITHOUT_MESSAGE
    scope = next((s for s in reversed(found.scopes) if not s.is_class), None)
    assigned = scope.assigned if scope is not None else None
    reader = place.follower.reader(found.scopes, assigned)
    place.follower.cross_seen = False
    factory = _is_factory(func) and not _is_class(exception_qualname, visitor)
    if factory:
        followed = place.follower.factory(reader, exc, found.position)
        if followed.built:
            return _built_sites(place, exc, guards, followed), _WITH_MESSAGE
    templates = call_templates(exc, module, found.position, exception_qualname, assigned,
                               reader=reader)
    if factory and not followed.parameter_class and not followed.unknown_callee:
        source = _source.exact(module, exc, found.indent)
        templates = [replace(build_template("dynamic", [Piece(source, True)]),
                             reason=followed.reason)]
    elif templates is None:
        if exception_qualname is None or exception_qualname.startswith("builtins."):
            return [], _WITHOUT_MESSAGE
        pending = _site(place, exc, guards, exception_qualname, build_template(PENDING, []))
        return [replace(pending, arguments=call_arguments(module, exc))], _WITHOUT_MESSAGE
    else:
        templates = [_followed(t, reader, place) for t in templates]
        if factory:  # `exc_type(message)`: a class passed as a parameter, not a factory
            templates = [replace(t, reason=followed.reason) for t in templates]
            factory = not followed.parameter_class
    builtin = (exception_qualname or "").startswith("builtins.")  # no class of ours to compose
    arguments = None if factory or builtin else call_arguments(module, exc)
    sites = [replace(_site(place, exc, guards, exception_qualname, t, factory), arguments=arguments)
             for t in templates]
    if factory and followed.unknown_callee:
        called = cross_call(place.follower, reader, exc, found.position)
        sites = [replace(site, cross_calls=(called,)) for site in sites] if called else sites
    elif place.follower.cross_seen:
        sites = _deferred_sites(place, exc, exception_qualname, assigned, sites)
    return sites, _WITH_MESSAGE


def _aliased_classes(place: Place, exc: cst.Call) -> list[cst.BaseExpression] | None:
    """`raise err(msg)` where `err` is a local name for one class or a choice of classes."""
    if not isinstance(exc.func, cst.Name) \
            or not place.follower.is_local(exc.func.value, place.found.scopes):
        return None
    return class_alias(exc.func.value, place.found.position)


def _alias_sites(place: Place, exc: cst.Call, classes: list[cst.BaseExpression],
                 guards: tuple[Guard, ...]) -> tuple[list[RaiseSite], RaiseCounts]:
    """The sites of a raise through a local name for classes: one reading for each class, as if
    the raise named it, so that each record has the class `except` catches and its display."""
    made: list[RaiseSite] = []
    counted = _WITH_MESSAGE
    named = {_source.exact(place.module, cls): cls for cls in classes}
    for cls in named.values():
        sites, counted = _branch_sites(place, exc.with_changes(func=cls), guards)
        made.extend(sites)
    return made, counted


def _deferred_sites(place: Place, exc: cst.Call, exception_qualname: str | None,
                    assigned: set[str] | None, sites: list[RaiseSite]) -> list[RaiseSite]:
    """A message that calls another module's function (read `dynamic`, or with the call as a
    placeholder): read once more, each such call a placeholder, for
    `crawler.catalogue.factories` to follow. A `dynamic` site takes every reading; another, the
    reading that is its own template."""
    calls: list[CrossCall] = []

    def defer(reader: Reader, node: cst.Call, position: flow.Position) -> list[Alternative] | None:
        called = cross_call(place.follower, reader, node, position)
        if called is None:
            return None
        calls.append(called)
        return [("variable", [Piece(called.source, True)])]

    follower = place.follower
    follower.defer = defer
    try:
        reader = follower.reader(place.found.scopes, assigned)
        deferred = call_templates(exc, place.module, place.found.position, exception_qualname,
                                  assigned, reader=reader) or []
        deferred = [_followed(t, reader, place) for t in deferred if t.kind != "dynamic"]
    finally:
        follower.defer = None
    if not calls or not deferred:
        return sites
    unique = tuple(dict.fromkeys(calls))
    made = []
    for site in sites:
        own = tuple(deferred) if site.message.kind == "dynamic" else tuple(
            t for t in deferred if t.template == site.message.template
            and any(call.source in t.placeholders for call in unique))
        made.append(replace(site, cross_calls=unique, deferred=own) if own else site)
    return made


def _is_class(exception_qualname: str | None, visitor: RaiseVisitor) -> bool:
    """`raise error(msg)` where `error` is a builtin's alias or a class of this module."""
    if exception_qualname is None:
        return False
    if exception_qualname.startswith("builtins."):
        return True
    prefix = f"{visitor.module_name}." if visitor.module_name else ""
    return any(prefix + found.qualname == exception_qualname for found in visitor.classes)


def _built_sites(place: Place, exc: cst.Call, guards: tuple[Guard, ...], followed: Followed
                 ) -> list[RaiseSite]:
    """`raise make_error(...)`: one site per template of each exception the factory returns.

    A template the factory's code does not give as text is the raise's whole expression: the
    callee's names mean nothing at the raise."""
    sites = []
    for built in followed.built:
        templates = call_templates(built.call, place.module, built.position,
                                   built.exception_qualname, built.function.assigned,
                                   reader=built.reader) or []
        for template in templates:
            if template.kind == "dynamic":
                source = _source.exact(place.module, exc, place.found.indent)
                template = replace(build_template("dynamic", [Piece(source, True)]),
                                   reason=f"`{followed.via}` builds a message that is not read "
                                   "exactly")
            else:
                template = _followed(template, built.reader, place)
            sites.append(_site(place, exc, guards, built.exception_qualname, template,
                               factory=True))
    unique = {(s.exception_qualname, s.message.template): s for s in sites}
    return list(unique.values())


def _followed(template: Template, reader: Reader, place: Place) -> Template:
    """A template that names the functions and constants its text was read through."""
    followed = place.follower.followed(reader)
    if not followed or template.kind == "dynamic":
        return template
    return replace(template, via=", ".join(followed),
                   defined_at=template.defined_at or place.where(followed[0]))


# A function's lookups hold (FOLLOWED, qualname) when its records read another function or
# constant of the module: a skeleton, which reuses records by function, is then not used.
FOLLOWED = "<followed>"


def _site(place: Place, exc: cst.BaseExpression, guards: tuple[Guard, ...],
          exception_qualname: str | None, template: Template, factory: bool = False) -> RaiseSite:
    found, module = place.found, place.module
    func = exc.func if isinstance(exc, cst.Call) else exc
    function = next((s for s in reversed(found.scopes) if not s.is_class), None)
    cause = found.node.cause
    return RaiseSite(
        path=place.path,
        line=place.span.line,
        end_line=place.span.end_line,
        column=place.span.column,
        class_name=class_qualname(found.scopes),
        function=function.name if function else None,
        qualname=qualname(found.scopes),
        exception=_source.exact(module, func),
        exception_qualname=exception_qualname,
        message=template,
        cause=_source.exact(module, cause.item, found.indent) if cause is not None else None,
        condition=_source.condition(module, guards, place.tests),
        snippet=place.snippet[0],
        snippet_line=place.snippet[1],
        factory=factory,
    )


# How one raise statement counts, by what it raises.
_WITH_MESSAGE = RaiseCounts(raise_statements=1)
_BARE_RAISE = RaiseCounts(raise_statements=1, bare_raise=1)
_RERAISE = RaiseCounts(raise_statements=1, reraise=1)
_WITHOUT_MESSAGE = RaiseCounts(raise_statements=1, without_message=1)


_CONSTANTS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary)


def call_arguments(module: cst.Module, call: cst.Call) -> tuple[CallArgument, ...]:
    """A call's arguments as written, for the class pass to bind to the class's `__init__`."""
    found = []
    for arg in call.args:
        keyword = arg.star or (arg.keyword.value if arg.keyword is not None else None)
        value = arg.value
        literal = isinstance(value, _CONSTANTS) or (
            isinstance(value, cst.Name) and value.value in ("None", "True", "False"))
        found.append(CallArgument(keyword, _source.exact(module, value), literal))
    return tuple(found)


def _constructed_sites(place: Place, exc: cst.BaseExpression, guards: tuple[Guard, ...]
                       ) -> tuple[list[RaiseSite], RaiseCounts]:
    """`raise exc` of a name: the sites of each exception made by a call of a class that the
    name may hold there; none (a re-raise) when it holds none."""
    made = _constructed(place, exc)
    if not made:
        return [], _RERAISE
    rules.note("raise.made-on-a-path")
    sites: list[RaiseSite] = []
    counted = _RERAISE
    for call in made:
        found, raised = _branch_sites(place, call, guards)
        sites.extend(found)
        if raised == _WITH_MESSAGE or counted == _RERAISE:
            counted = raised
    return sites, counted


def _constructed(place: Place, exc: cst.BaseExpression) -> list[cst.Call]:
    """`exc = ValueError(...)` then `raise exc`: the calls of a class that made the exception the
    name may hold at the raise, one per path that made one, in the order the paths are found. A
    path that brings another value (a caught `e`, `transport.get_exception()`) re-raises what it
    holds, which has no message of its own here, and adds nothing: paramiko's
    `e = self.transport.get_exception(); if e is None: e = AuthenticationException("Authentication
    failed."); raise e` raises that one made exception or another it was given."""
    if not isinstance(exc, cst.Name):
        return []
    found = flow.definitions(exc.value, place.found.position)
    calls: list[cst.Call] = []
    for definition in found or ():
        if len(definition) != 1:
            continue  # `e += ...`: not an exception made here
        value, _ = definition[0]
        made = _without_traceback(value) if isinstance(value, cst.BaseExpression) else None
        if isinstance(made, cst.Call) and _looks_like_class(made.func) and \
                all(made is not seen for seen in calls):
            calls.append(made)
    return calls


def _looks_like_class(node: cst.BaseExpression) -> bool:
    """`raise ValueError` (a class, by convention capitalised) versus `raise error`."""
    name = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
    return isinstance(name, str) and name[:1].isupper()


def _is_factory(func: cst.BaseExpression) -> bool:
    """`raise make_error(...)`, `raise self._error(...)`: a call that is not a class, by its name."""
    if isinstance(func, cst.Name):
        name = func.value
    elif isinstance(func, cst.Attribute):
        name = func.attr.value
    else:
        return True
    return not name.lstrip("_")[:1].isupper()




def snippet(lines: list[str], span: Span, function: Span | None) -> tuple[str, int]:
    """The enclosing function's source, cut to a window around the raise when it is long."""
    start, end = (function.line, function.end_line) if function else (span.line, span.end_line)
    if end - start + 1 > SNIPPET_MAX_LINES:
        start = max(start, span.line - SNIPPET_BEFORE)
        end = min(end, span.end_line + SNIPPET_AFTER)
    while end > span.end_line and not lines[end - 1].strip():
        end -= 1  # a window's trailing blank lines say nothing
    return "\n".join(lines[start - 1 : end]) + "\n", start
