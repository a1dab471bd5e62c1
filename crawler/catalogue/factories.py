"""What a raise of another module's callable raises: a class, a factory or a helper of the repository.

A worker sees one file, so `raise errors.bad_thing(msg)` or `raise error(msg)` with `error`
imported is read there as an unknown callee: its argument's template is kept, `factory` is set
and the template's `reason` says why (`crawler.parse.message.calls`); `raise ValueError(msgs.too_many(n))`
is `dynamic`, with a second reading in `deferred` that keeps the call as a placeholder. Each
such call is a `CrossCall`, and each module says which of its functions build text or an
exception (`ExposedFunction`, `crawler.parse.exposed`). Here, with every module at hand, a site
is settled before the class pass:

- the name is a class of the repository (`from ._constants import error`, a lower-case class):
  it is no factory; the class pass then composes its message like any other raise;
- the name is a function of the repository (through re-exports, `ClassIndex.canonical`) that
  builds an exception from text: one site per exception and template it builds, its parameters
  bound to the call's arguments as `crawler.parse.message.calls` binds them in one module (literal text
  substituted, other arguments named by their source), `via` the function;
- a helper in the message that returns text: its readings take the call's place;
- a function that cannot be followed exactly: the site stays as the worker read it, and its
  `reason` says why; a name outside the repository: the site stays as it is.

One module boundary is crossed: a function whose own text comes from a third module is not read
exactly where it is defined (its `reason` says so), so a chain across modules, or a cycle, stays
`dynamic`. Within its own module the function was read to `calls.MAX_DEPTH` calls already.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from crawler.catalogue.classes import ClassIndex, VisitedFile
from crawler.parse.message.pieces import MAX_ALTERNATIVES, Alternative, Piece, alternative
from crawler.parse.message.substitution import Binding, substitute
from crawler.parse.message.templates import build_template, redisplay, single_argument_display
from crawler.parse.message.templates import substitute as put_in
from crawler.parse.module_names import module_name
from crawler.records import (
    ArgumentText,
    CrossCall,
    ExposedFunction,
    RaiseSite,
    Template,
    TextReading,
)


class NotFollowed(Exception):
    """A call of another module's function that is not read exactly: the message says why."""


def settle(index: ClassIndex, sites: Sequence[RaiseSite],
           exposed: dict[str, ExposedFunction] | None = None) -> list[RaiseSite]:
    """The sites, each unknown callee of the repository told apart (class, factory, helper)."""
    functions = exposed if exposed is not None else {}
    return [settled for site in sites for settled in _settled(index, functions, site)]


def settled_files(files: Sequence[VisitedFile]) -> list[VisitedFile]:
    """The files with their sites settled, for the class pass; a file with nothing to settle is
    passed on as it is."""
    if not any(_to_settle(site) for visited in files for site in visited.sites):
        return list(files)
    index = ClassIndex(files)
    exposed = exposed_by_name(files)
    result: list[VisitedFile] = []
    for visited in files:
        if any(_to_settle(site) for site in visited.sites):
            visited = replace(visited, sites=tuple(settle(index, visited.sites, exposed)))  # type: ignore[type-var]
        result.append(visited)
    return result


def exposed_by_name(files: Sequence[VisitedFile]) -> dict[str, ExposedFunction]:
    """Every module's exposed functions, by qualified name."""
    return {function.qualname: function for visited in files
            for function in getattr(visited, "exposed", ())}


def reached(changed: Sequence[VisitedFile], kept: Sequence[VisitedFile]) -> set[str]:
    """The paths of kept files with a raise that calls a function of a changed module.

    Their records are merged again with the changed files' (a helper's new text is the
    caller's new template); the callee's module is the one its name resolves to, through
    re-exports, or any module on the way."""
    modules = {module_name(visited.path) for visited in changed}
    if not modules or not any(site.cross_calls for visited in kept for site in visited.sites):
        return set()
    index = ClassIndex([*changed, *kept])
    paths = set()
    for visited in kept:
        for site in visited.sites:
            if any(_module(call.callee) in modules or _module(index.canonical(call.callee))
                   in modules for call in site.cross_calls):
                paths.add(visited.path)
                break
    return paths


