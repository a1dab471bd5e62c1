"""Functions a library keeps for a later call, and the calls that run them: registries and
methods attached at run time (issue 49).

What each file keeps is read per file (`crawler.parse.registrations.Registration`, and each
function's `keeps`: the parameters it stores in a table or an attribute); `Kept` puts them
together once every file is read. Four shapes:

- **Kept for an object**: a function handed, beside a module-level object, to a call or a
  table (`prim.def_impl(f)`, `@prim.def_abstract_eval`, `ad.primitive_jvps[prim] = f`,
  `mlir.register_lowering(prim, f)`, `prim = standard_primitive(shape_rule, ...)`) runs when a
  method of that object is called (`prim.bind(...)`) or the object itself is (`fn = jit(f)`;
  `fn(...)`): jax's primitives. Only that object's calls reach it, not every read of the table:
  a jax rule table holds hundreds of rules, and `primitive_jvps.get(p)` in the JVP trace says
  nothing of which.
- **Kept in a table**: a function stored under a constant or computed key (`T[key] = f`,
  `T = {key: f}`, or handed to a function or method that stores its parameter so:
  argparse's `self.register('action', 'store', _StoreAction)` into `self._registries`, and
  jax's `register_lowering` for a key that is no module-level object; `@register(key)` of a
  decorator factory) runs where an item of that table is called (`T[key](...)`,
  `T.get(key)(...)`, `v = T.get(key); v(...)`, or what a function returning such an item gives:
  argparse's `self._pop_action_class(kwargs)(**kwargs)` through `_registry_get`). A function
  handed to a constructor or method that stores it in an attribute (`self.func = func`) is so
  kept in that attribute: `self.func(...)` may run it.
- **Attached to a class**: `C.name = f`, `setattr(C, "name", f)` (at module level, or in a
  function on a module-level class), and a class attribute assigned what a call makes
  (jax's `ShapedArray._bool = concretization_function_error(bool)`: the maker's closure) answer
  a call of that method on an instance, as a method defined in the class does (jinja2's
  `Environment.template_class = Template` at the end of its module, the standard library's
  `NamedTuple.__mro_entries__ = ...`).
- **A method kept in an attribute of its instance**: `self.state = self.parse_node` in any of
  the class's methods makes `self.state()` run that method, whichever was kept last: pyyaml's
  parser and emitter keep their next step so, tqdm's notebook bar its `display`, seaborn's
  `gaussian_kde` its bandwidth rule. Each method so kept is reached from where the attribute is
  called, across a stop ("self.state(...) calls a method Parser keeps in it").

A call reaching a kept function crosses what a static reader cannot follow by itself: the
chain says so in `stops`, as a dynamic call's does, and ranks below a static chain.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

from crawler.parse.call_edges import CALL, RETURNED, CallFacts, ClassFacts, Function
from crawler.parse.registrations import ATTACHED, HELD_METHOD, TABLE, Registration

MAX_READS = 4  # functions followed back from an item called to the table it is read from


class _Graph(Protocol):
    functions: dict[str, Function]
    classes: dict[str, ClassFacts]
    bindings: dict[str, dict[str, str]]
    attributes: dict[str, dict[str, str]]
    subclasses: dict[str, set[str]]

    def definition(self, name: str) -> str | None: ...

    def mro(self, qualname: str) -> list[str]: ...

    def lookup(self, cls: str, name: str) -> str | None: ...

    def classes_of(self, ref: str, depth: int = 0) -> list[str]: ...

    def methods(self, ref: str, name: str) -> list[str]: ...


class Kept:
    """What the library keeps: by object, by table, and the methods attached to its classes
    (written into the graph's `attributes` at once, before any call is resolved)."""

    def __init__(self, graph: _Graph, files: Iterable[CallFacts]) -> None:
        # the graph holds this, so this holds the graph weakly: a cycle would keep the graph alive
        # after the entry stage lets it go, the collector being held off for the extract
        self.graph = weakref.proxy(graph)
        files = list(files)
        self.objects = {f"{facts.module}.{name}" for facts in files for name in facts.objects}
        self.by_object: dict[str, list[str]] = defaultdict(list)
        self.tables: dict[str, list[str]] = defaultdict(list)
        self.stops: set[str] = set()  # the text of each call it offers a kept function to
        self.attached: dict[str, dict[str, str]] = defaultdict(dict)  # class -> name -> function
        self.held: set[str] = set()  # the attributes that keep a method of their instance
        registered = [r for facts in files for r in facts.registrations]
        for registration in registered:
            if registration.kind == ATTACHED:
                self._attach(registration)
            elif registration.kind == HELD_METHOD:
                self._hold(registration)
        keepers: dict[str, list[str]] = defaultdict(list)  # a keeping function's last name -> it
        for qualname, function in graph.functions.items():
            if function.keeps:
                keepers[qualname.rpartition(".")[2]].append(qualname)
        for registration in registered:
            value = graph.definition(registration.value)
            if registration.kind in (ATTACHED, HELD_METHOD) or value is None:
                continue
            key = next((k for k in map(self.object_of, registration.keys) if k), None)
            if key is not None:
                self.by_object[key].append(value)
            elif registration.kind == TABLE:
                self.tables[self._table(registration.target)].append(value)
            else:
                for table in self._kept_by(registration, keepers):
                    self.tables[table].append(value)
        for found in (self.by_object, self.tables):
            for name, values in found.items():
                found[name] = sorted(set(values))

    def _attach(self, registration: Registration) -> None:
        cls = self.graph.definition(registration.target)
        value = self.graph.definition(registration.value)
        if cls not in self.graph.classes or value is None:
            return
        if registration.made and value in self.graph.functions:  # the closure its maker returns
            self.graph.attributes[cls][registration.name] = "R " + value
        elif not registration.made:
            self.graph.attributes[cls][registration.name] = "V " + value
            if value in self.graph.functions:  # a method of the class: public under its name too
                self.attached[cls][registration.name] = value

    def _hold(self, registration: Registration) -> None:
        """A method kept in an attribute of its instance: the class's method of that name,
        through its bases (`Parser.parse_node`), kept in the table `C.attribute`."""
        cls, _, method = registration.value.rpartition(".")
        found = self.graph.lookup(cls, method) if cls in self.graph.classes else None
        if found in self.graph.functions:
            self.tables[registration.target].append(found)  # type: ignore[arg-type]
            self.held.add(registration.target)

    def _kept_by(self, registration: Registration, keepers: dict[str, list[str]]) -> list[str]:
        """The tables a registering call stores the function in: each callee's parameter at the
        argument's position (or keyword) that the callee keeps."""
        graph, kind, name = self.graph, registration.kind, registration.name
        target = graph.typed(registration.target)
        last = name if kind != CALL else target.rpartition(".")[2]
        found = graph.definition(target) if kind == CALL else None
        if last not in keepers and found not in graph.classes and not registration.made:
            return []
        if kind == CALL:
            callees = [(graph.lookup(found, "__init__") if found in graph.classes else found) or ""]
        elif target:
            callees = list(graph.methods(target, name))
        else:
            callees = list(keepers[name])
        if registration.made:  # `@register(key)`: handed to the decorator it returns
            callees = [c.target for f in callees if f in graph.functions for c in graph.functions[f].calls
                       if c.kind == RETURNED and c.name == "returned"]
        tables = []
        for callee in callees:
            function = graph.functions.get(callee)
            for table, position, parameter in function.keeps if function is not None else ():
                if position == registration.position if registration.position >= 0 \
                        else parameter == registration.keyword:
                    tables.append(self._table(table))
        return tables

    def _table(self, name: str) -> str:
        """A table's name where it is defined, through imports and re-exports (`ad.primitive_jvps`
        as `jax._src.interpreters.ad.primitive_jvps`)."""
        return self.object_of(name) or name

    def object_of(self, name: str) -> str | None:
        """The module-level object a qualified name is, through re-exports; None if it is none
        (a function, a class, a module, or not the library's)."""
        for _ in range(8):
            if name in self.objects:
                return name
            module, _, head = name.rpartition(".")
            bound = self.graph.bindings.get(module, {}).get(head)
            if not bound or bound == name:
                return None
            name = bound
        return None

    def in_table(self, name: str) -> list[str]:
        """The functions and classes kept in a table, by any of its names."""
        return self.tables.get(self._table(name), [])

    # ------------------------------------------------------------ the calls that run them

    def of_object(self, name: str, method: str) -> list[tuple[str, str | None]]:
        """`O.method(...)` (`O(...)` where `method` is ""): what is kept for O."""
        if method.startswith("__") or name not in self.by_object:
            return []
        short = name.rpartition(".")[2]
        call = f"{short}.{method}(...)" if method else f"{short}(...)"
        return self._offer(self.by_object[name], f"{call} runs a function registered for {short}")

    def _offer(self, found: Iterable[str], stop: str) -> list[tuple[str, str | None]]:
        self.stops.add(stop)
        return [(f, stop) for f in found]

    def of_item(self, ref: str) -> list[tuple[str, str | None]]:
        """An item of a table called (`T[key](...)`; a function's result that is one, through
        MAX_READS functions): what the table keeps."""
        table = self._read_from(ref, 0)
        if not table or table not in self.tables:
            return []
        short = table.rpartition(".")[2]
        return self._offer(self.tables[table], f"{short}[...](...) calls a function registered in {short}")

    def _read_from(self, ref: str, depth: int) -> str:
        kind, _, text = ref.partition(" ")
        if kind == "T":
            return self._table(text)
        if depth >= MAX_READS or kind not in ("M", "R"):
            return ""
        if kind == "R":
            found = self.graph.definition(text)
        else:
            owner, _, name = text.partition(" ")
            found = self.graph.lookup(owner, name) if owner in self.graph.classes else None
        function = self.graph.functions.get(found or "")
        return self._read_from(function.gives, depth + 1) if function is not None else ""

    def of_attribute(self, classes: list[str], name: str) -> list[tuple[str, str | None]]:
        """`self.func(...)` on one of `classes` where `func` keeps what its constructor or a
        method was handed (`self.func = func`): those functions."""
        found: list[str] = []
        held = False  # a method of the instance kept there (`self.state = self.parse_node`)
        for cls in classes:
            for klass in [*self.graph.mro(cls), *sorted(self.graph.subclasses.get(cls, ()))]:
                found.extend(self.tables.get(f"{klass}.{name}", ()))
                held = held or f"{klass}.{name}" in self.held
        if not found:
            return []
        short = classes[0].rpartition('.')[2]
        return self._offer(dict.fromkeys(found), f"self.{name}(...) calls a method {short} keeps in it"
                           if held else f"self.{name}(...) calls a function handed to {short}")
