"""What a class does to its message, read off its own statements, for the class pass to compose.

The visitor hands each class statement it walks to `note`: the class body's assignments, its
`__init__`'s `self.x = ...`, and the `return`s of `__str__` and of the message methods (names in
`MESSAGE_METHODS`, whose bodies a skeleton never stubs). `slots` then reads them as `TextSlot`s:
each an expression's alternatives as templates, the placeholders it shows as given (`verbatim`),
and those that are `__init__` locals bound to `self.x` (`aliases`), so that the class pass can
put a class attribute's text in their place. Nothing here looks beyond the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, cast

import libcst as cst

from crawler.parse._source import exact
from crawler.parse.message import flow
from crawler.parse.message.known_names import MESSAGE_METHODS, SEVERAL
from crawler.parse.message.pieces import Alternative, Piece, Unreadable
from crawler.parse.message.reading import Reader, joined_definition
from crawler.parse.message.templates import build_template
from crawler.parse.names import dotted
from crawler.records import TextSlot

# The forms a class attribute's value may read as literal text in (`Reader`'s own, the
# gettext and text wrappers' calls); a name, an operator or an f-string reads as something else.
_LITERAL_FORMS = (cst.SimpleString, cst.ConcatenatedString, cst.IfExp, cst.Call)

@dataclass(frozen=True)
class Constants:
    """The module constants a class's text may read (`PREFIX + message`): each name bound once
    at the module's top level by `NAME = value`, never declared `global` (`module_constants`),
    and the parameters of each of the class's methods, by the id of its body's statements: a
    parameter of the constant's name hides it."""

    values: Mapping[str, cst.BaseExpression]
    parameters: Mapping[int, frozenset[str]]



def module_constants(found: Mapping[str, tuple[cst.BaseExpression, flow.Position]],
                     bound_once: Callable[[str], bool]) -> dict[str, cst.BaseExpression]:
    """Of the visitor's top-level `NAME = value` (and `NAME: T = value`) statements, the plain
    assignments of names bound once (`Follower.bound_once_at_top`)."""
    return {name: value for name, (value, position) in found.items()
            if type(position[-1][0][position[-1][1]]) is cst.Assign and bound_once(name)}


def method_parameters(node: cst.ClassDef) -> dict[int, frozenset[str]]:
    """The parameters of each method of the class, by the id of its body's statements."""
    found: dict[int, frozenset[str]] = {}
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.FunctionDef) and isinstance(statement.body, cst.IndentedBlock):
            params = statement.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params,
                     *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]
            found[id(statement.body.body)] = frozenset(p.name.value for p in every)
    return found

Noted = tuple[cst.BaseExpression, flow.Position, "set[str] | None"]  # what, where, fn's names


@dataclass
class ClassStatements:
    """The statements of one class that bear on its message, as the walk meets them."""

    class_assigns: list[tuple[str, Noted]] = field(default_factory=list)
    self_assigns: list[tuple[str, Noted]] = field(default_factory=list)
    init_calls: int = 0  # `....__init__(...)` statements in __init__: more than one is not followed
    # by "name()" for a method, "name" for a property; None: a bare return
    returns: dict[str, list[Noted | None]] = field(default_factory=dict)


class WalkScope(Protocol):
    """What `note` needs of the visitor's scopes."""

    name: str
    is_class: bool
    node: cst.CSTNode | None
    assigned: set[str]

    @property
    def statements(self) -> ClassStatements | None: ...


def opened(scopes: Sequence[WalkScope], node: cst.FunctionDef) -> None:
    """A message method defined in a class: known even if no `return` is ever met in it."""
    if scopes and scopes[-1].statements is not None and node.name.value in MESSAGE_METHODS \
            and _takes_self_only(node):
        scopes[-1].statements.returns.setdefault(_method_key(node), [])


def _method_key(node: cst.FunctionDef) -> str:
    """`name` for a property, `name()` for a method called as one."""
    is_property = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property"
                      for d in node.decorators)
    return node.name.value if is_property else f"{node.name.value}()"


