"""The raise-site visitor: one parse per file, one pass over its statements.

`RaiseVisitor` walks statement blocks only: a `raise` is always a statement, so expressions (the
bulk of a syntax tree) are never entered. That keeps the walk small beside LibCST's parse, where a
generic `CSTVisitor` over every node costs about as much as the parse itself.

Lines come from Python's own `ast` (a tenth of LibCST's parse), matched to our raise statements in
source order; where `ast` cannot read the file (newer syntax than this interpreter) or disagrees,
LibCST's `PositionProvider` gives them instead. Tests hold both to the same answers.
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from crawler.messages import message_argument, template_for
from crawler.records import RaiseSite

# A snippet longer than this is cut to a window around the raise.
SNIPPET_MAX_LINES = 150
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 20

_BUILTIN_NAMES = frozenset(dir(builtins))
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Scope:
    """One enclosing class or function on the visitor's stack."""

    name: str
    is_class: bool
    node: cst.CSTNode | None = None


@dataclass
class FoundRaise:
    """A raise statement as the walk met it, before positions are known."""

    node: cst.Raise
    scopes: tuple[Scope, ...]
    condition: cst.BaseExpression | None


@dataclass
class RaiseCounts:
    """Raise statements that do not become records, by why."""

    raise_statements: int = 0
    bare_raise: int = 0
    reraise: int = 0
    without_message: int = 0


@dataclass
class RaiseVisitor:
    """Collects every raise statement of a module with its scope stack.

    Results are in `found` (in source order) and `counts`; `functions` lists every function
    definition in source order, for matching them to positions.
    """

    found: list[FoundRaise] = field(default_factory=list)
    functions: list[cst.FunctionDef] = field(default_factory=list)
    module_classes: set[str] = field(default_factory=set)  # classes defined at module level
    module_names: set[str] = field(default_factory=set)  # every other module-level binding
    _stack: list[Scope] = field(default_factory=list)

    def visit_module(self, module: cst.Module) -> None:
        self._visit_block(module.body, top_level=True)

    def _visit_block(self, statements: Sequence[cst.CSTNode], top_level: bool = False,
                     condition: cst.BaseExpression | None = None) -> None:
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                self._visit_small(statement.body, top_level, condition)
            elif isinstance(statement, cst.ClassDef):
                if top_level:
                    self.module_classes.add(statement.name.value)
                self.visit_ClassDef(statement)
                self._visit_suite(statement.body)
                self.leave_ClassDef(statement)
            elif isinstance(statement, cst.FunctionDef):
                if top_level:
                    self.module_names.add(statement.name.value)
                self.visit_FunctionDef(statement)
                self._visit_suite(statement.body)
                self.leave_FunctionDef(statement)
            elif isinstance(statement, cst.If):
                self._visit_if(statement, top_level)
            else:
                self._visit_compound(statement, top_level)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.append(Scope(node.name.value, is_class=True, node=node))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        self._stack.append(Scope(node.name.value, is_class=False, node=node))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.pop()

    def _visit_if(self, node: cst.If, top_level: bool) -> None:
        self._visit_suite(node.body, top_level, condition=node.test)
        if node.orelse is not None:
            if isinstance(node.orelse, cst.If):
                self._visit_if(node.orelse, top_level)
            else:
                self._visit_suite(node.orelse.body, top_level)

    def _visit_compound(self, node: cst.CSTNode, top_level: bool) -> None:
        """try/for/while/with/match and their else, except, finally and case blocks."""
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            child = getattr(node, name, None)
            if child is None:
                continue
            if isinstance(child, (tuple, list)):
                for part in child:
                    self._visit_suite(part.body, top_level)
            elif isinstance(child, cst.BaseSuite):
                self._visit_suite(child, top_level)
            else:  # Else / Finally wrappers hold a suite in .body
                self._visit_suite(child.body, top_level)

    def _visit_suite(self, suite: cst.BaseSuite, top_level: bool = False,
                     condition: cst.BaseExpression | None = None) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._visit_block(suite.body, top_level, condition)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self._visit_small(suite.body, top_level, condition)

    def _visit_small(self, statements: Sequence[cst.BaseSmallStatement], top_level: bool,
                     condition: cst.BaseExpression | None) -> None:
        for small in statements:
            if isinstance(small, cst.Raise):
                self.found.append(FoundRaise(small, tuple(self._stack), condition))
            elif top_level:
                self.module_names.update(_bound_names(small))


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


