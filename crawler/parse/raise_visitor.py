"""The raise-site visitor: one pass over a module's statements, collecting what its records need.

`RaiseVisitor` walks statement blocks only (`crawler.parse._walk`): a `raise` is always a
statement, so expressions are never entered. It keeps the stack of enclosing classes and
functions (`Scope`), the `if` tests each raise runs under, the module's bindings, and what
`crawler.parse.message.calls` follows (functions, methods, module constants: `ModuleIndex`). The
names at the end of this module resolve a dotted name through that stack.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst

from crawler.parse import names
from crawler.parse._source import Guard
from crawler.parse._walk import StatementWalker
from crawler.parse.message import class_text, flow
from crawler.parse.message.calls import ModuleIndex

# Class attributes that hold a default message template.
MESSAGE_ATTRIBUTES = frozenset({"message", "msg_template", "msg", "default_message",
                                "message_template", "default_detail", "template"})
# Statement and expression types, compared by `type(node)` (LibCST's nodes are final dataclasses).
_ASSIGNMENTS: frozenset[type] = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign})
_IMPORTS: frozenset[type] = frozenset({cst.Import, cst.ImportFrom})
_SUSPENDING: frozenset[type] = frozenset({cst.Yield, cst.Await})  # not a plain helper


@dataclass
class Scope:
    """One enclosing class or function on the visitor's stack, with the names it binds."""

    name: str
    is_class: bool
    node: cst.CSTNode | None = None
    names: dict[str, str] = field(default_factory=dict)  # imports and local classes: qualname
    assigned: set[str] = field(default_factory=set)  # names a plain assignment binds here
    found_class: FoundClass | None = None
    returns: list[tuple[cst.BaseExpression | None, flow.Position]] = field(default_factory=list)
    generator: bool = False  # a `yield` statement in its body
    followable: bool = True  # False: a skeleton's stub of a function `calls` never follows

    @property
    def statements(self) -> class_text.ClassStatements | None:
        return self.found_class.statements if self.found_class is not None else None


@dataclass
class FoundRaise:
    """A raise statement as the walk met it, before positions are known."""

    node: cst.Raise
    scopes: tuple[Scope, ...]
    guards: tuple[Guard, ...]  # the `if` tests it runs under, within its function
    position: flow.Position = ()
    indent: str = ""  # its block's indentation


@dataclass
class FoundClass:
    """A class statement, and where its default message is built, if it has one."""

    node: cst.ClassDef
    qualname: str  # __qualname__
    scopes: tuple[Scope, ...]  # the scopes around the class statement
    has_init: bool = False
    init: cst.FunctionDef | None = None
    init_call: tuple[cst.Call, flow.Position, set[str]] | None = None  # super().__init__(...)
    attribute: tuple[str, cst.BaseExpression, flow.Position] | None = None
    statements: class_text.ClassStatements = field(default_factory=class_text.ClassStatements)