def _module(qualname: str) -> str:
    return qualname.rpartition(".")[0]


def _to_settle(site: RaiseSite) -> bool:
    return _unknown_callee(site) or bool(site.cross_calls)


def _unknown_callee(site: RaiseSite) -> bool:
    return site.factory and site.exception_qualname is not None \
        and site.message.reason is not None and site.message.via is None \
        and not _whole_call(site)


def _settled(index: ClassIndex, exposed: dict[str, ExposedFunction], site: RaiseSite
             ) -> list[RaiseSite]:
    if site.deferred and site.cross_calls:
        return _helped(index, exposed, site)
    if not _unknown_callee(site):
        return [site]
    assert site.exception_qualname is not None
    qualname = index.canonical(site.exception_qualname)
    if qualname in index.classes:
        return [replace(site, factory=False, message=replace(site.message, reason=None))]
    function = exposed.get(qualname)
    if function is not None and site.cross_calls:
        try:
            return _built(function, site)
        except NotFollowed as error:
            return _built_unread(function, site, str(error))
    module = qualname.rpartition(".")[0]
    if module in index.exports:
        reason = (f"built by `{qualname}`, a function of another module of the repository that "
                  "builds no exception read exactly; the template is its argument's")
        return [replace(site, message=replace(site.message, reason=reason))]
    return [site]


def _whole_call(site: RaiseSite) -> bool:
    """The template is the raise's whole call, as the worker gives a factory it read whose message
    is not read exactly (hypothesis's `raise self._flaky_replay_to_failure(err, e)`, returning a
    `FlakyFailure`): its callee was read, so it is settled already, and the reason stays."""
    placeholders = site.message.placeholders
    return site.message.kind == "dynamic" and len(placeholders) == 1 \
        and placeholders[0].startswith(f"{site.exception}(")


def _built(function: ExposedFunction, site: RaiseSite) -> list[RaiseSite]:
    """`raise make_error(...)`: one site per exception and template the factory builds."""
    if not function.built:
        raise NotFollowed(function.reason or f"`{function.qualname}` returns no exception")
    bindings = _bindings(function, site.cross_calls[0])
    sites: dict[tuple[str, str], RaiseSite] = {}
    for built in function.built:
        display = single_argument_display(built.exception_qualname)
        for kind, pieces in _substituted(function, built.readings, bindings):
            if kind == "dynamic":
                raise NotFollowed(f"`{function.qualname}` builds a message that is not read "
                                  "exactly")
            template = redisplay(build_template(kind, pieces, argument=built.argument), display)
            template = _followed(template, function, site.message.via)
            made = replace(site, exception_qualname=built.exception_qualname, message=template,
                           factory=True, cross_calls=site.cross_calls)
            sites.setdefault((built.exception_qualname, template.template), made)
    return list(sites.values())



def _built_unread(function: ExposedFunction, site: RaiseSite, reason: str) -> list[RaiseSite]:
    """A factory whose message is not read exactly: one `dynamic` site per class it builds, the
    whole call its one placeholder (its argument's text is not the message, and the function is
    not the exception); a function that builds no class it knows keeps the worker's reading."""
    classes = sorted({*function.builds, *(built.exception_qualname for built in function.built)})
    if not classes:
        return [replace(site, message=replace(site.message, reason=reason))]
    call = site.cross_calls[0].source
    template = replace(build_template("dynamic", [Piece(call, True)]), reason=reason,
                       display=site.message.display)
    return [replace(site, exception_qualname=cls, message=template, factory=True)
            for cls in classes]

