"""The public calls that reach each raise: a repository-wide call graph over every file's edges.

Each file's `CallFacts` (`crawler.parse.call_edges`) say what its functions call as a static
reader sees it; `Graph` resolves those calls once every file is read: names through imports,
aliases and re-exports, methods through the class hierarchy (inherited, overridden in a
subclass, `super()`, a mixin's `self.m()` through the bases a subclass mixes it with), a class
called to its `__init__`, `__post_init__` and `__new__`, a class held in an attribute or down a
path of attributes (`self.map._matcher`), properties and dunders where the receiver's type is
known, functions handed to another call (`functools.partial`, `map`), a thread's `start` to its
`run` (a stop: in a new thread). A method on a receiver no reader can type is followed only
where one class family defines that name, and never on what another package's function returned
(`logging.getLogger()`'s `debug`). What only a run can tell (`getattr` with a
computed name, a registry's item) is never an edge: a chain may cross one such call, and says so
in `stops`. A nested def its maker returns or stores is such a call ("called later"); a
decorator's returned closure is called by the decorated function's callers.

`self.m()` in class C reaches C's m and its overrides in C's subclasses, but a chain keeps the
classes `self` can be along it (`dispatch`): an entry point on class X is credited only with the
overrides X's subclasses (X included) use, never a sibling's.

`entry_points(node, exception)` walks the callers back from a raise's function, shortest first
(breadth first, at most MAX_DEPTH calls), and keeps the public ones (`public_names`): the
MAX_ENTRIES best by (a dynamic call crossed, how public they are, chain length, name), where how
public is `publicness` (the top-level package's names, then another package's, then a
module's): a top-level export many calls farther than ten of a module's names comes first, so the
walk goes on past the nearest until no name met later can enter the ten. It counts the others
up to MAX_LEFT_OUT ("99 or more": a raise hundreds of public calls reach gains or loses one most
weeks). It never enters a caller no public function or class calls (`useful`), and stops once
the first ones and the count are known (`_reach`): the same result at a fraction of the cost.
A chain on which the library catches the exception itself (a
`try` around a call or the raise, whose handler takes that class or a base) names the function
that catches it (`caught_by`): that is not what a user meets.

The calls a static reader cannot follow, and the candidates the entry-point pass offers for
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

The names users import: each function and class's shortest public spelling.

A module is public when no part of its dotted name starts with `_` and it is not a folder of
documentation, examples, benchmarks or scripts (`docs_src` too: such a word and a suffix). A
public module's public names are those of its `__all__` when it has a literal one, with the
functions and classes it defines itself without a leading `_` (an `__all__` says what
`import *` takes: sqlparse's lists its submodules, and users call the `format` its `__init__`
defines), else its top-level names without a leading `_`: in a
package's `__init__` imported ones included (that is how `jax.checkpoint` names
`jax._src.ad_checkpoint.checkpoint`), elsewhere those it defines and those it imports as
themselves (`from jax._src.random import normal as normal` in `jax/random.py`: PEP 484's
explicit re-export, as type checkers read a module's exports). A public
class's methods, its own and those it inherits, are public under the class's name unless they
start with `_` (dunders other than the constructors are public: `x[i]` calls `__getitem__`):
`pint.UnitRegistry.parse_units` is how users call the method a private facet's base class
defines. A class is its own constructor's entry.
Among several spellings the shortest wins (fewest dots, then the shortest text, then the first
in order), so a name is the same on every run.
"""

from __future__ import annotations

import builtins
import heapq
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping

from crawler.callgraph.registries import Kept
from crawler.parse.call_edges import (
    CALL,
    FACTS,
    GUARD,
    HELD,
    METHOD,
    PASSED,
    PROPERTY,
    RETURNED,
    SETS,
    SETTER,
    SIGNATURE,
    STOP,
    SUPER,
    CallFacts,
    ClassFacts,
    Function,
)
from crawler.parse.call_guards import accepts, binding, parsed, reduce, settled
from crawler.records import EntryPoint, EntryPoints

MAX_ENTRIES, MAX_LEFT_OUT = 10, 99  # more left out than that is written as 99: "99 or more"


MAX_DEPTH = 12


# the dynamic calls a chain may cross: one of each kind, a registry's and another (a closure
# called later, a computed name, a held callable): jax's `checkpoint(f)` returns a closure that
# binds a primitive, whose registered rule raises
_DYNAMIC, _REGISTRY = 1, 2



MAX_RESOLVING = 100  # bindings followed to resolve one name


CONSTRUCTORS = ("__new__", "__init__", "__post_init__")


_NOT_CALLS = frozenset({SIGNATURE, GUARD, FACTS})


_THREAD = "threading.Thread"  # whose `start` runs the `run` a subclass defines (`_started`)


_BUILTIN_TYPES = {name: kind for name, kind in vars(builtins).items() if isinstance(kind, type)}


_BUILTIN_NAMES = frozenset(name for kind in (list, dict, str, set, bytes, tuple, object, int, float)
                           for name in dir(kind))


Edge = tuple[str, int, str | None]  # caller, the call's line, the dynamic call crossed or None


Guard = tuple[str, str]  # a guard over a function's parameters, the function whose signature binds it


State = tuple[str, int, frozenset[str] | None, Guard | None]  # function, dynamic calls crossed, selves, guard


Steps = dict[State, tuple[State, int, str | None] | None]  # a state: the one it calls, at what line, stop


Reached = tuple[list[tuple[str, State]], int, Steps]  # the first public callers, how many more, steps


_CLASS, _DISPATCHED, _CLOSURE, _ANY = range(4)  # how an edge keeps the classes `self` can be