@dataclass
class RaiseVisitor(StatementWalker[Scope]):
    """Collects every raise statement and class statement of a module with its scope stack.

    Results are in `found` (in source order), `classes` and `module_bindings` (module-level
    names: imports, classes and aliases, to qualified names); `functions` lists every function
    definition in source order, for matching them to positions.
    """

    module_name: str | None = None
    is_package: bool = False
    found: list[FoundRaise] = field(default_factory=list)
    functions: list[cst.FunctionDef] = field(default_factory=list)
    classes: list[FoundClass] = field(default_factory=list)
    module_classes: set[str] = field(default_factory=set)  # classes defined at module level
    module_names: set[str] = field(default_factory=set)  # every other module-level binding
    module_bindings: dict[str, str] = field(default_factory=dict)
    star_modules: list[str] = field(default_factory=list)  # `from M import *` at module level
    lookups: list[tuple[str, ...]] = field(default_factory=list)  # dotted names the module resolved
    scopes: list[Scope] = field(default_factory=list)  # the enclosing classes and functions
    index: ModuleIndex = field(default_factory=ModuleIndex)  # what messages are followed into
    _aliases: list[tuple[str, list[str]]] = field(default_factory=list)

    def visit_module(self, module: cst.Module) -> None:
        self.index.module_name = self.module_name
        self.index.body = module.body
        self.walk(module)
        self.index.indents = self.indents
        self.index.classes = self.module_classes
        for bound, parts in self._aliases:  # `Error = OSError` at module level
            target = names.qualify(parts, [self.module_bindings], self.module_names - {bound})
            if target is not None and bound not in self.module_bindings:
                self.module_bindings[bound] = target

    @property
    def package(self) -> str | None:
        if self.module_name is None:
            return None
        return names.package_of(self.module_name, self.is_package)

    def open_scope(self, node: cst.ClassDef | cst.FunctionDef) -> Scope:
        if isinstance(node, cst.ClassDef):
            return self._open_class(node)
        if not self.scopes:
            self.module_names.add(node.name.value)
        self.functions.append(node)
        class_text.opened(self.scopes, node)
        if node.name.value == "__init__" and self.scopes and self.scopes[-1].found_class:
            self.scopes[-1].found_class.has_init = True
            self.scopes[-1].found_class.init = node
        scope = Scope(node.name.value, is_class=False, node=node)
        if not self.scopes:
            _index_once(self.index.functions, node.name.value, scope)
        elif self.scopes[-1].is_class:
            _index_once(self.index.methods, (qualname(self.scopes), node.name.value), scope)
        return scope

    def _open_class(self, node: cst.ClassDef) -> Scope:
        if not self.scopes:
            self.module_classes.add(node.name.value)
        qualified = qualname([*self.scopes, Scope(node.name.value, is_class=True)])
        found = FoundClass(node, qualified, tuple(self.scopes))
        self.classes.append(found)
        if self.module_name is not None and not (self.scopes and self.scopes[-1].is_class):
            self._bindings()[node.name.value] = f"{self.module_name}.{qualified}"
        return Scope(node.name.value, is_class=True, node=node, found_class=found)

    def _bindings(self) -> dict[str, str]:
        """Where a binding made here goes: the innermost function's names, else the module's."""
        for scope in reversed(self.scopes):
            if not scope.is_class:
                return scope.names
        return self.module_bindings

    def visit_small(self, small: cst.BaseSmallStatement, level: flow.Level,
                    condition: cst.BaseExpression | None) -> None:
        # LibCST's nodes are ABCs: an isinstance that fails costs a Python call, `type` does not
        # (its concrete nodes have no subclasses, so the two agree)
        kind = type(small)
        if kind is cst.Raise:
            self.found.append(FoundRaise(cast(cst.Raise, small), tuple(self.scopes),
                                         tuple(self.guards), self.position(level), self.indent))
            return
        self._note_flow(small, kind, level)
        if kind in _IMPORTS:
            imported = cast("cst.Import | cst.ImportFrom", small)
            self._bindings().update(names.bindings(imported, self.package))
            star = names.star_module(imported, self.package) if not self.scopes else None
            if star is not None and star not in self.star_modules:
                self.star_modules.append(star)
        elif kind in _ASSIGNMENTS and self.scopes:
            targets = [t.target for t in cast(cst.Assign, small).targets] if kind is cst.Assign \
                else [cast("cst.AnnAssign | cst.AugAssign", small).target]
            self.scopes[-1].assigned.update(t.value for t in targets  # type: ignore[attr-defined]
                                            if type(t) is cst.Name)
        if not self.scopes:  # at module level, `if` and `try` blocks included
            self.module_names.update(_bound_names(small))
            alias = _alias(small)
            if alias is not None:
                self._aliases.append(alias)
        else:
            self._note_template(small, level)
            if self.scopes[-1].found_class is not None or (
                    len(self.scopes) > 1 and self.scopes[-2].found_class is not None):
                class_text.note(self.scopes, small, lambda: self.position(level))

    def _note_flow(self, small: cst.BaseSmallStatement, kind: type, level: flow.Level) -> None:
        """Returns and yields of functions, `global` names and module constants, for `calls`."""
        if kind is cst.Return:
            if self.scopes and not self.scopes[-1].is_class:
                self.scopes[-1].returns.append((cast(cst.Return, small).value,
                                                self.position(level)))
        elif kind is cst.Expr or kind in _ASSIGNMENTS:
            value = cast("cst.Expr | cst.Assign | cst.AnnAssign | cst.AugAssign", small).value
            if type(value) in _SUSPENDING and self.scopes:
                self.scopes[-1].generator = True  # a yield, or an await: not a plain helper
            if not self.scopes and len(self._levels) == 1:
                constant = _constant(small)
                if constant is not None:
                    self.index.constants[constant[0]] = (constant[1], self.position(level))
        elif kind is cst.Global:
            self.index.declared_global.update(item.name.value
                                              for item in cast(cst.Global, small).names)

    def _note_template(self, small: cst.BaseSmallStatement, level: flow.Level) -> None:
        """A class attribute `message = ...`, or `super().__init__(...)` in a class's __init__."""
        scope = self.scopes[-1]
        if scope.found_class is not None and scope.found_class.attribute is None:
            kind = type(small)
            if kind is cst.Assign or kind is cst.AnnAssign:
                assigned = cast("cst.Assign | cst.AnnAssign", small)
                if assigned.value is None:
                    return
                targets = [t.target for t in cast(cst.Assign, small).targets] \
                    if kind is cst.Assign else [cast(cst.AnnAssign, small).target]
                for target in targets:
                    if type(target) is cst.Name and \
                            cast(cst.Name, target).value in MESSAGE_ATTRIBUTES:
                        scope.found_class.attribute = (cast(cst.Name, target).value,
                                                       assigned.value, self.position(level))
            return
        if (scope.name == "__init__" and len(self.scopes) > 1 and isinstance(small, cst.Expr)
                and isinstance(small.value, cst.Call)):
            owner = self.scopes[-2].found_class
            func = small.value.func
            if (owner is not None and owner.init_call is None and isinstance(func, cst.Attribute)
                    and func.attr.value == "__init__"):
                owner.init_call = (small.value, self.position(level), scope.assigned)


