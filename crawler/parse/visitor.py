"""The raise-site visitor: one parse per file, one pass over its statements.

`RaiseVisitor` walks statement blocks only (`crawler.parse._walk`): a `raise` is always a
statement, so expressions are never entered.

Lines come from `crawler.parse._positions`: Python's own `ast`, held equal to LibCST's
`PositionProvider`.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

from crawler.parse import _positions, _source, class_text, flow, names, skeleton
from crawler.parse._positions import Span, Unread
from crawler.parse._source import Guard
from crawler.parse._walk import StatementWalker
from crawler.parse.calls import Followed, Follower, ModuleIndex
from crawler.parse.messages import Piece, Reader, build_template, call_templates
from crawler.records import ClassDef, RaiseCounts, RaiseSite, Template, TextSlot

# A snippet longer than this is cut to a window around the raise.
SNIPPET_MAX_LINES = 150
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 20

# Class attributes that hold a default message template.
MESSAGE_ATTRIBUTES = frozenset({"message", "msg_template", "msg", "default_message",
                                "message_template", "default_detail", "template"})

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
        if isinstance(small, cst.Raise):
            self.found.append(FoundRaise(small, tuple(self.scopes), tuple(self.guards),
                                         self.position(level), self.indent))
            return
        self._note_flow(small, level)
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            self._bindings().update(names.bindings(small, self.package))
        elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and self.scopes:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                else [small.target]
            self.scopes[-1].assigned.update(t.value for t in targets if isinstance(t, cst.Name))
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

    def _note_flow(self, small: cst.BaseSmallStatement, level: flow.Level) -> None:
        """Returns and yields of functions, `global` names and module constants, for `calls`."""
        if isinstance(small, cst.Return):
            if self.scopes and not self.scopes[-1].is_class:
                self.scopes[-1].returns.append((small.value, self.position(level)))
        elif isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign)):
            if isinstance(small.value, (cst.Yield, cst.Await)) and self.scopes:
                self.scopes[-1].generator = True  # a yield, or an await: not a plain helper
            if not self.scopes and len(self._levels) == 1:
                constant = _constant(small)
                if constant is not None:
                    self.index.constants[constant[0]] = (constant[1], self.position(level))
        elif isinstance(small, cst.Global):
            self.index.declared_global.update(item.name.value for item in small.names)

    def _note_template(self, small: cst.BaseSmallStatement, level: flow.Level) -> None:
        """A class attribute `message = ...`, or `super().__init__(...)` in a class's __init__."""
        scope = self.scopes[-1]
        if scope.found_class is not None and scope.found_class.attribute is None:
            if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                    else [small.target]
                for target in targets:
                    if isinstance(target, cst.Name) and target.value in MESSAGE_ATTRIBUTES:
                        scope.found_class.attribute = (target.value, small.value,
                                                       self.position(level))
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
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, statement.value
    if isinstance(statement, cst.AnnAssign) and statement.value is not None \
            and isinstance(statement.target, cst.Name):
        return statement.target.value, statement.value
    return None


def _alias(statement: cst.BaseSmallStatement) -> tuple[str, list[str]] | None:
    """`Error = OSError`, `Bad = errors.Bad`: a module-level name bound to another name."""
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        parts = names.dotted(statement.value)
        if isinstance(target, cst.Name) and parts is not None:
            return target.value, parts
    return None


def _bound_names(statement: cst.BaseSmallStatement) -> Iterator[str]:
    """Module-level names that shadow a builtin: imports and plain assignments."""
    if isinstance(statement, cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar):
        for alias in statement.names:
            bound = alias.asname.name if alias.asname else alias.name
            if isinstance(bound, cst.Name):
                yield bound.value
    elif isinstance(statement, cst.Import):
        for alias in statement.names:
            bound = alias.asname.name if alias.asname else alias.name
            if isinstance(bound, cst.Name):
                yield bound.value
    elif isinstance(statement, cst.Assign):
        for target in statement.targets:
            if isinstance(target.target, cst.Name):
                yield target.target.value