class Graph:
    """Every file's definitions and calls, resolved into callers of each function and class."""

    def __init__(self, files: Iterable[CallFacts]) -> None:
        self.modules: dict[str, CallFacts] = {}
        self._definitions: dict[str, str | None] = {}  # each name resolved once (`definition`)
        self._resolving = 0  # how deep `definition` is in resolving one name
        self.functions: dict[str, Function] = {}
        self.classes: dict[str, ClassFacts] = {}
        self.module_of: dict[str, str] = {}
        for facts in files:
            self.modules[facts.module] = facts
            self.functions.update((f.qualname, f) for f in facts.functions)
            self.module_of.update((f.qualname, facts.module) for f in facts.functions)
            self.classes.update((c.qualname, c) for c in facts.classes)
        self.callables = callables_by_module(self.modules.values(), self.functions)
        self._holding: set[str] = set()
        self.bindings = {m: dict(f.bindings) for m, f in self.modules.items()}
        self._mros: dict[str, list[str]] = {}
        self.attributes = {q: dict(c.attributes) for q, c in self.classes.items()}
        self.subclasses: dict[str, set[str]] = defaultdict(set)
        for qualname in self.classes:
            for base in self.mro(qualname)[1:]:
                self.subclasses[base].add(qualname)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.methods_of: dict[str, list[str]] = defaultdict(list)
        for qualname in self.functions:
            owner, _, name = qualname.rpartition(".")
            if owner in self.classes:
                if library_module(owner):  # not a class of an example, a benchmark, a script
                    self.by_name[name].append(qualname)
                self.methods_of[owner].append(qualname)
        self.kept = Kept(self, self.modules.values())  # registries; methods attached to classes
        self.roots = {module.partition(".")[0] for module in self.modules}  # the library's top packages
        # the names of the properties that have a setter: an assignment to any other attribute
        # (most of them, `self.x = x`) runs none, and is not looked up through the hierarchy
        self.set_names = {q.removesuffix(SETTER).rpartition(".")[2] for q in self.functions
                          if q.endswith(SETTER)}
        self.foreign = {f"{facts.module}.{name}" for facts in self.modules.values() for name in facts.foreign}
        self.held_by_name: dict[str, list[str]] = defaultdict(list)
        for attributes in self.attributes.values():
            for name, held in attributes.items():
                if held[:2] in ("V ", "R "):
                    self.held_by_name[name].append(held)
        self.callers: dict[str, list[Edge]] = defaultdict(list)
        # each edge of `callers`, the index of its call in the caller's calls (-1: none); what an
        # update compares to tell that a function's callers are those of the version before
        self.via: dict[str, list[int]] = defaultdict(list)
        # (callee, caller, line) -> the classes `self` is when that `self.m()` reaches the callee
        self.dispatch: dict[tuple[str, str, int], frozenset[str]] = {}
        for function in self.functions.values():
            for decorator in function.decorators:  # its wrapper runs where the function is called
                for wrapper in self._wrappers(decorator):
                    self.callers[wrapper].append((function.qualname, function.line, None))
                    self.via[wrapper].append(-1)
            for index, call in enumerate(function.calls):
                if call.kind in _NOT_CALLS:
                    continue
                for callee, stop in self.resolve(call.kind, call.target, call.name, function, call.args):
                    self.callers[callee].append((function.qualname, call.line, stop))
                    self.via[callee].append(index)
                    if call.kind == SUPER or call.kind in (METHOD, PROPERTY, SETS) \
                            and call.target.startswith("S "):
                        self._dispatch(call.kind, call.target.split()[-1],
                                       call.name + SETTER * (call.kind == SETS), callee,
                                       function.qualname, call.line)
        for qualname in self.classes:
            for name in CONSTRUCTORS:
                found = self.lookup(qualname, name)
                if found in self.functions:
                    self.callers[found].append((qualname, 0, None))
                    self.via[found].append(-1)
        # each public function and class's spelling; a method spelled under a class that
        # inherits it keeps its own class's too, for a chain where `self` is not that class
        self.public, self.own_public = public_names(self)
        self.packages = {module.rpartition(".")[0] for module in self.modules}
        self.callees = callees_of(self.callers)
        self.useful = reached_by_public(self.public, self.callees)  # all a walk back can use
        self._cache: dict[tuple[str, str], EntryPoints] = {}
        self._edge_modes: dict[str, list[tuple[str, int, str | None, int, frozenset[str] | None, int]]] = {}
        self._reached: dict[tuple[str, str], Reached] = {}
        self._ranks: dict[str, int] = {}  # each public spelling's publicness
        self._orders: dict[str, tuple[int, int]] = {}
        self._under: dict[str, str] = {}  # each public method's spelling -> the class it names
        self._taken: dict[tuple[str, str], bool] = {}  # `is_a`'s answers
        self._named: dict[tuple[str, frozenset[str] | None], tuple[str, tuple[int, int]] | None] = {}
        self._nearest: tuple[dict[str, tuple[tuple[int, int] | None, ...]], ...] = ()  # `_nearest_public`

    def _wrappers(self, decorator: str) -> list[str]:
        """What calling a function so decorated calls: the closures the decorator returns (for
        `@factory(...)`, those its returned decorator returns); none for another decorator."""
        called = decorator.endswith("()")
        found = [self.definition(decorator.removesuffix("()"))]
        for _ in range(1 + called):
            found = [c.target for f in found if f in self.functions for c in self.functions[f].calls
                     if c.kind == RETURNED and c.name == "returned" and c.target in self.functions]
        return list(dict.fromkeys(found))  # type: ignore[arg-type]

    def _dispatch(self, kind: str, cls: str, name: str, callee: str, caller: str, line: int) -> None:
        """The classes `self` is when a call on it in class `cls` reaches the method `callee`
        (none recorded for a class or function an attribute holds: another object's call)."""
        family = [cls, *sorted(self.subclasses.get(cls, ()))]
        if kind != SUPER:
            family = [k for k in family if self.lookup(k, name) == callee]
        if not family:
            return
        key = (callee, caller, line)
        self.dispatch[key] = self.dispatch.get(key, frozenset()) | frozenset(family)

    # ------------------------------------------------------------ names and classes

    def definition(self, name: str) -> str | None:
        """The function or class a qualified name is, through re-exports; None if not ours.

        Each name is resolved once: star imports that read each other (`os`, `posixpath`)
        made the walk exponential. A name met again while it is being resolved is a cycle: None.
        """
        if name in self.functions or name in self.classes:
            return name
        if name not in self._definitions:
            self._definitions[name] = None
            if name and self._resolving < MAX_RESOLVING:
                # a chain of bindings that grows the name at each step (pkg.a -> pkg.a.b, when
                # no module pkg.a exists) never repeats one: the depth stops what else may grow
                self._resolving += 1
                try:
                    self._definitions[name] = self._definition(name)
                finally:
                    self._resolving -= 1
        return self._definitions[name]

    def _definition(self, name: str) -> str | None:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module not in self.modules:
                continue
            head, rest = parts[cut], parts[cut + 1:]
            bound = self.bindings[module].get(head)
            if bound is not None and bound != f"{module}.{head}":
                if bound.startswith(f"{module}.{head}."):  # bound under itself: no module there
                    return None
                return self.definition(".".join([bound, *rest]))
            for star in self.modules[module].star:
                if star not in self.modules:  # compiled (scipy's `_qhull`): nothing to read
                    continue
                found = self.definition(".".join([star, head, *rest]))
                if found is not None:
                    return found
            break
        owner, _, last = name.rpartition(".")
        cls = self.definition(owner) if owner else None
        if cls in self.classes:
            found = self.lookup(cls, last)
            if found is not None and found.startswith("V "):  # a class the class holds: pint's
                held = self.definition(found[2:])  # `Quantity = UnitRegistry.Quantity`
                return held if held in self.classes or held in self.functions else None
            return found if found in self.functions else None
        return None

    def mro(self, qualname: str) -> list[str]:
        """The class and its bases, nearest first (`depth_first`, not C3)."""
        return depth_first(qualname, self._mros, lambda name: (
            self.definition(base) or base for base in getattr(self.classes.get(name), "bases", ())))

    def lookup(self, cls: str, name: str) -> str | None:
        """The method `name` of `cls` through its bases, or the TypeRef of such an attribute."""
        for klass in self.mro(cls):
            method = f"{klass}.{name}"
            if method in self.functions:
                return method
            held = self.attributes.get(klass, {}).get(name)
            if held:
                return held
        return None

    def classes_of(self, ref: str, depth: int = 0) -> list[str]:
        """The classes a TypeRef's value is an instance of (or is, for "V")."""
        if not ref or depth > 6:
            return []
        kind, _, text = ref.partition(" ")
        if kind in ("N", "V", "R"):
            found = self.definition(text)
            if found in self.classes:
                return [found]
            if kind == "R" and found in self.functions:
                return self.classes_of(self.functions[found].returns, depth + 1)
            return []
        if kind == "S":
            return [text] if text in self.classes else []
        if kind == "D":  # `self.map._matcher`: each attribute of the path on what the one before holds
            return self._along(text, depth)
        if kind == "I":  # an item of a table, called: the classes it keeps, what its functions return
            made: list[str] = []
            for kept in self.kept.in_table(text):
                made += [kept] if kept in self.classes else \
                    self.classes_of(self.functions[kept].returns, depth + 1) if kept in self.functions else []
            return sorted(set(made))
        owner, _, name = text.partition(" ")
        held = self.lookup(owner, name) if owner in self.classes else None
        if kind == "A" and held and " " in held:
            return self.classes_of(held, depth + 1)
        if kind == "M" and held and held.startswith("V "):  # a class held in an attribute, called
            return self.classes_of("N " + held[2:], depth + 1)
        if kind == "M" and held in self.functions:
            return self.classes_of(self.functions[held].returns, depth + 1)
        return []

    def typed(self, ref: str) -> str:
        """`ref`, or "" for an attribute path that leads to no class of the library: a receiver
        no reader can type, followed by its method's name as an untyped one is."""
        return "" if ref.startswith("D ") and not self.classes_of(ref) else ref

    def _along(self, text: str, depth: int) -> list[str]:
        """The classes at the end of an attribute path from a class ("pkg.C map._matcher"):
        werkzeug's `MapAdapter.match` calls `self.map._matcher.match(...)`, where `map` holds
        a `Map` and a `Map`'s `_matcher` a `StateMachineMatcher`."""
        owner, _, path = text.partition(" ")
        classes = [owner] if owner in self.classes else []
        for name in path.split("."):
            held = (self.lookup(cls, name) for cls in classes)
            classes = list(dict.fromkeys(k for ref in held if ref and " " in ref
                                         for k in self.classes_of(ref, depth + 1)))
        return classes

    # ------------------------------------------------------------ calls to callees

    def resolve(self, kind: str, target: str, name: str, caller: Function, args: str = ""
                ) -> list[tuple[str, str | None]]:
        """The functions and classes one call reaches, each with the dynamic call it crosses."""
        if kind == CALL:
            found = self.definition(target)
            if found is not None:
                return [(found, None)]
            if self.kept.object_of(target):  # `fn(...)` where `fn = jit(f)`
                return self.kept.of_object(self.kept.object_of(target), "")  # type: ignore[arg-type]
            owner, _, method = target.rpartition(".")  # `lax.dot_general_p.bind(...)`
            held = self.kept.object_of(owner) if owner else None
            return [] if held is None else \
                [(f, None) for f in self._by_name(method)] + self.kept.of_object(held, method)
        if kind == PASSED:
            one = next(iter(self._methods(target, name)), None) if name else self.definition(target)
            instance = name != "__call__" and one is not None and one.endswith(".__call__")
            return [(one, None)] if one in self.functions and not instance else []  # not a call
        if kind == SUPER:
            for klass in self.mro(target)[1:]:
                if f"{klass}.{name}" in self.functions:
                    return [(f"{klass}.{name}", None)]
            return []
        if kind == STOP:
            return dynamic_callees(self, target, name)
        if kind == HELD:
            return held_callees(self, caller.qualname, target, args)
        if kind == RETURNED:  # a nested def handed on: it runs when what holds it is called
            maker = caller.qualname.rpartition(".")[2]
            how = {"returned": f"what {maker}() returns", "stored": f"a function {maker}() stores"
                   }.get(name, f"a function {maker}() hands to a call")
            return [(target, f"{how}, called later")] if target in self.functions else []
        target = self.typed(target)
        if kind == SETS:  # `x.name = value`: the setter of a property `name`, where one is
            return [] if name not in self.set_names else \
                [(f, None) for f in self._methods(target, name + SETTER) if f in self.functions]
        held_object = self.kept.object_of(target[2:]) if target[:2] in ("O ", "V ") else None
        if kind in (METHOD, PROPERTY) and (held_object in self.foreign or self._made_elsewhere(target)):
            return []  # `_pattern.sub(...)` where `_pattern = re.compile(...)`: re's, not ours
        if held_object is not None or kind == METHOD and target[:2] in ("A ", "M ", "R ") \
                and not self.classes_of(target):
            # an object, or a value of a type no reader can tell: as a method on an untyped receiver
            methods = self._by_name(name)
        else:
            methods = self._methods(target, name) if target else self._by_name(name)
        if kind == PROPERTY:
            return [(f, None) for f in methods if f in self.functions and self.functions[f].is_property]
        kept = self.kept.of_object(held_object, name) if held_object is not None else \
            self.kept.of_item(target) if name == "__call__" else \
            self.kept.of_attribute(self.classes_of(target), name) if target[:2] in ("S ", "N ") else []
        held = held_attribute(self, target, name) if not methods and args else None
        if held is not None:  # `self.validator(...)`, `v = self.validator; v(...)`
            return held_callees(self, caller.qualname, held, args) + kept
        if not methods and kind == METHOD and target:
            return self._started(target, name) + kept
        return [(f, None) for f in methods] + kept

    def _made_elsewhere(self, ref: str) -> bool:
        """Whether a value is what another package's function returns (a local `logger =
        logging.getLogger(__name__)` in redis-py's `connection.py`, whose `logger.debug(...)`
        is logging's and not the `debug` of redis-py's `JSONCommands`; a module-level one is
        `foreign` already): its methods are that package's, never the library's by name."""
        if ref[:2] != "R ":
            return False
        return self.definition(ref[2:]) is None and ref[2:].partition(".")[0] not in self.roots

    def _started(self, ref: str, name: str) -> list[tuple[str, str | None]]:
        """`t.start()` on a thread of the library's own class: `threading.Thread.start` runs the
        class's `run` in a new thread, so the chain goes on there, across a stop that says so
        (paramiko's `Transport.start_client` starts the transport, whose `run` reads the
        server's banner; redis-py's `PubSub.run_in_thread` starts a `PubSubWorkerThread`,
        whose `run` reads messages). A `start` the library defines is an ordinary method,
        found before this; a class that is no thread's reaches nothing so."""
        if name != "start" or not any(_THREAD in self.mro(cls) for cls in self.classes_of(ref)):
            return []
        runs = self._methods(ref, "run")
        return [(run, f"{_THREAD}.start runs it in a new thread") for run in runs if run in self.functions]

    def methods(self, ref: str, name: str) -> list[str]:
        """A method of a typed receiver, and its overrides in the receiver's subclasses."""
        return self._methods(ref, name)

    def _methods(self, ref: str, name: str) -> list[str]:
        """A method of a typed receiver, and its overrides in the receiver's subclasses."""
        found: list[str] = []
        for cls in self.classes_of(ref):
            held = self.lookup(cls, name)
            if held and " " in held:  # a class or function held in an attribute, called
                found.extend(self._held(held))
                continue
            if held:
                found.append(held)
            for sub in sorted(self.subclasses.get(cls, ())):  # an override, or a callable it holds
                if f"{sub}.{name}" in self.functions:
                    found.append(f"{sub}.{name}")
                elif " " in self.attributes.get(sub, {}).get(name, ""):  # `_bool = error_for(bool)`
                    found.extend(self._held(self.attributes[sub][name]))
                elif not held:
                    found.extend(self._from_other_base(sub, name))
        return list(dict.fromkeys(found))

    def _from_other_base(self, sub: str, name: str) -> list[str]:
        """A mixin's `self.m()` where the mixin's own bases lack `m`: the `m` a subclass gets
        from its other bases (pyyaml's `BaseConstructor.get_single_data` calls
        `self.get_single_node()`, which `SafeLoader` takes from `Composer`; socketserver's
        `ThreadingMixIn.process_request_thread` calls the `finish_request` of the server it
        is mixed into). Only where the mixin's family defines no `m` at all: an override is
        found as above."""
        found = self.lookup(sub, name)
        if found is None or " " in found:
            return self._held(found) if found else []
        return [found]

    def _held(self, held: str) -> list[str]:
        """What calling an attribute calls: a class held ("V"), a function held ("V"), an
        instance of a known class (its `__call__`), or the function whose returned closure it
        holds ("R": a closure belongs to its maker)."""
        if held[:2] != "V " and held not in self._holding and self.classes_of(held):
            self._holding.add(held)  # an instance's `__call__` may itself be held: once
            try:
                return self._methods(held, "__call__")
            finally:
                self._holding.discard(held)
        target = self.definition(held[2:]) if held[:2] in ("V ", "R ") else None
        if target in self.functions or (target in self.classes and held.startswith("V ")):
            return [target]  # type: ignore[list-item]
        return []

    def _by_name(self, name: str) -> list[str]:
        """A method on an untyped receiver: only where a single class family defines the name
        (as a method, or as an attribute holding a function or class)."""
        if name.startswith("__") or name in _BUILTIN_NAMES:
            return []
        found = self.by_name.get(name, [])
        roots = {self._root(f.rpartition(".")[0], name) for f in found}
        if len(roots) == 1:
            return list(found)
        holders = list(dict.fromkeys(self.held_by_name.get(name, ())))  # classes holding the same: one
        if not found and len(holders) == 1:
            return self._held(holders[0])
        return []

    def _root(self, cls: str, name: str) -> str:
        return next(k for k in reversed(self.mro(cls)) if f"{k}.{name}" in self.functions)

    # ------------------------------------------------------------ entry points

    def entry_points(self, node: str, exception: str, line: int) -> EntryPoints:
        """The public callers of `node` whose calls reach the raise at `line`: the most public
        first, then the shortest."""
        key = (node, f"{exception}:{line}")
        if key not in self._cache:
            raised = self._fact(node, GUARD, line)  # the raise's guard, weighed on the last call
            if (node, raised) not in self._reached:  # one walk for every raise so guarded
                self._reached[node, raised] = self._reach(node, raised)
            found, left_out, parent = self._reached[node, raised]
            self._cache[key] = EntryPoints(tuple(self._item(name, state, parent, exception, line)
                                                 for name, state in found), left_out)
        return self._cache[key]

    def _reach(self, node: str, raised: str) -> Reached:
        """The first public callers (name, state), how many more, and their steps to `node`.

        The first are the MAX_ENTRIES best by (a dynamic call crossed, publicness, depth, name),
        over every public caller within MAX_DEPTH calls. Breadth first, so every state of one
        depth is met before any farther one: at the start of a step, a name not met yet (or met
        only across a dynamic call) can at best be a top-level name crossing none, one call
        farther. So the walk stops where ten top-level names crossing none are met no farther
        than the step and the count is full: nothing met later could enter the ten or move the
        count. Once no state crossing none is left to follow, a name met later crosses one, so
        the top-level names met across one count toward the ten too (a rule a registry runs:
        every chain from it crosses one). At each step it also leaves out the states that can
        lead to no name the answer lacks (`_hopeful`): a rule's walk whose ten are a package's
        names follows on to MAX_DEPTH only the few states within reach of a top-level one."""
        # a state: (function, the kinds of dynamic call crossed (_DYNAMIC | _REGISTRY), the classes
        # `self` can be (None: any), guard)
        start: State = (node, 0, None, (raised, node) if raised else None)
        parent: Steps = {start: None}
        depth = {start: 0}
        queue = deque([start])
        plain = set() if raised else {node}  # the functions reached in their plainest state
        # each public caller's best (crossed, publicness, depth, name) over the states it is met in
        first: dict[str, tuple[tuple[int, int, int, int, str], State]] = {}
        self._met(first, start, 0)
        best = {node} if first and self._rank(self.public[node]) == 0 else set()  # top-level, none crossed
        across: set[str] = set()  # top-level names met only across a dynamic call
        plainly = 1  # the states crossing none in the queue (and the one being followed)
        level = closer = 0  # closer: how many names as close as `level` or closer rank first
        tenth: tuple[int, int, int] | None = None  # the tenth's (crossed, publicness), the count full
        nearest, public, left = self._nearest_public(), self.public, MAX_DEPTH - 1  # left: of a caller
        while queue:
            state = queue.popleft()
            current, crossed, selves, held = state
            if depth[state] != level:  # all as close are met: are the first ten and the count known?
                level = depth[state]
                if level >= MAX_DEPTH:
                    break
                queue.appendleft(state)  # follow only the states that can still change the answer
                tenth, left = self._tenth(first), MAX_DEPTH - level - 1
                queue = self._leading_on(queue, level, tenth)
                if not queue:
                    break
                plainly = sum(not s[1] for s in queue)
                state = queue.popleft()
                current, crossed, selves, held = state
                closer = len(best) if plainly else len(best | across)
                if len(first) >= MAX_ENTRIES + MAX_LEFT_OUT and closer >= MAX_ENTRIES:
                    break
            plainly -= not crossed
            for caller, at, stop, mode, taken, kind in self._edges(current):
                # a caller reached in its plainest state has nothing to add: most are, met again
                if caller in plain or crossed & kind:
                    continue
                if caller not in public:  # `_leading_on` (inlined: met many times over)
                    bound = nearest[(crossed | kind) & _REGISTRY].get(caller)
                    order = bound[left] if bound is not None else None
                    if order is None or tenth is not None and (min(crossed | kind, 1), *order) >= tenth:
                        continue  # nothing it leads to can change the answer (a public one's name may)
                # the classes `self` can be in the caller (inlined: met many times over)
                kept = None if mode == _ANY else selves if mode == _CLOSURE else (
                    taken if selves is None else taken & selves) if mode == _DISPATCHED else (  # type: ignore[operator]
                    frozenset() if selves is not None and caller not in selves else None)
                if kept is not None and not kept:
                    continue  # `self` cannot be a class both calls take
                guard: Guard | None = None
                if held is not None and stop is None:
                    weighed = self._weigh(held, node, current, caller, at)
                    if weighed is False:
                        continue  # its constants keep the raise from running
                    guard = weighed if isinstance(weighed, tuple) else None
                elif current == node and stop is None and caller not in self.classes:
                    # the raise's function is called only where the caller's own tests hold
                    # (`if option == "align": self._validate_align(val)`): weighed one call farther
                    facts = self._fact(caller, FACTS, at)
                    guard = (facts, caller) if facts else None
                following = (caller, crossed | kind, kept, guard)
                # met already as plainly, or crossing none: nothing to add (a chain crossing
                # none can take every step this one can, and ranks higher)
                if following in parent or (kept is not None or guard is not None) and (
                        (caller, following[1], None, None) in parent
                        or (caller, following[1], kept, None) in parent) or following[1] and (
                            (caller, 0, kept, guard) in parent or (caller, 0, None, None) in parent):
                    continue
                parent[following] = (state, at, stop)
                depth[following] = depth[state] + 1
                queue.append(following)
                plainly += not following[1]
                if following == (caller, 0, None, None):
                    plain.add(caller)
                name = self._met(first, following, depth[following]) if caller in public else None
                if name is not None:
                    if self._rank(name) == 0:
                        (across if following[1] else best).add(caller)
                    if len(first) >= MAX_ENTRIES + MAX_LEFT_OUT and closer >= MAX_ENTRIES:
                        queue.clear()  # the count is full, and the first ten are all closer
                        break
        found = heapq.nsmallest(MAX_ENTRIES, first.values(), key=lambda item: item[0])
        steps: Steps = {}
        for _, state in found:  # only the chains kept, not the whole walk
            while state not in steps:
                steps[state] = parent[state]
                if parent[state] is None:
                    break
                state = parent[state][0]  # type: ignore[index]
        left_out = min(MAX_LEFT_OUT, max(0, len(first) - MAX_ENTRIES))  # a hub's count moves weekly
        return [(key[-1], state) for key, state in found], left_out, steps

    def _met(self, first: dict[str, tuple[tuple[int, int, int, int, str], State]], state: State,
             depth: int) -> str | None:
        """Keep a state's key in `first` if it is a public caller's best yet; its spelling."""
        spelled = (state[0], state[2])
        if spelled not in self._named:  # each (function, selves) spelled and ordered once
            name = self._spelling(state[0], state[2]) if state[0] in self.public else None
            self._named[spelled] = (name, self._order(name)) if name is not None else None
        named = self._named[spelled]
        if named is None:
            return None
        # crossing one dynamic call or two: alike; of two packages' names, the shallower
        # package first (`jax.numpy.dot` before `jax.experimental.sparse.bcoo_dot_general`)
        key = (min(state[1], 1), *named[1], depth, named[0])  # any crossed: 1
        if state[0] not in first or key < first[state[0]][0]:
            first[state[0]] = (key, state)
        return named[0]

    def _tenth(self, first: dict[str, tuple[tuple[int, int, int, int, str], State]]
               ) -> tuple[int, int, int] | None:
        """The (crossed, publicness) of the tenth public caller met, once the count is full."""
        if len(first) < MAX_ENTRIES + MAX_LEFT_OUT:
            return None
        return heapq.nsmallest(MAX_ENTRIES, [key for key, _ in first.values()])[-1][:3]  # type: ignore[return-value]

    def _leading_on(self, frontier: deque[State], level: int, tenth: tuple[int, int, int] | None
                    ) -> deque[State]:
        """The states of `frontier` (each `level` calls from the raise) that can lead to a public
        caller that changes the walk's answer: any, while the count is not full (`tenth` None);
        else one that could enter the ten, which only a better (crossed, publicness) than the
        tenth's can, being deeper. The bound is `nearest_public`'s over the calls a state may
        still cross, which ignores what else prunes a walk: it can only be better. What a state
        left out leads to, it leads to no better, and a state that stops another being followed
        (`_reach`: met already as plainly) is at least as near a name as that one: so the ten,
        their chains and the full count are those of the whole walk
        (tests/callgraph/test_entry_points_stop.py walks with and without it)."""
        nearest, left = self._nearest_public(), MAX_DEPTH - level
        kept: deque[State] = deque()
        for state in frontier:
            bound = nearest[state[1] & _REGISTRY].get(state[0])
            order = bound[left] if bound is not None else None
            if order is not None and (tenth is None or (min(state[1], 1), *order) < tenth):
                kept.append(state)
        return kept

    def _nearest_public(self) -> tuple[dict[str, tuple[tuple[int, int] | None, ...]], ...]:
        """`nearest_public` for a chain that crossed no registry (0) and one that did (2),
        made once a walk asks: one that crossed another dynamic call takes the same (looser:
        what it may still cross, this counts in too)."""
        if not self._nearest:
            self._nearest = (nearest_public(self, 0), {}, nearest_public(self, _REGISTRY))
        return self._nearest

    def _spelling(self, qualname: str, selves: frozenset[str] | None) -> str | None:
        """A public function's spelling on a chain where `self` can be `selves` (None: any). A
        method spelled under a class that inherits it (`pint.UnitRegistry.parse_units`) is so
        only where `self` can be that class; elsewhere it is its own class's spelling, if public
        (listed wherever it is met, as before), else no entry point there."""
        spelling = self.public[qualname]
        if selves is None:
            return spelling
        under = self._under.get(spelling)
        if under is None:
            owner = spelling.rpartition(".")[0]
            found = self.definition(owner) if owner and qualname in self.functions else None
            under = self._under[spelling] = found if found in self.classes else ""  # type: ignore[assignment]
        if not under or under == qualname.rpartition(".")[0] or under in selves:
            return spelling
        return self.own_public.get(qualname)

    def _rank(self, spelling: str) -> int:
        """The publicness of a spelling (`publicness`), kept: what a spelling says never changes,
        while `public` may be replaced."""
        rank = self._ranks.get(spelling)
        if rank is None:
            rank = self._ranks[spelling] = publicness(spelling, self.modules, self.packages)
        return rank

    def _order(self, spelling: str) -> tuple[int, int]:
        """The publicness of a spelling, and for a name of another package than the top-level
        one, how deep that package is (kept, as `_rank`)."""
        order = self._orders.get(spelling)
        if order is None:
            rank, parts = self._rank(spelling), spelling.split(".")
            order = self._orders[spelling] = (rank, 0) if rank != 1 else (rank, next(
                n for n in range(len(parts) - 1, 0, -1) if ".".join(parts[:n]) in self.modules))
        return order

    def _fact(self, node: str, kind: str, line: int = 0) -> str:
        """A function's signature, or the guard of its raise at `line` ("" if none)."""
        function = self.functions.get(node)
        for call in function.calls if function is not None else ():
            if call.kind == kind and (kind == SIGNATURE or call.line == line):
                return call.target
        return ""

    def _weigh(self, held: Guard, start: str, callee: str, caller: str, at: int) -> bool | None | Guard:
        """Whether `caller`'s call at `at` can run `callee` with its guard true: False when the
        call's constants (and the defaults it leaves) make it false; a guard over `caller`'s own
        parameters when the call passes them straight through (followed one level, from the
        raise's function); None when the call leaves it open."""
        text, owner = held
        if caller in self.classes and not at:  # `C()` runs C's constructor: weigh C's callers
            constructor = callee.rpartition(".")[2] in ("__init__", "__new__")
            return held if constructor and callee == owner else None
        sig, function = self._fact(owner, SIGNATURE), self.functions.get(caller)
        if not sig or function is None:
            return None
        found: list[bool | None | str] = []
        for call in function.calls:
            if call.line != at or not call.args or call.kind not in (CALL, METHOD, SUPER):
                continue
            if any(c == callee for c, _ in self.resolve(call.kind, call.target, call.name, function,
                                                         call.args)):
                on_object = call.kind != CALL or callee in self.classes
                found.append(reduce(parsed(text), binding(sig, call.args, on_object)))
        if not found or None in found or True in found:
            return None
        rest = [f for f in found if isinstance(f, str)]
        facts = self._fact(caller, FACTS, at)  # what the caller's own tests settled before the call
        if facts:
            rest = [r for r in rest if settled(parsed(r), parsed(facts)) is not False]
        if not rest:
            return False
        if owner != start:
            return None
        # over the caller's parameters: what the call passes on, where the caller's tests hold
        passed = " or ".join(f"({r})" for r in rest)
        return (f"({passed}) and ({facts})" if facts else passed, caller)

    def _edges(self, callee: str) -> list[tuple[str, int, str | None, int, frozenset[str] | None, int]]:
        """The callers of `callee`, each with how it keeps the classes `self` can be: a class
        called (its constructors' `self`), `self.m()` (`dispatch`), a closure (its maker's); and
        the kind of dynamic call it is (`_crossing`)."""
        found = self._edge_modes.get(callee)
        if found is None:
            found = self._edge_modes[callee] = []
            for caller, at, stop in self.callers.get(callee, ()):
                if caller not in self.useful:
                    continue
                taken = self.dispatch.get((callee, caller, at))
                mode = _CLASS if caller in self.classes else _DISPATCHED if taken is not None \
                    else _CLOSURE if callee.startswith(caller + ".<locals>.") else _ANY
                found.append((caller, at, stop, mode, taken, self._crossing(stop)))
        return found

    def _crossing(self, stop: str | None) -> int:
        """The kind of dynamic call an edge crosses: none (0), a registry's, or another."""
        return 0 if stop is None else _REGISTRY if stop in self.kept.stops else _DYNAMIC

    def _item(self, name: str, state: State, parent: Steps, exception: str, line: int) -> EntryPoint:
        chain, lines, stops = [state[0]], [], None
        step = parent[state]
        while step is not None:
            state, at, stop = step
            lines.append(at)
            stops = stop if stops is None else f"{stops}; {stop}" if stop else stops
            chain.append(state[0])
            step = parent[state]
        lines.append(line)  # the raise itself, in the last function
        caught = None
        for qualname, at in reversed(list(zip(chain, lines))):  # the innermost catch first
            function = self.functions.get(qualname)
            if function is not None and at and self._catches(function, at, exception):
                caught = qualname
                break
        return EntryPoint(name, tuple(chain), stops, caught)

    def _catches(self, function: Function, line: int, exception: str) -> bool:
        return any(start <= line <= end and any(self.is_a(exception, c) for c in names)
                   for start, end, names in function.catches)

    def is_a(self, exception: str, caught: str) -> bool:
        """Whether a handler of `caught` takes `exception` (qualified names, builtins bare);
        kept, as every chain of every raise of `exception` asks again."""
        taken = self._taken.get((exception, caught))
        if taken is None:
            taken = self._taken[exception, caught] = self._is_a(exception, caught)
        return taken

    def _is_a(self, exception: str, caught: str) -> bool:
        if caught in ("", "Exception", "BaseException", "builtins.Exception"):
            return True
        theirs = _BUILTIN_TYPES.get(caught.removeprefix("builtins."))
        for klass in [exception, *self.mro(self.definition(exception) or exception)]:
            if klass == caught or self.definition(klass) == self.definition(caught) is not None:
                return True
            mine = _BUILTIN_TYPES.get(klass.removeprefix("builtins."))
            if mine is not None and theirs is not None and issubclass(mine, theirs):
                return True
        return False


