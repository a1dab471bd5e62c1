"""The names users import: each function and class's shortest public spelling.

A module is public when no part of its dotted name starts with `_` and it is not a folder of
documentation, examples, benchmarks or scripts. A public module's public names are those of its
`__all__` when it has a literal one, else its top-level names without a leading `_`: in a
package's `__init__` imported ones included (that is how `jax.checkpoint` names
`jax._src.ad_checkpoint.checkpoint`), elsewhere those it defines and those it imports as
themselves (`from jax._src.random import normal as normal` in `jax/random.py`: PEP 484's
explicit re-export, as type checkers read a module's exports). A public
class's methods are public under the class's name unless they start with `_` (dunders other than
the constructors are public: `x[i]` calls `__getitem__`); a class is its own constructor's entry.
Among several spellings the shortest wins (fewest dots, then the shortest text, then the first
in order), so a name is the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.callgraph.entry_points import Graph

NOT_LIBRARY = frozenset({"docs", "doc", "examples", "example", "benchmarks", "benchmark",
                         "scripts", "tools", "build", "setup", "conftest", "noxfile"})
PRIVATE_DUNDERS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__",
                             "__class_getitem__", "__set_name__"})


def public_module(module: str) -> bool:
    parts = module.split(".")
    return bool(module) and parts[0] not in NOT_LIBRARY and not any(p.startswith("_") for p in parts)


def public_name(name: str) -> bool:
    return not name.startswith("_")


def public_names(graph: Graph) -> dict[str, str]:
    """Every public function and class (by qualname) -> its shortest public spelling."""
    spellings: dict[str, list[str]] = {}
    packages = {m.rpartition(".")[0] for m in graph.modules}
    for module, facts in graph.modules.items():
        if not public_module(module):
            continue
        names = facts.all_names if facts.all_names is not None else tuple(
            name for star in (module, *facts.star) if star in graph.modules
            for name, bound in graph.modules[star].bindings
            if public_name(name) and (module in packages or bound == f"{star}.{name}"
                                      or name in graph.modules[star].exported))
        for name in names:
            bound = graph.bindings[module].get(name) or _starred(graph, module, name)
            found = graph.definition(bound) if bound else None
            if found is not None:
                spellings.setdefault(found, []).append(f"{module}.{name}")
    chosen = {q: min(s, key=_shortest) for q, s in spellings.items()}
    methods: dict[str, list[str]] = {}
    for function in graph.functions:
        methods.setdefault(function.rpartition(".")[0], []).append(function)
    for cls in [q for q in chosen if q in graph.classes]:
        for function in methods.get(cls, ()):
            method = function.rpartition(".")[2]
            if public_name(method) or (method.startswith("__") and method not in PRIVATE_DUNDERS):
                spelled = f"{chosen[cls]}.{method}"
                if function not in chosen or _shortest(spelled) < _shortest(chosen[function]):
                    chosen[function] = spelled
    return chosen


def callees_of(callers: dict[str, list[tuple[str, int, str | None]]]) -> dict[str, list[str]]:
    """Whom each node calls (a callee once for each call of it)."""
    callees: dict[str, list[str]] = {}
    for callee, edges in callers.items():
        for caller, _, _ in edges:
            callees.setdefault(caller, []).append(callee)
    return callees


def reached_by_public(public: Iterable[str], callees: dict[str, list[str]]) -> set[str]:
    """The nodes a public function or class calls, directly or through others (the public ones
    too): a walk back from a raise never finds a public caller through any other node."""
    found = set(public)
    stack = list(found)
    while stack:
        for callee in callees.get(stack.pop(), ()):
            if callee not in found:
                found.add(callee)
                stack.append(callee)
    return found


def _starred(graph: Graph, module: str, name: str) -> str | None:
    """What `name` is in the modules `from M import *` reads, in order."""
    for star in graph.modules[module].star:
        if star in graph.modules and name in graph.bindings[star]:
            return graph.bindings[star][name]
    return None


def _shortest(spelling: str) -> tuple[int, int, str]:
    return (spelling.count("."), len(spelling), spelling)
