"""One file's definitions and call edges, read with `ast`, for the repository-wide entry-point pass.

Every call a function makes is written as what a static reader knows of its callee, to be
resolved once every file is read (`crawler.callgraph.entry_points`): a name as the imports
qualify it, a method on a receiver whose type is a reference (`TypeRef`), `super()`, a
property or a dunder reached by syntax, a function handed to another call. A call whose callee
only a run can tell (`getattr` with a computed name, a registry's item; `HELD`: `v(...)` for `v`
in `self._validators`) is a stop: the pass says so on a chain instead of inventing an edge.

A nested `def` is a function of its own (`f.<locals>.inner`, `graph_node`): its
maker calls it only where it calls it or hands it to a call; a nested def it returns or stores
is a `RETURNED` edge, which the pass follows as a stop ("called later"), and a decorator's
returned closure is what the decorated function's callers call. A lambda handed on, not to a
call, is its function's `<locals>.<lambda>` so. The whole file is read, never a skeleton, so an
update's facts are an extract's; a function's nodes are listed once, an expression's once.

The `ast` helpers of `crawler.parse.call_edges`: nodes listed once, dotted names, `try`
blocks, and the scopes of nested functions.

A nested `def` is a node of its own in the graph, named as Python names it
(`f.<locals>.inner`); a def nested in a class that is itself nested in a function belongs to
that function, as does a lambda handed straight to a call. `graph_node` names the node of a
raise from its `__qualname__` by the same rule, so records and the graph agree.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from crawler.parse.call_guards import call_args, call_facts, guards, known_names, signature
from crawler.parse.message import type_refs
from crawler.parse.python_ast import ast_parse_newer, parse_expression
from crawler.parse.registrations import (
    REGISTRY_READS,
    Registration,
    attached,
    held_method,
    literal,
    registrations,
    stored,
)
from crawler.parse.registrations import dotted as _dotted

LOCALS = ".<locals>."


NOT_PASSED = {"isinstance", "issubclass", "getattr", "hasattr", "setattr", "type", "id", "super"}


CALLS_NOW = {"map", "filter", "sorted", "min", "max", "any", "all", "list", "tuple", "sum"}  # call at once


PARTIALS = {"functools.partial", "functools.partialmethod", "functools.wraps", "functools.reduce"}


# dunders reached by syntax: an operator or subscript, and builtins called on a value
DUNDERS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.MatMult: "__matmul__",
           ast.Mod: "__mod__"}


# The expression nodes `_FunctionReader._expression` reads; every other one it passes over.
# The parser makes no subclasses of these.
_READ_IN_EXPRESSIONS = frozenset({ast.Call, ast.Name, ast.Attribute, ast.Subscript, ast.BinOp})


SYNTAX_CALLS = {"len": "__len__", "iter": "__iter__", "str": "__str__", "repr": "__repr__",
                "bool": "__bool__", "hash": "__hash__", "next": "__next__", "int": "__int__",
                "float": "__float__", "complex": "__complex__"}


class _Qualifies(Protocol):
    bindings: dict[str, str]

    def _qualify(self, dotted: list[str]) -> str: ...


def graph_node(module: str, qualname: str) -> str:
    """The graph's node of a `__qualname__`: each nested def down to the first nested class or
    lambda (`f.<locals>.C.m` is `f`'s)."""
    parts = qualname.split(LOCALS)
    kept = [parts[0]]
    for part in parts[1:]:
        if "." in part or part.startswith("<"):
            break
        kept.append(part)
    return f"{module}.{LOCALS.join(kept)}"


def _own_imports(statements: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports of a function's own scope: in its branches, loops and `try` blocks, not in a
    def or class nested in it (a nested def reads its own, and sees its maker's)."""
    todo: list[ast.AST] = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for body in ("body", "orelse", "finalbody", "handlers", "cases"):
                held = getattr(node, body, None)
                if isinstance(held, list):
                    todo.extend(held)


def _import_bindings(imports: Iterable[ast.Import | ast.ImportFrom], package: str
                     ) -> Iterator[tuple[str, str]]:
    """(name, qualified name) each import binds, as a module's imports bind them (`_bind`)."""
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds `a`
                top = alias.name.split(".")[0]
                yield alias.asname or top, alias.name if alias.asname else top
        else:
            base = from_module(package, node)
            yield from ((alias.asname or alias.name, f"{base}.{alias.name}".lstrip("."))
                        for alias in node.names if alias.name != "*")


def nodes_and_defs(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                   ) -> tuple[list[ast.AST], list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """A function's nodes (`all_nodes`), and the defs its own scope holds (not those of its
    nested defs, classes or lambdas), in one walk."""
    found: list[ast.AST] = [node]
    own = [True]  # whether each found node is in the function's own scope
    defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for index, inner in enumerate(found):  # the lists grow as they are read
        if inner.__class__ in _LEAVES:
            continue
        children = _children(inner)
        found.extend(children)
        if not own[index]:
            own.extend([False] * len(children))
            continue
        for child in children:
            scope = _SCOPES.get(child.__class__)  # one look-up a child: most open no scope
            if scope is None:
                own.append(True)
            else:
                own.append(False)
                if scope:
                    defs.append(child)  # type: ignore[arg-type]
    return found, defs


# The nodes that open a scope of their own: True for a def (one of the function's own defs
# where it sits in the function's own scope), False for a class or a lambda. The parser makes
# no subclasses of these.
_SCOPES: dict[type, bool] = {ast.FunctionDef: True, ast.AsyncFunctionDef: True,
                             ast.ClassDef: False, ast.Lambda: False}


def argument_ids(call: ast.Call) -> list[int]:
    """The ids of a call's argument nodes, positional then keyword: what the walks below note
    as handed to the call (a lambda among them is not called where it is written)."""
    if not call.keywords:  # most calls: no list of keywords to build
        return list(map(id, call.args))
    return [*map(id, call.args), *(id(keyword.value) for keyword in call.keywords)]


def split_lambdas(node: ast.AST) -> tuple[list[ast.AST], list[ast.Lambda]]:
    """An expression's nodes, parent first, without the lambdas it hands on (not to a call):
    those, apart. A lambda called or handed to a call stays, as what its function calls."""
    if isinstance(node, ast.Lambda):
        return [], [node]
    kept: set[int] = set()
    found = [node]
    apart: list[ast.Lambda] = []
    for inner in found:  # the list grows as it is read
        kind = inner.__class__
        if kind in _LEAVES:
            continue
        if kind is ast.Call:
            assert isinstance(inner, ast.Call)
            kept.add(id(inner.func))
            kept.update(argument_ids(inner))
        for child in _children(inner):
            if isinstance(child, ast.Lambda) and id(child) not in kept:
                apart.append(child)
            else:
                found.append(child)
    return found, apart


def from_module(package: str, node: ast.ImportFrom) -> str:
    """The module a `from ... import` reads, relative to `package`."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join([*parts, *([node.module] if node.module else [])])


def _computed_name(getter: ast.Call) -> tuple[str, str]:
    """`getattr(x, f"visit_{kind}")`: the literal prefix of the name, and the call as text."""
    name, prefix = getter.args[1], ""
    if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
        prefix = str(name.values[0].value)
    elif isinstance(name, ast.BinOp) and isinstance(name.left, ast.Constant):
        prefix = str(name.left.value)
    text = ast.unparse(getter)
    return prefix, text if len(text) <= 80 else text[:77] + "..."


def annotation(self: _Qualifies, node: ast.expr | None) -> str:
    """A TypeRef of an annotation: `C`, `"C"`, `C | None`, `Optional[C]`, `type[C]`, `C[T]`."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = parse_expression(node.value)
        except SyntaxError:
            return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = annotation(self, node.left), annotation(self, node.right)
        return left or right
    if isinstance(node, ast.Subscript):
        outer = _dotted(node.value)
        last = outer[-1] if outer else ""
        if last in ("Optional", "ClassVar", "Final"):  # `ClassVar[type[C]]`: what it holds
            return annotation(self, node.slice)
        if last in ("type", "Type"):
            inner = annotation(self, node.slice)
            return "V " + inner[2:] if inner.startswith("N ") else ""
        node = node.value  # `ParamType[t.Any]`: an instance of the generic class
    parts = _dotted(node)
    if not parts or parts[0] in ("None", "str", "int", "float", "bool", "bytes"):
        return ""
    return "N " + self._qualify(parts)


def _sets_a_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is a property's setter (`@x.setter` on a `def x`)."""
    return any(_dotted(d) == [node.name, "setter"] for d in node.decorator_list)


def _holds_a_class(node: ast.expr) -> bool:
    """Whether an annotation says its name holds a class: `TypeAlias`, `type[C]`, `Type[C]`,
    inside `ClassVar[...]` or `Final[...]` too."""
    while isinstance(node, ast.Subscript) and (_dotted(node.value) or [""])[-1] in ("ClassVar", "Final"):
        node = node.slice
    outer = _dotted(node.value if isinstance(node, ast.Subscript) else node) or [""]
    return outer[-1] in ("TypeAlias", "type", "Type")


def _catches(nodes: list[ast.AST], reader: _Qualifies) -> list[tuple[int, int, tuple[str, ...]]]:
    """Each `try` body's lines and the classes its handlers catch (`""` for a bare except)."""
    found = []
    for inner in nodes:
        if isinstance(inner, ast.Try) and inner.body:
            names: list[str] = []
            for handler in inner.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for kind in kinds:
                    parts = _dotted(kind) if kind is not None else [""]
                    if parts:
                        names.append(reader._qualify(parts) if parts[0] in reader.bindings
                                     else ".".join(parts))
            if names:
                found.append((inner.body[0].lineno, inner.body[-1].end_lineno or inner.lineno,
                              tuple(names)))
    return found


_NO_NODES = frozenset({"ctx", "id", "attr", "name", "arg", "kind", "module", "level", "asname",
                       "type_comment", "conversion", "is_async", "names", "kwd_attrs"})


_MAY_HOLD_NONE = frozenset({"keys", "kw_defaults"})  # `{**d}`, `def f(*, a)`


_FIELDS: dict[type, tuple[str, ...]] = {}  # a node type's fields that can hold nodes


def _children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without the `ctx` of names (and the fields that hold only text)."""
    fields = _FIELDS.get(node.__class__)
    if fields is None:
        fields = _FIELDS[node.__class__] = tuple(f for f in node._fields if f not in _NO_NODES)
    found: list[ast.AST] = []
    for field in fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            found.extend(value if field not in _MAY_HOLD_NONE else [v for v in value if v])
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


# The node classes `_children` finds nothing in, whose call the walks below leave out (a name,
# a constant, an operator: half the nodes of a file): those with no field that can hold a node,
# and `Constant`, whose one field holds a constant. The parser makes no subclasses of them.
_LEAVES = frozenset({ast.Constant} | {
    kind for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST)
    and not any(field not in _NO_NODES for field in kind._fields)})


def all_nodes(node: ast.AST) -> list[ast.AST]:
    """The node and everything under it, breadth first in `ast.walk`'s order (the `ctx` of
    names left out), listed in one pass without `ast.walk`'s generators."""
    found = [node]
    for inner in found:  # the list grows as it is read
        if inner.__class__ not in _LEAVES:
            found.extend(_children(inner))
    return found



# Kinds of `Call`
CALL = "call"  # target: a dotted name qualified by the imports (a function or a class)


METHOD = "method"  # target: a TypeRef of the receiver ("" unknown), name: the method


SUPER = "super"  # target: the class whose `super()` it is, name: the method


PROPERTY = "property"  # target: a TypeRef, name: an attribute read: an edge only to a property
SETS = "sets"  # target: a TypeRef, name: an attribute assigned: an edge only to a property's setter

# A property's setter is a node of its own, `C.x` + SETTER, beside its getter `C.x`: Python gives
# both the same `__qualname__`, and an assignment runs one as a read runs the other.
SETTER = ".<setter>"


PASSED = "passed"  # target: a dotted name or TypeRef+name handed to a call: only to a function


STOP = "stop"  # target: the call's source; name: the literal prefix of a computed name


RETURNED = "returned"  # target: a nested def's qualname; name: "returned" or "stored"


HELD = "held"  # target: a local iterated from an attribute, called; args: the call's


SIGNATURE, GUARD = "signature", "guard"  # no calls: target a signature / a raise's guard (`call_guards`)
FACTS = "facts"  # no call: target what the function's tests settled of its parameters at `line`




# TypeRef: "<kind> <text>", resolved by the pass to classes:
#   "N pkg.C"     an instance of the class a name is       "R pkg.f"  what calling a name returns
#   "S pkg.C"     self in class pkg.C (its subclasses too)  "A pkg.C x"  attribute x of pkg.C
#   "D pkg.C x.y" attribute y of what attribute x of pkg.C holds, and so on down the path
#   "M pkg.C m"   what method m of pkg.C returns           "V pkg.C"  the class object itself
#   "B int"       a builtin a class attribute holds (`number_class = int`): no class of the library
#   "O pkg.p"     a module-level object (`p = Primitive("p")`)  "T pkg.C.t"  a table or its item
#                 (`self.t[k]`, `t.get(k)`): named by where it is kept, a module's or a class's
#   "I pkg.t"     what an item of table pkg.t returns when called (`create = t.get(k)`, then
#                 `create(...)`): an instance of the classes it keeps, what its functions return
_BUILTINS = frozenset(dir(builtins))


# The standard library's calls that give back a value of the type they are handed: `typing.cast(T,
# v)` a T (click's `cast(Group, command).list_commands(ctx)`), a copy one of its argument's
# (attrs' `new = copy.copy(self)`, requests' `new_jar = copy.copy(jar)`, then their methods)
_SAME_VALUE = frozenset({"typing.cast", "copy.copy", "copy.deepcopy"})


@dataclass(frozen=True)
class Call:
    """One call (or attribute read, or function handed on) in a function, as written."""

    kind: str
    target: str
    name: str = ""
    line: int = 0
    args: str = ""  # a direct call's arguments (`call_guards.call_args`)


@dataclass(frozen=True)
class Function:
    """A `def` (its nested defs included): its calls, and what it hands back and catches."""

    qualname: str  # module and __qualname__: "pkg.mod.C.m"
    line: int
    end_line: int
    calls: tuple[Call, ...] = ()
    returns: str = ""  # a TypeRef of its return annotation
    decorators: tuple[str, ...] = ()  # dotted names, qualified; "()" after a called one
    is_property: bool = False
    catches: tuple[tuple[int, int, tuple[str, ...]], ...] = ()  # try body lines, classes caught
    # the parameters it keeps: (table or "Class.attribute", position among the positional
    # arguments a call passes, name): `registry[value] = object`, `self.impl = impl`
    keeps: tuple[tuple[str, int, str], ...] = ()
    gives: str = ""  # unannotated: a TypeRef of what it returns, where a call or a table's item


@dataclass(frozen=True)
class ClassFacts:
    """A class: its bases and the types of its attributes."""

    qualname: str
    bases: tuple[str, ...]  # dotted names, qualified
    attributes: tuple[tuple[str, str], ...] = ()  # name, TypeRef ("V ..." for a class held)


@dataclass(frozen=True)
class CallFacts:
    """What one module gives the entry-point pass."""

    module: str
    bindings: tuple[tuple[str, str], ...]  # top-level name -> qualified name (imports, defs)
    functions: tuple[Function, ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    all_names: tuple[str, ...] | None = None  # a literal `__all__`
    star: tuple[str, ...] = ()  # modules `from M import *` reads
    exported: tuple[str, ...] = ()  # names imported as themselves: PEP 484's explicit re-export
    objects: tuple[str, ...] = ()  # module-level names assigned a value (not an alias)
    registrations: tuple[Registration, ...] = ()
    # objects another package's callable made (`_pattern = re.compile(...)`): their methods are
    # that package's, never a method of the library found by its name
    foreign: tuple[str, ...] = ()


_NOT_KEPT = frozenset(NOT_PASSED | CALLS_NOW)  # calls that keep no function handed to them
_NAMING_ARGUMENTS = frozenset({ast.Name, ast.Attribute, ast.Call})  # no subclasses are parsed


def _hands_on_a_name(node: ast.Call) -> bool:
    """Whether a call is handed a name, an attribute or a call (what may name a function)."""
    for argument in node.args:
        if argument.__class__ in _NAMING_ARGUMENTS:
            return True
    for keyword in node.keywords:
        if keyword.value.__class__ in _NAMING_ARGUMENTS:
            return True
    return False


def _receiver(callee: tuple[str, str, str]) -> str:
    """A registering method call's receiver, where a module-level name (`remat_p.def_impl`)."""
    kind, target, _ = callee
    return target[2:] if kind == METHOD and target[:2] in ("O ", "V ") else ""


def read_calls(source: bytes | str, module: str, is_package: bool = False,
               tree: ast.Module | None = None) -> CallFacts | None:
    """The module's facts (of `tree`, where parsed); None when `ast` cannot parse it."""
    tree = tree if tree is not None else ast_parse_newer(source)
    return None if tree is None else _Reader(module, is_package).read(tree)


class _Reader:
    def __init__(self, module: str, is_package: bool) -> None:
        self.module, self.package = module, module if is_package else module.rpartition(".")[0]
        self.bindings: dict[str, str] = {}
        self.functions: list[Function] = []
        self.classes: list[ClassFacts] = []
        self.star: list[str] = []
        self.objects: dict[str, None] = {}  # module-level names assigned a value, in order
        self.foreign: dict[str, None] = {}  # those another package's callable made
        self.registrations: list[Registration] = []
        self.all_names: tuple[str, ...] | None = None
        self.exported: list[str] = []
        self.self_attributes: dict[str, list[tuple[str, str]]] = {}  # method: `self.x = ...` types

    def read(self, tree: ast.Module) -> CallFacts:
        for node in tree.body:
            self._bind(node)
        for node in tree.body:
            self._statement(node, prefix=self.module, cls=None)
        return CallFacts(self.module, tuple(sorted(self.bindings.items())), tuple(self.functions),
                         tuple(self.classes), self.all_names, tuple(self.star), tuple(self.exported),
                         tuple(self.objects), tuple(dict.fromkeys(self.registrations)),
                         tuple(self.foreign))

    # ------------------------------------------------------------ module-level names

    def _bind(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):  # `from m import x as x` re-exports x
            self.exported += [alias.name for alias in node.names if alias.asname == alias.name]
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.bindings.update(_import_bindings([node], self.package))
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                self.star.append(from_module(self.package, node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bindings[node.name] = f"{self.module}.{node.name}"
        elif isinstance(node, (ast.If, ast.Try)):  # `try: import x / except: ...`, TYPE_CHECKING
            for inner in [*node.body, *getattr(node, "orelse", []),
                          *(h for handler in getattr(node, "handlers", []) for h in handler.body)]:
                self._bind(inner)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            self._assign(node.targets[0].id, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            self.objects.setdefault(node.target.id)

    def _assign(self, name: str, value: ast.expr) -> None:
        if name == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
            self.all_names = tuple(e.value for e in value.elts
                                   if isinstance(e, ast.Constant) and isinstance(e.value, str))
        if isinstance(value, ast.BoolOp):  # `scan = c_scan or py_scan`: the fallback is ours
            value = value.values[-1]
        dotted = _dotted(value)
        if dotted and dotted[0] in self.bindings:  # an alias: `load = _impl.load`
            self.bindings[name] = self._qualify(dotted)
        elif not (name.startswith("__") and name.endswith("__")):
            self.objects.setdefault(name)
            if self.foreign_maker(value):
                self.foreign.setdefault(name)

    def foreign_maker(self, value: ast.expr | None) -> str:
        """The other package's callable a call is of (`re.compile(...)`: "re.compile"), or ""."""
        maker = _dotted(value.func) if isinstance(value, ast.Call) else None
        made_by = self._qualify(maker) if maker and maker[0] in self.bindings else ""
        return made_by if made_by and made_by.partition(".")[0] != self.module.partition(".")[0] \
            else ""

    def global_name(self, dotted: list[str] | None) -> str:
        """A module-level name qualified (imported, defined or assigned here), or ""."""
        if not dotted or dotted[0] not in self.bindings and dotted[0] not in self.objects:
            return ""
        return self._qualify(dotted) if dotted[0] in self.bindings else ".".join([self.module, *dotted])

    def _callee(self, func: ast.expr) -> tuple[str, str, str] | None:
        """A module-level call's callee as a `Call` says it: (kind, target, name)."""
        dotted = _dotted(func)
        if dotted and dotted[0] in self.bindings:
            return CALL, self._qualify(dotted), ""
        if dotted and len(dotted) == 2 and dotted[0] in self.objects:  # `remat_p.def_impl(...)`
            return METHOD, f"O {self.module}.{dotted[0]}", dotted[1]
        return None

    def _keep(self, node: ast.stmt) -> None:
        """What a module-level statement keeps for a later call (`Registration`)."""
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            callee = self._callee(node.value.func)
            if callee is not None:
                self.registrations.extend(registrations(node.value, callee, self.global_name,
                                                        _receiver(callee)))
            self.registrations.extend(attached(node.value, self.global_name))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.registrations.extend(stored(target, node.value, self.global_name, self._table))
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in self.objects:
                if isinstance(node.value, (ast.Dict, ast.List, ast.Tuple)):  # `T = {key: f}`
                    self.registrations.extend(literal(node.value, f"{self.module}.{target.id}",
                                                      self.global_name))
                elif isinstance(node.value, ast.Call) and (callee := self._callee(node.value.func)):
                    found = registrations(node.value, callee, self.global_name)  # `p = make(rule)`
                    key = (f"{self.module}.{target.id}",)
                    self.registrations.extend(Registration(r.value, r.kind, r.target, r.name, r.position,
                                                           r.keyword, key) for r in found)

    def _table(self, node: ast.expr) -> str:
        while isinstance(node, ast.Subscript):  # `T[a][b] = f`: kept in T
            node = node.value
        return self.global_name(_dotted(node))

    def _decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, qualname: str
                   ) -> None:
        """`@remat_p.def_impl`, `@registry.register`, `@register(key)`: a call handed the def."""
        for decorator in node.decorator_list:
            handed = decorator.args if isinstance(decorator, ast.Call) else []
            callee = self._callee(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if callee is None or callee[1].rpartition(".")[2] in ("wraps", "partial"):
                continue
            keys = [_receiver(callee), *(self.global_name(_dotted(a)) for a in handed)]
            self.registrations.append(Registration(qualname, *callee, 0, "", tuple(k for k in keys if k),
                                                   isinstance(decorator, ast.Call)))

    def _qualify(self, dotted: list[str]) -> str:
        return ".".join([self.bindings.get(dotted[0], dotted[0]), *dotted[1:]])

    # ------------------------------------------------------------ definitions

    def _statement(self, node: ast.stmt, prefix: str, cls: str | None) -> None:
        if isinstance(node, ast.ClassDef):
            self._class(node, prefix)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._decorated(node, f"{prefix}.{node.name}")
            function = _FunctionReader(self, node, f"{prefix}.{node.name}", cls).read()
            if cls is not None and _sets_a_property(node):  # its own node: `C.x` is the getter's
                function = replace(function, qualname=function.qualname + SETTER)
            self.functions.append(function)
        elif isinstance(node, (ast.If, ast.Try)):
            for inner in [*node.body, *node.orelse, *getattr(node, "finalbody", [])]:
                self._statement(inner, prefix, cls)
        elif cls is None:
            self._keep(node)

    def _class(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = f"{prefix}.{node.name}"
        self._decorated(node, qualname)
        bases = tuple(self._base(d) for d in (  # `Base[T]`: the generic's class
            _dotted(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases) if d)
        attributes: dict[str, str] = {}
        first = len(self.functions)
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                # annotated as a class, the name it is assigned is the class it holds (a
                # subclass of the annotation's): PEP 613's `Quantity: TypeAlias = Quantity`
                # (pint), falcon's `_STATIC_ROUTE_TYPE: ClassVar[type[StaticRoute]] =
                # routing.StaticRoute`, rich's `HIGHLIGHTER_CLASS: ClassVar[Type[Highlighter]]
                # = ReprHighlighter`
                held = _dotted(statement.value) if _holds_a_class(statement.annotation) else None
                attributes[statement.target.id] = "V " + self._qualify(held) \
                    if held and held[0] in self.bindings else self.annotation(statement.annotation)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                held = _dotted(statement.value)  # `loader_class = Loader`; "B": `number_class = int`
                kind = "" if not held else "V " if held[0] in self.bindings else "B " * (held[0] in _BUILTINS)
                if kind:
                    attributes[statement.targets[0].id] = kind + self._qualify(held)  # type: ignore[arg-type]
                elif isinstance(statement.value, ast.Call):  # `_bool = error_for(bool)`: what it returns
                    made = self.global_name(_dotted(statement.value.func))
                    if made and made.rpartition(".")[2] not in _BUILTINS:
                        attributes[statement.targets[0].id] = "R " + made
            self._statement(statement, qualname, qualname)
        for function in self.functions[first:]:  # its methods are the functions its body added
            if "." not in function.qualname[len(qualname) + 1:]:
                for name, ref in self.self_attributes.get(function.qualname, ()):
                    attributes.setdefault(name, ref)
        self.classes.append(ClassFacts(qualname, bases, tuple(sorted(attributes.items()))))

    annotation = annotation  # a TypeRef of an annotation (the function `annotation` above)

    def _base(self, dotted: list[str]) -> str:
        """A base class's qualified name: through the bindings, or, in a module that star-imports
        and binds no such name, as the module's own name, which the graph follows through the
        star imports as it does a call's (pyyaml's `loader.py` takes `Reader`, `Composer`,
        `SafeConstructor` from `from .reader import *` and the rest, 62 bases in all; the
        standard library's `tkinter.simpledialog` and `tkinter.tix` take `Toplevel`, `XView`
        from `from tkinter import *`, 20)."""
        if dotted[0] not in self.bindings and self.star and dotted[0] not in _BUILTINS:
            return ".".join([self.module, *dotted])
        return self._qualify(dotted)


class _FunctionReader:
    """The calls of one `def` (or of its lambdas handed on), with the types it can tell; a def
    nested in it is read by a reader of its own, which sees its maker's names and types."""

    def __init__(self, reader: _Reader, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                 qualname: str, cls: str | None, outer: _FunctionReader | None = None) -> None:
        self.reader, self.node, self.qualname, self.cls, self.outer = reader, node, qualname, cls, outer
        self.types: dict[str, str] = dict(outer.types) if outer else {}
        self.untyped: dict[str, str] = {}  # a local bound to an attribute of an untyped value
        self.held: dict[str, bool] = {}  # a local iterated from an attribute of a typed value
        self.locals: set[str] = set(outer.locals) if outer else set()
        # names the function imports itself (an import put off until the call), a nested def
        # seeing its maker's: name -> qualified name, as a module's own imports bind them
        self.imported: dict[str, str] = dict(outer.imported) if outer else {}
        self.nested: dict[str, str] = dict(outer.nested) if outer else {}  # name -> qualname
        self.calls: list[Call] = []
        self.self_attributes: list[tuple[str, str]] = []
        self.lambdas: list[ast.Lambda] = []  # handed on: `<locals>.<lambda>`
        self.in_class = 0  # inside a class nested in the function: its defs are the function's
        self.returning = False
        self.known: dict[str, str] = {}  # parameters never reassigned: "p"; a local that is a class: "t"
        self.positional: list[str] = []  # the parameters a call's positional arguments bind
        self.keeps: list[tuple[str, int, str]] = []
        self.gives = ""

    def read(self) -> Function:
        node, reader = self.node, self.reader
        decorators = [] if isinstance(node, ast.Lambda) else [
            (_dotted(d.func if isinstance(d, ast.Call) else d), isinstance(d, ast.Call))
            for d in node.decorator_list]
        names = [d[-1] for d, _ in decorators if d]
        params = self._params(node)
        self.positional = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        if self.cls is not None and self.outer is None and params and "staticmethod" not in names:
            self.types[params[0].arg] = ("V " if "classmethod" in names else "S ") + self.cls
            self.positional = self.positional[1:]
        for param in params:
            if ref := reader.annotation(param.annotation):
                self.types.setdefault(param.arg, ref)
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for param, default in [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                               *zip(args.kwonlyargs, args.kw_defaults)]:
            if made_by := reader.foreign_maker(default):  # `pattern=re.compile(...)`: re's object
                self.types.setdefault(param.arg, "B " + made_by)
        nodes, defs = nodes_and_defs(node)  # listed once: its locals, then its `try` blocks
        bound, self.known, self.raises = known_names(node, nodes)
        self.locals.update(bound)
        if not isinstance(node, ast.Lambda):
            self.imported.update(_import_bindings(_own_imports(node.body), reader.package))
        self.nested.update((d.name, f"{self.qualname}{LOCALS}{d.name}") for d in defs)
        if isinstance(node, ast.Lambda):
            self._expression(node.body)
        else:
            for statement in node.body:
                self._walk(statement)
        reader.self_attributes[self.qualname] = self.self_attributes
        if not isinstance(node, ast.Lambda):
            self._guards(node, names)
        qualified = tuple(reader._qualify(d) + "()" * called for d, called in decorators
                          if d and d[0] in reader.bindings)
        if self.lambdas:
            reader.functions.append(self._lambdas())
        returns = "" if isinstance(node, ast.Lambda) else reader.annotation(node.returns)
        return Function(self.qualname, node.lineno, node.end_lineno or node.lineno,
                        tuple(dict.fromkeys(self.calls)), returns, qualified,
                        "property" in names or "cached_property" in names, tuple(_catches(nodes, reader)),
                        tuple(dict.fromkeys(self.keeps)), "" if returns else self.gives)

    def _guards(self, node: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[str]) -> None:
        """Each raise's simple guard, and the signature, when the pass may weigh its calls."""
        found = [Call(GUARD, t, "", ln) for ln, t in guards(node, self.known)] if self.raises else []
        passes = any(c.args and not c.args.endswith(",[]]") for c in self.calls)
        # where each call runs: what the function's own tests settled of its parameters there
        calls = frozenset(c.line for c in self.calls if c.kind in (CALL, METHOD, SUPER))
        found += [Call(FACTS, t, "", ln) for ln, t in call_facts(node, self.known, calls)] if calls else []
        if found or self.qualname.endswith(".__call__") or passes:  # `__call__`: what a held call binds
            method = self.cls is not None and self.outer is None and "staticmethod" not in decorators
            self.calls.extend([Call(SIGNATURE, signature(node, method), "", node.lineno), *found])

    def _params(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
        for param in params:  # its own names, not its maker's
            self.types.pop(param.arg, None)
            self.nested.pop(param.arg, None)
        return params

    def _lambdas(self) -> Function:
        """The lambdas this function hands on (returns, stores), as one function."""
        first = self.lambdas[0]
        inner = _FunctionReader(self.reader, first, f"{self.qualname}{LOCALS}<lambda>", self.cls, self)
        inner.lambdas = list(self.lambdas)
        done = 0
        while done < len(inner.lambdas):  # a lambda in a lambda handed on: the same function
            lam = inner.lambdas[done]
            done += 1
            inner._params(lam)
            inner._expression(lam.body)
        return Function(inner.qualname, first.lineno, self.lambdas[-1].end_lineno or first.lineno,
                        tuple(dict.fromkeys(inner.calls)))

    def _walk(self, node: ast.AST) -> None:
        """Statements in order, so that a local's type is known from its assignment on."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not self.in_class:
            for inner in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
                if inner is not None:  # evaluated where the def runs
                    self._expression(inner)
            nested = _FunctionReader(self.reader, node, self.nested[node.name], self.cls, self)
            self.reader.functions.append(nested.read())
            return
        if isinstance(node, ast.Return) and node.value is not None and not self.gives and not self.in_class:
            ref = self.type_of(node.value)  # what it returns, for a table's item called later
            self.gives = ref if ref[:2] in ("T ", "M ", "R ") else ""
        if isinstance(node, (ast.ClassDef, ast.Return)):  # a class's defs are the function's
            self.in_class += isinstance(node, ast.ClassDef)
            self.returning = isinstance(node, ast.Return)
            for child in _children(node):
                self._expression(child) if isinstance(child, ast.expr) else self._walk(child)
            self.in_class -= isinstance(node, ast.ClassDef)
            self.returning = False
            return
        if isinstance(node, ast.Assign):
            self._expression(node.value)
            ref = self.type_of(node.value)
            for target in node.targets:
                self._keep(target, node.value)
                self._target(target, ref)
                if isinstance(target, ast.Name) and isinstance(node.value, ast.Attribute) and not ref:
                    self.untyped[target.id] = node.value.attr  # `parse = context.parse_object`
            return
        if isinstance(node, ast.AnnAssign):
            value = node.value
            ref = self.reader.annotation(node.annotation) or (self.type_of(value) if value else "")
            if value is not None:
                self._expression(value)
            self._target(node.target, ref)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self._expression(item.context_expr)
                ref = self.type_of(item.context_expr)
                if ref:
                    self.calls.append(Call(METHOD, ref, "__enter__", node.lineno))
                if item.optional_vars is not None:
                    self._target(item.optional_vars, "")
            for statement in node.body:
                self._walk(statement)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            self.held[node.target.id] = self.type_of(node.iter).startswith("A ")
        for child in _children(node):
            if isinstance(child, ast.expr):
                self._expression(child)
            else:
                self._walk(child)

    def _keep(self, target: ast.expr, value: ast.expr) -> None:
        """`registry[key] = param`, `self.impl = param` (or a call of it): the function keeps its
        parameter (`keeps`); `T[key] = f`, `C.name = f`: it keeps a function (`Registration`)."""
        if not self.in_class:
            self.reader.registrations.extend(stored(target, value, self.name_of, self.table_of))
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and (
                    owner := self.types.get(target.value.id, "")).startswith("S "):
                # `self.state = self.parse_node`: a method the instance keeps
                self.reader.registrations.extend(held_method(target, value, target.value.id,
                                                             owner[2:]))
        handed = [value, *value.args] if isinstance(value, ast.Call) and isinstance(target, ast.Attribute) \
            else [value]
        param = next((a.id for a in handed if isinstance(a, ast.Name) and a.id in self.positional
                      and self.known.get(a.id) == "p"), None)
        if param is None:
            return
        table = ""
        if isinstance(target, ast.Subscript):
            table = self.table_of(target.value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and self.types.get(target.value.id, "").startswith("S "):
            table = f"{self.types[target.value.id][2:]}.{target.attr}"
        if table:
            self.keeps.append((table, self.positional.index(param), param))

    def name_of(self, dotted: list[str] | None) -> str:
        """A name in this scope qualified: a nested def, a module-level one, or ""."""
        if dotted and dotted[0] in self.nested and len(dotted) == 1:
            return self.nested[dotted[0]]
        found = self._global(dotted)
        if found is None and dotted and dotted[0] in self.reader.objects and dotted[0] not in self.locals:
            found = ".".join([self.reader.module, *dotted])
        return found or ""

    def table_of(self, node: ast.expr) -> str:
        """Where a table an expression reads is kept: a module's name (`primitive_jvps`,
        `ad.primitive_jvps`), a class's attribute (`self._registries`), a local read off one
        (`registry = self._registries.setdefault(name, {})`); an item of a table is its table."""
        while True:
            if isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in REGISTRY_READS:
                node = node.func.value
            else:
                break
        if isinstance(node, ast.Name) and self.types.get(node.id, "").startswith("T "):
            return self.types[node.id][2:]
        dotted = _dotted(node)
        if dotted and len(dotted) == 2 and self.types.get(dotted[0], "").startswith("S "):
            return f"{self.types[dotted[0]][2:]}.{dotted[1]}"
        return self.name_of(dotted) if dotted and dotted[0] not in self.nested else ""

    def _target(self, target: ast.expr, ref: str) -> None:
        if isinstance(target, ast.Name):
            if ref:
                self.types[target.id] = ref
            else:
                self.types.pop(target.id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and self.types.get(target.value.id, "").startswith("S ") and ref:
            self.self_attributes.append((target.attr, ref))
        elif isinstance(target, ast.Subscript):  # `d[key(k)] = v`: the item's key is read too
            self._expression(target.value)
            self._expression(target.slice)
            self._dunder(target.value, "__setitem__", target.lineno)
        elif isinstance(target, ast.Attribute):  # `make().x = v`: what the attribute is set on
            self._expression(target.value)
        elif isinstance(target, (ast.Tuple, ast.List)):  # `a, d[f(k)] = ...`: each of its parts
            for part in target.elts:
                self._target(part, "")
        elif isinstance(target, ast.Starred):
            self._target(target.value, "")
        if isinstance(target, ast.Attribute) and (receiver := self.type_of(target.value)):
            self.calls.append(Call(SETS, receiver, target.attr, target.lineno))  # a setter it runs

    def _expression(self, node: ast.expr) -> None:
        called: set[int] = set()  # a call's own callee is no attribute read
        handed: set[int] = set()  # a call's arguments
        found, apart = split_lambdas(node)  # a parent before its children
        for inner in found:
            kind = inner.__class__
            if kind not in _READ_IN_EXPRESSIONS:  # most nodes: one look-up, nothing to read
                continue
            if kind is ast.Call:
                assert isinstance(inner, ast.Call)
                called.add(id(inner.func))
                handed.update(argument_ids(inner))
                self._call(inner)
            elif kind is ast.Name:
                assert isinstance(inner, ast.Name)
                if inner.id in self.nested and id(inner) not in called \
                        and (id(inner) not in handed or self.returning):  # handed on: called later
                    self.calls.append(Call(RETURNED, self.nested[inner.id],
                                           "returned" if self.returning else "stored", inner.lineno))
            elif kind is ast.Attribute:
                assert isinstance(inner, ast.Attribute)
                if isinstance(inner.ctx, ast.Load) and id(inner) not in called:
                    ref = self.type_of(inner.value)
                    if ref and ref[:2] not in ("V ", "O ", "T "):
                        self.calls.append(Call(PROPERTY, ref, inner.attr, inner.lineno))
            elif kind is ast.Subscript:  # `del d[k]` deletes; `d[k] += 1` reads first
                assert isinstance(inner, ast.Subscript)
                deleted = isinstance(inner.ctx, ast.Del)
                self._dunder(inner.value, "__delitem__" if deleted else "__getitem__", inner.lineno)
            else:
                assert isinstance(inner, ast.BinOp)
                if type(inner.op) in DUNDERS:
                    self._dunder(inner.left, DUNDERS[type(inner.op)], inner.lineno)
        for lam in apart:
            if isinstance(self.node, ast.Lambda):  # in a lambda handed on: that same function
                self.lambdas.append(lam)
                continue
            self.lambdas.append(lam)
            self.calls.append(Call(RETURNED, f"{self.qualname}{LOCALS}<lambda>",
                                   "returned" if self.returning else "stored", lam.lineno))

    def _dunder(self, receiver: ast.expr, name: str, line: int) -> None:
        """The special method an operator calls, on a receiver of a known class."""
        ref = self.type_of(receiver)
        if ref and ref[:2] not in ("V ", "O ", "T "):
            self.calls.append(Call(METHOD, ref, name, line))

    def _call(self, node: ast.Call) -> None:
        func, line, args = node.func, node.lineno, call_args(node, self.known)
        dotted = _dotted(func)
        qualified = self._global(dotted)
        if qualified in PARTIALS or (dotted and dotted[-1] in ("partial", "partialmethod")):
            for argument in node.args[:1]:
                self._passed(argument, line)
        elif isinstance(func, ast.Name) and func.id in SYNTAX_CALLS and node.args:
            ref = self.type_of(node.args[0])
            if ref:
                self.calls.append(Call(METHOD, ref, SYNTAX_CALLS[func.id], line))
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            return
        self._registering(node, qualified)
        if qualified is not None:
            self.calls.append(Call(CALL, qualified, "", line, args))
        elif isinstance(func, ast.Name) and func.id in self.nested:
            self.calls.append(Call(CALL, self.nested[func.id], "", line, args))
        elif isinstance(func, ast.Name) and self.types.get(func.id, "").startswith("V "):
            self.calls.append(Call(CALL, self.types[func.id][2:], "", line, args))
        elif isinstance(func, ast.Name) and func.id in self.untyped:
            self.calls.append(Call(METHOD, "", self.untyped[func.id], line, args))
        elif isinstance(func, ast.Name) and func.id in self.types:  # a value of a known type
            self.calls.append(Call(METHOD, self.types[func.id], "__call__", line, args))
        elif isinstance(func, ast.Name) and self.held.get(func.id):  # `for v in self._validators`
            self.calls.append(Call(HELD, func.id, "", line, args))
        elif isinstance(func, ast.Attribute):
            self._method_call(func, line, args)
        elif isinstance(func, ast.Call) and _dotted(func.func) == ["getattr"] and len(func.args) >= 2:
            self._getattr_call(func, line)
        elif isinstance(func, ast.Name) and self.name_of([func.id]):  # a module-level object called
            self.calls.append(Call(CALL, self.name_of([func.id]), "", line, args))
        elif isinstance(func, (ast.Subscript, ast.Call)) and self.type_of(func):
            # `T[key](...)`, `T.get(key)(...)`: a table's item; `C(...)(...)`: what a call gives
            self.calls.append(Call(METHOD, self.type_of(func), "__call__", line, args))
        elif isinstance(func, ast.Subscript):
            self.calls.append(Call(STOP, ast.unparse(func)[:80], "", line))
        if not (isinstance(func, ast.Name) and func.id in NOT_PASSED):
            now = qualified in PARTIALS or isinstance(func, ast.Name) and func.id in CALLS_NOW
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                self._passed(argument, line, now)

    def _registering(self, node: ast.Call, qualified: str | None) -> None:
        """A call handed a function it may keep (`Registration`), or `setattr(C, "name", f)`."""
        func = node.func
        if isinstance(func, ast.Name) and func.id in _NOT_KEPT or qualified in PARTIALS:
            self.reader.registrations.extend(attached(node, self.name_of))
            return
        if not _hands_on_a_name(node):
            return
        if qualified is not None:
            callee = (CALL, qualified, "")
        elif isinstance(func, ast.Name) and func.id in self.nested:
            callee = (CALL, self.nested[func.id], "")
        elif isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Call)
                                                      and _dotted(func.value.func) == ["super"]):
            callee = (METHOD, self.type_of(func.value), func.attr)
        else:
            return
        self.reader.registrations.extend(registrations(node, callee, self.name_of, _receiver(callee)))

    def _method_call(self, func: ast.Attribute, line: int, args: str) -> None:
        receiver = func.value
        if isinstance(receiver, ast.Call) and _dotted(receiver.func) == ["super"]:
            if self.cls is not None:
                self.calls.append(Call(SUPER, self.cls, func.attr, line, args))
            return
        self.calls.append(Call(METHOD, self.type_of(receiver), func.attr, line, args))

    def _getattr_call(self, getter: ast.Call, line: int) -> None:
        receiver, name = getter.args[0], getter.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self.calls.append(Call(METHOD, self.type_of(receiver), name.value, line))
            return
        prefix, text = _computed_name(getter)
        self.calls.append(Call(STOP, f"{self.type_of(receiver)}\0{text}", prefix, line))

    def _passed(self, argument: ast.expr, line: int, now: bool = True) -> None:
        if isinstance(argument, ast.Name) and argument.id in self.nested:
            if not self.returning:  # `map(inner, xs)` calls it; `register(inner)` may, later
                self.calls.append(Call(PASSED, self.nested[argument.id], "", line) if now else
                                  Call(RETURNED, self.nested[argument.id], "passed", line))
            return
        qualified = self._global(_dotted(argument))
        if qualified is not None:
            self.calls.append(Call(PASSED, qualified, "", line))
        elif isinstance(argument, ast.Attribute):
            ref = self.type_of(argument.value)
            if ref:
                self.calls.append(Call(PASSED, ref, argument.attr, line))

    def _global(self, dotted: list[str] | None) -> str | None:
        """A name through the bindings (one a star import may bring: as the module's); or None."""
        if dotted and dotted[0] in self.imported:
            return ".".join([self.imported[dotted[0]], *dotted[1:]])
        if not dotted or dotted[0] in self.locals:
            return None
        if dotted[0] in self.reader.bindings:
            return self.reader._qualify(dotted)
        starred = self.reader.star and dotted[0] not in _BUILTINS
        return ".".join([self.reader.module, *dotted]) if starred else None

    def type_of(self, node: ast.expr) -> str:
        """A TypeRef of what an expression gives, or "" when a static reader cannot tell."""
        if isinstance(node, ast.BoolOp):  # `x or Default()`, `a and b`: may be its last operand,
            # the fallback (as a module's `scan = c_scan or py_scan`), else the first one known
            refs = [self.type_of(value) for value in reversed(node.values)]
            return next((ref for ref in refs if ref), "")
        same = self._global(_dotted(node.func)) if isinstance(node, ast.Call) and node.args else None
        if same in _SAME_VALUE:  # `cast(T, v)`: a T; `copy.copy(v)`: a value of v's type
            handed = node.args[0]  # type: ignore[attr-defined]
            return self.reader.annotation(handed) if same == "typing.cast" else self.type_of(handed)
        ref = type_refs.type_of(node, self._type_of_name)
        if ref or not isinstance(node, (ast.Subscript, ast.Call)):
            return ref
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute)
                                               and node.func.attr in REGISTRY_READS):
            return ""
        table = self.table_of(node)  # `T[key]`, `T.get(key)`: an item of the table
        return "T " + table if table else ""

    def _type_of_name(self, name: str) -> str:
        if name in self.types:
            return self.types[name]
        qualified = self._global([name])
        if qualified is None and name in self.reader.objects and name not in self.locals:
            return f"O {self.reader.module}.{name}"
        return "V " + qualified if qualified else ""
