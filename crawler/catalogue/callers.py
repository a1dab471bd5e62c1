"""A raise whose message is a parameter of its function, given the text its callers pass.

`def fail(self, message): raise UsageError(message, self)` prints whatever the callers of `fail`
hand it: a worker reads `{message}` (kind `dynamic`). Here, with every module at hand, the call
graph (`crawler.callgraph.entry_points.Graph`, over each file's `crawler.parse.call_edges`)
says which calls reach the function, in its module or another, and each file's `TextCall`s
(`crawler.parse.message.text_calls`) say what those calls pass. The raise then has one site per text
its callers pass (as a raise with a message in a variable assigned in branches has one per
branch), each with the caller's own placeholders (`{" ".join(map(str, args))}`), its
`defined_at` the caller's line.

Followed: a module-level function or a method (not a nested function), whose message is one of
its parameters, never assigned in it, passed by position or keyword. At most MAX_CALLERS calls
are read, in order of path and line. When some call passes no text read off the source (a
name, another parameter: one level is followed), calls it by a name the graph cannot tell, or
is past MAX_CALLERS, the sites of the calls read keep the rest in their `reason`; when no call
passes text, or no call is known, the site stays `dynamic`, its reason saying so.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from crawler.callgraph.entry_points import Graph
from crawler.catalogue.classes import VisitedFile
from crawler.parse.message.pieces import Piece, alternative
from crawler.parse.message.templates import build_template, display_regex
from crawler.parse.module_names import module_name
from crawler.parse.python_ast import parse_module
from crawler.records import ArgumentText, RaiseSite, Template, TextCall

MAX_CALLERS = 16  # calls of one function read for one raise's text
DISPLAYS = ("str", "repr", "args")  # how str(exc) shows the message where it is followed


@dataclass(frozen=True)
class _Parameter:
    """The parameter a raise's message is, as its function's `def` has it."""

    name: str
    position: int | None  # among the positional parameters after self/cls; None: keyword only
    bound: bool  # a method called on an instance or class: its first parameter is not passed
    raised: tuple[str, ...]  # the raised call's positional arguments, as written


def followed_files(files: Sequence[VisitedFile],
                   graph_of: Callable[[], Graph] | None = None) -> list[VisitedFile]:
    """The files with each raise of a parameter given its callers' texts (see the docstring);
    `graph_of` gives the files' call graph where the caller builds it for other uses too."""
    wanted = {id(site): found for visited in files for site in visited.sites
              if (found := _parameter(site)) is not None}
    if not wanted:
        return list(files)
    graph = graph_of() if graph_of is not None else Graph(
        [f for f in (getattr(v, "calls", None) for v in files) if f is not None])
    paths = {module_name(v.path): v.path for v in files}
    calls: dict[str, dict[tuple[int, str], list[tuple[str, TextCall]]]] = defaultdict(dict)
    for visited in files:
        module = module_name(visited.path)
        calls[module] = {}  # a module without a call that passes text is known too
        for call in getattr(visited, "text_calls", ()):
            calls[module].setdefault((call.line, call.name), []).append((visited.path, call))
    result: list[VisitedFile] = []
    for visited in files:
        if any(id(site) in wanted for site in visited.sites):
            sites = [made for site in visited.sites for made in (
                _followed(site, wanted[id(site)], graph, calls, paths) if id(site) in wanted else [site])]
            visited = replace(visited, sites=tuple(sites))  # type: ignore[type-var]
        result.append(visited)
    return result


def reached(changed: Sequence[VisitedFile], kept: Sequence[VisitedFile]) -> set[str]:
    """The paths of kept files with a raise of a parameter, when any file was read again: a
    caller's new text is the raise's new template (the old callers are not known, so every
    such file is merged again: a few per repository)."""
    if not changed:
        return set()
    return {visited.path for visited in kept
            if any(_parameter(site) is not None for site in visited.sites)}


# ---------------------------------------------------------------- the raise's parameter


def _parameter(site: RaiseSite) -> _Parameter | None:
    message = site.message
    if message.kind != "dynamic" or len(message.placeholders) != 1 \
            or message.template != "{" + message.placeholders[0] + "}" \
            or not message.placeholders[0].isidentifier() or message.display not in DISPLAYS \
            or site.function is None or "<locals>" in site.qualname or site.factory:
        return None
    name = message.placeholders[0]
    defined = _definition(site)
    if defined is None or _assigns(defined[0], name):
        return None
    function, first_line = defined
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                 for d in function.decorator_list)
    bound = site.class_name is not None and site.qualname == f"{site.class_name}.{site.function}" \
        and not static
    if name in positional:
        position = positional.index(name) - (1 if bound else 0)
        if position < 0:
            return None
    elif name in (a.arg for a in args.kwonlyargs):
        position = None
    else:
        return None
    raised = _raised(function, site.line - first_line + 1)
    if raised is None:
        return None
    return _Parameter(name, position, bound, raised)


