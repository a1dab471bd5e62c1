"""Lines of a visited module's raises, functions and classes: from `ast`, held equal to LibCST's.

LibCST's `PositionProvider` is the textbook way, but it costs several times the parse; Python's
own `ast` gives the same lines at a tenth of the parse. Its statements are matched to the
visitor's in source order, and any disagreement (a count, a name, a column that is not `raise`)
falls back to `PositionProvider`. Where `ast` cannot read the file (newer syntax than this
interpreter), PEP 695 type parameters are blanked out line for line; else its top-level
statements are read one by one and `PositionProvider` gives the lines of those it refuses.
Tests hold every way to the same answers.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from crawler.parse.python_ast import ast_parse, ast_statements, ast_tree

if TYPE_CHECKING:
    from crawler.parse.raise_visitor import FoundClass, RaiseVisitor


@dataclass(frozen=True)
class Span:
    """Where a node stands: first line, column (characters), last line; one-indexed lines."""

    line: int
    column: int
    end_line: int


# class node id: (class line, line of its super().__init__ call, line of its message attribute)
ClassLines = dict[int, tuple[int, "int | None", "int | None"]]


# Top-level statements `ast` refused, each with the number of lines before it in the file.
Unread = tuple[tuple[cst.BaseStatement, int], ...]


def positions(module: cst.Module, tree: ast.Module | None, lines: list[str],
              visitor: RaiseVisitor, unread: Unread = ()
              ) -> tuple[dict[int, Span], dict[int, Span], ClassLines, str]:
    """Spans of every raise and function, keyed by node id: from `ast`, else from LibCST.

    With `unread` (top-level statements `ast` refused, see `_tree_by_statement`), LibCST gives
    theirs from a module of each alone, and `ast` the others'.
    """
    found = None
    if tree is not None and unread:
        found = _split_positions(module, tree, lines, visitor, unread)
    elif tree is not None:
        found = ast_positions(tree, lines, visitor)
    if found is not None:
        return found[0], found[1], found[2], "ast" if not unread else "ast+libcst"
    where = position_map(module)  # a whole codegen pass: once for raises and classes
    raises, functions = libcst_positions(module, visitor, where)
    return raises, functions, libcst_class_lines(module, visitor, where), "libcst"


def moved_to(real_line: Sequence[int], spans: dict[int, Span], function_spans: dict[int, Span],
             class_lines: ClassLines) -> tuple[dict[int, Span], dict[int, Span], ClassLines]:
    """A skeleton's positions, as lines of the file itself."""
    def span(s: Span) -> Span:
        return Span(real_line[s.line - 1], s.column, real_line[s.end_line - 1])

    def line(n: int | None) -> int | None:
        return real_line[n - 1] if n is not None else None

    return ({k: span(s) for k, s in spans.items()}, {k: span(s) for k, s in function_spans.items()},
            {k: (real_line[c - 1], line(i), line(a)) for k, (c, i, a) in class_lines.items()})


def ast_read(source: str | bytes, lines: list[str], module: cst.Module, text: str
             ) -> tuple[ast.Module | None, Unread]:
    """`ast`'s tree of the file; else of its top-level statements one by one, those it refused
    listed apart; else None."""
    tree = ast_tree(source, lines)
    if tree is not None:
        return tree, ()
    return _tree_by_statement(module, text) or (None, ())


def _tree_by_statement(module: cst.Module, text: str) -> tuple[ast.Module, Unread] | None:
    """`ast`'s trees of the top-level statements one by one, at their lines in the file.

    Newer syntax than this interpreter's (PEP 701 f-strings) tends to sit in a few statements:
    the others keep `ast`'s positions, at a tenth of `PositionProvider`'s cost over the whole
    file, and the skeleton's outline. None when the statements' code does not make up `text`
    exactly, or a lone carriage return would make `ast` count lines another way.
    """
    if lone_carriage_return(text):
        return None
    header = "".join(module.code_for_node(line) for line in module.header)
    if not text.startswith(header):
        return None
    at, before = len(header), header.count("\n")
    body: list[ast.stmt] = []
    unread: list[tuple[cst.BaseStatement, int]] = []
    for statement in module.body:
        code = module.code_for_node(statement)
        if not text.startswith(code, at):
            return None
        tree = ast_parse(code)
        if tree is None:
            unread.append((statement, before))
        else:
            body.extend(ast.increment_lineno(tree, before).body if before else tree.body)
        at, before = at + len(code), before + code.count("\n")
    if text[at:] != "".join(module.code_for_node(line) for line in module.footer):
        return None
    return ast.Module(body=body, type_ignores=[]), tuple(unread)


