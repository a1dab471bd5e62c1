"""Which assignments of a name reach a statement, within one function: statements only, no guessing.

A `Position` is the path of statement blocks from the function (or module, or class) body down to
one statement: at each level the block's statements, the index of the statement on the path, and
the role of the block in its parent statement. `definitions` walks backwards from a position:

- `name = value` (or `name: T = value`) ends the walk with one definition;
- `name += value` is the definitions reaching it, each followed by `value`;
- an `if` whose branches assign gives one definition per branch (and the fall-through), and so
  does a `try` whose body does not bind the name: each handler and its `else` is a branch;
- a `with` body is read as straight-line code;
- a `for` or `while` loop whose body only adds to the name (`+=`, under `if`s too) is the
  definitions reaching it followed by one `Repeated` part: the passes' alternatives, any number of
  times (a `break`, `continue` or loop `else` in it makes the answer unknown);
- unpacking and `with ... as`: the value bound there is opaque, so the definition is the name
  itself (a `{name}` placeholder), to which `+=` may add text;
- a `match`, `del`, `global`, or a loop that assigns the name anew makes the answer unknown
  (None): the message then keeps a clear `{name}` placeholder, never a wrong guess.

A definition whose path runs through an `if`/`elif`/`else` branch also holds the tests the path
decides (`Decided`, read by `decisions_of`): a message method's paths are cut to those a raise
runs by them (`crawler.parse.message.guards`).

With `items=True` the name is a list whose text is joined: `name.append(value)` adds one
`Element`, `name += value` and `name.extend(value)` add a sequence, and any other mention of the
name (a call that could change the list) makes the answer unknown.

Names an `if` test binds with a walrus (`if (msg := check(x)): raise ValueError(msg)`): which
tests of an `if`/`elif` chain run before a branch, and the value a test surely binds a name to.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

Level = tuple[Sequence[cst.CSTNode], int, str]  # (block statements, index on the path, role)
Position = tuple[Level, ...]


@dataclass(frozen=True)
class Element:
    """One item a list gets: `name.append(value)`."""

    value: cst.BaseExpression


@dataclass(frozen=True)
class Repeated:
    """What one pass of a loop adds, any number of times: the pass's alternatives."""

    passes: tuple[tuple[Part, ...], ...]


# An expression (or what a list or a loop adds) and where it is evaluated
Part = tuple["cst.BaseExpression | Element | Repeated", Position]


Definition = tuple[Part, ...]  # the text is the concatenation of its parts


Decision = tuple[cst.BaseExpression, bool]  # an `if` test and the outcome a path needs of it


class Decided(tuple):  # type: ignore[type-arg]
    """A definition whose path runs through `if` branches: a tuple of its parts, as any other
    definition, that also holds the tests the path decides (`decisions_of`). Only `_if`'s
    branches decide: a `try`'s handlers, a loop's passes and a walrus decide nothing here."""

    decisions: tuple[Decision, ...]


def decisions_of(definition: Definition) -> tuple[Decision, ...]:
    """The `if` tests a definition's path decides, each with the outcome it needs."""
    return getattr(definition, "decisions", ())


def _decided(parts: tuple[Part, ...], decisions: tuple[Decision, ...]) -> Definition:
    if not decisions:
        return parts
    definition = Decided(parts)
    definition.decisions = decisions
    return definition


MAX_DEFINITIONS = 8


MAX_STEPS = 400  # statements one search may look at: beyond, the answer is unknown


class _GiveUp(Exception):
    """The name may be bound in a way this module does not follow."""


_NotFound = None


_Result = list[Definition] | None


def definitions(name: str, position: Position, items: bool = False,
                limit: int = MAX_DEFINITIONS) -> list[Definition] | None:
    """The definitions of `name` that reach `position`; None when unknown or unbound here, or
    when more than `limit` paths reach it. `items`: the name is a list of text pieces (see the
    module's docstring)."""
    try:
        found = _Search(name, items, limit).reaching(position)
    except (_GiveUp, RecursionError):  # its depth is MAX_STEPS's, a bound of ours: a chain of
        return None  # some 200 `+=` is deeper than Python's stack, and is unknown, as past it
    if found is None or len(found) > limit:
        return None
    return found


