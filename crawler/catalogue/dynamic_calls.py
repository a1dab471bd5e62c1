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
(no arity to weigh), a plain function is never offered (a module's functions are far more
than its callable objects), and a class of another module never is: a library writes its
callable objects beside what calls them (attrs' `_OptionalValidator` and the validators it
wraps, in `validators.py`), and on a large library the same arity alone would tie every held
call to every `__call__`.

A callable whose type is known (an attribute annotated or assigned an instance, a local
assigned a call whose return type is a class) is no such call: the pass follows it to that
class's `__call__` like any method.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from crawler.parse.call_edges import SIGNATURE, CallFacts, Function
from crawler.parse.call_guards import accepts

if TYPE_CHECKING:
    from crawler.catalogue.entry_points import Graph

_NO_METHODS = frozenset({"object", "typing.Generic", "typing.Protocol", "abc.ABC"})


def callables_by_module(files: Iterable[CallFacts], functions: Mapping[str, Function]
                        ) -> dict[str, list[tuple[str, str]]]:
    """Each module's classes' own `__call__`, with its signature (none unread: not offered)."""
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for facts in files:
        for cls in facts.classes:
            function = functions.get(f"{cls.qualname}.__call__")
            sig = next((c.target for c in function.calls if c.kind == SIGNATURE), "") \
                if function is not None else ""
            if sig:
                found[facts.module].append((function.qualname, sig))  # type: ignore[union-attr]
    return found


def all_ours(graph: Graph, cls: str) -> bool:
    """Whether every base of a class is the library's (or `object`): `self.name(...)` that none
    of them defines is then a callable the instance holds, not a method of another library."""
    return all(k in graph.classes or k in _NO_METHODS for k in graph.mro(cls))


def held_callees(callables: Mapping[str, list[tuple[str, str]]], module: str, source: str,
                 args: str) -> list[tuple[str, str | None]]:
    """The `__call__` a held callable's call in `module` may reach, each with the stop text."""
    stop = f"{source}(...) calls what it holds"
    return [(qualname, stop) for qualname, sig in callables.get(module, ())
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
