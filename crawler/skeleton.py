"""Reading a changed file again: only the functions that changed are parsed by LibCST.

A week upstream touches a few functions of large files, and LibCST's parse of a whole file is the
floor of a full read. The raises in a function depend only on the function's own text and on the
module around it: its imports and top-level names (the *context*, a digest of what the visitor
collects at module level) and the classes that enclose it. So a file whose context is unchanged
is read as a *skeleton*: every function whose exact text was in the previous version becomes a
one-line stub `def name(): ...`, lone string statements (docstrings) outside functions become
`""`, and everything else stays verbatim. LibCST parses the skeleton; the stubbed functions'
records come from the previous version's cached results, moved by however many lines the
function moved. Whatever the path, the result equals a full read: tests hold the two equal.

What is never stubbed: a class's `__init__` (the class's default message is read from it), a
function on one line with its header, and anything inside a function. A file whose context
changed, that is not plain UTF-8, or that `ast` cannot read is read whole.
"""

from __future__ import annotations

import ast
import hashlib
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from crawler.records import ClassDef, RaiseSite

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # a line with its break, as `ast` counts
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")

Counts = tuple[int, int, int, int]  # raise statements, bare raises, re-raises, without message
Key = tuple[tuple[str, ...], str]  # (enclosing classes, digest): what makes a function the same
# A dotted name a function looked up in the module's bindings, and what it resolved to there.
Lookup = tuple[tuple[str, ...], "str | None"]


@dataclass(frozen=True)
class Region:
    """A function outside every function (and not a class's `__init__`), as one file has it."""

    classes: tuple[str, ...]  # the enclosing classes, outermost first
    name: str
    digest: str  # sha1 of its exact text, first decorator to last line, line breaks included
    line: int  # one-indexed: its first decorator, else its `def`
    end_line: int  # inclusive
    counts: Counts = (0, 0, 0, 0)  # its raise statements, as `RaiseCounts` counts them
    lookups: tuple[Lookup, ...] = ()  # the module-level names its records depend on

    @property
    def key(self) -> Key:
        return (self.classes, self.digest)


@dataclass(frozen=True)
class Known:
    """What a worker is told of a file's previous version: its context and its functions.

    A function is taken back only if each module-level name it looked up resolves as before.
    """

    context: str
    functions: tuple[tuple[Key, tuple[Lookup, ...]], ...]


@dataclass(frozen=True)
class Skeleton:
    """A file with its known functions stubbed, and where each of its lines stands in the file."""

    text: str
    real_line: tuple[int, ...]  # real_line[n - 1]: the file's line of the skeleton's line n
    stubbed: tuple[Region, ...]  # the functions stubbed, at their lines in the file


def split_lines(text: str) -> list[str]:
    """The lines of `text` with their breaks, split where `ast` and the visitor split them."""
    return _LINE.findall(text)


def outline(tree: ast.Module, lines: Sequence[str]) -> tuple[list[Region], list[tuple[int, int]]]:
    """The functions a skeleton may stub, and the lone string statements outside functions."""
    regions: list[Region] = []
    strings: list[tuple[int, int]] = []
    stack: list[tuple[list[ast.stmt], tuple[str, ...], bool]] = [(tree.body, (), False)]
    while stack:
        block, classes, in_class = stack.pop()
        for node in block:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not (in_class and node.name == "__init__"):
                    region = _region(node, classes, lines)
                    if region is not None:
                        regions.append(region)
                continue
            if isinstance(node, ast.ClassDef):
                stack.append((node.body, (*classes, node.name), True))
                continue
            if _lone_string(node, lines):
                strings.append((node.lineno, node.end_lineno or node.lineno))
            for name in _BLOCKS:
                for child in getattr(node, name, None) or ():
                    if isinstance(child, ast.stmt):
                        stack.append((getattr(node, name), classes, in_class))
                        break
                    stack.append((child.body, classes, in_class))  # except handlers, match cases
    regions.sort(key=lambda r: r.line)
    strings.sort()
    return regions, strings


def _region(node: ast.FunctionDef | ast.AsyncFunctionDef, classes: tuple[str, ...],
            lines: Sequence[str]) -> Region | None:
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    end = node.end_lineno or node.lineno
    body = node.body[0]
    body_line = min([d.lineno for d in getattr(body, "decorator_list", ())] + [body.lineno])
    if body_line <= node.lineno or lines[body_line - 1][: body.col_offset].strip():
        return None  # `def f(): return 1`, or a body that shares a line with the header
    text = "".join(lines[first - 1 : end])
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Region(classes, node.name, digest, first, end)