@dataclass(frozen=True)
class Span:
    """Where a node stands: first line, column (characters), last line; one-indexed lines."""

    line: int
    column: int
    end_line: int


@dataclass
class FileSites:
    """What one file gave: its sites and the raises that are not records."""

    sites: list[RaiseSite]
    counts: RaiseCounts
    positions: str  # "ast" or "libcst": which source gave the lines


def find_raise_sites(path: str, source: bytes, module_name: str | None = None) -> FileSites:
    """Parse one file and return its raise sites. Raises libcst's ParserSyntaxError and friends."""
    module = cst.parse_module(source)
    visitor = RaiseVisitor()
    visitor.visit_module(module)
    counts = RaiseCounts(raise_statements=len(visitor.found))
    if not visitor.found:
        return FileSites([], counts, positions="none")
    text = _decode(source, module.encoding)
    lines = _LINE_BREAK.split(text)
    spans, function_spans, positions = _positions(module, source, lines, visitor)
    sites: list[RaiseSite] = []
    for found in visitor.found:
        site = _site(path, module, found, spans[id(found.node)], function_spans, lines,
                     visitor, counts, module_name)
        if site is not None:
            sites.append(site)
    return FileSites(sites, counts, positions)


def _decode(source: bytes, encoding: str) -> str:
    text = source.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _site(path: str, module: cst.Module, found: FoundRaise, span: Span,
          function_spans: dict[int, Span], lines: list[str], visitor: RaiseVisitor,
          counts: RaiseCounts, module_name: str | None) -> RaiseSite | None:
    """A record's worth of facts about one raise, or None (counted) when it has no message."""
    exc = found.node.exc
    if exc is None:
        counts.bare_raise += 1
        return None
    if not isinstance(exc, cst.Call):
        if _looks_like_class(exc):
            counts.without_message += 1
        else:
            counts.reraise += 1
        return None
    chosen = message_argument(exc)
    if chosen is None:
        counts.without_message += 1
        return None
    argument, expression = chosen
    exception = module.code_for_node(exc.func)
    function = next((s for s in reversed(found.scopes) if not s.is_class), None)
    snippet_span = function_spans.get(id(function.node)) if function else None
    snippet, snippet_line = _snippet(lines, span, snippet_span)
    cause = found.node.cause
    return RaiseSite(
        path=path,
        line=span.line,
        end_line=span.end_line,
        column=span.column,
        class_name=_class_qualname(found.scopes),
        function=function.name if function else None,
        qualname=qualname(found.scopes),
        exception=exception,
        exception_qualname=_exception_qualname(exc.func, visitor, module_name),
        message=template_for(expression, module, argument),
        cause=module.code_for_node(cause.item) if cause is not None else None,
        condition=module.code_for_node(found.condition) if found.condition is not None else None,
        snippet=snippet,
        snippet_line=snippet_line,
        factory=_is_factory(exc.func),
    )


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


def _exception_qualname(func: cst.BaseExpression, visitor: RaiseVisitor,
                        module_name: str | None) -> str | None:
    """Builtins (unless the module rebinds the name) and classes of the module itself."""
    if not isinstance(func, cst.Name):
        return None
    name = func.value
    if name in visitor.module_classes:
        return f"{module_name}.{name}" if module_name else None
    if name in visitor.module_names:
        return None  # imported or assigned: resolved with the imports, not guessed
    if name in _BUILTIN_NAMES:
        return f"builtins.{name}"
    return None


def _snippet(lines: list[str], span: Span, function: Span | None) -> tuple[str, int]:
    """The enclosing function's source, cut to a window around the raise when it is long."""
    start, end = (function.line, function.end_line) if function else (span.line, span.end_line)
    if end - start + 1 > SNIPPET_MAX_LINES:
        start = max(start, span.line - SNIPPET_BEFORE)
        end = min(end, span.end_line + SNIPPET_AFTER)
    return "\n".join(lines[start - 1 : end]) + "\n", start


def _positions(module: cst.Module, source: bytes, lines: list[str], visitor: RaiseVisitor
               ) -> tuple[dict[int, Span], dict[int, Span], str]:
    """Spans of every raise and function, keyed by node id: from `ast`, else from LibCST."""
    found = _ast_positions(source, lines, visitor)
    if found is not None:
        return found[0], found[1], "ast"
    raises, functions = _libcst_positions(module, visitor)
    return raises, functions, "libcst"