@dataclass
class FileSites:
    """What one file gave: its sites, the raises that are not records, and its classes.

    `pending` holds raises without a message (`raise Foo`, `raise Foo()`) of a class that is not
    a builtin: they become records only if the repository-wide pass finds a template for Foo.
    `exports` maps the module's top-level names to qualified names, to follow re-exports.
    `regions`, `context` and `stubbed` are for reading the file's next version (see
    `crawler.skeleton`): read from a skeleton, `stubbed` lists the functions whose results the
    caller takes from the previous version (`skeleton.fill`).
    """

    sites: list[RaiseSite]
    counts: RaiseCounts
    positions: str  # "ast", "ast+libcst" or "libcst": which gave the lines (`_positions`)
    classes: list[ClassDef] = field(default_factory=list)
    pending: list[RaiseSite] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)
    regions: list[skeleton.Region] = field(default_factory=list)
    context: str = ""
    stubbed: tuple[skeleton.Region, ...] = ()
    followed: bool = False  # some message was read through another function or a constant


def find_raise_sites(path: str, source: bytes, module_name: str | None = None,
                     known: skeleton.Known | None = None) -> FileSites:
    """Parse one file and return its raise sites. Raises libcst's ParserSyntaxError and friends.

    With `known` (the context and functions of the file's previous version), a file whose
    context is unchanged is read as a skeleton: its known functions are stubbed, and listed in
    `stubbed` for the caller to fill in.
    """
    if known is not None and not any(parts[:1] == (FOLLOWED,) for region in known.regions
                                     for parts, _ in region.lookups):
        found = _skeleton_sites(path, source, module_name, known)
        if found is not None and not found.followed:
            return found
    module = cst.parse_module(source)
    visitor = RaiseVisitor(module_name, is_package=path.endswith("__init__.py"))
    visitor.visit_module(module)
    context = context_digest(visitor, module)
    if not visitor.found and not visitor.classes:
        return FileSites([], RaiseCounts(), positions="none", exports=dict(visitor.module_bindings),
                         context=context)
    text = _decode(source, module.encoding)
    lines = _LINE_BREAK.split(text)
    tree, unread = _positions.ast_read(source, lines, module, text)
    plain = _plain_text(source)
    regions = skeleton.outline(tree, skeleton.split_lines(plain)) \
        if tree is not None and plain is not None else []
    found = _read(path, module, visitor, tree, lines, lines, regions, unread=unread)
    found.context = context
    return found


def _skeleton_sites(path: str, source: bytes, module_name: str | None, known: skeleton.Known
                    ) -> FileSites | None:
    """The file read as a skeleton; None when it must be read whole after all."""
    text = _plain_text(source)
    if text is None:
        return None
    real_lines = skeleton.split_lines(text)
    placed = skeleton.place(real_lines, known.regions)
    for _ in range(3):  # a stub refused is put back, and the skeleton read again
        skeletal = skeleton.build(real_lines, placed)
        if skeletal is None:
            return None
        read = _read_skeleton(skeletal, path, module_name, known)
        if read is None:
            return None
        module, visitor, tree, unread, refused = read
        if not refused:
            break
        placed = [region for region in placed if region not in refused]
    else:
        return None
    skeleton_lines = _LINE_BREAK.split(skeletal.text)
    regions = sorted([*skeletal.stubbed, *skeleton.fresh_regions(tree, skeletal, real_lines)],
                     key=lambda r: r.line)
    functions = [r for r in regions if r.kind == skeleton.FUNCTION]
    found = _read(path, module, visitor, tree, skeleton_lines, _LINE_BREAK.split(text), functions,
                  skeletal.real_line, unread)
    counted = {r.line: r for r in found.regions}
    found.regions = [counted.get(r.line, r) for r in regions]
    found.context = known.context
    found.stubbed = skeletal.stubbed
    return found


def _read_skeleton(skeletal: skeleton.Skeleton, path: str, module_name: str | None,
                   known: skeleton.Known
                   ) -> tuple[cst.Module, RaiseVisitor, ast.Module, Unread,
                              set[skeleton.Region]] | None:
    """The skeleton parsed and visited, and the stubs it cannot keep; None: read it whole."""
    try:
        module = cst.parse_module(skeletal.text.encode("utf-8", "surrogatepass"))
    except Exception:  # noqa: BLE001 - a skeleton LibCST refuses: read the file whole instead
        return None
    tree, unread = _positions.ast_read(skeletal.text, _LINE_BREAK.split(skeletal.text), module,
                                       skeletal.text)
    if tree is None:
        return None  # nothing to check the stubs against
    visitor = RaiseVisitor(module_name, is_package=path.endswith("__init__.py"))
    visitor.visit_module(module)
    if context_digest(visitor, module) != known.context:
        return None
    refused = skeleton.misplaced(tree, skeletal)
    refused.update(region for region in skeletal.stubbed if region.kind == skeleton.FUNCTION
                   and any(module_lookup(visitor, list(parts)) != answer
                           for parts, answer in region.lookups))
    return module, visitor, tree, unread, refused


