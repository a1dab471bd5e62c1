"""One walk over a module's statement blocks, for the visitors that read statements only.

A `raise`, an import, an assignment and a `with pytest.raises(...)` are statements, and statements
sit only in blocks: walking the blocks alone never enters an expression (the bulk of a syntax
tree), which keeps the walk small beside LibCST's parse, where a generic `CSTVisitor` over every
node costs about as much as the parse itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

import libcst as cst

from crawler.parse import flow
from crawler.parse._source import Guard

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
            if isinstance(statement, cst.SimpleStatementLine):
                self._small(statement.body, condition, "line")
            elif isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
                self._scope(statement)
            elif isinstance(statement, cst.If):
                self._if(statement)
            else:
                if isinstance(statement, cst.With):
                    self.visit_with(statement, (statements, index, role))
                self._compound(statement)
            self._levels.pop()

    def _scope(self, node: cst.ClassDef | cst.FunctionDef) -> None:
        """A class or function body: a new scope, where flow positions start again."""
        self.scopes.append(self.open_scope(node))
        self._saved_levels.append(self._levels)
        self._levels = []
        self._saved_guards.append(self.guards)
        self.guards = []  # a body runs when called, not under the tests around its definition
        self._suite(node.body, None, "class" if isinstance(node, cst.ClassDef) else "function")
        self.guards = self._saved_guards.pop()
        self._levels = self._saved_levels.pop()
        self.scopes.pop()

    def _if(self, node: cst.If) -> None:
        """The body runs when the test holds; an `elif` or `else` when it failed."""
        indent = self.indent
        self.guards.append(Guard(node.test, True, indent))
        self._suite(node.body, node.test, "if")
        self.guards[-1] = Guard(node.test, False, indent)
        if isinstance(node.orelse, cst.If):
            self._if(node.orelse)
        elif node.orelse is not None:
            self._suite(node.orelse.body, None, "if")
        self.guards.pop()

    def _compound(self, node: cst.CSTNode) -> None:
        """try/for/while/with/match and their else, except, finally and case blocks."""
        if isinstance(node, (cst.For, cst.While)):
            body, orelse = "loop", "loop"
        elif isinstance(node, cst.With):
            body, orelse = "with", "with"
        elif isinstance(node, (cst.Try, cst.TryStar)):
            body, orelse = "try", "try_else"
        else:
            body, orelse = "case", "case"
        roles = {"body": body, "handlers": "handler", "orelse": orelse, "finalbody": "finally",
                 "cases": "case"}
        for name, role in roles.items():
            child = getattr(node, name, None)
            if child is None:
                continue
            if isinstance(child, (tuple, list)):
                for part in child:
                    self._suite(part.body, None, role)
            elif isinstance(child, cst.BaseSuite):
                self._suite(child, None, role)
            else:  # Else / Finally wrappers hold a suite in .body
                self._suite(child.body, None, role)

    def _suite(self, suite: cst.BaseSuite, condition: cst.BaseExpression | None,
               role: str) -> None:
        if isinstance(suite, cst.IndentedBlock):
            own = suite.indent if suite.indent is not None else self._default_indent
            self._indents.append(self.indent + own)  # each entry: the whole indentation there
            self.indents[id(suite.body)] = self._indents[-1]
            self._block(suite.body, condition, role)
            self._indents.pop()
        elif isinstance(suite, cst.SimpleStatementSuite):
            self._small(suite.body, condition, role)

    def _small(self, statements: Sequence[cst.BaseSmallStatement],
               condition: cst.BaseExpression | None, role: str) -> None:
        for index, small in enumerate(statements):
            self.visit_small(small, (statements, index, role), condition)