_SEED: Part = (cst.Name("_"), ())  # where a loop's pass starts: what the name held before it


class _Search:
    """One search for the definitions of one name, with its own budget of steps."""

    def __init__(self, name: str, items: bool = False, limit: int = MAX_DEFINITIONS) -> None:
        self.name = name
        self.items = items
        self.limit = limit
        self.steps_left = MAX_STEPS
        self.floor = 0  # inside a loop's pass: the levels below which the pass starts

    def step(self) -> None:
        """One statement looked at; past the budget, the answer is unknown."""
        self.steps_left -= 1
        if self.steps_left < 0:
            raise _GiveUp

    def reaching(self, position: Position) -> _Result:
        levels = list(position)
        while levels:
            statements, index, role = levels[-1]
            found = self._scan(statements, index, tuple(levels[:-1]), role)
            if found is not _NotFound:
                return found
            levels.pop()
            if self.floor and len(levels) < self.floor:
                return [(_SEED,)]  # the start of the pass: what came before the loop
            if not levels:
                return _NotFound
            parent_statements, parent_index, _ = levels[-1]
            parent = parent_statements[parent_index]
            if role in ("loop", "handler", "try_else", "finally", "case") and \
                    self._bound_before(parent, role):
                raise _GiveUp
            if role == "if" and type(parent) is cst.If:
                value = self._test_binding(parent, statements)  # type: ignore[arg-type]
                if value is not None:
                    return [((value, tuple(levels)),)]
        return _NotFound

    def _scan(self, statements: Sequence[cst.CSTNode], end: int, outer: Position,
              role: str) -> _Result:
        """Definitions found in statements[:end], walking back; _NotFound when none binds the name."""
        for index in range(end - 1, -1, -1):
            self.step()
            here = (*outer, (statements, index, role))
            found = self._statement(statements[index], here)
            if found is not _NotFound:
                return found
        return _NotFound

    def _statement(self, node: cst.CSTNode, here: Position) -> _Result:
        # `type(node) is`: LibCST's concrete nodes have no subclasses, and its isinstance is a
        # Python call on an ABC, met for every statement a search walks back over
        name = self.name
        kind = type(node)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            body = node.body  # type: ignore[attr-defined]
            return self._scan(body, len(body), here, "line")
        if kind is cst.Assign:
            assign: cst.Assign = node  # type: ignore[assignment]
            hits = [t.target for t in assign.targets if _binds(name, t.target)]
            if not hits:
                return self._mentions(assign, here)
            if any(type(t) is not cst.Name for t in hits):
                return self._opaque(here)  # unpacking
            return [((assign.value, here),)]
        if kind is cst.AnnAssign:
            annotated: cst.AnnAssign = node  # type: ignore[assignment]
            if not _binds(name, annotated.target):
                return _NotFound
            if annotated.value is None or type(annotated.target) is not cst.Name:
                raise _GiveUp
            return [((annotated.value, here),)]
        if kind is cst.AugAssign:
            augmented: cst.AugAssign = node  # type: ignore[assignment]
            if not _binds(name, augmented.target):
                return _NotFound
            if type(augmented.operator) is not cst.AddAssign:
                raise _GiveUp
            return self._added(augmented.value, here)
        if kind is cst.Expr and self.items:
            return self._list_call(node.value, here)  # type: ignore[attr-defined]
        if kind is cst.If:
            return self._if(node, here)  # type: ignore[arg-type]
        if kind is cst.With:
            found = self._suite(node.body, here, "with")  # type: ignore[attr-defined]
            if found is _NotFound and self._assigns(node):
                return self._opaque(here)  # `with ... as name`
            return found
        if kind is cst.Try:
            return self._try(node, here)  # type: ignore[arg-type]
        if kind is cst.For or kind is cst.While:
            return self._loop(node, here)  # type: ignore[arg-type]
        if kind in _SMALL_NOT_BINDING:
            self.step()  # as `_assigns` would count it: the budget gives up at the same place
            return self._mentions(node, here) if self.items else _NotFound
        if self._assigns(node):
            raise _GiveUp
        return self._mentions(node, here) if self.items else _NotFound

    def _added(self, value: cst.BaseExpression | Element, here: Position) -> _Result:
        """`name += value` (or an appended item): what reached it, followed by `value`."""
        before = self.reaching(here)
        if before is _NotFound:
            if self.items:
                raise _GiveUp  # a list from elsewhere: its items are not known
            before = [((cst.Name(self.name), here),)]
        return [_decided((*definition, (value, here)), decisions_of(definition))
                for definition in before]

    def _opaque(self, here: Position) -> _Result:
        """A binding whose value is not read: the name's own value, where it is bound."""
        if self.items:
            raise _GiveUp
        return [((cst.Name(self.name), ()),)]  # no position: read as a `{name}` placeholder

    def _list_call(self, call: cst.BaseExpression, here: Position) -> _Result:
        """`name.append(v)`, `name.extend(v)`; any other mention of a list makes it unknown."""
        if type(call) is cst.Call:
            func = call.func  # type: ignore[attr-defined]
            args = call.args  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and type(func.value) is cst.Name \
                    and func.value.value == self.name and len(args) == 1 \
                    and args[0].keyword is None and not args[0].star:
                if func.attr.value == "append":
                    return self._added(Element(args[0].value), here)
                if func.attr.value == "extend":
                    return self._added(args[0].value, here)
                raise _GiveUp
        return self._mentions(call, here)

    def _mentions(self, node: cst.CSTNode, here: Position) -> _Result:
        """For a list: a statement that names it may change it (a call it is passed to)."""
        if self.items and _names(node, self.name):
            raise _GiveUp
        return _NotFound

    def _try(self, node: cst.Try, here: Position) -> _Result:
        """A body that does not bind the name, then one branch: a handler or the `else`."""
        if self._assigns_block(node.body) or self._mentions_block(node.body):
            raise _GiveUp  # the body may stop anywhere: not followed
        if node.finalbody is not None and (self._assigns_block(node.finalbody.body)
                                          or self._mentions_block(node.finalbody.body)):
            raise _GiveUp
        branches: list[cst.BaseSuite] = [handler.body for handler in node.handlers]
        if node.orelse is not None:
            branches.append(node.orelse.body)
        if any(h.name is not None and _binds(self.name, h.name.name) for h in node.handlers):
            raise _GiveUp
        return self._branches(branches, here, "if", falls_through=node.orelse is None)

    def _loop(self, node: cst.For | cst.While, here: Position) -> _Result:
        """A loop whose passes only add to the name: what reached it, then `Repeated` passes."""
        target_binds = type(node) is cst.For and _binds(self.name, node.target)  # type: ignore[union-attr]
        if not target_binds and not self._assigns(node) and not (
                self.items and self._mentions_block(node.body)):
            return _NotFound
        if target_binds or node.orelse is not None or _jumps(node.body):
            raise _GiveUp
        body: Sequence[cst.CSTNode] = node.body.body
        outer_floor, self.floor = self.floor, len(here) + 1
        try:
            passes = self._scan(body, len(body), here, "loop")
        finally:
            self.floor = outer_floor
        if passes is _NotFound or any(not p or p[0] is not _SEED for p in passes):
            raise _GiveUp  # a pass that assigns the name anew
        added = tuple(tuple(p[1:]) for p in passes if len(p) > 1)
        before = self.reaching(here)
        if before is _NotFound:
            if self.items:
                raise _GiveUp
            before = [((cst.Name(self.name), here),)]
        if not added:
            return before
        return [_decided((*definition, (Repeated(added), here)), decisions_of(definition))
                for definition in before]

    def _bound_before(self, parent: cst.CSTNode, role: str) -> bool:
        """Whether what may have run before a block of `parent` entered it binds the name: the
        `try` body, for a handler or the `else` (the handler's own statements before the one
        searched from were walked already: `if resolution is None: resolution = "..."` in an
        `except` that then raises it, alembic's `_catch_revision_errors`); the body, the
        handlers and the `else`, for the `finally`; the whole statement, for a loop's body (an
        earlier pass) or a `match` case."""
        if type(parent) is cst.Try or type(parent) is cst.TryStar:
            if role in ("handler", "try_else"):
                # a handler's `as` binds the name for its block (unknown here: opaque)
                return self._assigns_block(parent.body) or any(  # type: ignore[attr-defined]
                    h.name is not None and _binds(self.name, h.name.name)
                    for h in parent.handlers)  # type: ignore[attr-defined]
            if role == "finally":
                ran = [parent.body, *(h.body for h in parent.handlers)]  # type: ignore[attr-defined]
                if parent.orelse is not None:  # type: ignore[attr-defined]
                    ran.append(parent.orelse.body)  # type: ignore[attr-defined]
                return any(self._assigns_block(suite) for suite in ran)
        return self._assigns(parent)

    def _assigns_block(self, suite: cst.BaseSuite) -> bool:
        return any(self._assigns(statement) for statement in suite.body)

    def _mentions_block(self, suite: cst.BaseSuite) -> bool:
        return self.items and any(_names(statement, self.name) for statement in suite.body)

    def _suite(self, suite: cst.BaseSuite, here: Position, role: str) -> _Result:
        body: Sequence[cst.CSTNode] = suite.body
        return self._scan(body, len(body), here, role)

    def _test_binding(self, node: cst.If, block: Sequence[cst.CSTNode]
                      ) -> cst.BaseExpression | None:
        """The value a test of the `if` chain binds the name to by `(name := value)` before
        `block` (one of its branches) runs: the last test evaluated that binds it, when the
        walrus is surely evaluated (not behind `or`, `and`'s right side, `a if c else b`)."""
        for test in reversed(tests_before(node, block)):
            value = walrus_value(test, self.name)
            if value is not None:
                return value
            if walrus_binds(test, self.name):
                raise _GiveUp  # bound on some evaluations only
        return None

    def _if(self, node: cst.If, here: Position) -> _Result:
        """One definition per branch that assigns; a branch that does not falls through."""
        if self.items and _names(node.test, self.name):
            raise _GiveUp
        if any(walrus_binds(test, self.name) for test in tests_before(node, None)):
            raise _GiveUp  # `if (name := ...)` met walking back: not followed
        suites: list[cst.BaseSuite] = []
        tests: list[cst.BaseExpression] = []
        falls_through = False
        branch: cst.If | cst.Else | None = node
        while branch is not None:
            suites.append(branch.body)
            if isinstance(branch, cst.If):
                tests.append(branch.test)
                branch = branch.orelse
                if branch is None:
                    falls_through = True
            else:
                branch = None
        return self._branches(suites, here, "if", falls_through, tests)

    def _branches(self, suites: Sequence[cst.BaseSuite], here: Position, role: str,
                  falls_through: bool, tests: Sequence[cst.BaseExpression] = ()) -> _Result:
        """One definition per branch that binds; one that does not (or none taken) falls through.

        `tests`: an `if`/`elif` chain's, one per suite but the `else`: each branch's definitions
        decide them (`Decided`), as does the fall-through where the branches that bind are the
        chain's first ones (each of their tests false); elsewhere it decides nothing."""
        found: list[Definition] = []
        binding: list[int] = []
        for number, suite in enumerate(suites):
            result = self._suite(suite, here, role)
            if result is _NotFound:
                falls_through = True
                continue
            binding.append(number)
            decided = _branch_decisions(tests, number)
            found.extend(_decided(tuple(d), decided + decisions_of(d)) for d in result)
        if not found:
            return _NotFound
        if falls_through:
            before = self.reaching(here)
            through: tuple[Decision, ...] = ()
            if tests and binding == list(range(len(binding))) and len(binding) <= len(tests):
                through = tuple((test, False) for test in tests[:len(binding)])
            found.extend(_decided(tuple(d), through + decisions_of(d)) for d in (
                before if before is not _NotFound else [((cst.Name(self.name), here),)]))
        if len(found) > self.limit:
            raise _GiveUp
        return found

    def _assigns(self, node: cst.CSTNode) -> bool:
        """Whether a statement may bind the name anywhere in its blocks (statements only)."""
        for statement in _statements(node):
            self.step()
            if _binds_directly(self.name, statement):
                return True
        return False