def _read(path: str, module: cst.Module, visitor: RaiseVisitor, tree: ast.Module | None,
          parsed_lines: list[str], lines: list[str], regions: list[skeleton.Region],
          real_line: Sequence[int] | None = None, unread: Unread = ()) -> FileSites:
    """Sites, pending raises and classes of a visited module; `real_line` maps a skeleton's lines."""
    exports = dict(visitor.module_bindings)
    if not visitor.found and not visitor.classes:
        return FileSites([], RaiseCounts(), "none", exports=exports, regions=regions)
    spans, function_spans, class_lines, positions = _positions.positions(
        module, tree, parsed_lines, visitor, unread)
    if real_line is not None:
        spans, function_spans, class_lines = _positions.moved_to(real_line, spans, function_spans,
                                                                 class_lines)
    sites: list[RaiseSite] = []
    pending: list[RaiseSite] = []
    follower = Follower(module, visitor.index,
                        lambda parts, scopes: _qualify(parts, scopes, visitor))  # type: ignore[arg-type]

    def where(name: str) -> str | None:
        """The path:line of a function or constant a message was followed into."""
        node = follower.defined.get(name)
        if isinstance(node, cst.FunctionDef) and id(node) in function_spans:
            return f"{path}:{function_spans[id(node)].line}"
        line = _positions.top_level_line(tree, module, node) if real_line is None else None
        return f"{path}:{line}" if line is not None else None

    tests: dict[int, str] = {}
    counts = RaiseCounts()
    tallies = [RaiseCounts() for _ in regions]
    lookups: list[set[tuple[str, ...]]] = [set() for _ in regions]
    for found in visitor.found:
        looked = len(visitor.lookups)
        span = spans[id(found.node)]
        function = next((s for s in reversed(found.scopes) if not s.is_class), None)
        snippet_span = function_spans.get(id(function.node)) if function else None
        place = _Place(path, module, found, span, _snippet(lines, span, snippet_span), follower,
                       visitor, where, tests)
        touched = len(follower.touched)
        made, raised = _sites(place)
        visitor.lookups.extend((FOLLOWED, name) for name in follower.touched[touched:])
        counts += raised
        pending.extend(site for site in made if site.message.kind == PENDING)
        sites.extend(site for site in made if site.message.kind != PENDING)
        index = skeleton.region_at(regions, span.line)
        if index is not None:
            tallies[index] += raised
            lookups[index].update(visitor.lookups[looked:])
    classes = []
    for found_class in visitor.classes:
        looked = len(visitor.lookups)
        made_class = _class(path, module, found_class, class_lines[id(found_class.node)], visitor)
        classes.append(made_class)
        index = skeleton.region_at(regions, made_class.line)
        if index is not None:
            lookups[index].update(visitor.lookups[looked:])
    counted = [replace(r, counts=t,
                       lookups=tuple((parts, module_lookup(visitor, parts)) for parts in sorted(u)))
               for r, t, u in zip(regions, tallies, lookups)]
    return FileSites(sites, counts, positions, classes, pending, exports, regions=counted,
                     followed=bool(follower.touched))


def context_digest(visitor: RaiseVisitor, module: cst.Module) -> str:
    """What every function's records take from the module: its name, and its line break.

    The module-level names a function's records depend on are its region's `lookups`.
    """
    parts = (visitor.module_name, visitor.is_package, module.default_newline)
    text = json.dumps(parts, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("ascii")).hexdigest()


def _plain_text(source: bytes) -> str | None:
    """The text of a UTF-8 file with no BOM and no other declared encoding; else None."""
    if source.startswith(codecs.BOM_UTF8):
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode("utf-8")
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return text if encoding == "utf-8" else None


PENDING = "pending"  # the kind of a message-less raise waiting for its class's template


def _decode(source: bytes, encoding: str) -> str:
    text = source.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