def depth_first(start: str, memo: dict[str, list[str]],
                bases: Callable[[str], Iterable[str]]) -> list[str]:
    """A class and its bases, nearest first, each once: each base's own order after the
    class, in the order of its bases (a depth-first order, not C3). `memo` keeps each class's
    order; a class met again while its bases are read (a cycle) gives what it has so far.
    Iterative: a chain of bases is as long as the repository makes it."""
    if start in memo:
        return memo[start]
    memo[start] = [start]
    stack = [(start, memo[start], {start}, iter(bases(start)))]
    while stack:
        name, order, listed, pending = stack[-1]
        base = next(pending, None)
        if base is None:
            stack.pop()
            memo[name] = done = list(order)
            if stack:  # the class that has it as a base takes its order after its own
                stack[-1][1].extend(k for k in done if k not in stack[-1][2])
                stack[-1][2].update(done)
        elif base in memo:
            order.extend(k for k in memo[base] if k not in listed)
            listed.update(memo[base])
        else:
            memo[base] = [base]
            stack.append((base, memo[base], {base}, iter(bases(base))))
    return memo[start]


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
    if not text or not prefix:  # `handlers[key](...)` of a table no reader can name: nothing offered
        return []
    found: list[str] = []
    for cls in graph.classes_of(ref):
        for klass in [*graph.mro(cls), *sorted(graph.subclasses.get(cls, ()))]:
            found.extend(f for f in graph.methods_of.get(klass, ())
                         if f.rpartition(".")[2].startswith(prefix))
    return [(f, text) for f in dict.fromkeys(found)]