def _helped(index: ClassIndex, exposed: dict[str, ExposedFunction], site: RaiseSite
            ) -> list[RaiseSite]:
    """A message that calls another module's helper: its readings in the call's place."""
    readings: dict[str, list[Template]] = {}
    for call in site.cross_calls:
        qualname = index.canonical(call.callee)
        function = exposed.get(qualname)
        if function is None and _module(qualname) in index.exports:
            reason = (f"`{qualname}`, of another module of the repository, returns no text "
                      "that is read exactly")
            return [replace(site, message=replace(site.message, reason=reason))]
        if function is None:
            return [site]  # not the repository's: the worker's reading stands
        try:
            if not function.texts:
                raise NotFollowed(function.reason or f"`{function.qualname}` returns no text")
            bindings = _bindings(function, call)
            found = _substituted(function, function.texts, bindings)
            if any(kind == "dynamic" for kind, _ in found):
                raise NotFollowed(f"`{function.qualname}` returns text that is not read exactly")
        except NotFollowed as error:
            return [replace(site, message=replace(site.message, reason=str(error)))]
        readings[call.source] = [build_template(kind, pieces) for kind, pieces in found]
    made: dict[str, RaiseSite] = {}
    for deferred in site.deferred:
        for template in _put_in(deferred, readings, site.cross_calls, exposed, index):
            if template is None:
                return [site]
            made.setdefault(template.template, replace(site, message=template))
    return list(made.values()) if len(made) <= MAX_ALTERNATIVES else [site]


def _put_in(deferred: Template, readings: dict[str, list[Template]], calls: Sequence[CrossCall],
            exposed: dict[str, ExposedFunction], index: ClassIndex) -> list[Template | None]:
    """A deferred template with each call's placeholder replaced by each of its readings."""
    found: list[Template] = [deferred]
    via = deferred.via
    for call in calls:
        if call.source not in deferred.placeholders:
            continue
        function = exposed[index.canonical(call.callee)]
        whole = found[0].template == "{" + call.source + "}"
        after: list[Template] = []
        for template in found:
            for given in readings[call.source]:
                joined = put_in(template, call.source, given)
                if joined is None:
                    return [None]
                after.append(replace(joined, kind=given.kind if whole else template.kind,
                                     argument=deferred.argument))
        found = after
        found = [_followed(t, function, via) for t in found]
        via = found[0].via if found else via
    return list(found)


def _followed(template: Template, function: ExposedFunction, via: str | None) -> Template:
    """A template that names the functions its text was read through, the callee first."""
    chain = [*(via.split(", ") if via else []), function.qualname, *function.via]
    return replace(template, via=", ".join(dict.fromkeys(chain)), reason=None,
                   defined_at=template.defined_at or function.defined_at)


def _bindings(function: ExposedFunction, call: CrossCall) -> dict[str, Binding]:
    """Each parameter to the argument the call passes it, or its default, as in one module."""
    given: dict[str, ArgumentText] = {}
    positional = list(function.params)
    for index, arg in enumerate(a for a in call.args if a.keyword is None):
        if index >= len(positional):
            raise NotFollowed(f"`{call.source}` passes more arguments than `{function.qualname}` "
                              "takes")
        given[positional[index]] = arg
    for passed in call.args:
        if passed.keyword is not None:
            if passed.keyword not in (*function.params, *function.keywords):
                raise NotFollowed(f"`{function.qualname}` takes no argument `{passed.keyword}`")
            given[passed.keyword] = passed
    defaults = dict(function.defaults)
    bindings = {}
    for name in (*function.params, *function.keywords):
        chosen = given.get(name, defaults.get(name))
        if chosen is None:
            raise NotFollowed(f"`{call.source}` does not pass `{name}`")
        bindings[name] = _binding(chosen)
    return bindings


def _binding(arg: ArgumentText) -> Binding:
    readings = None if arg.readings is None else tuple(alternative(r) for r in arg.readings)
    return Binding(arg.source, readings)


def _substituted(function: ExposedFunction, readings: Sequence[TextReading],
                 bindings: dict[str, Binding]) -> list[Alternative]:
    """The function's readings in the caller's terms: each parameter replaced by its argument."""
    found = []
    for reading in readings:
        kind, pieces = alternative(reading)
        found.extend(substitute(pieces, kind, bindings))
    if not found or len(found) > MAX_ALTERNATIVES:
        raise NotFollowed(f"`{function.qualname}` has more alternatives than are read")
    return found