def _index_once(table: dict[Any, Any], key: Any, scope: Scope) -> None:
    """A function by its name; None for a name defined twice (which one runs is not read)."""
    table[key] = None if key in table else scope


def _constant(statement: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    """`NAME = value` (or `NAME: T = value`) at a module's top level."""
    kind = type(statement)
    if kind is cst.Assign:
        assign = cast(cst.Assign, statement)
        if len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name:
            return cast(cst.Name, assign.targets[0].target).value, assign.value
    elif kind is cst.AnnAssign:
        annotated = cast(cst.AnnAssign, statement)
        if annotated.value is not None and type(annotated.target) is cst.Name:
            return cast(cst.Name, annotated.target).value, annotated.value
    return None


def _alias(statement: cst.BaseSmallStatement) -> tuple[str, list[str]] | None:
    """`Error = OSError`, `Bad = errors.Bad`: a module-level name bound to another name."""
    if type(statement) is cst.Assign:
        assign = cast(cst.Assign, statement)
        if len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        parts = names.dotted(assign.value)
        if type(target) is cst.Name and parts is not None:
            return cast(cst.Name, target).value, parts
    return None


def _bound_names(statement: cst.BaseSmallStatement) -> Iterator[str]:
    """Module-level names that shadow a builtin: imports and plain assignments."""
    kind = type(statement)
    if kind is cst.ImportFrom or kind is cst.Import:
        imported = cast("cst.Import | cst.ImportFrom", statement).names
        if type(imported) is cst.ImportStar:
            return
        for alias in cast("Sequence[cst.ImportAlias]", imported):
            bound = alias.asname.name if alias.asname else alias.name
            if type(bound) is cst.Name:
                yield cast(cst.Name, bound).value
    elif kind is cst.Assign:
        for target in cast(cst.Assign, statement).targets:
            if type(target.target) is cst.Name:
                yield cast(cst.Name, target.target).value



# ---------------------------------------------------------------- names through the scopes


def class_qualname(scopes: tuple[Scope, ...]) -> str | None:
    """The `__qualname__` of the innermost enclosing class: `Outer.Inner`, `f.<locals>.C`."""
    for index in range(len(scopes) - 1, -1, -1):
        if scopes[index].is_class:
            return qualname(scopes[: index + 1])
    return None


def qualname(scopes: Sequence[Scope]) -> str:
    """Python's own `__qualname__` of the innermost scope; `<module>` at module level."""
    parts: list[str] = []
    for scope in scopes:
        parts.append(scope.name)
        if not scope.is_class:
            parts.append("<locals>")
    if parts and parts[-1] == "<locals>":
        parts.pop()
    return ".".join(parts) or "<module>"


def exception_qualname_of(func: cst.BaseExpression, scopes: Sequence[Scope],
                        visitor: RaiseVisitor) -> str | None:
    """Through the imports and classes of the enclosing functions and module, else a builtin."""
    parts = names.dotted(func)
    if not parts or _is_local(parts[0], scopes):
        return None
    return qualify(parts, scopes, visitor)


def _is_local(name: str, scopes: Sequence[Scope]) -> bool:
    """A parameter or assigned variable of the enclosing function: not what the imports say."""
    scope = next((s for s in reversed(scopes) if not s.is_class), None)
    if scope is None or not isinstance(scope.node, cst.FunctionDef):
        return False
    if name in scope.assigned:
        return True
    params = scope.node.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return any(p.name.value == name for p in every)


def qualify(parts: list[str], scopes: Sequence[Scope], visitor: RaiseVisitor) -> str | None:
    chain = [scope.names for scope in reversed(scopes) if not scope.is_class]
    if not any(parts[0] in bound for bound in chain):
        visitor.lookups.append(tuple(parts))  # resolved by the module: what a function takes from it
    chain.append(visitor.module_bindings)
    shadowed = visitor.module_names | visitor.module_classes
    return names.qualify(parts, chain, shadowed)


def module_lookup(visitor: RaiseVisitor, parts: Sequence[str]) -> str | None:
    """What a dotted name no enclosing function binds resolves to in this module."""
    return names.qualify(parts, [visitor.module_bindings],
                         visitor.module_names | visitor.module_classes)