def note(scopes: Sequence[WalkScope], small: cst.BaseSmallStatement,
         position: Callable[[], flow.Position]) -> None:
    """Keep `small` if it is a class-body assignment, a `self.x =` in `__init__`, or a message
    method's `return`."""
    # called for every statement of a class: `type` (LibCST's concrete nodes have no subclasses)
    # spares the Python call a failing isinstance of an ABC costs
    scope, kind = scopes[-1], type(small)
    if scope.is_class:
        statements = scope.statements
        if statements is not None and kind is cst.Assign \
                and len(cast(cst.Assign, small).targets) == 1:
            assign = cast(cst.Assign, small)
            target = assign.targets[0].target
            if type(target) is cst.Name:
                statements.class_assigns.append((cast(cst.Name, target).value,
                                                 (assign.value, position(), None)))
        return
    if len(scopes) < 2 or scopes[-2].statements is None:
        return
    statements = scopes[-2].statements
    assert statements is not None
    if scope.name == "__init__" and kind is cst.Expr and _is_init_call(cast(cst.Expr, small).value):
        statements.init_calls += 1
    elif scope.name == "__init__" and (kind is cst.Assign or kind is cst.AnnAssign):
        assigned = cast("cst.Assign | cst.AnnAssign", small)
        targets = [t.target for t in assigned.targets] if isinstance(assigned, cst.Assign) \
            else [assigned.target]
        for target in targets:
            attribute = _self_attribute(target)
            if attribute is not None and assigned.value is not None:
                statements.self_assigns.append((attribute, (assigned.value, position(),
                                                            scope.assigned)))
    elif scope.name in MESSAGE_METHODS and kind is cst.Return \
            and isinstance(scope.node, cst.FunctionDef) and _takes_self_only(scope.node):
        returned = cast(cst.Return, small).value
        value = (returned, position(), scope.assigned) if returned is not None else None
        statements.returns.setdefault(_method_key(scope.node), []).append(value)


def slots(module: cst.Module, statements: ClassStatements, none_params: frozenset[str],
          constants: Constants) -> tuple[tuple[TextSlot, ...], tuple[TextSlot, ...], tuple[TextSlot, ...]]:
    """The class's text attributes, its `__init__`'s `self.x`, and its message methods' returns.

    `none_params`: the `__init__`'s parameters whose default is None."""
    class_attributes = []
    for name, (value, position, _) in statements.class_assigns:
        if type(value) not in _LITERAL_FORMS:
            continue  # `x = 1`, `__slots__ = (...)`: never literal text, so not read at all
        slot = read_slot(module, name, [(value, position, None)], constants)
        if all(t.kind == "literal" for t in slot.templates):
            class_attributes.append(slot)
    self_attributes = tuple(_set_if_given(_guarded(read_slot(module, name, [noted], constants),
                                                   noted[0], noted[1], none_params),
                                          noted, none_params)
                            for name, noted in statements.self_assigns)
    returns = dict(statements.returns)
    for name, (value, _, _) in statements.class_assigns:
        if name == "__str__":  # `__str__ = __repr__`: that method's returns; else not readable
            same = f"{value.value}()" if isinstance(value, cst.Name) else None
            returns["__str__()"] = returns.get(same, [None]) if same else [None]
    methods = tuple(method_slot(module, name, found or [None], constants)
                    for name, found in sorted(returns.items()))
    return tuple(class_attributes), self_attributes, methods


def read_slot(module: cst.Module, name: str, expressions: Sequence[Noted | None],
              constants: Constants) -> TextSlot:
    """The alternatives of one or more expressions (a method's returns) as one slot."""
    templates = []
    shown: list[Piece] = []
    aliases: dict[str, str] = {}
    for noted in expressions:
        if noted is None:
            templates.append(build_template("dynamic", [Piece("None", True)]))
            continue
        value, position, assigned = noted
        for kind, pieces in _ConstantReader(module, constants, assigned).message(value, position):
            templates.append(build_template(kind, pieces))
            shown += [p for p in pieces if p.is_placeholder]
            aliases.update(_aliases(module, pieces, position, assigned))
    bent = {p.text for p in shown if not p.plain}
    verbatim = tuple(sorted({p.text for p in shown if p.plain} - bent))
    return TextSlot(name, tuple(templates), verbatim, tuple(sorted(aliases.items())))


# A message method's paths, each with the `if` tests it decides, before a raise's arguments
# decide them (pyyaml's MarkedYAMLError.__str__ joins a list five `if`s add to: 32 paths).
MAX_GUARDED = 64

Guard = tuple[tuple[str, bool], ...]