NOT_LIBRARY = frozenset({"docs", "doc", "examples", "example", "benchmarks", "benchmark",
                         "scripts", "tools", "build", "setup", "conftest", "noxfile"})


PRIVATE_DUNDERS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__",
                             "__class_getitem__", "__set_name__"})


# a top-level folder named so with a suffix is one too: typer's `docs_src` (the tutorials' code),
# `doc_examples`, `benchmarks_gpu`; not the other words (a `tools_x` or `build_x` may be a library)
DOCUMENTATION = frozenset({"docs", "doc", "examples", "example", "benchmarks", "benchmark"})


def library_module(module: str) -> bool:
    """A module of the library itself, not of its documentation, examples, benchmarks or
    scripts: a method on an untyped receiver is looked for by its name among these alone
    (pyparsing's `examples/bigquery_view_parser.py` defines a `_parse` of its own)."""
    top = module.partition(".")[0]
    return bool(module) and top not in NOT_LIBRARY and top.partition("_")[0] not in DOCUMENTATION


def public_module(module: str) -> bool:
    return library_module(module) and not any(p.startswith("_") for p in module.split("."))


def public_name(name: str) -> bool:
    return not name.startswith("_")


def public_names(graph: Graph) -> tuple[dict[str, str], dict[str, str]]:
    """Every public function and class (by qualname) -> its shortest public spelling; and the
    methods spelled under a class that inherits them whose own class is public too -> their
    spelling under their own class."""
    spelled_as: dict[str, list[str]] = {}
    packages = {m.rpartition(".")[0] for m in graph.modules}
    for module, facts in graph.modules.items():
        if not public_module(module):
            continue
        names = tuple(
            name for star in (module, *facts.star) if star in graph.modules
            for name, bound in graph.modules[star].bindings
            if public_name(name) and (module in packages or bound == f"{star}.{name}"
                                      or name in graph.modules[star].exported))
        if facts.all_names is not None:
            # `__all__` names what `import *` takes, not all a user may call: sqlparse's lists
            # its submodules, while users call the `format` and `parse` its `__init__` defines
            names = facts.all_names + tuple(
                name for name, bound in facts.bindings
                if public_name(name) and bound == f"{module}.{name}" and name not in facts.all_names)
        for name in names:
            bound = graph.bindings[module].get(name) or _starred(graph, module, name)
            found = graph.definition(bound) if bound else None
            if found is not None:
                spelled_as.setdefault(found, []).append(f"{module}.{name}")
    chosen = {q: min(s, key=_shortest) for q, s in spelled_as.items()}
    methods: dict[str, list[str]] = {}
    for function in graph.functions:
        methods.setdefault(function.rpartition(".")[0], []).append(function)
    inherited: dict[str, list[str]] = {}
    for cls in [q for q in chosen if q in graph.classes]:
        # the methods it inherits too, as users call them (`pint.UnitRegistry.parse_units` runs
        # `GenericPlainRegistry.parse_units` of a facet's module): each the one `lookup` finds
        for function in (f for klass in graph.mro(cls) for f in methods.get(klass, ())):
            method = function.rpartition(".")[2]
            if not (public_name(method) or (method.startswith("__") and method not in PRIVATE_DUNDERS)) \
                    or graph.lookup(cls, method) != function:
                continue
            spelled = f"{chosen[cls]}.{method}"
            if function.rpartition(".")[0] != cls:
                inherited.setdefault(function, []).append(spelled)
            elif function not in chosen or _shortest(spelled) < _shortest(chosen[function]):
                chosen[function] = spelled
        for klass in graph.mro(cls):  # a function attached to it at run time (`C.name = f`)
            for method, function in graph.kept.attached.get(klass, {}).items():
                if (public_name(method) or method.startswith("__") and method not in PRIVATE_DUNDERS) \
                        and graph.lookup(cls, method) == "V " + function:
                    inherited.setdefault(function, []).append(f"{chosen[cls]}.{method}")
    for setter in (f for f in graph.functions if f.endswith(SETTER)):  # `v.x = 1` as users write it
        getter = setter.removesuffix(SETTER)
        if getter in chosen:
            chosen[setter] = chosen[getter]
    own: dict[str, str] = {}
    for function, candidates in inherited.items():
        # an inherited spelling only where it has fewer dots: `pkg.Far.run` is no better than
        # `pkg.Base.run`, and holds only on a chain where `self` can be a Far (`Graph._spelling`)
        best = min(candidates, key=_shortest)
        if function not in chosen or best.count(".") < chosen[function].count("."):
            if function in chosen:
                own[function] = chosen[function]
            chosen[function] = best
    return chosen, own