def _definition(site: RaiseSite) -> tuple[ast.FunctionDef, int] | None:
    """The `def` of the raise's function, read off the site's snippet (its whole source)."""
    text = site.snippet
    indented = text[:1] in (" ", "\t")
    try:
        tree = parse_module("if True:\n" + text if indented else text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body[0].body if indented and isinstance(tree.body[0], ast.If) else tree.body
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name == site.function:
            return node, site.snippet_line - (1 if indented else 0)
    return None


def _assigns(function: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
               for node in ast.walk(function))


def _raised(function: ast.FunctionDef, line: int) -> tuple[str, ...] | None:
    """The positional arguments of the raised call at `line` of the snippet, unparsed."""
    for node in ast.walk(function):
        if isinstance(node, ast.Raise) and node.lineno == line and isinstance(node.exc, ast.Call):
            if any(isinstance(a, ast.Starred) for a in node.exc.args):
                return None
            return tuple(ast.unparse(a) for a in node.exc.args)
    return None


# ---------------------------------------------------------------- its callers


def _followed(site: RaiseSite, parameter: _Parameter, graph: Graph,
              calls: dict[str, dict[tuple[int, str], list[tuple[str, TextCall]]]],
              paths: dict[str, str]) -> list[RaiseSite]:
    node = f"{module_name(site.path)}.{site.qualname}"
    edges = sorted({(caller, line) for caller, line, stop in graph.callers.get(node, ())
                    if stop is None and line > 0})
    assert site.function is not None
    texts: list[tuple[str, int, ArgumentText]] = []
    unread: list[str] = []
    for caller, line in edges:
        module = _module_of(graph, caller)
        found = calls.get(module, {}).get((line, site.function), []) if module else []
        if not found:
            path = paths.get(module) if module else None
            unread.append(f"{path}:{line}" if path else f"`{caller}`, line {line}")
            continue
        for path, call in found:
            argument = _argument(call, parameter, site)
            if argument is None or argument.readings is None:
                unread.append(f"{path}:{line}")
            else:
                texts.append((path, line, argument))
    if len(texts) > MAX_CALLERS:
        unread.extend(f"{path}:{line}" for path, line, _ in texts[MAX_CALLERS:])
        texts = texts[:MAX_CALLERS]
    own = site.message.reason  # what else the worker said of the raise (a class passed in)
    if own is not None and own.startswith(f"`{parameter.name}` is not built in this function"):
        own = None
    if not texts:
        if not edges:
            why = (f"`{parameter.name}` is a parameter; no call of `{site.qualname}` is known "
                   "(it may be handed on as a value, or called from outside the repository)")
            return [replace(site, message=replace(site.message, reason=_joined(own, why)))]
        why = (f"`{parameter.name}` is a parameter; its callers pass no text read off the "
                  f"source ({_listed(unread)})")
        return [replace(site, message=replace(site.message, reason=_joined(own, why)))]
    reason: str | None = None if not unread else (
        f"the text of the calls of `{site.qualname}` that pass text; {len(unread)} other "
        f"call{'s' if len(unread) > 1 else ''} pass{'' if len(unread) > 1 else 'es'} text not "
        f"read off the source ({_listed(unread)}), not among these templates")
    made: dict[str, RaiseSite] = {}
    for path, line, argument in texts:
        assert argument.readings is not None
        for kind, pieces in (alternative(r) for r in argument.readings):
            template = _template(site, parameter, kind, pieces)
            template = replace(template, defined_at=f"{path}:{line}", reason=_joined(own, reason))
            made.setdefault(template.template, replace(site, message=template))
    return list(made.values())


def _joined(*reasons: str | None) -> str | None:
    return "; ".join(r for r in reasons if r) or None


def _listed(where: list[str]) -> str:
    shown = ", ".join(where[:3])
    return shown + (f" and {len(where) - 3} more" if len(where) > 3 else "")


def _module_of(graph: Graph, qualname: str) -> str | None:
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in graph.modules:
            return module
    return None


def _argument(call: TextCall, parameter: _Parameter, site: RaiseSite) -> ArgumentText | None:
    """What one call passes the parameter; None when that cannot be told."""
    for argument in call.args:
        if argument.keyword == parameter.name:
            return argument
    if parameter.position is None:
        return None
    owner = (site.class_name or "").rpartition(".")[2]
    # `Owner.method(obj, ...)` passes the instance too; `obj.method(...)` does not
    position = parameter.position + (1 if parameter.bound and call.receiver == owner else 0)
    positional = []
    for argument in call.args:
        if argument.keyword is not None and argument.keyword != "*":
            continue
        if argument.keyword == "*":
            return None  # where the unpacked ones end is not known
        positional.append(argument)
    return positional[position] if position < len(positional) else None


def _template(site: RaiseSite, parameter: _Parameter, kind: str, pieces: list[Piece]
              ) -> Template:
    """The raise's message with its parameter replaced by one text a caller passes."""
    message = site.message
    argument = message.argument
    chosen = int(argument) if argument is not None and argument.isdigit() else 0
    readings = [[("dynamic", [Piece(source, True)])] for source in parameter.raised] or [[]]
    if chosen < len(readings):
        readings[chosen] = [(kind, pieces)]
    regex = display_regex(message.display, readings, chosen, pieces, kind)
    return build_template(kind, pieces, argument=argument, display=message.display, regex=regex)