def method_slot(module: cst.Module, name: str, returns: Sequence[Noted | None],
                constants: Constants) -> TextSlot:
    """A message method's returns as one slot, each template with the `if` tests its path
    decides (`TextSlot.guards`): the branches a `return` sits in, the `if ...: return` before
    it, and, for a returned local (`return msg`, `return sep.join(lines)`), the branches each of
    its definitions comes through. Where no path decides a test, the slot is what `read_slot`
    gives (a bare `return` is read by it)."""
    found: list[tuple[str, list[Piece], Guard]] = []
    aliases: dict[str, str] = {}
    for noted in returns:
        if noted is None:  # a bare `return`: `read_slot`'s None
            return read_slot(module, name, returns, constants)
        paths = _guarded_paths(module, noted, constants)
        found += paths
        for _, pieces, _ in paths:
            aliases.update(_aliases(module, pieces, noted[1], noted[2]))
    if not found or len(found) > MAX_GUARDED:
        return read_slot(module, name, returns, constants)
    shown = [p for _, pieces, _ in found for p in pieces if p.is_placeholder]
    bent = {p.text for p in shown if not p.plain}
    verbatim = tuple(sorted({p.text for p in shown if p.plain} - bent))
    # no path decides a test: each return read whole, as `read_slot` reads it, and no guards
    guards = tuple(guard for _, _, guard in found) if any(g for _, _, g in found) else ()
    return TextSlot(name, tuple(build_template(kind, pieces) for kind, pieces, _ in found),
                    verbatim, tuple(sorted(aliases.items())), guards=guards)


def _guarded_paths(module: cst.Module, noted: Noted, constants: Constants
                   ) -> list[tuple[str, list[Piece], Guard]]:
    """One return's alternatives (`dynamic` where unreadable, as `read_slot`'s), each with the
    tests its path decides."""
    value, position, assigned = noted
    reader = _ConstantReader(module, constants, assigned)
    around = tuple((exact(module, test), outcome) for test, outcome in _return_decisions(position))
    split = _split_by_definitions(reader, module, value, position)
    if split is not None:
        return [(kind, pieces, around + guard) for kind, pieces, guard in split]
    return [(kind, pieces, around) for kind, pieces in reader.message(value, position)]


def _split_by_definitions(reader: Reader, module: cst.Module, value: cst.BaseExpression,
                          position: flow.Position) -> list[tuple[str, list[Piece], Guard]] | None:
    """`return name` or `return sep.join(name)`, read one definition of `name` at a time, each
    with the tests its path decides; None where no definition's path decides one."""
    separator: str | None = None
    name = value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "join" and len(value.args) == 1 \
            and value.args[0].keyword is None and not value.args[0].star:
        try:
            texts = reader.plain_texts(value.func.value, position)
        except Unreadable:
            return None
        if len(texts) != 1:
            return None
        separator, name = texts[0], value.args[0].value
    if not isinstance(name, cst.Name) or not position \
            or reader.assigned is not None and name.value not in reader.assigned:
        return None
    found = flow.definitions(name.value, position, items=separator is not None,
                             limit=MAX_GUARDED)
    if not found or not any(flow.decisions_of(d) for d in found):
        return None
    paths: list[tuple[str, list[Piece], Guard]] = []
    for definition in found:
        guard = tuple((exact(module, test), outcome)
                      for test, outcome in flow.decisions_of(definition))
        try:
            read = reader.definition_texts(definition) if separator is None \
                else joined_definition(reader, separator, definition)
        except Unreadable:
            return None
        paths += [(kind, pieces, guard) for kind, pieces in read]
        if len(paths) > MAX_GUARDED:
            return None
    return paths


def _return_decisions(position: flow.Position) -> list[flow.Decision]:
    """The `if` tests a `return` at `position` decides by being reached: the branch of each
    `if`/`elif`/`else` it sits in, and each `if T: ... return` (no `else`) before it, false."""
    decided: list[flow.Decision] = []
    for depth, (statements, index, role) in enumerate(position):
        for statement in statements[:index]:
            if isinstance(statement, cst.If) and statement.orelse is None \
                    and _ends_in_return(statement.body):
                decided.append((statement.test, False))
        if role == "if" and depth:
            outer_statements, outer_index, _ = position[depth - 1]
            chain = outer_statements[outer_index]
            if isinstance(chain, cst.If):
                tests = flow.tests_before(chain, statements)
                last = chain
                while isinstance(last, cst.If) and last.body.body is not statements \
                        and isinstance(last.orelse, cst.If):
                    last = last.orelse
                taken = isinstance(last, cst.If) and last.body.body is statements
                decided += [(test, False) for test in (tests[:-1] if taken else tests)]
                if taken:
                    decided.append((tests[-1], True))
    return decided