def publicness(spelling: str, modules: Mapping[str, object], packages: set[str]) -> int:
    """How public a name is as users spell it: 0 a name of the top-level package
    (`jinja2.Environment.from_string`), 1 of another package (`jax.numpy.dot`), 2 of a module
    (`jinja2.lexer.Lexer.tokenize`)."""
    parts = spelling.split(".")
    module = next((".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)
                   if ".".join(parts[:n]) in modules), parts[0])
    if "." not in module:
        return 0
    return 1 if module in packages else 2


def callees_of(callers: dict[str, list[tuple[str, int, str | None]]]) -> dict[str, list[str]]:
    """Whom each node calls (a callee once for each call of it)."""
    callees: dict[str, list[str]] = {}
    for callee, edges in callers.items():
        for caller, _, _ in edges:
            callees.setdefault(caller, []).append(callee)
    return callees


def nearest_public(graph: Graph, crossed: int = 0) -> dict[str, tuple[tuple[int, int] | None, ...]]:
    """For each node a public name calls within MAX_DEPTH calls (one call at least: a walk has
    met the node itself), over the calls a chain that crossed `crossed` may still cross (none of
    a kind it crossed): by how many calls are left (0 to MAX_DEPTH), the best order
    (`Graph._order`: publicness, then the package's depth) of a public name within so many calls
    of it, None where there is none. A bound for a walk back (`Graph._hopeful`): it never meets
    a public caller nearer, or of a better order, whatever else its states prune."""
    seeds: dict[tuple[int, int], list[str]] = defaultdict(list)
    for spellings in (graph.public, graph.own_public):
        for qualname, spelling in spellings.items():
            seeds[graph._order(spelling)].append(qualname)
    callees: dict[str, list[str]] = defaultdict(list)
    for callee, edges in graph.callers.items():
        for caller, _, stop in edges:
            if not crossed & graph._crossing(stop):
                callees[caller].append(callee)
    pairs: dict[str, list[tuple[int, tuple[int, int]]]] = {}  # (calls, order), nearer each time
    for order in sorted(seeds):  # breadth first from the names of each order, best order first
        calls = dict.fromkeys((c for seed in seeds[order] for c in callees.get(seed, ())), 1)
        queue = deque(calls)
        while queue:
            node = queue.popleft()
            found = pairs.setdefault(node, [])
            if found and found[-1][0] <= calls[node]:
                continue  # as near a better order: it bounds, and so does all it calls
            found.append((calls[node], order))
            if calls[node] < MAX_DEPTH:
                for callee in callees.get(node, ()):
                    if callee not in calls:
                        calls[callee] = calls[node] + 1
                        queue.append(callee)
    bounds = {}
    for node, found in pairs.items():
        bound: list[tuple[int, int] | None] = [None] * (MAX_DEPTH + 1)
        farther = MAX_DEPTH + 1
        for calls_to, order in found:  # better orders first, each farther than the next
            bound[calls_to:farther] = [order] * (farther - calls_to)
            farther = calls_to
        bounds[node] = tuple(bound)
    return bounds


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