def _lone_string(node: ast.stmt, lines: Sequence[str]) -> bool:
    """A string statement alone on its lines (a docstring): the visitor reads nothing there."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)):
        return False
    first, last = lines[node.lineno - 1], lines[(node.end_lineno or node.lineno) - 1]
    if first[: node.col_offset].strip():
        return False  # `x = 1; "text"`
    rest = last.encode("utf-8", "surrogatepass")[node.end_col_offset or 0 :].strip()
    return not rest or rest.startswith(b"#")


def build(lines: Sequence[str], regions: Sequence[Region], strings: Sequence[tuple[int, int]],
          known: Known, refused: frozenset[Key] = frozenset()) -> Skeleton | None:
    """The skeleton that stubs every function `known` lists but `refused`; None when none is."""
    wanted = Counter(key for key, _ in known.functions if key not in refused)
    stubs: dict[int, tuple[int, str]] = {}  # first line: (last line, stub text)
    stubbed: list[Region] = []
    for region in regions:
        if wanted[region.key] > 0:
            wanted[region.key] -= 1
            stubbed.append(region)
            stubs[region.line] = (region.end_line, _stub(lines[region.line - 1],
                                                         f"def {region.name}(): ..."))
    if not stubbed:
        return None
    for line, end in strings:
        stubs.setdefault(line, (end, _stub(lines[line - 1], '""')))
    pieces: list[str] = []
    real_line: list[int] = []
    number = 1
    while number <= len(lines):
        if number in stubs:
            end, stub = stubs[number]
            pieces.append(stub)
            real_line.append(number)
            number = end + 1
        else:
            pieces.append(lines[number - 1])
            real_line.append(number)
            number += 1
    return Skeleton("".join(pieces), tuple(real_line), tuple(stubbed))


def _stub(first_line: str, statement: str) -> str:
    """`statement` at the indentation of `first_line`, ended by the same line break."""
    body = first_line.rstrip("\r\n")
    indent = body[: len(body) - len(body.lstrip())]
    return f"{indent}{statement}{first_line[len(body):] or chr(10)}"


def region_at(regions: Sequence[Region], line: int) -> int | None:
    """The index of the region holding `line`, if any (regions sorted, never nested)."""
    index = bisect_right([r.line for r in regions], line) - 1
    if index >= 0 and regions[index].line <= line <= regions[index].end_line:
        return index
    return None


# ---------------------------------------------------------------- in the parent


@dataclass(frozen=True)
class Previous:
    """The previous version's results: what a stubbed function takes back."""

    sites: tuple[RaiseSite, ...]
    pending: tuple[RaiseSite, ...]
    classes: tuple[ClassDef, ...]
    regions: tuple[Region, ...]
    context: str


@dataclass(frozen=True)
class Filled:
    """A file's results once its stubbed functions took theirs back from the previous version."""

    sites: tuple[RaiseSite, ...]
    pending: tuple[RaiseSite, ...]
    classes: tuple[ClassDef, ...]
    regions: tuple[Region, ...]
    counts: Counts  # what the stubbed functions add to the skeleton's counts


def fill(sites: Sequence[RaiseSite], pending: Sequence[RaiseSite], classes: Sequence[ClassDef],
         regions: Sequence[Region], stubbed: Sequence[Region], previous: Previous) -> Filled:
    """Add to a skeleton's results each stubbed function's results, moved to its new lines."""
    old: dict[Key, list[Region]] = {}
    for region in previous.regions:
        old.setdefault(region.key, []).append(region)
    sites, pending, classes = list(sites), list(pending), list(classes)
    filled = {r.line: r for r in regions}
    counts = [0, 0, 0, 0]
    for region in stubbed:
        was = old[region.key].pop(0)  # the worker stubbed it because the previous version has it
        shift = region.line - was.line
        sites += [_moved(s, shift) for s in previous.sites if was.line <= s.line <= was.end_line]
        pending += [_moved(s, shift) for s in previous.pending
                    if was.line <= s.line <= was.end_line]
        classes += [_moved_class(c, shift) for c in previous.classes
                    if was.line <= c.line <= was.end_line]
        filled[region.line] = replace(region, counts=was.counts, lookups=was.lookups)
        counts = [a + b for a, b in zip(counts, was.counts)]
    by_place = lambda s: (s.line, s.column)  # noqa: E731 - stable: a raise's templates keep their order
    return Filled(tuple(sorted(sites, key=by_place)), tuple(sorted(pending, key=by_place)),
                  tuple(sorted(classes, key=lambda c: c.line)),
                  tuple(filled[line] for line in sorted(filled)), tuple(counts))  # type: ignore[arg-type]


def _moved(site: RaiseSite, shift: int) -> RaiseSite:
    if not shift:
        return site
    return replace(site, line=site.line + shift, end_line=site.end_line + shift,
                   snippet_line=site.snippet_line + shift)


def _moved_class(found: ClassDef, shift: int) -> ClassDef:
    if not shift:
        return found
    templates = tuple(replace(t, defined_at=_moved_place(t.defined_at, shift))
                      for t in found.templates)
    return replace(found, line=found.line + shift, templates=templates)


def _moved_place(place: str | None, shift: int) -> str | None:
    """`path:line` moved by `shift` lines."""
    if place is None:
        return None
    path, _, line = place.rpartition(":")
    return f"{path}:{int(line) + shift}" if line.isdigit() else place