def _ends_in_return(suite: cst.BaseSuite) -> bool:
    """The block's last statement is a `return` or `raise` (an indented block's last line, or
    the small statements of `if T: return x`)."""
    last = suite.body[-1] if suite.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, (cst.Return, cst.Raise))


class _ConstantReader(Reader):
    """A reader that also reads a module constant of literal text (`PREFIX + message`), where
    the function around the expression neither assigns the name nor takes it as a parameter."""

    def __init__(self, module: cst.Module, constants: Constants, assigned: set[str] | None) -> None:
        super().__init__(module, assigned)
        self.constants = constants

    def _read(self, node: cst.BaseExpression, position: flow.Position) -> list[Alternative]:
        try:
            return super()._read(node, position)
        except Unreadable:
            if type(node) is not cst.Name or not isinstance(node, cst.Name) \
                    or self.assigned is not None and node.value in self.assigned:
                raise
            value = self.constants.values.get(node.value)
            if value is None or position and node.value in self.constants.parameters.get(
                    id(position[0][0]), ()):
                raise
            return Reader(self.module).read(value, ())  # literal text only


def _aliases(module: cst.Module, pieces: list[Piece], position: flow.Position,
             assigned: set[str] | None) -> dict[str, str]:
    """Placeholders that are locals with one definition, `self.x` or the class's name.

    A name its function never assigns (`assigned`; None: not known) has no definition."""
    found = {}
    for piece in pieces:
        if not piece.is_placeholder or not piece.text.isidentifier() or not position \
                or assigned is not None and piece.text not in assigned:
            continue
        definitions = flow.definitions(piece.text, position)
        if definitions is None or len(definitions) != 1 or len(definitions[0]) != 1:
            continue
        expression = definitions[0][0][0]
        if not isinstance(expression, cst.BaseExpression):
            continue
        if _self_attribute(expression) is not None or _is_class_name(expression) \
                or _is_base_str(expression) or _is_keyword_format(expression):
            found[piece.text] = exact(module, expression)
    return found


def _is_keyword_format(node: cst.BaseExpression) -> bool:
    """`self.name.format(**mapping)`: a class attribute's text as a format string whose fields
    keywords fill (botocore's `msg = self.fmt.format(**kwargs)`), which the class pass reads
    with each class's own attribute."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value == "format" and _self_attribute(node.func.value) is not None \
        and bool(node.args) and all(arg.star == "**" for arg in node.args)


def _is_init_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value == "__init__"


def _self_attribute(node: cst.CSTNode) -> str | None:
    """`self.name` (one level, no call): the attribute's name."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and node.value.value == "self":
        return node.attr.value
    return None


def _is_class_name(node: cst.CSTNode) -> bool:
    """`self.__class__.__name__` or `type(self).__name__`."""
    if not (isinstance(node, cst.Attribute) and node.attr.value == "__name__"):
        return False
    owner = node.value
    if isinstance(owner, cst.Attribute):
        return owner.attr.value == "__class__" and _self_attribute(owner) is not None
    return (isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name)
            and owner.func.value == "type" and len(owner.args) == 1
            and isinstance(owner.args[0].value, cst.Name) and owner.args[0].value.value == "self")


