"""The calls a static reader cannot follow, and the candidates the entry-point pass offers for
each as a stop (a chain crosses at most one, and names it in `stops`): `getattr` with a
computed name (the methods whose names start with its literal prefix), a registry's item (what
the library stores in it), and the call of a held callable whose type no reader knows.

`v(inst, attr, value)` for `v` iterated from `self._validators`, `self.validator(inst, attr,
value)` where the class holds `validator = attrib()`, `hook(self, a, val)` for a hook read
off a table: what is called is whatever the library or its user stored, and a static reader
cannot tell which. The entry-point pass offers, as a stop that the chain names
(`"v(...) calls what it holds"`), never as a plain edge, the `__call__` of the classes that
the caller's own module defines and whose signature takes the call's arguments
(`call_guards.accepts`: as many positional arguments, the keywords named, every parameter
without a default given). Bounded so: a call that unpacks `*args`/`**kwargs` reaches none
(no arity to weigh), nor does a `__call__` that names no parameter (`*args`, `**kwargs`
only); a plain function is never offered (a module's functions are far more than its
callable objects), nor a class of another module: a library writes its callable objects
beside what calls them (attrs' `_OptionalValidator` and the validators it wraps, in
`validators.py`), and on a large library the same arity alone would tie every held call to
every `__call__`. A parameter or a local called is no held call (jax's `fun(x)`): only a
callable the instance holds, read off `self` or iterated from one of its attributes.

A callable whose type is known (an attribute annotated or assigned an instance, a local
assigned a call whose return type is a class) is no such call: the pass follows it to that
class's `__call__` like any method.
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from crawler.parse.call_edges import SIGNATURE, CallFacts, Function
from crawler.parse.call_guards import accepts

if TYPE_CHECKING:
    from crawler.callgraph.entry_points import Graph

_BUILTINS = frozenset(dir(builtins))
_NO_METHODS = frozenset({"object", "typing.Generic", "typing.Protocol", "abc.ABC"})


def callables_by_module(files: Iterable[CallFacts], functions: Mapping[str, Function]
                        ) -> dict[str, list[tuple[str, str]]]:
    """Each module's classes' own `__call__`, with its signature (none unread: not offered;
    nor a `Protocol`'s, which describes a callable and is never one)."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for facts in files:
        for cls in facts.classes:
            if any(base.rpartition(".")[2] == "Protocol" for base in cls.bases):
                continue
            function = functions.get(f"{cls.qualname}.__call__")
            sig = next((c.target for c in function.calls if c.kind == SIGNATURE), "") \
                if function is not None else ""
            if sig:
                found[facts.module].append((function.qualname, sig))  # type: ignore[union-attr]
    return found


def held_attribute(graph: Graph, target: str, name: str) -> str | None:
    """`self.validator` (for `self.validator(...)`, or `v = self.validator; v(...)`) when the
    attribute is a callable the instance holds: every base of its class is the library's (or
    `object`: no other library's class defines it), and no class of the family defines it as a
    method or holds in it a class, a function or a builtin (`self.type: type`): unset, or an
    instance of no class of the library (`t.Callable[..., t.Any]`)."""
    if target.startswith("S "):
        cls, attribute, source = target[2:], name, f"self.{name}"
    elif target.startswith("A ") and name == "__call__":
        cls, _, attribute = target[2:].partition(" ")
        source = f"{cls.rpartition('.')[2]}.{attribute}"
    else:
        return None
    if cls not in graph.classes or any(k not in graph.classes and k not in _NO_METHODS
                                       for k in graph.mro(cls)):
        return None
    for klass in [cls, *graph.subclasses.get(cls, ())]:
        ref = graph.lookup(klass, attribute)
        if ref is not None and (ref[:2] not in ("N ", "A ", "M ") or ref[2:] in _BUILTINS
                                or graph.classes_of(ref)):  # `self.type: type`: a class
            return None
    return source


def held_callees(graph: Graph, caller: str, source: str, args: str) -> list[tuple[str, str | None]]:
    """The `__call__` a held callable's call in `caller` may reach, each with the stop text."""
    stop = f"{source}(...) calls what it holds"
    return [(qualname, stop) for qualname, sig in graph.callables.get(graph.module_of.get(caller, ""), ())
            if accepts(sig, args)]


def dynamic_callees(graph: Graph, target: str, prefix: str) -> list[tuple[str, str | None]]:
    """Candidates of a call a static reader cannot follow, each marked with its source."""
    ref, _, text = target.partition("\0")
    if not text:  # `REGISTRY[key](...)`: what is stored in that registry
        return [(f, f"{ref}(...)") for f in graph.registered.get(container(ref), ())
                if f in graph.functions]
    if not prefix:
        return []
    found: list[str] = []
    for cls in graph.classes_of(ref):
        for klass in [*graph.mro(cls), *sorted(graph.subclasses.get(cls, ()))]:
            found.extend(f for f in graph.methods_of.get(klass, ())
                         if f.rpartition(".")[2].startswith(prefix))
    return [(f, text) for f in dict.fromkeys(found)]


def container(where: str) -> str:
    """`HANDLERS[...]`, `self._handlers[key]`, `register(...)` -> the registry's last name."""
    head = where.split("[", 1)[0].split("(", 1)[0]
    return head.rpartition(".")[2]