def _branch_decisions(tests: Sequence[cst.BaseExpression], number: int
                      ) -> tuple[Decision, ...]:
    """What running branch `number` of an `if`/`elif`/`else` chain decides: the tests before it
    false, its own true (the `else`, past the last test: every test false)."""
    if not tests:
        return ()
    return (*((test, False) for test in tests[:number]),
            *(((tests[number], True),) if number < len(tests) else ()))


def _names(node: cst.CSTNode, name: str) -> bool:
    """Whether `name` appears as a name anywhere in the node (a use or a binding)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name and current.value == name:  # type: ignore[attr-defined]
            return True
        stack.extend(current.children)
    return False


def _jumps(suite: cst.BaseSuite) -> bool:
    """A `break` or `continue` of this loop: a pass may stop short of what it adds."""
    stack: list[cst.CSTNode] = list(suite.body)
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Break or kind is cst.Continue:
            return True
        if kind in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef):
            continue  # an inner loop's jumps are its own
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            stack.extend(current.body)  # type: ignore[attr-defined]
        else:
            push_named(current, _block_names(kind), stack)
    return False


def _binds(name: str, target: cst.CSTNode) -> bool:
    return any(bound == name for bound in _target_names(target))


def _statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and every statement (and small statement) nested in its blocks."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        _push_blocks(current, stack)


def _push_blocks(node: cst.CSTNode, stack: list[cst.CSTNode]) -> None:
    """Put the statements of the node's own blocks on `stack` (none for a function's or a
    class's: they bind their own names)."""
    kind = type(node)
    if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
        stack.extend(node.body)  # type: ignore[attr-defined]
        return
    if kind is cst.FunctionDef or kind is cst.ClassDef or kind in _SMALL_NOT_BINDING:
        return  # a small statement has no blocks
    names = _BLOCKS_OF.get(kind)
    if names is None:
        names = _BLOCKS_OF[kind] = _block_names(kind)
    push_named(node, names, stack)