@dataclass(frozen=True)
class _Place:
    """What every site of one raise statement shares: its file, lines and reading context."""

    path: str
    module: cst.Module
    found: FoundRaise
    span: Span
    snippet: tuple[str, int]
    follower: Follower
    visitor: RaiseVisitor
    where: Callable[[str], str | None]  # a followed function or constant to its path:line
    tests: dict[int, str]  # the source of each `if` test already written, by `id`


def _sites(place: _Place) -> tuple[list[RaiseSite], RaiseCounts]:
    """One site per template of one raise, and how the raise counts; none when it has no message.

    `raise (a if c else b)` is read as two raises, under `c` and under `not (c)`.
    """
    exc = place.found.node.exc
    if exc is None:
        return [], _BARE_RAISE
    made: list[RaiseSite] = []
    counted: RaiseCounts | None = None
    for branch, guards in _branches(exc, place.found.indent):
        sites, raised = _branch_sites(place, branch, (*place.found.guards, *guards))
        made.extend(sites)
        if counted is None or raised == _WITH_MESSAGE:
            counted = raised
    assert counted is not None
    return made, counted


def _branches(exc: cst.BaseExpression, indent: str
              ) -> list[tuple[cst.BaseExpression, tuple[Guard, ...]]]:
    """The exceptions a raise may raise, each with the conditional expressions' tests."""
    if not isinstance(exc, cst.IfExp):
        return [(exc, ())]
    return [*((e, (Guard(exc.test, True, indent), *g)) for e, g in _branches(exc.body, indent)),
            *((e, (Guard(exc.test, False, indent), *g)) for e, g in _branches(exc.orelse, indent))]


def _branch_sites(place: _Place, exc: cst.BaseExpression, guards: tuple[Guard, ...]
                  ) -> tuple[list[RaiseSite], RaiseCounts]:
    """The sites of one exception a raise statement raises."""
    found, visitor, module = place.found, place.visitor, place.module
    func = exc.func if isinstance(exc, cst.Call) else exc
    exception_qualname = _exception_qualname(func, found.scopes, visitor)
    if not isinstance(exc, cst.Call):
        if not _looks_like_class(exc):
            return [], _RERAISE
        if exception_qualname is None or exception_qualname.startswith("builtins."):
            return [], _WITHOUT_MESSAGE
        return [_site(place, exc, guards, exception_qualname, build_template(PENDING, []))], \
            _WITHOUT_MESSAGE
    scope = next((s for s in reversed(found.scopes) if not s.is_class), None)
    assigned = scope.assigned if scope is not None else None
    reader = place.follower.reader(found.scopes, assigned)
    factory = _is_factory(func) and not _is_class(exception_qualname, visitor)
    if factory:
        followed = place.follower.factory(reader, exc, found.position)
        if followed.built:
            return _built_sites(place, exc, guards, followed), _WITH_MESSAGE
    templates = call_templates(exc, module, found.position, exception_qualname, assigned,
                               reader=reader)
    if factory and not followed.parameter_class and not followed.unknown_callee:
        source = _source.exact(module, exc, found.indent)
        templates = [replace(build_template("dynamic", [Piece(source, True)]),
                             reason=followed.reason)]
    elif templates is None:
        if exception_qualname is None or exception_qualname.startswith("builtins."):
            return [], _WITHOUT_MESSAGE
        return [_site(place, exc, guards, exception_qualname, build_template(PENDING, []))], \
            _WITHOUT_MESSAGE
    else:
        templates = [_followed(t, reader, place) for t in templates]
        if factory:  # `exc_type(message)`: a class passed as a parameter, not a factory
            templates = [replace(t, reason=followed.reason) for t in templates]
            factory = not followed.parameter_class
    return [_site(place, exc, guards, exception_qualname, t, factory) for t in templates], \
        _WITH_MESSAGE


def _is_class(exception_qualname: str | None, visitor: RaiseVisitor) -> bool:
    """`raise error(msg)` where `error` is a builtin's alias or a class of this module."""
    if exception_qualname is None:
        return False
    if exception_qualname.startswith("builtins."):
        return True
    prefix = f"{visitor.module_name}." if visitor.module_name else ""
    return any(prefix + found.qualname == exception_qualname for found in visitor.classes)


