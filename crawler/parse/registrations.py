"""What a file keeps for a later call: functions stored in tables, handed to calls that keep
them, attached to classes (`Registration`), read with `ast` for the entry-point pass
(`crawler.callgraph.registries` puts them together; `crawler.parse.call_edges` finds them).

The shapes: `T[key] = f` and `T = {key: f}` (a table), `register_lowering(p, f)`,
`prim.def_impl(f)`, `@prim.def_abstract_eval`, `@register(key)` and `p = make(rule)` (a call
handed a function, with the module-level names handed beside it that may name the object it is
kept for), `C.name = f` and `setattr(C, "name", f)` (attached to a class). A `partial(f, ...)`
keeps `f`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

TABLE, ATTACHED = "table", "attached"  # how a function is kept, beside a registering call's kind
# a method of the instance kept in one of its attributes (`self.state = self.parse_node`): the
# table is the class's attribute (`pkg.Parser.state`), the value the class and method's name
HELD_METHOD = "held method"


REGISTRY_READS = frozenset({"get", "setdefault", "pop"})  # a table's item read by a call


@dataclass(frozen=True)
class Registration:
    """A function kept for a later call: stored into a table (`T[key] = f`, `T = {key: f}`),
    handed to a call that may keep it (`prim.def_impl(f)`, `register_lowering(p, f)`,
    `@table.register`, `@register(key)`, `p = make_primitive(rule)`), attached to a class
    (`C.name = f`, `setattr(C, "name", f)`), or a method of the instance kept in one of its
    attributes (`self.state = self.parse_node`: `HELD_METHOD`)."""

    value: str  # the function or class kept, qualified (HELD_METHOD: the class's, `C.method`)
    kind: str  # TABLE, ATTACHED, HELD_METHOD, or the registering call's kind (`CALL`, `METHOD`)
    target: str  # TABLE: the table; ATTACHED: the class; HELD_METHOD: `C.attribute`; a call:
    # its callee, or its receiver's TypeRef
    name: str = ""  # METHOD: the method called; ATTACHED: the attribute
    position: int = 0  # among the call's positional arguments (-1: handed by keyword)
    keyword: str = ""
    # the module-level names handed beside it (a method's receiver first): the first that is an
    # object (`remat_p`, not a function, class or module) is the object it is kept for
    keys: tuple[str, ...] = ()
    made: bool = False  # ATTACHED: what calling `value` returns; a call: handed to what it returns


NameOf = Callable[[list[str] | None], str]  # a dotted name in a scope, qualified ("" if not global)


def kept_value(node: ast.expr, name_of: NameOf) -> tuple[str, bool]:
    """The function or class an expression keeps, qualified, and whether it is what calling it
    returns: a name (`f`, `mod.f`), a `partial`'s first argument, a call of a name (`make(...)`)."""
    if isinstance(node, ast.Call):
        head = dotted(node.func) or [""]
        if head[-1] in ("partial", "partialmethod") and node.args:
            return name_of(dotted(node.args[0])), False
        return name_of(head), True
    return name_of(dotted(node)), False


def registrations(call: ast.Call, callee: tuple[str, str, str], name_of: NameOf, receiver: str = ""
                  ) -> list[Registration]:
    """A call handed functions (`register_lowering(p, rule)`, `prim.def_impl(f)`): each one it may
    keep, with the module-level names handed beside it (the receiver first) that may name the
    object it is kept for."""
    kind, target, method = callee
    keys: list[str] | None = None  # named at the first function kept: most calls keep none
    found = []
    handed = [*((i, "", a) for i, a in enumerate(call.args)), *((-1, k.arg, k.value) for k in call.keywords)]
    for position, keyword, argument in handed:
        value, made = kept_value(argument, name_of)
        if value and not made and keyword is not None:
            if keys is None:
                keys = [receiver, *(name_of(dotted(a)) for a in call.args)]
            found.append(Registration(value, kind, target, method, position, keyword,
                                      tuple(k for k in keys if k and k != value)))
    return found


def stored(target: ast.expr, value: ast.expr, name_of: NameOf, table_of: Callable[[ast.expr], str]
           ) -> list[Registration]:
    """`T[key] = f` (kept in a table) and `C.name = f` (attached to a class): what it keeps."""
    kept, made = kept_value(value, name_of)
    if not kept:
        return []
    if isinstance(target, ast.Subscript) and not made:
        table = table_of(target.value)
        key = name_of(dotted(target.slice))
        return [Registration(kept, TABLE, table, keys=(key,) if key else ())] if table else []
    if isinstance(target, ast.Attribute):
        owner = name_of(dotted(target.value))
        return [Registration(kept, ATTACHED, owner, target.attr, made=made)] if owner else []
    return []


def held_method(target: ast.expr, value: ast.expr, receiver: str, cls: str
                ) -> list[Registration]:
    """`self.state = self.parse_node` in a method of `cls` (`receiver`: the name of its
    instance, `self`): the method kept in the attribute, which `self.state()` runs later. Real:
    pyyaml's `Parser` and `Emitter` keep their next step so (`self.state = self.parse_
    document_start`, then `self.state()` in `check_event`); tqdm's notebook bar keeps its
    `display` (`self.disp = self.display`), seaborn's `gaussian_kde` its bandwidth rule
    (`self.covariance_factor = self.scotts_factor`). Not a method of another object
    (`self.x = other.m`), nor an attribute of another (`other.state = self.m`)."""
    if not (
            isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and target.value.id == receiver and isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name) and value.value.id == receiver):
        return []
    return [Registration(f"{cls}.{value.attr}", HELD_METHOD, f"{cls}.{target.attr}")]


def attached(call: ast.Call, name_of: NameOf) -> list[Registration]:
    """`setattr(C, "name", f)`: f attached to C as `name`."""
    if isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) == 3 \
            and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
        return stored(ast.Attribute(call.args[0], call.args[1].value, ast.Store()), call.args[2],
                      name_of, lambda _: "")
    return []


def literal(value: ast.Dict | ast.List | ast.Tuple, table: str, name_of: NameOf) -> list[Registration]:
    """`T = {key: f, ...}`, `T = [f, g]`: what the table keeps, with each key."""
    pairs = zip(value.keys, value.values) if isinstance(value, ast.Dict) else ((None, e) for e in value.elts)
    found = []
    for key, element in pairs:
        kept, made = kept_value(element, name_of)
        if kept and not made:
            named = name_of(dotted(key)) if key is not None else ""
            found.append(Registration(kept, TABLE, table, keys=(named,) if named else ()))
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