def lone_carriage_return(text: str) -> bool:
    """A `\r` not followed by `\n`: `ast` counts it as a line break where LibCST may not, so a
    tree read statement by statement would count lines another way."""
    return text.count("\r") != text.count("\r\n")


def _split_positions(module: cst.Module, tree: ast.Module, lines: list[str],
                     visitor: RaiseVisitor, unread: Unread
                     ) -> tuple[dict[int, Span], dict[int, Span], ClassLines] | None:
    """`ast_positions` for what `ast` read; LibCST's positions for the statements it refused."""
    moved: dict[cst.CSTNode, CodeRange] = {}
    for statement, before in unread:
        alone = module.with_changes(header=(), body=(statement,), footer=())
        for node, where in position_map(alone).items():
            moved[node] = CodeRange((where.start.line + before, where.start.column),
                                    (where.end.line + before, where.end.column))
    found = ast_positions(tree, lines, visitor, skip=moved)
    if found is None:
        return None
    raises, functions, classes = found

    def span(node: cst.CSTNode) -> Span:
        where = moved[node]
        return Span(where.start.line, where.start.column, where.end.line)

    raises.update((id(f.node), span(f.node)) for f in visitor.found if f.node in moved)
    functions.update((id(node), span(node)) for node in visitor.functions if node in moved)
    classes.update(libcst_class_lines(module, visitor, moved,
                                       only=[c for c in visitor.classes if c.node in moved]))
    return raises, functions, classes


def ast_positions(tree: ast.Module, lines: list[str], visitor: RaiseVisitor,
                  skip: Mapping[cst.CSTNode, CodeRange] | None = None
                  ) -> tuple[dict[int, Span], dict[int, Span], ClassLines] | None:
    """Spans from `ast`, matched in source order; the nodes in `skip` are left out of both."""
    raise_nodes, function_nodes, class_nodes = _ast_statements(tree)
    found_raises, found_functions, found_classes = visitor.found, visitor.functions, visitor.classes
    if skip:
        found_raises = [f for f in found_raises if f.node not in skip]
        found_functions = [f for f in found_functions if f not in skip]
        found_classes = [c for c in found_classes if c.node not in skip]
    if (len(raise_nodes) != len(found_raises) or len(function_nodes) != len(found_functions)
            or len(class_nodes) != len(found_classes)):
        return None
    raise_nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    function_nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    class_nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    raises: dict[int, Span] = {}
    for found, node in zip(found_raises, raise_nodes):
        span = _ast_span(node, lines)
        if span is None:
            return None
        raises[id(found.node)] = span
    functions: dict[int, Span] = {}
    for cst_node, ast_node in zip(found_functions, function_nodes):
        if cst_node.name.value != ast_node.name:
            return None
        functions[id(cst_node)] = Span(ast_node.lineno, 0, ast_node.end_lineno or ast_node.lineno)
    classes: ClassLines = {}
    for found_class, class_node in zip(found_classes, class_nodes):
        if found_class.node.name.value != class_node.name:
            return None
        classes[id(found_class.node)] = (class_node.lineno, *_ast_template_lines(found_class, class_node))
    return raises, functions, classes


