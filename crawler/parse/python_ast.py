"""Python's own parser (`ast`) for every source the crawler reads, whatever its Python.

One thread of the process parses at a time (`_AST_LOCK`: CPython 3.11's tree builder is not
safe across threads). A file written for a newer Python than this interpreter's (PEP 695 type
parameters, `type X = ...`) is read again with that syntax blanked out line for line, so no raise
or function moves to another line (`ast_tree`, `ast_parse_newer`).

It imports nothing beyond the standard library: the commands that only read records (validate,
check, export) and the call graph's reading of the workers' facts use it without loading LibCST,
whose import costs about 0.2 s of every process that makes it.
"""

from __future__ import annotations

import ast
import io
import re
import threading
import tokenize
import warnings
from collections.abc import Iterator


def ast_tree(source: str | bytes, lines: list[str]) -> ast.Module | None:
    """Python's own tree of the file, else of the file with PEP 695 type parameters blanked.

    Newer syntax than this interpreter's is tried again with its type parameters blanked out
    line for line; whatever positions come of it are checked like any other answer.
    """
    tree = ast_parse(source)
    return tree if tree is not None else _older_tree("\n".join(lines))



def _older_tree(text: str) -> ast.Module | None:
    """The tree of `text` (line breaks `\n`) with PEP 695 type parameters blanked, if any."""
    older = _without_type_parameters(text)
    return ast_parse(older) if older is not None else None



def ast_parse_newer(source: str | bytes) -> ast.Module | None:
    """`ast_parse`, else, for a file written for a newer Python, its tree with PEP 695 type
    parameters blanked line for line (as `ast_tree`): jax's `class Tracer[TraceType: Trace]`
    would otherwise leave its module out of the call graph and its tests out of the evidence."""
    tree = ast_parse(source)
    if tree is not None:
        return tree
    try:
        text = source if isinstance(source, str) else source.decode(
            tokenize.detect_encoding(io.BytesIO(source).readline)[0])
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
    return _older_tree("\n".join(LINE_BREAK.split(text)))


LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as `ast` counts lines



# CPython 3.11 keeps the depth counter of `ast.parse`'s tree building per interpreter, not per
# thread: two threads parsing at once (a Dask worker's tasks) can fail with "SystemError: AST
# constructor recursion depth mismatch" (python/cpython#106905). Reentrant: a finaliser that runs
# during a parse may parse too.
_AST_LOCK = threading.RLock()



def parse_module(source: str | bytes) -> ast.Module:
    """`ast.parse`, one thread of the process at a time; raises as `ast.parse` does."""
    with _AST_LOCK:
        return ast.parse(source)



def parse_expression(source: str) -> ast.expr:
    """One expression's tree, as `parse_module`."""
    with _AST_LOCK:
        return ast.parse(source, mode="eval").body



def ast_parse(source: str | bytes) -> ast.Module | None:
    """Python's own tree of `source`; None when this interpreter cannot read it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse_module(source)
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



def ast_statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of a module, and every except handler and match case, in no set order.

    Statements only sit in these lists; `ast.walk` would also enter every expression, which made
    it cost a fifth of LibCST's whole parse (measured on the stdlib).
    """
    stack: list[list[ast.AST]] = [tree.body]  # type: ignore[list-item]
    while stack:
        for node in stack.pop():
            yield node
            for name in _AST_BLOCKS:
                block = getattr(node, name, None)
                if block and isinstance(block, list):
                    stack.append(block)
