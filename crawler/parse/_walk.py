"""One walk over a module's statement blocks, for the visitors that read statements only.

A `raise`, an import, an assignment and a `with pytest.raises(...)` are statements, and statements
sit only in blocks: walking the blocks alone never enters an expression (the bulk of a syntax
tree), which keeps the walk small beside LibCST's parse, where a generic `CSTVisitor` over every
node costs about as much as the parse itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar, cast

import libcst as cst

from crawler.parse._source import Guard
from crawler.parse.message import flow

S = TypeVar("S")


class StatementWalker(Generic[S]):
    """Walks every statement block of a module in source order, with a stack of scopes.

    Subclasses say what a class or function statement pushes (`open_scope`) and read the small
    statements (`visit_small`) and `with` statements (`visit_with`) they meet. `scopes` holds the
    enclosing scopes, innermost last; `position` gives a statement's `flow.Position`, the path of
    blocks to it from the innermost class or function body (or the module's). `guards` holds the
    `if` tests the current statement runs under within its scope, outermost first (an `else`
    block's test fails, an `elif`'s holds after its `if`'s failed; loops, `try`, `with` and
    `match` blocks keep the guards around them), and `indent` its block's indentation;
    `indents` maps each indented block's statements (by `id`) to their indentation.
    """

    scopes: list[S]

    def walk(self, module: cst.Module) -> None:
        self._levels: list[flow.Level] = []
        self._saved_levels: list[list[flow.Level]] = []
        self.guards: list[Guard] = []
        self._saved_guards: list[list[Guard]] = []
        self._indents: list[str] = []
        self._default_indent = module.default_indent
        self.indents: dict[int, str] = {}
        self._block(module.body, None, "module")

    @property
    def indent(self) -> str:
        """The indentation of the block being walked."""
        return self._indents[-1] if self._indents else ""

    def open_scope(self, node: cst.ClassDef | cst.FunctionDef) -> S:
        """The scope a class or function statement opens, before its body is walked."""
        raise NotImplementedError

    def visit_small(self, small: cst.BaseSmallStatement, level: flow.Level,
                    condition: cst.BaseExpression | None) -> None:
        """A small statement at `level` (its line's or suite's statements, its index, their
        role); `condition` is the test of the `if` whose block holds it directly, if any."""

    def visit_with(self, node: cst.With, level: flow.Level) -> None:
        """A `with` statement at `level`, before its body is walked."""

    def position(self, level: flow.Level) -> flow.Position:
        """The path of blocks to the statement at `level`."""
        return (*self._levels, level)

    def _block(self, statements: Sequence[cst.CSTNode], condition: cst.BaseExpression | None,
               role: str) -> None:
        for index, statement in enumerate(statements):
            self._levels.append((statements, index, role))
            kind = type(statement)  # not isinstance: LibCST's nodes are ABCs (see `_COMPOUND`)
            if kind is cst.SimpleStatementLine:
                self._small(statement.body, condition, "line")  # type: ignore[attr-defined]
            elif kind is cst.FunctionDef or kind is cst.ClassDef:
                self._scope(statement)  # type: ignore[arg-type]
            elif kind is cst.If:
                self._if(statement)  # type: ignore[arg-type]
            else:
                if kind is cst.With:
                    self.visit_with(statement, (statements, index, role))  # type: ignore[arg-type]
                self._compound(statement)
            self._levels.pop()

    def _scope(self, node: cst.ClassDef | cst.FunctionDef) -> None:
        """A class or function body: a new scope, where flow positions start again."""
        self.scopes.append(self.open_scope(node))
        self._saved_levels.append(self._levels)
        self._levels = []
        self._saved_guards.append(self.guards)
        self.guards = []  # a body runs when called, not under the tests around its definition
        self._suite(node.body, None, "class" if type(node) is cst.ClassDef else "function")
        self.guards = self._saved_guards.pop()
        self._levels = self._saved_levels.pop()
        self.scopes.pop()

    def _if(self, node: cst.If) -> None:
        """The body runs when the test holds; an `elif` or `else` when it failed."""
        indent = self.indent
        self.guards.append(Guard(node.test, True, indent))
        self._suite(node.body, node.test, "if")
        self.guards[-1] = Guard(node.test, False, indent)
        if type(node.orelse) is cst.If:
            self._if(node.orelse)  # type: ignore[arg-type]
        elif node.orelse is not None:
            self._suite(node.orelse.body, None, "if")
        self.guards.pop()

    def _compound(self, node: cst.CSTNode) -> None:
        """try/for/while/with/match and their else, except, finally and case blocks."""
        if type(node) is cst.Match:  # its `case` lines are indented within the `match`
            cases = cast(cst.Match, node).indent
            self._indents.append(self.indent + (self._default_indent if cases is None else cases))
            self._blocks(node)
            self._indents.pop()
        else:
            self._blocks(node)

    def _blocks(self, node: cst.CSTNode) -> None:
        for name, role in _COMPOUND.get(type(node), _MATCH):
            child = getattr(node, name, None)
            if child is None:
                continue
            if type(child) in (tuple, list):
                for part in child:
                    self._suite(part.body, None, role)
            elif type(child) in _SUITES:
                self._suite(child, None, role)
            else:  # Else / Finally wrappers hold a suite in .body
                self._suite(child.body, None, role)

    def _suite(self, suite: cst.BaseSuite, condition: cst.BaseExpression | None,
               role: str) -> None:
        kind = type(suite)
        if kind is cst.IndentedBlock:
            block: cst.IndentedBlock = suite  # type: ignore[assignment]
            own = block.indent if block.indent is not None else self._default_indent
            self._indents.append(self.indent + own)  # each entry: the whole indentation there
            self.indents[id(block.body)] = self._indents[-1]
            self._block(block.body, condition, role)
            self._indents.pop()
        elif kind is cst.SimpleStatementSuite:
            self._small(suite.body, condition, role)  # type: ignore[arg-type]

    def _small(self, statements: Sequence[cst.BaseSmallStatement],
               condition: cst.BaseExpression | None, role: str) -> None:
        for index, small in enumerate(statements):
            self.visit_small(small, (statements, index, role), condition)


# The blocks of each compound statement, by the attribute that holds them, and their roles.
# Compared by `type(node)`: LibCST's concrete nodes have no subclasses, and an isinstance on
# one of its ABCs that fails is a Python call, for every statement of every file.
_LOOP = (("body", "loop"), ("orelse", "loop"))
_TRY = (("body", "try"), ("handlers", "handler"), ("orelse", "try_else"), ("finalbody", "finally"))
_MATCH = (("cases", "case"),)
_COMPOUND: dict[type, tuple[tuple[str, str], ...]] = {
    cst.For: _LOOP, cst.While: _LOOP, cst.With: (("body", "with"),),
    cst.Try: _TRY, cst.TryStar: _TRY, cst.Match: _MATCH,
}
_SUITES = frozenset({cst.IndentedBlock, cst.SimpleStatementSuite})
