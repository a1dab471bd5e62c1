"""The calls of one file that pass text: what a raise whose message is a parameter is given.

`raise UsageError(message, self)` in `Context.fail(self, message)` prints what the callers of
`fail` pass, in this module or in others (`ctx.fail(_("Got unexpected extra argument
({args})").format(...))`). A worker sees one file, so each file lists its calls that pass an
argument read as text (`TextCall`), and the repository-wide pass (`crawler.catalogue.callers`)
binds them to the parameter where the call graph says the call reaches the raise's function.

A call is listed when one of its arguments is written as text with a space or a line break in
its literal part (a message, not a key or a dtype): a string, an f-string, `+` or `%` of text,
`.format` of text, a gettext call, a conditional of such. Its arguments are read as a raise's
message is (`crawler.parse.message.reading.Reader`), each alone: a name in it stays a placeholder named
by its source. Calls of builtins and of `str`, `list` and `dict` methods are not listed. The
whole file is read with `ast`, never a skeleton, so an update lists what an extract does.
"""

from __future__ import annotations

import ast
import builtins

import libcst as cst

from crawler.parse.call_edges import CallFacts, all_nodes, read_calls
from crawler.parse.message.pieces import Unreadable, reading
from crawler.parse.message.reading import GETTEXT, NGETTEXT, Reader
from crawler.parse.python_ast import ast_parse_newer, parse_module
from crawler.records import ArgumentText, TextCall, TextReading

# Names whose calls never reach a raise of the repository with the text as its message.
NOT_LISTED = frozenset(
    name for kind in (str, list, dict, set, builtins) for name in dir(kind)
    if not name.startswith("_")) | GETTEXT | NGETTEXT | {"dedent", "cleandoc"}
MAX_CALLS = 20_000  # per file: beyond, the file's calls are not listed (generated code)
MAX_SOURCE = 2_000  # characters of an argument read as text


def read_call_facts(data: bytes, module: str, is_package: bool, tree: ast.Module | None = None
                    ) -> tuple[CallFacts | None, tuple[TextCall, ...]]:
    """A file's call edges and its calls that pass text, from one `ast` tree: `tree`, where the
    caller parsed the file already, else parsed here."""
    tree = tree if tree is not None else ast_parse_newer(data)
    if tree is None:
        return None, ()
    return read_calls(data, module, is_package, tree), read_text_calls(data, tree)


def read_text_calls(data: bytes, tree: ast.Module | None = None) -> tuple[TextCall, ...]:
    """Every call of the file that passes text (see the module's docstring); of `tree`, its
    `ast` tree, where the caller parsed it already."""
    if tree is None:
        try:
            tree = parse_module(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ()
    starts = _line_starts(data)
    found: list[TextCall] = []
    for node in all_nodes(tree):  # `ast.walk`'s order, at about half its cost
        if type(node) is not ast.Call:
            continue
        assert isinstance(node, ast.Call)
        func = node.func
        if isinstance(func, ast.Name):
            name, receiver = func.id, None
        elif isinstance(func, ast.Attribute):
            name, receiver = func.attr, _segment(data, starts, func.value)
        else:
            continue
        if name in NOT_LISTED or not any(_text_like(a) for a in _values(node)):
            continue
        found.append(TextCall(node.lineno, name, receiver, _arguments(data, starts, node)))
        if len(found) > MAX_CALLS:
            return ()
    return tuple(sorted(found, key=lambda c: (c.line, c.name)))


def _values(node: ast.Call) -> list[ast.expr]:
    return [*node.args, *(k.value for k in node.keywords)]


def _text_like(node: ast.expr) -> bool:
    """Written as text with a space or a line break in its literal part."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and any(c in node.value for c in " \n")
    if isinstance(node, ast.JoinedStr):
        return any(_text_like(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _text_like(node.left) or _text_like(node.right)
    if isinstance(node, ast.IfExp):
        return _text_like(node.body) or _text_like(node.orelse)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return _text_like(func.value)
        called = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        return called in GETTEXT | NGETTEXT and any(_text_like(a) for a in node.args)
    return False


def _arguments(data: bytes, starts: list[int], node: ast.Call) -> tuple[ArgumentText, ...]:
    found = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            found.append(ArgumentText("*", _segment(data, starts, arg.value), None))
        else:
            found.append(_argument(data, starts, None, arg))
    for keyword in node.keywords:
        if keyword.arg is None:
            found.append(ArgumentText("**", _segment(data, starts, keyword.value), None))
        else:
            found.append(_argument(data, starts, keyword.arg, keyword.value))
    return tuple(found)


def _argument(data: bytes, starts: list[int], keyword: str | None, value: ast.expr
              ) -> ArgumentText:
    source = _segment(data, starts, value)
    if not _text_like(value) or len(source) > MAX_SOURCE:
        return ArgumentText(keyword, source, None)
    return ArgumentText(keyword, source, _readings(source))


def _readings(source: str) -> tuple[TextReading, ...] | None:
    """The text an argument's source reads as, alone: its names are placeholders."""
    try:
        expression = cst.parse_expression(f"({source})")
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    reader = Reader(cst.Module([]), set())
    try:
        alternatives = reader.message(expression, ())
        if all(kind == "dynamic" for kind, _ in alternatives):
            return None
        return tuple(reading(a) for a in alternatives)
    except (Unreadable, RecursionError):
        return None


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    index = data.find(b"\n")
    while index >= 0:
        starts.append(index + 1)
        index = data.find(b"\n", index + 1)
    return starts


def _segment(data: bytes, starts: list[int], node: ast.expr) -> str:
    """A node's exact source (`ast` counts columns in UTF-8 bytes)."""
    end_line = node.end_lineno or node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    start = starts[node.lineno - 1] + node.col_offset
    stop = starts[end_line - 1] + end_col
    return data[start:stop].decode("utf-8", "replace")