def push_named(node: cst.CSTNode, names: Sequence[str], stack: list[cst.CSTNode]) -> None:
    """Put what the node holds under each of `names` that is a block on `stack`."""
    for attribute in names:
        child = getattr(node, attribute, None)
        if child is None or isinstance(child, cst.BaseExpression):
            continue
        if isinstance(child, (list, tuple)):
            stack.extend(child)
        elif isinstance(child, cst.CSTNode):
            stack.append(child)


_BLOCK_NAMES = ("body", "orelse", "handlers", "finalbody", "cases")


_BLOCKS_OF: dict[type, tuple[str, ...]] = {}  # a node type -> which of `_BLOCK_NAMES` it has


def _block_names(kind: type) -> tuple[str, ...]:
    """Those of `_BLOCK_NAMES` a node of this type may hold: its fields (a field with no
    default is no class attribute) and its class attributes, in `_BLOCK_NAMES`' order; the
    others are never there, and asking for them was most of a walk's cost."""
    held = {f.name for f in dataclasses.fields(kind)} if dataclasses.is_dataclass(kind) else set()
    return tuple(name for name in _BLOCK_NAMES if name in held or hasattr(kind, name))


# Small statements that bind no name and hold no block: nothing to look into.
_SMALL_NOT_BINDING: frozenset[type] = frozenset({
    cst.Expr, cst.Return, cst.Pass, cst.Break, cst.Continue, cst.Raise, cst.Assert})