def _ast_positions(source: bytes, lines: list[str], visitor: RaiseVisitor
                   ) -> tuple[dict[int, Span], dict[int, Span]] | None:
    tree = _ast_parse(source)
    if tree is None:
        # Newer syntax than this interpreter's: try again with its type parameters blanked
        # out line for line. Whatever comes of it is checked below like any other answer.
        older = _without_type_parameters("\n".join(lines))
        tree = _ast_parse(older) if older is not None else None
    if tree is None:
        return None
    raise_nodes, function_nodes = _ast_statements(tree)
    if len(raise_nodes) != len(visitor.found) or len(function_nodes) != len(visitor.functions):
        return None
    raise_nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    function_nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    raises: dict[int, Span] = {}
    for found, node in zip(visitor.found, raise_nodes):
        span = _ast_span(node, lines)
        if span is None:
            return None
        raises[id(found.node)] = span
    functions: dict[int, Span] = {}
    for cst_node, ast_node in zip(visitor.functions, function_nodes):
        if cst_node.name.value != ast_node.name:
            return None
        functions[id(cst_node)] = Span(ast_node.lineno, 0, ast_node.end_lineno or ast_node.lineno)
    return raises, functions


def _ast_parse(source: str | bytes) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# PEP 695 (Python 3.12): `class C[T](Base):`, `def f[T](x):` and `type Alias[T] = ...`.
_GENERIC_HEADER = re.compile(r"\b(?:class|def)[ \t]+\w+[ \t]*\[")
_TYPE_ALIAS = re.compile(r"^([ \t]*)type[ \t]+(?=\w+[ \t]*[=\[])", re.MULTILINE)
_OPENERS, _CLOSERS = "([{", ")]}"


def _without_type_parameters(text: str) -> str | None:
    """`text` with PEP 695 syntax made readable to an older `ast`, every line where it was.

    Type parameter lists become spaces (their line breaks become backslash continuations) and
    `type X = ...` becomes `X = ...`: no raise or function moves to another line, and a raise's
    own line is never touched. None when there is nothing of the kind, or a list is unclosed.
    """
    if "[" not in text:
        return None
    pieces: list[str] = []
    done = 0
    for match in _GENERIC_HEADER.finditer(text):
        start = match.end() - 1
        if start < done:
            continue
        end = _closing_bracket(text, start)
        if end is None:
            return None
        params = text[start : end + 1]
        if "\r" in params:
            return None
        pieces.append(text[done:start])
        pieces.append(re.sub(r"[^\n]", " ", params).replace("\n", "\\\n"))
        done = end + 1
    pieces.append(text[done:])
    rewritten = _TYPE_ALIAS.sub(r"\1", "".join(pieces))
    return rewritten if rewritten != text else None


def _closing_bracket(text: str, start: int) -> int | None:
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
            if depth == 0:
                return index if char == "]" else None
    return None


_AST_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _ast_statements(tree: ast.Module) -> tuple[list[ast.Raise],
                                                list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every raise and function of a module, walking statement lists only.

    Both are statements, and statements only sit in these lists; `ast.walk` would also enter
    every expression, which made it cost a fifth of LibCST's whole parse (measured on the
    stdlib).
    """
    raises: list[ast.Raise] = []
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    stack: list[list[ast.AST]] = [tree.body]  # type: ignore[list-item]
    while stack:
        for node in stack.pop():
            if isinstance(node, ast.Raise):
                raises.append(node)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(node)
            for name in _AST_BLOCKS:
                block = getattr(node, name, None)
                if block and isinstance(block, list):
                    stack.append(block)
    return raises, functions


def _ast_span(node: ast.Raise, lines: list[str]) -> Span | None:
    """A raise's span, its byte column turned into characters; None if the text disagrees."""
    if node.lineno > len(lines):
        return None
    line_text = lines[node.lineno - 1]
    column = len(line_text.encode("utf-8")[: node.col_offset].decode("utf-8", errors="replace"))
    if not line_text.startswith("raise", column):
        return None
    return Span(node.lineno, column, node.end_lineno or node.lineno)


def _libcst_positions(module: cst.Module, visitor: RaiseVisitor
                      ) -> tuple[dict[int, Span], dict[int, Span]]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    def span(node: cst.CSTNode) -> Span:
        code_range = positions[node]
        return Span(code_range.start.line, code_range.start.column, code_range.end.line)

    raises = {id(found.node): span(found.node) for found in visitor.found}
    functions = {id(node): span(node) for node in visitor.functions}
    return raises, functions
