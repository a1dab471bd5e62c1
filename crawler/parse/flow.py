"""Which assignments of a name reach a statement, within one function: statements only, no guessing.

A `Position` is the path of statement blocks from the function (or module, or class) body down to
one statement: at each level the block's statements, the index of the statement on the path, and
the role of the block in its parent statement. `definitions` walks backwards from a position:

- `name = value` (or `name: T = value`) ends the walk with one definition;
- `name += value` is the definitions reaching it, each followed by `value`;
- an `if` whose branches assign gives one definition per branch (and the fall-through);
- a `with` body is read as straight-line code;
- a loop, `try`, `match`, `del`, `global`, unpacking or import that may bind the name makes the
  answer unknown (None): the message then keeps a clear `{name}` placeholder, never a wrong guess.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

import libcst as cst

Level = tuple[Sequence[cst.CSTNode], int, str]  # (block statements, index on the path, role)
Position = tuple[Level, ...]
Part = tuple[cst.BaseExpression, Position]  # an expression and where it is evaluated
Definition = tuple[Part, ...]  # the text is the concatenation of its parts

MAX_DEFINITIONS = 8
MAX_STEPS = 400  # statements one search may look at: beyond, the answer is unknown


class _GiveUp(Exception):
    """The name may be bound in a way this module does not follow."""


_NotFound = None
_Result = list[Definition] | None


def definitions(name: str, position: Position) -> list[Definition] | None:
    """The definitions of `name` that reach `position`; None when unknown or unbound here."""
    try:
        found = _Search(name).reaching(position)
    except _GiveUp:
        return None
    if found is None or len(found) > MAX_DEFINITIONS:
        return None
    return found


class _Search:
    """One search for the definitions of one name, with its own budget of steps."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.steps_left = MAX_STEPS

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
            if not levels:
                return _NotFound
            parent_statements, parent_index, _ = levels[-1]
            parent = parent_statements[parent_index]
            if role in ("loop", "handler", "try_else", "finally", "case") and self._assigns(parent):
                raise _GiveUp
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
        name = self.name
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return self._scan(node.body, len(node.body), here, "line")
        if isinstance(node, cst.Assign):
            hits = [t.target for t in node.targets if _binds(name, t.target)]
            if not hits:
                return _NotFound
            if any(not isinstance(t, cst.Name) for t in hits):
                raise _GiveUp  # unpacking
            return [((node.value, here),)]
        if isinstance(node, cst.AnnAssign):
            if not _binds(name, node.target):
                return _NotFound
            if node.value is None or not isinstance(node.target, cst.Name):
                raise _GiveUp
            return [((node.value, here),)]
        if isinstance(node, cst.AugAssign):
            if not _binds(name, node.target):
                return _NotFound
            if not isinstance(node.operator, cst.AddAssign):
                raise _GiveUp
            before = self.reaching(here)
            if before is _NotFound:
                before = [((cst.Name(name), here),)]
            return [(*definition, (node.value, here)) for definition in before]
        if isinstance(node, cst.If):
            return self._if(node, here)
        if isinstance(node, cst.With):
            return self._suite(node.body, here, "with")
        if self._assigns(node):
            raise _GiveUp
        return _NotFound

    def _suite(self, suite: cst.BaseSuite, here: Position, role: str) -> _Result:
        body: Sequence[cst.CSTNode] = suite.body
        return self._scan(body, len(body), here, role)

    def _if(self, node: cst.If, here: Position) -> _Result:
        """One definition per branch that assigns; a branch that does not falls through."""
        found: list[Definition] = []
        falls_through = False
        branch: cst.If | cst.Else | None = node
        while branch is not None:
            result = self._suite(branch.body, here, "if")
            if result is _NotFound:
                falls_through = True
            else:
                found.extend(result)
            if isinstance(branch, cst.If):
                branch = branch.orelse
                if branch is None:
                    falls_through = True
            else:
                branch = None
        if not found:
            return _NotFound
        if falls_through:
            before = self.reaching(here)
            found.extend(before if before is not _NotFound else [((cst.Name(self.name), here),)])
        if len(found) > MAX_DEFINITIONS:
            raise _GiveUp
        return found

    def _assigns(self, node: cst.CSTNode) -> bool:
        """Whether a statement may bind the name anywhere in its blocks (statements only)."""
        for statement in _statements(node):
            self.step()
            if _binds_directly(self.name, statement):
                return True
        return False


def _binds(name: str, target: cst.CSTNode) -> bool:
    return any(bound == name for bound in _target_names(target))


def _statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and every statement (and small statement) nested in its blocks."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            stack.extend(current.body)
            continue
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            continue  # their bodies bind their own names
        for attribute in ("body", "orelse", "handlers", "finalbody", "cases"):
            child = getattr(current, attribute, None)
            if child is None or isinstance(child, cst.BaseExpression):
                continue
            if isinstance(child, (list, tuple)):
                stack.extend(child)
            elif isinstance(child, cst.CSTNode):
                stack.append(child)


# What `_bound_names` yields for a statement that may bind any name (a star import, a `case`).
ANY_NAME = "*"


def _binds_directly(name: str, node: cst.CSTNode) -> bool:
    return any(bound == name or bound == ANY_NAME for bound in _bound_names(node))


def _bound_names(node: cst.CSTNode) -> Iterator[str]:
    """The names one statement binds itself (`ANY_NAME` when it may bind any)."""
    if type(node) not in _BINDING:  # most statements: LibCST's isinstance is a Python call
        return
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield from _target_names(target.target)
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.Del)):
        yield from _target_names(node.target)
    elif isinstance(node, cst.With):
        for item in node.items:
            if item.asname is not None:
                yield from _target_names(item.asname.name)
    elif isinstance(node, cst.ExceptHandler):
        if node.name is not None:
            yield from _target_names(node.name.name)
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node.name.value
    elif isinstance(node, (cst.Global, cst.Nonlocal)):
        yield from (item.name.value for item in node.names)
    elif isinstance(node, (cst.Import, cst.ImportFrom)):
        if isinstance(node.names, cst.ImportStar):
            yield ANY_NAME
            return
        for alias in node.names:
            bound: cst.BaseExpression = alias.asname.name if alias.asname else alias.name
            while isinstance(bound, cst.Attribute):
                bound = bound.value
            if isinstance(bound, cst.Name):
                yield bound.value
    elif isinstance(node, cst.MatchCase):
        yield ANY_NAME  # patterns bind names; not followed


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
    """How many statements of a module's top level (its `if`, `try` and loop blocks included, its
    functions' and classes' bodies not) may bind each name, in one walk; `ANY_NAME` counts
    those that may bind any."""
    counts: Counter[str] = Counter()
    for node in body:
        for statement in _statements(node):
            counts.update(set(_bound_names(statement)))
    return counts


def binds_in_body(name: str, body: cst.BaseSuite) -> bool:
    """Whether any statement of a function's body (nested functions' bodies aside) binds the name."""
    return any(_binds_directly(name, statement)
               for node in body.body for statement in _statements(node))