def _ast_template_lines(found: FoundClass, node: ast.ClassDef) -> tuple[int | None, int | None]:
    """The lines of the statements a class's templates were read from, by the visitor's rules."""
    init_line = attribute_line = None
    for statement in node.body:
        if found.init_call is not None and isinstance(
                statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == "__init__":
            calls = [n.lineno for n in ast.walk(statement) if isinstance(n, ast.Expr)
                     and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
                     and n.value.func.attr == "__init__"]
            init_line = min(calls) if calls else None
        if found.attribute is not None and attribute_line is None:
            targets = statement.targets if isinstance(statement, ast.Assign) else (
                [statement.target] if isinstance(statement, ast.AnnAssign) else [])
            if any(isinstance(t, ast.Name) and t.id == found.attribute[0] for t in targets):
                attribute_line = statement.lineno
    return init_line, attribute_line


def position_map(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """LibCST's `PositionProvider` over the whole module: the exact answer, at a codegen pass."""
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def libcst_class_lines(module: cst.Module, visitor: RaiseVisitor,
                       where: Mapping[cst.CSTNode, CodeRange] | None = None,
                       only: Sequence[FoundClass] | None = None) -> ClassLines:
    """The lines of the visitor's classes (or `only` those) from LibCST's positions."""
    classes = visitor.classes if only is None else only
    if not classes:
        return {}
    positions = where if where is not None else position_map(module)
    lines: ClassLines = {}
    for found in classes:
        init_line = positions[found.init_call[0]].start.line if found.init_call else None
        attribute_line = None
        if found.attribute is not None:
            statements, index, _ = found.attribute[2][-1]
            attribute_line = positions[statements[index]].start.line
        lines[id(found.node)] = (positions[found.node.name].start.line, init_line, attribute_line)
    return lines


def _ast_statements(tree: ast.Module) -> tuple[list[ast.Raise],
                                                list[ast.FunctionDef | ast.AsyncFunctionDef],
                                                list[ast.ClassDef]]:
    """Every raise, function and class of a module."""
    raises: list[ast.Raise] = []
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    classes: list[ast.ClassDef] = []
    for node in ast_statements(tree):
        if isinstance(node, ast.Raise):
            raises.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(node)
        elif isinstance(node, ast.ClassDef):
            classes.append(node)
    return raises, functions, classes


def _ast_span(node: ast.Raise, lines: list[str]) -> Span | None:
    """A raise's span, its byte column turned into characters; None if the text disagrees."""
    if node.lineno > len(lines):
        return None
    line_text = lines[node.lineno - 1]
    column = len(line_text.encode("utf-8")[: node.col_offset].decode("utf-8", errors="replace"))
    if not line_text.startswith("raise", column):
        return None
    return Span(node.lineno, column, node.end_lineno or node.lineno)


def libcst_positions(module: cst.Module, visitor: RaiseVisitor,
                     where: Mapping[cst.CSTNode, CodeRange] | None = None
                     ) -> tuple[dict[int, Span], dict[int, Span]]:
    """Spans of the visitor's raises and functions from LibCST's positions."""
    positions = where if where is not None else position_map(module)

    def span(node: cst.CSTNode) -> Span:
        code_range = positions[node]
        return Span(code_range.start.line, code_range.start.column, code_range.end.line)

    raises = {id(found.node): span(found.node) for found in visitor.found}
    functions = {id(node): span(node) for node in visitor.functions}
    return raises, functions


def top_level_line(tree: ast.Module | None, module: cst.Module, position: object,
                   unread: Unread = ()) -> int | None:
    """The line of a statement at a module's top level, from `ast`: LibCST's top-level
    statements are `ast`'s, but for a line of several (`a = 1; b = 2`), which counts each.

    A tree read statement by statement lacks those in `unread`: they are not counted, and the
    line of one of them comes from LibCST's positions over it alone (`_split_positions`), so
    such a tree gives the line the whole file's tree gives.
    """
    if tree is None or not isinstance(position, tuple) or len(position) != 2:
        return None
    (body, index, _), (_, small, _) = position
    if body is not module.body:
        return None
    apart = {id(statement): before for statement, before in unread}
    if id(body[index]) in apart:
        return _unread_line(module, body[index], small, apart[id(body[index])])
    before = sum(len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
                 for s in module.body[:index] if id(s) not in apart)
    statements = tree.body
    return statements[before + small].lineno if before + small < len(statements) else None


def _unread_line(module: cst.Module, statement: cst.BaseStatement, small: int, before: int
                 ) -> int | None:
    """The line of a small statement of a top-level statement `ast` refused."""
    if not isinstance(statement, cst.SimpleStatementLine) or small >= len(statement.body):
        return None
    alone = module.with_changes(header=(), body=(statement,), footer=())
    return position_map(alone)[statement.body[small]].start.line + before