def _is_base_str(node: cst.CSTNode) -> bool:
    """`super().__str__()` or `Base.__str__(self)`: the message as the next class shows it,
    kept in a local before a `__str__` adds to it (sphinx's ExtensionError: `parent_str =
    super().__str__()`; docker's APIError: `message = super().__str__()`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "__str__"):
        return False
    owner = node.func.value
    if isinstance(owner, cst.Call):
        return isinstance(owner.func, cst.Name) and owner.func.value == "super" \
            and not owner.args and not node.args
    return isinstance(owner, (cst.Name, cst.Attribute)) and len(node.args) == 1 \
        and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self"


def _takes_self_only(node: cst.CSTNode | None) -> bool:
    if not isinstance(node, cst.FunctionDef):
        return False
    params = node.params
    return (len(params.params) + len(params.posonly_params) == 1 and not params.kwonly_params
            and not isinstance(params.star_arg, cst.Param) and params.star_kwarg is None)


def init_slots(module: cst.Module, call: cst.Call, position: flow.Position,
               assigned: set[str] | None, none_params: frozenset[str], constants: Constants
               ) -> tuple[TextSlot, ...]:
    """What `super().__init__(...)` hands on (self already dropped), by position or keyword; a
    starred argument is one `*` slot that cannot be read."""
    found = []
    for index, arg in enumerate(call.args):
        if arg.star:
            found.append(read_slot(module, "*", [None], constants))
            break
        name = arg.keyword.value if arg.keyword is not None else str(index)
        slot = read_slot(module, name, [(arg.value, position, assigned)], constants)
        found.append(_guarded(slot, arg.value, position, none_params))
    return tuple(found)


def _guarded(slot: TextSlot, value: cst.BaseExpression, position: flow.Position,
             none_params: frozenset[str]) -> TextSlot:
    """The slot, marked `if_none` when it reads a parameter through `if P is None: P = ...`."""
    if isinstance(value, cst.Name) and value.value in none_params \
            and none_guarded(value.value, position):
        return replace(slot, if_none=value.value)
    return slot


def _set_if_given(slot: TextSlot, noted: Noted, none_params: frozenset[str]) -> TextSlot:
    """The slot, marked `if_given` when its `self.x = ...` is the body of an `if P is not None:`
    (no `else`) among the `__init__`'s own statements, P a parameter whose default is None and
    that the `__init__` never assigns: where a call leaves P None, the class attribute stays."""
    _, position, assigned = noted
    if position and position[-1][2] == "line":
        position = position[:-1]  # the small statement's own line: the statement it is part of
    if len(position) != 2 or position[-1][2] != "if":
        return slot
    guard = _statement_at(position[:1])
    if not isinstance(guard, cst.If) or guard.orelse is not None:
        return slot
    tested = _not_none_test(guard.test)
    if tested is None or tested not in none_params or assigned is None or tested in assigned:
        return slot
    return replace(slot, if_given=tested)


def _not_none_test(test: cst.BaseExpression) -> str | None:
    """`P is not None`: the name P."""
    if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) \
            and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.IsNot) \
            and isinstance(test.comparisons[0].comparator, cst.Name) \
            and test.comparisons[0].comparator.value == "None":
        return test.left.value
    return None


def none_guarded(name: str, position: flow.Position) -> bool:
    """The definitions of parameter `name` reaching `position` are an `if name is None:` (no
    `else`) that assigns it, and the parameter as given where that test is false."""
    definitions = flow.definitions(name, position) if position else None
    if not definitions or len(definitions) < 2:
        return False
    given = [d for d in definitions if len(d) == 1 and d[0][1] and _falls_through(d[0][1], name)]
    if len(given) != 1 or not isinstance(given[0][0][0], cst.Name):
        return False
    guard = _statement_at(given[0][0][1])
    return all(d is given[0] or all(_inside(part_position, guard) for _, part_position in d)
               for d in definitions)


def _statement_at(position: flow.Position) -> cst.CSTNode:
    statements, index, _ = position[-1]
    return statements[index]


def _falls_through(position: flow.Position, name: str) -> bool:
    """The position is an `if name is None:` with no `else`: the parameter read past it."""
    node = _statement_at(position)
    return isinstance(node, cst.If) and node.orelse is None and _is_none_test(node.test, name)


def _inside(position: flow.Position, guard: cst.CSTNode) -> bool:
    """The position lies in the body of `guard` (a statement on its path, not itself)."""
    return any(statements[index] is guard for statements, index, _ in position[:-1])


def _is_none_test(test: cst.BaseExpression, name: str) -> bool:
    return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name)
            and test.left.value == name and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Is)
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None")


def init_target(call: cst.Call, qualify: Callable[[list[str]], str | None],
                statements: ClassStatements) -> str | None:
    """`super().__init__` is "super"; `Base.__init__(self, ...)` is Base's qualified name;
    "several" when __init__ calls more than one."""
    if statements.init_calls > 1:
        return SEVERAL
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    owner = func.value
    if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) \
            and owner.func.value == "super":
        return "super"
    parts = dotted(owner)
    if not parts:
        return None
    return qualify(parts) or ".".join(parts)