# What `_bound_names` yields for a statement that may bind any name (a star import, a `case`).
ANY_NAME = "*"


def _binds_directly(name: str, node: cst.CSTNode) -> bool:
    return any(bound == name or bound == ANY_NAME for bound in _bound_names(node))


def _bound_names(node: cst.CSTNode) -> Iterator[str]:
    """The names one statement binds itself (`ANY_NAME` when it may bind any)."""
    kind = type(node)
    if kind not in _BINDING:  # most statements: LibCST's isinstance is a Python call
        return
    if kind is cst.Assign:
        for target in node.targets:  # type: ignore[attr-defined]
            yield from _target_names(target.target)
    elif kind in _ONE_TARGET:
        yield from _target_names(node.target)  # type: ignore[attr-defined]
    elif kind is cst.With:
        for item in node.items:  # type: ignore[attr-defined]
            if item.asname is not None:
                yield from _target_names(item.asname.name)
    elif kind is cst.ExceptHandler:
        if node.name is not None:  # type: ignore[attr-defined]
            yield from _target_names(node.name.name)  # type: ignore[attr-defined]
    elif kind is cst.FunctionDef or kind is cst.ClassDef:
        yield node.name.value  # type: ignore[attr-defined]
    elif kind is cst.Global or kind is cst.Nonlocal:
        yield from (item.name.value for item in node.names)  # type: ignore[attr-defined]
    elif kind is cst.Import or kind is cst.ImportFrom:
        if type(node.names) is cst.ImportStar:  # type: ignore[attr-defined]
            yield ANY_NAME
            return
        for alias in node.names:  # type: ignore[attr-defined]
            bound: cst.BaseExpression = alias.asname.name if alias.asname else alias.name
            while type(bound) is cst.Attribute:
                bound = bound.value  # type: ignore[attr-defined]
            if type(bound) is cst.Name:
                yield bound.value  # type: ignore[attr-defined]
    elif kind is cst.MatchCase:
        yield ANY_NAME  # patterns bind names; not followed