def _built_sites(place: _Place, exc: cst.Call, guards: tuple[Guard, ...], followed: Followed
                 ) -> list[RaiseSite]:
    """`raise make_error(...)`: one site per template of each exception the factory returns.

    A template the factory's code does not give as text is the raise's whole expression: the
    callee's names mean nothing at the raise."""
    sites = []
    for built in followed.built:
        templates = call_templates(built.call, place.module, built.position,
                                   built.exception_qualname, built.function.assigned,
                                   reader=built.reader) or []
        for template in templates:
            if template.kind == "dynamic":
                source = _source.exact(place.module, exc, place.found.indent)
                template = replace(build_template("dynamic", [Piece(source, True)]),
                                   reason=f"`{followed.via}` builds a message that is not read "
                                   "exactly")
            else:
                template = _followed(template, built.reader, place)
            sites.append(_site(place, exc, guards, built.exception_qualname, template))
    unique = {(s.exception_qualname, s.message.template): s for s in sites}
    return list(unique.values())


def _followed(template: Template, reader: Reader, place: _Place) -> Template:
    """A template that names the functions and constants its text was read through."""
    followed = place.follower.followed(reader)
    if not followed or template.kind == "dynamic":
        return template
    return replace(template, via=", ".join(followed),
                   defined_at=template.defined_at or place.where(followed[0]))


# A function's lookups hold (FOLLOWED, qualname) when its records read another function or
# constant of the module: a skeleton, which reuses records by function, is then not used.
FOLLOWED = "<followed>"


def _site(place: _Place, exc: cst.BaseExpression, guards: tuple[Guard, ...],
          exception_qualname: str | None, template: Template, factory: bool = False) -> RaiseSite:
    found, module = place.found, place.module
    func = exc.func if isinstance(exc, cst.Call) else exc
    function = next((s for s in reversed(found.scopes) if not s.is_class), None)
    cause = found.node.cause
    return RaiseSite(
        path=place.path,
        line=place.span.line,
        end_line=place.span.end_line,
        column=place.span.column,
        class_name=_class_qualname(found.scopes),
        function=function.name if function else None,
        qualname=qualname(found.scopes),
        exception=module.code_for_node(func),
        exception_qualname=exception_qualname,
        message=template,
        cause=_source.exact(module, cause.item, found.indent) if cause is not None else None,
        condition=_source.condition(module, guards, place.tests),
        snippet=place.snippet[0],
        snippet_line=place.snippet[1],
        factory=factory,
    )


# How one raise statement counts, by what it raises.
_WITH_MESSAGE = RaiseCounts(raise_statements=1)
_BARE_RAISE = RaiseCounts(raise_statements=1, bare_raise=1)
_RERAISE = RaiseCounts(raise_statements=1, reraise=1)
_WITHOUT_MESSAGE = RaiseCounts(raise_statements=1, without_message=1)


def _class(path: str, module: cst.Module, found: FoundClass,
           lines: tuple[int, int | None, int | None], visitor: RaiseVisitor) -> ClassDef:
    """A class statement as a record type, with its default message templates if any."""
    bases = []
    for arg in found.node.bases:
        if arg.keyword is not None or arg.star:
            continue
        parts = names.dotted(arg.value)
        resolved = _qualify(parts, found.scopes, visitor) if parts else None
        bases.append(resolved or module.code_for_node(arg.value))
    line, init_line, attribute_line = lines
    templates: list[Template] = []
    template_from = None
    params: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    verbatim: tuple[str, ...] = ()
    if found.init_call is not None:
        call, position, assigned = found.init_call
        call = _without_self(call)
        made = call_templates(call, module, position, assigned=assigned) or []
        templates = [t for t in made if t.kind != "dynamic"]
        template_from = "init" if templates else None
        if templates and found.init is not None:
            params, keywords = _params(found.init)
            verbatim = _verbatim(module, call, templates[0], position, assigned,
                                 set(params) | set(keywords))
    if not templates and found.attribute is not None:
        _, value, position = found.attribute
        alternatives = Reader(module).message(value, position)
        templates = [build_template(kind, pieces) for kind, pieces in alternatives
                     if kind != "dynamic"]
        template_from = "attribute" if templates else None
    init_target: str | None = None
    init_args: tuple[TextSlot, ...] = ()
    if found.init is not None and not params:
        params, keywords = _params(found.init)
    if found.init_call is not None:
        call, position, assigned = found.init_call
        init_target = class_text.init_target(
            call, lambda parts: _qualify(parts, found.scopes, visitor), found.statements)
        init_args = class_text.init_slots(module, _without_self(call), position, assigned)
    class_attributes, self_attributes, methods = class_text.slots(module, found.statements)
    prefix = f"{visitor.module_name}." if visitor.module_name else ""
    template_line = init_line if template_from == "init" else attribute_line
    defined_at = f"{path}:{template_line or line}"
    return ClassDef(
        qualname=prefix + found.qualname,
        name=found.node.name.value,
        bases=tuple(bases),
        path=path,
        line=line,
        templates=tuple(replace(t, defined_at=defined_at, argument=None) for t in templates),
        template_from=template_from,
        has_init=found.has_init,
        passes=_passes(found),
        params=params,
        keywords=keywords,
        verbatim=verbatim,
        init_target=init_target,
        init_args=init_args,
        self_attributes=self_attributes,
        class_attributes=class_attributes,
        methods=methods,
    )


