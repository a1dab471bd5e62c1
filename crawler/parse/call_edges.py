"""One file's definitions and call edges, read with `ast`, for the repository-wide entry-point pass.

Every call a function makes is written as what a static reader knows of its callee, to be
resolved once every file is read (`crawler.catalogue.entry_points`): a name as the imports
qualify it, a method on a receiver whose type is a reference (`TypeRef`), `super()`, a
property or a dunder reached by syntax, a function handed to another call. A call whose callee
only a run can tell (`getattr` with a computed name, a registry's item) is a `STOP` with its
source: the pass says so on a chain instead of inventing an edge.

Nested functions and lambdas belong to their outermost `def` (a decorator's wrapper runs where
the decorated function is called). The whole file is read, never a skeleton, so an update's
facts are an extract's; a function's nodes are listed once, an expression's once (`_nodes`).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

# Kinds of `Call`
CALL = "call"  # target: a dotted name qualified by the imports (a function or a class)
METHOD = "method"  # target: a TypeRef of the receiver ("" unknown), name: the method
SUPER = "super"  # target: the class whose `super()` it is, name: the method
PROPERTY = "property"  # target: a TypeRef, name: an attribute read: an edge only to a property
PASSED = "passed"  # target: a dotted name or TypeRef+name handed to a call: only to a function
STOP = "stop"  # target: the call's source; name: the literal prefix of a computed name

# TypeRef: "<kind> <text>", resolved by the pass to classes:
#   "N pkg.C"     an instance of the class a name is       "R pkg.f"  what calling a name returns
#   "S pkg.C"     self in class pkg.C (its subclasses too)  "A pkg.C x"  attribute x of pkg.C
#   "M pkg.C m"   what method m of pkg.C returns           "V pkg.C"  the class object itself
DUNDERS = {ast.Subscript: "__getitem__", ast.Add: "__add__", ast.Sub: "__sub__",
           ast.Mult: "__mul__", ast.MatMult: "__matmul__", ast.Mod: "__mod__"}
SYNTAX_CALLS = {"len": "__len__", "iter": "__iter__", "str": "__str__", "repr": "__repr__",
                "bool": "__bool__", "hash": "__hash__", "next": "__next__"}
NOT_PASSED = {"isinstance", "issubclass", "getattr", "hasattr", "setattr", "type", "id", "super"}
_BUILTINS = frozenset(dir(builtins))
PARTIALS = {"functools.partial", "functools.partialmethod", "functools.wraps", "functools.reduce"}


@dataclass(frozen=True)
class Call:
    """One call (or attribute read, or function handed on) in a function, as written."""

    kind: str
    target: str
    name: str = ""
    line: int = 0


@dataclass(frozen=True)
class Function:
    """A `def` (its nested defs included): its calls, and what it hands back and catches."""

    qualname: str  # module and __qualname__: "pkg.mod.C.m"
    line: int
    end_line: int
    calls: tuple[Call, ...] = ()
    returns: str = ""  # a TypeRef of its return annotation
    decorators: tuple[str, ...] = ()  # dotted names, qualified
    is_property: bool = False
    catches: tuple[tuple[int, int, tuple[str, ...]], ...] = ()  # try body lines, classes caught


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
    registered: tuple[tuple[str, str], ...] = ()  # a function stored as a value: (qualname, source)


def read_calls(source: bytes | str, module: str, is_package: bool = False) -> CallFacts | None:
    """The module's facts; None when `ast` cannot parse it (LibCST's read says why)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _Reader(module, is_package).read(tree)