_ONE_TARGET: frozenset[type] = frozenset({cst.AnnAssign, cst.AugAssign, cst.For, cst.Del})


_BINDING: frozenset[type] = frozenset({
    cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.Del, cst.With, cst.ExceptHandler,
    cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal, cst.Import, cst.ImportFrom,
    cst.MatchCase})


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def top_bindings(body: Sequence[cst.CSTNode]) -> Counter[str]:
    """How many statements of a block may bind each name, in one walk: a module's top level (its
    `if`, `try` and loop blocks included, its functions' and classes' bodies not) or a function's
    body alike; `ANY_NAME` counts those that may bind any."""
    counts: Counter[str] = Counter()
    stack = list(body)  # `_statements` of each, in no order: a count does not depend on it
    while stack:
        statement = stack.pop()
        if type(statement) in _BINDING:  # spares a generator for each statement
            for name in set(_bound_names(statement)):
                counts[name] = counts.get(name, 0) + 1
        _push_blocks(statement, stack)
    return counts


def tests_before(node: cst.If, block: Sequence[cst.CSTNode] | None) -> list[cst.BaseExpression]:
    """The tests of an `if`/`elif` chain evaluated before `block` (a branch's statements) runs;
    every test of the chain for None."""
    tests: list[cst.BaseExpression] = []
    branch: cst.If = node
    while True:
        tests.append(branch.test)
        if branch.body.body is block:
            return tests
        orelse = branch.orelse
        if type(orelse) is cst.If:
            branch = orelse  # type: ignore[assignment]
            continue
        if orelse is not None and orelse.body.body is block or block is None:
            return tests
        return []


def walrus_value(test: cst.BaseExpression, name: str) -> cst.BaseExpression | None:
    """`value` of a `(name := value)` that evaluating `test` surely runs: the test itself, the
    left of a comparison or of `and`/`or`, under `not`."""
    node: cst.BaseExpression = test
    while True:
        kind = type(node)
        if kind is cst.NamedExpr:
            walrus: cst.NamedExpr = node  # type: ignore[assignment]
            if type(walrus.target) is cst.Name and walrus.target.value == name:  # type: ignore[attr-defined]
                return walrus.value
            node = walrus.value
        elif kind is cst.BooleanOperation or kind is cst.Comparison:
            node = node.left  # type: ignore[attr-defined]
        elif kind is cst.UnaryOperation:
            node = node.expression  # type: ignore[attr-defined]
        else:
            return None


def walrus_binds(node: cst.CSTNode, name: str) -> bool:
    """Whether a `(name := ...)` appears in the expression (a lambda's or comprehension's own
    are counted too: a comprehension's walrus binds in the function)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.NamedExpr:
            target = current.target  # type: ignore[attr-defined]
            if type(target) is cst.Name and target.value == name:
                return True
        stack.extend(current.children)
    return False


def binds_in_test(name: str, position: Position) -> bool:
    """Whether a test of an `if` around `position` binds `name` with a walrus (the visitor's
    assigned names hold only statements' targets)."""
    for depth in range(1, len(position)):
        statements, _, role = position[depth]
        parent_statements, parent_index, _ = position[depth - 1]
        parent = parent_statements[parent_index]
        if role == "if" and type(parent) is cst.If \
                and any(walrus_binds(t, name) for t in tests_before(parent, statements)):  # type: ignore[arg-type]
            return True
    return False
