"""The `ast` helpers of `crawler.parse.call_edges`: nodes listed once, dotted names, `try`
blocks, and the scopes of nested functions.

A nested `def` is a node of its own in the graph, named as Python names it
(`f.<locals>.inner`); a def nested in a class that is itself nested in a function belongs to
that function, as does a lambda handed straight to a call. `graph_node` names the node of a
raise from its `__qualname__` by the same rule, so records and the graph agree.
"""

from __future__ import annotations

import ast
from typing import Protocol

from crawler.parse.positions import parse_expression

LOCALS = ".<locals>."
NOT_PASSED = {"isinstance", "issubclass", "getattr", "hasattr", "setattr", "type", "id", "super"}
CALLS_NOW = {"map", "filter", "sorted", "min", "max", "any", "all", "list", "tuple", "sum"}  # call at once
PARTIALS = {"functools.partial", "functools.partialmethod", "functools.wraps", "functools.reduce"}
# dunders reached by syntax: an operator or subscript, and builtins called on a value
DUNDERS = {ast.Subscript: "__getitem__", ast.Add: "__add__", ast.Sub: "__sub__",
           ast.Mult: "__mul__", ast.MatMult: "__matmul__", ast.Mod: "__mod__"}
SYNTAX_CALLS = {"len": "__len__", "iter": "__iter__", "str": "__str__", "repr": "__repr__",
                "bool": "__bool__", "hash": "__hash__", "next": "__next__"}


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


def nested_defs(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    """The defs a function's own scope holds (not those of its nested defs or classes)."""
    found: list[ast.AST] = []
    todo = list(children(node))
    while todo:
        inner = todo.pop()
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(inner)
        elif not isinstance(inner, (ast.ClassDef, ast.Lambda)):
            todo.extend(children(inner))
    return found


def split_lambdas(node: ast.AST) -> tuple[list[ast.AST], list[ast.Lambda]]:
    """An expression's nodes, parent first, without the lambdas it hands on (not to a call):
    those, apart. A lambda called or handed to a call stays, as what its function calls."""
    if isinstance(node, ast.Lambda):
        return [], [node]
    kept: set[int] = set()
    found = [node]
    apart: list[ast.Lambda] = []
    for inner in found:  # the list grows as it is read
        if isinstance(inner, ast.Call):
            kept.update(id(a) for a in [inner.func, *inner.args, *(k.value for k in inner.keywords)])
        for child in children(inner):
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


def computed_name(getter: ast.Call) -> tuple[str, str]:
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
        outer = dotted(node.value)
        last = outer[-1] if outer else ""
        if last == "Optional":
            return annotation(self, node.slice)
        if last in ("type", "Type"):
            inner = annotation(self, node.slice)
            return "V " + inner[2:] if inner.startswith("N ") else ""
        node = node.value  # `ParamType[t.Any]`: an instance of the generic class
    parts = dotted(node)
    if not parts or parts[0] in ("None", "str", "int", "float", "bool", "bytes"):
        return ""
    return "N " + self._qualify(parts)


def catches(nodes: list[ast.AST], reader: _Qualifies) -> list[tuple[int, int, tuple[str, ...]]]:
    """Each `try` body's lines and the classes its handlers catch (`""` for a bare except)."""
    found = []
    for inner in nodes:
        if isinstance(inner, ast.Try) and inner.body:
            names: list[str] = []
            for handler in inner.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                for kind in kinds:
                    parts = dotted(kind) if kind is not None else [""]
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


def children(node: ast.AST) -> list[ast.AST]:
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


def all_nodes(node: ast.AST) -> list[ast.AST]:
    """The node and everything under it, breadth first like `ast.walk`, listed in one pass."""
    found = [node]
    for inner in found:  # the list grows as it is read
        found.extend(children(inner))
    return found


def dotted(node: ast.expr | None) -> list[str] | None:
    """`a.b.c` as its parts; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None