def _params(init: cst.FunctionDef) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An __init__'s positional parameters after self, and its keyword-only ones."""
    positional = [p.name.value for p in (*init.params.posonly_params, *init.params.params)]
    return tuple(positional[1:]), tuple(p.name.value for p in init.params.kwonly_params)


def _verbatim(module: cst.Module, call: cst.Call, template: Template, position: flow.Position,
              assigned: set[str], params: set[str]) -> tuple[str, ...]:
    """Parameters every alternative of the template shows as given (str(), no conversion)."""
    values = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if template.argument is None or not template.argument.isdigit() \
            or int(template.argument) >= len(values):
        return ()
    alternatives = Reader(module, assigned).message(values[int(template.argument)], position)
    shown = [p for _, pieces in alternatives for p in pieces if p.is_placeholder]
    bent = {p.text for p in shown if not p.plain}
    return tuple(sorted({p.text for p in shown if p.plain and p.text in params}
                        - bent - assigned))


def _passes(found: FoundClass) -> int | None:
    """`def __init__(self, message, code=0): super().__init__(message)`: message's index, 0."""
    if found.init is None or found.init_call is None:
        return None
    args = _without_self(found.init_call[0]).args
    if len(args) != 1 or args[0].keyword is not None or args[0].star:
        return None
    value = args[0].value
    params = [p.name.value for p in (*found.init.params.posonly_params, *found.init.params.params)]
    if not isinstance(value, cst.Name) or value.value not in params[1:]:
        return None
    if value.value in found.init_call[2]:
        return None  # reassigned before the call: not handed on as it came
    return params[1:].index(value.value)


def _without_self(call: cst.Call) -> cst.Call:
    """`Base.__init__(self, msg)` read as `super().__init__(msg)`."""
    func = call.func
    if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call) and call.args:
        return call.with_changes(args=call.args[1:])
    return call


def _class_qualname(scopes: tuple[Scope, ...]) -> str | None:
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


def _looks_like_class(node: cst.BaseExpression) -> bool:
    """`raise ValueError` (a class, by convention capitalised) versus `raise error`."""
    name = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
    return isinstance(name, str) and name[:1].isupper()


def _is_factory(func: cst.BaseExpression) -> bool:
    """`raise make_error(...)`, `raise self._error(...)`: a call that is not a class, by its name."""
    if isinstance(func, cst.Name):
        name = func.value
    elif isinstance(func, cst.Attribute):
        name = func.attr.value
    else:
        return True
    return not name.lstrip("_")[:1].isupper()


def _exception_qualname(func: cst.BaseExpression, scopes: Sequence[Scope],
                        visitor: RaiseVisitor) -> str | None:
    """Through the imports and classes of the enclosing functions and module, else a builtin."""
    parts = names.dotted(func)
    if not parts or _is_local(parts[0], scopes):
        return None
    return _qualify(parts, scopes, visitor)


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


def _qualify(parts: list[str], scopes: Sequence[Scope], visitor: RaiseVisitor) -> str | None:
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


def _snippet(lines: list[str], span: Span, function: Span | None) -> tuple[str, int]:
    """The enclosing function's source, cut to a window around the raise when it is long."""
    start, end = (function.line, function.end_line) if function else (span.line, span.end_line)
    if end - start + 1 > SNIPPET_MAX_LINES:
        start = max(start, span.line - SNIPPET_BEFORE)
        end = min(end, span.end_line + SNIPPET_AFTER)
    while end > span.end_line and not lines[end - 1].strip():
        end -= 1  # a window's trailing blank lines say nothing
    return "\n".join(lines[start - 1 : end]) + "\n", start