class _Reader:
    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.bindings: dict[str, str] = {}
        self.functions: list[Function] = []
        self.classes: list[ClassFacts] = []
        self.star: list[str] = []
        self.registered: list[tuple[str, str]] = []
        self.all_names: tuple[str, ...] | None = None
        self.self_attributes: dict[str, list[tuple[str, str]]] = {}  # method: `self.x = ...` types

    def read(self, tree: ast.Module) -> CallFacts:
        for node in tree.body:
            self._bind(node)
        for node in tree.body:
            self._statement(node, prefix=self.module, cls=None)
        return CallFacts(self.module, tuple(sorted(self.bindings.items())), tuple(self.functions),
                         tuple(self.classes), self.all_names, tuple(self.star), tuple(self.registered))

    # ------------------------------------------------------------ module-level names

    def _bind(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b` binds `a`
                top = alias.name.split(".")[0]
                self.bindings[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            base = self._from_module(node)
            for alias in node.names:
                if alias.name == "*":
                    self.star.append(base)
                else:
                    self.bindings[alias.asname or alias.name] = f"{base}.{alias.name}".lstrip(".")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bindings[node.name] = f"{self.module}.{node.name}"
        elif isinstance(node, (ast.If, ast.Try)):  # `try: import x / except: ...`, TYPE_CHECKING
            for inner in [*node.body, *getattr(node, "orelse", []),
                          *(h for handler in getattr(node, "handlers", []) for h in handler.body)]:
                self._bind(inner)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            self._assign(node.targets[0].id, node.value)

    def _assign(self, name: str, value: ast.expr) -> None:
        if name == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
            self.all_names = tuple(e.value for e in value.elts
                                   if isinstance(e, ast.Constant) and isinstance(e.value, str))
        if isinstance(value, ast.BoolOp):  # `scan = c_scan or py_scan`: the fallback is ours
            value = value.values[-1]
        dotted = _dotted(value)
        if dotted and dotted[0] in self.bindings:  # an alias: `load = _impl.load`
            self.bindings[name] = self._qualify(dotted)
        elif isinstance(value, (ast.Dict, ast.List, ast.Tuple)):
            for element in [*getattr(value, "values", []), *getattr(value, "elts", [])]:
                self._registered(element, f"{name}[...]")

    def _registered(self, element: ast.expr, where: str) -> None:
        dotted = _dotted(element)
        if dotted and dotted[0] in self.bindings:
            self.registered.append((self._qualify(dotted), where))

    def _from_module(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.package.split(".") if self.package else []
        parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
        return ".".join([*parts, *([node.module] if node.module else [])])

    def _qualify(self, dotted: list[str]) -> str:
        return ".".join([self.bindings.get(dotted[0], dotted[0]), *dotted[1:]])

    # ------------------------------------------------------------ definitions

    def _statement(self, node: ast.stmt, prefix: str, cls: str | None) -> None:
        if isinstance(node, ast.ClassDef):
            self._class(node, prefix)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions.append(_FunctionReader(self, node, f"{prefix}.{node.name}", cls).read())
        elif isinstance(node, (ast.If, ast.Try)):
            for inner in [*node.body, *node.orelse, *getattr(node, "finalbody", [])]:
                self._statement(inner, prefix, cls)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and cls is None:
            for argument in node.value.args:  # `register(handler)` at module level
                self._registered(argument, ast.unparse(node.value.func) + "(...)")
        elif isinstance(node, ast.Assign) and cls is None:
            for target in node.targets:
                if isinstance(target, ast.Subscript):  # `HANDLERS[key] = handler`
                    self._registered(node.value, ast.unparse(target.value) + "[...]")

    def _class(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = f"{prefix}.{node.name}"
        bases = tuple(self._qualify(d) for d in (  # `Base[T]`: the generic's class
            _dotted(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases) if d)
        attributes: dict[str, str] = {}
        first = len(self.functions)
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                attributes[statement.target.id] = self.annotation(statement.annotation)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                held = _dotted(statement.value)
                if held and held[0] in self.bindings:  # `loader_class = Loader`
                    attributes[statement.targets[0].id] = "V " + self._qualify(held)
            self._statement(statement, qualname, qualname)
        for function in self.functions[first:]:  # its methods are the functions its body added
            if "." not in function.qualname[len(qualname) + 1:]:
                for name, ref in self.self_attributes.get(function.qualname, ()):
                    attributes.setdefault(name, ref)
        self.classes.append(ClassFacts(qualname, bases, tuple(sorted(attributes.items()))))

    def annotation(self, node: ast.expr | None) -> str:
        """A TypeRef of an annotation: `C`, `"C"`, `C | None`, `Optional[C]`, `type[C]`."""
        if node is None:
            return ""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return ""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.annotation(node.left), self.annotation(node.right)
            return left or right
        if isinstance(node, ast.Subscript):
            outer = _dotted(node.value)
            last = outer[-1] if outer else ""
            if last == "Optional":
                return self.annotation(node.slice)
            if last in ("type", "Type"):
                inner = self.annotation(node.slice)
                return "V " + inner[2:] if inner.startswith("N ") else ""
            return ""
        dotted = _dotted(node)
        if not dotted or dotted[0] in ("None", "str", "int", "float", "bool", "bytes"):
            return ""
        return "N " + self._qualify(dotted)


class _FunctionReader:
    """The calls of one `def` and everything nested in it, with the types it can tell."""

    def __init__(self, reader: _Reader, node: ast.FunctionDef | ast.AsyncFunctionDef,
                 qualname: str, cls: str | None) -> None:
        self.reader, self.node, self.qualname, self.cls = reader, node, qualname, cls
        self.types: dict[str, str] = {}
        self.untyped: dict[str, str] = {}  # a local bound to an attribute of an untyped value
        self.locals: set[str] = set()
        self.calls: list[Call] = []
        self.self_attributes: list[tuple[str, str]] = []

    def read(self) -> Function:
        node, reader = self.node, self.reader
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
        decorators = [_dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
        names = [d[-1] for d in decorators if d]
        if self.cls is not None and params and "staticmethod" not in names:
            self.types[params[0].arg] = ("V " if "classmethod" in names else "S ") + self.cls
        for param in params:
            if ref := reader.annotation(param.annotation):
                self.types.setdefault(param.arg, ref)
        nodes = _nodes(node)  # listed once: its locals, then its `try` blocks
        self._locals(node, nodes)
        for decorator in node.decorator_list:
            self._expression(decorator)
        for statement in node.body:
            self._walk(statement)
        reader.self_attributes[self.qualname] = self.self_attributes
        qualified = tuple(reader._qualify(d) for d in decorators if d and d[0] in reader.bindings)
        return Function(self.qualname, node.lineno, node.end_lineno or node.lineno,
                        tuple(dict.fromkeys(self.calls)), reader.annotation(node.returns), qualified,
                        "property" in names or "cached_property" in names, tuple(_catches(nodes, reader)))

    def _locals(self, node: ast.AST, nodes: list[ast.AST]) -> None:
        for inner in nodes:
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                self.locals.add(inner.id)
            elif isinstance(inner, ast.arg):  # its parameters and those of what it nests
                self.locals.add(inner.arg)
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and inner is not node:
                self.locals.add(inner.name)

    def _walk(self, node: ast.AST) -> None:
        """Statements in order, so that a local's type is known from its assignment on."""
        if isinstance(node, ast.Assign):
            self._expression(node.value)
            ref = self.type_of(node.value)
            for target in node.targets:
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
        for child in _children(node):
            if isinstance(child, ast.expr):
                self._expression(child)
            else:
                self._walk(child)

    def _target(self, target: ast.expr, ref: str) -> None:
        if isinstance(target, ast.Name):
            if ref:
                self.types[target.id] = ref
            else:
                self.types.pop(target.id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and self.types.get(target.value.id, "").startswith("S ") and ref:
            self.self_attributes.append((target.attr, ref))
        elif isinstance(target, ast.Subscript):
            self._expression(target.value)

    def _expression(self, node: ast.expr) -> None:
        called: set[int] = set()  # a call's own callee is no attribute read
        for inner in _nodes(node):  # a parent before its children
            if isinstance(inner, ast.Call):
                called.add(id(inner.func))
                self._call(inner)
            elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Load) \
                    and id(inner) not in called:
                ref = self.type_of(inner.value)
                if ref and not ref.startswith("V "):
                    self.calls.append(Call(PROPERTY, ref, inner.attr, inner.lineno))
            elif isinstance(inner, (ast.Subscript, ast.BinOp)):
                dunder = DUNDERS.get(type(inner.op) if isinstance(inner, ast.BinOp) else ast.Subscript)
                ref = self.type_of(inner.left if isinstance(inner, ast.BinOp) else inner.value)
                if dunder and ref and not ref.startswith("V "):
                    self.calls.append(Call(METHOD, ref, dunder, inner.lineno))

    def _call(self, node: ast.Call) -> None:
        func, line = node.func, node.lineno
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
        if qualified is not None:
            self.calls.append(Call(CALL, qualified, "", line))
        elif isinstance(func, ast.Name) and self.types.get(func.id, "").startswith("V "):
            self.calls.append(Call(CALL, self.types[func.id][2:], "", line))
        elif isinstance(func, ast.Name) and func.id in self.untyped:
            self.calls.append(Call(METHOD, "", self.untyped[func.id], line))
        elif isinstance(func, ast.Attribute):
            self._method_call(func, line)
        elif isinstance(func, ast.Call) and _dotted(func.func) == ["getattr"] and len(func.args) >= 2:
            self._getattr_call(func, line)
        elif isinstance(func, ast.Subscript):
            self.calls.append(Call(STOP, ast.unparse(func)[:80], "", line))
        if not (isinstance(func, ast.Name) and func.id in NOT_PASSED):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                self._passed(argument, line)

    def _method_call(self, func: ast.Attribute, line: int) -> None:
        receiver = func.value
        if isinstance(receiver, ast.Call) and _dotted(receiver.func) == ["super"]:
            if self.cls is not None:
                self.calls.append(Call(SUPER, self.cls, func.attr, line))
            return
        self.calls.append(Call(METHOD, self.type_of(receiver), func.attr, line))

    def _getattr_call(self, getter: ast.Call, line: int) -> None:
        receiver, name = getter.args[0], getter.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self.calls.append(Call(METHOD, self.type_of(receiver), name.value, line))
            return
        prefix = ""
        if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
            prefix = str(name.values[0].value)
        elif isinstance(name, ast.BinOp) and isinstance(name.left, ast.Constant):
            prefix = str(name.left.value)
        text = ast.unparse(getter)
        text = text if len(text) <= 80 else text[:77] + "..."
        self.calls.append(Call(STOP, f"{self.type_of(receiver)}\0{text}", prefix, line))

    def _passed(self, argument: ast.expr, line: int) -> None:
        qualified = self._global(_dotted(argument))
        if qualified is not None:
            self.calls.append(Call(PASSED, qualified, "", line))
        elif isinstance(argument, ast.Attribute):
            ref = self.type_of(argument.value)
            if ref:
                self.calls.append(Call(PASSED, ref, argument.attr, line))

    def _global(self, dotted: list[str] | None) -> str | None:
        """A name through the bindings (one a star import may bring: as the module's); or None."""
        if not dotted or dotted[0] in self.locals:
            return None
        if dotted[0] in self.reader.bindings:
            return self.reader._qualify(dotted)
        starred = self.reader.star and dotted[0] not in _BUILTINS
        return ".".join([self.reader.module, *dotted]) if starred else None

    def type_of(self, node: ast.expr) -> str:
        """A TypeRef of what an expression gives, or "" when a static reader cannot tell."""
        if isinstance(node, ast.Name):
            if node.id in self.types:
                return self.types[node.id]
            qualified = self._global([node.id])
            return "V " + qualified if qualified else ""
        if isinstance(node, ast.Attribute):
            owner = self.type_of(node.value)
            if owner.startswith("S ") or owner.startswith("N "):
                return f"A {owner[2:]} {node.attr}"
            if owner.startswith("V "):
                return f"V {owner[2:]}.{node.attr}"
            return ""
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                owner = self.type_of(func.value)
                if owner[:2] in ("S ", "N "):
                    return f"M {owner[2:]} {func.attr}"
                if owner.startswith("V "):
                    return f"R {owner[2:]}.{func.attr}"
                if owner.startswith("A "):
                    return ""
            called = self.type_of(func)
            if called.startswith("V "):
                return "R " + called[2:]
        return ""


def _catches(nodes: list[ast.AST], reader: _Reader) -> list[tuple[int, int, tuple[str, ...]]]:
    """Each `try` body's lines and the classes its handlers catch (`""` for a bare except)."""
    found = []
    for inner in nodes:
        if isinstance(inner, ast.Try) and inner.body:
            names: list[str] = []
            for handler in inner.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for kind in kinds:
                    dotted = _dotted(kind) if kind is not None else [""]
                    if dotted:
                        names.append(reader._qualify(dotted) if dotted[0] in reader.bindings
                                     else ".".join(dotted))
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


def _nodes(node: ast.AST) -> list[ast.AST]:
    """The node and everything under it, breadth first like `ast.walk`, listed in one pass."""
    found = [node]
    for inner in found:  # the list grows as it is read
        found.extend(_children(inner))
    return found


def _dotted(node: ast.expr | None) -> list[str] | None:
    """`a.b.c` as its parts; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None
