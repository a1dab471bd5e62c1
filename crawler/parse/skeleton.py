"""Reading a changed file again: only the functions that changed are parsed by LibCST.

A week upstream touches a few functions of large files, and LibCST's parse of a whole file is the
floor of a full read. The raises in a function depend only on the function's own text, the
classes that enclose it, and the module-level names it looks up (each function's `lookups`, kept
with what they resolved to). So a changed file is read as a *skeleton*: every function whose
exact text the previous version had becomes a one-line stub `def name(): ...`, each docstring
it had (a lone string statement outside functions) becomes `""`, and everything else stays as it
is. LibCST parses the skeleton; the stubbed functions' records come from the previous version's
cached results, moved by however many lines the function moved.

Where the old texts stand in the new file is found by their first line and digest, without
parsing the file; then the skeleton's own tree must show each stub as what it stands for (a
function of that name, in the same classes, not decorated; a string statement outside
functions), and each stubbed function's lookups must resolve as before, the functions and
constants its messages were followed into unchanged and as far away (`crawler.parse.followed`;
a function followed into is stubbed only where no text the skeleton keeps names it). A stub
that fails is put back and the skeleton parsed again.
Whatever the path, the result equals a whole read: tests hold the two equal.

Never stubbed: a class's `__init__`, `__str__` and message methods (the class pass reads what
they do to the message), a function on one line with its header, anything inside a function.
"""

from __future__ import annotations

import ast
import hashlib
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from crawler.parse.message.known_names import MESSAGE_METHODS, PLAIN_DECORATORS
from crawler.parse.python_ast import LINE_BREAK, parse_expression
from crawler.records import ClassDef, ExposedFunction, RaiseCounts, RaiseSite

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # a line with its break, as `ast` counts
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_BREAKS = "\r\n"

FUNCTION, STRING = "def", "str"
_NEVER_STUBBED = MESSAGE_METHODS | {"__init__"}  # in a class: what its message is read from
Key = tuple[str, tuple[str, ...], str]  # (kind, enclosing classes, digest): what makes it the same
# A dotted name a function looked up in the module's bindings, and what it resolved to there.
Lookup = tuple[tuple[str, ...], "str | None"]


@dataclass(frozen=True)
class Region:
    """A stretch of lines a skeleton may stub: a function outside functions, or a docstring."""

    kind: str  # FUNCTION or STRING
    classes: tuple[str, ...]  # the enclosing classes, outermost first
    name: str  # the function's; "" for a string
    digest: str  # sha1 of its exact text, first decorator to last line, line breaks included
    line: int  # one-indexed: its first decorator, else its `def`
    end_line: int  # inclusive
    head: str  # its first two lines (one, if it has one), without their breaks: where to look
    counts: RaiseCounts = RaiseCounts()  # its raise statements
    lookups: tuple[Lookup, ...] = ()  # the module-level names its records depend on

    @property
    def key(self) -> Key:
        return (self.kind, self.classes, self.digest)


@dataclass(frozen=True)
class Known:
    """What a worker is told of a file's previous version: its context and its regions."""

    context: str
    regions: tuple[Region, ...]


@dataclass(frozen=True)
class Skeleton:
    """A file with regions stubbed, and where each of its lines stands in the file."""

    text: str
    real_line: tuple[int, ...]  # real_line[n - 1]: the file's line of the skeleton's line n
    stubbed: tuple[Region, ...]  # the regions stubbed, at their lines in the file
    stub_lines: dict[int, Region]  # skeleton line of each stub: what it stands for


def split_lines(text: str, texts: list[str] | None = None) -> list[str]:
    """The lines of `text` with their breaks, split where `ast` and the visitor split them.
    `texts`: `line_texts(text)`, when the caller has it, so the text is not split twice."""
    if "\r" in text:
        return _LINE.findall(text)
    # without a carriage return, `str.split` gives the same lines at a fraction of the
    # pattern's cost, which steps through every character
    pieces = text.split("\n") if texts is None else texts
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def line_texts(text: str) -> list[str]:
    """The lines of `text` without their breaks (a last empty one after a final break)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


def digest(lines: Sequence[str], first: int, last: int) -> str:
    """sha1 of lines `first` to `last` (one-indexed, inclusive), breaks included."""
    text = "".join(lines[first - 1 : last])
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def outline(tree: ast.Module, lines: Sequence[str]) -> list[Region]:
    """The functions and docstrings a skeleton of the next version may stub, in line order."""
    found: list[Region] = []
    for node, classes, in_class in _statements(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not (in_class and node.name == "__init__") and _own_lines(node, lines):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                found.append(_region(FUNCTION, classes, node.name, first,
                                     node.end_lineno or node.lineno, lines))
        elif _lone_string(node, lines):
            found.append(_region(STRING, classes, "", node.lineno, node.end_lineno or node.lineno,
                                 lines))
    found.sort(key=lambda r: r.line)
    return found


def _statements(tree: ast.Module) -> Iterable[tuple[ast.stmt, tuple[str, ...], bool]]:
    """Every statement outside functions: (statement, enclosing classes, directly in a class)."""
    stack: list[tuple[list[ast.stmt], tuple[str, ...], bool]] = [(tree.body, (), False)]
    while stack:
        block, classes, in_class = stack.pop()
        for node in block:
            yield node, classes, in_class
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(node, ast.ClassDef):
                stack.append((node.body, (*classes, node.name), True))
                continue
            for name in _BLOCKS:
                for child in getattr(node, name, None) or ():
                    if isinstance(child, ast.stmt):
                        stack.append((getattr(node, name), classes, in_class))
                        break
                    stack.append((child.body, classes, in_class))  # except handlers, match cases


def _region(kind: str, classes: tuple[str, ...], name: str, first: int, last: int,
            lines: Sequence[str]) -> Region:
    head = lines[first - 1].rstrip("\r\n")
    if last > first:  # two lines: a bare `"""` or `@property` alone says little
        head = f"{head}\n{lines[first].rstrip(_BREAKS)}"
    return Region(kind, classes, name, digest(lines, first, last), first, last, head)


def _own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: Sequence[str]) -> bool:
    """False for `def f(): return 1`, or a body that shares a line with the header."""
    body = node.body[0]
    body_line = min([d.lineno for d in getattr(body, "decorator_list", ())] + [body.lineno])
    return body_line > node.lineno and not lines[body_line - 1][: body.col_offset].strip()


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


def place(lines: Sequence[str], known: Iterable[Region]) -> list[Region]:
    """Where the known regions' exact texts stand in `lines`: by first two lines, then digest.

    Each known region is placed at most as often as the previous version had it, first come
    first placed, and placements never overlap. A line is hashed once for each length of the
    regions that start like it (docstrings that open on a bare `\"\"\"` share a first line, not
    their second). Whether a placement really is that function or docstring is for the
    skeleton's tree to show (`misplaced`).
    """
    by_head: dict[str, dict[tuple[int, str], list[Region]]] = {}
    for region in known:
        size = region.end_line - region.line
        by_head.setdefault(region.head, {}).setdefault((size, region.digest), []).append(region)
    firsts = {head.partition("\n")[0] for head in by_head}
    left = Counter(region.key for groups in by_head.values()
                   for regions in groups.values() for region in regions)
    placed: list[Region] = []
    number = 1
    while number <= len(lines):
        one = lines[number - 1].rstrip("\r\n")
        found = None
        if one in firsts:
            two = f"{one}\n{lines[number].rstrip(_BREAKS)}" if number < len(lines) else ""
            for head in (two, one):
                groups = by_head.get(head)
                found = _match(lines, number, groups, left) if groups else None
                if found is not None:
                    break
        if found is None:
            number += 1
            continue
        placed.append(found)
        number = found.end_line + 1
    return placed


def _match(lines: Sequence[str], number: int, groups: dict[tuple[int, str], list[Region]],
           left: Counter[Key]) -> Region | None:
    """A known region whose text stands at line `number`, moved there; None if none does."""
    digests: dict[int, str] = {}
    for (size, wanted), regions in groups.items():
        last = number + size
        if last > len(lines) or _continued(lines, last, regions[0].head):
            continue  # a body that goes on past the old text: not the same function
        if size not in digests:
            digests[size] = digest(lines, number, last)
        if digests[size] != wanted:
            continue
        for region in regions:
            if left[region.key] > 0:
                left[region.key] -= 1
                return replace(region, line=number, end_line=last)
    return None


def _continued(lines: Sequence[str], last: int, head: str) -> bool:
    """The next line of code after line `last` is indented deeper than `head`.

    Only a guess, to spare a skeleton LibCST would refuse (a stub followed by an indented line):
    what decides is the skeleton's tree.
    """
    indent = len(head) - len(head.lstrip())
    for line in lines[last : last + 200]:
        code = line.strip()
        if code and not code.startswith("#"):
            return len(line) - len(line.lstrip()) > indent
    return False


def unfollowable(region: Region) -> bool:
    """The function is one `calls` never follows, as its first line shows: a decorator other
    than a bare `staticmethod` or `classmethod`, or `async def`. Its stub (`def name(): ...`,
    undecorated) must not be followed either, or the read would differ from a whole read and
    refuse the stub. False where the line does not tell (a decorator over several lines)."""
    if region.kind != FUNCTION:
        return False
    first = region.head.partition("\n")[0].strip()
    if first.startswith("async def ") or first.startswith("async\tdef"):
        return True
    if not first.startswith("@"):
        return False
    try:
        decorator = parse_expression(first[1:].partition("#")[0].strip() or "@")
    except SyntaxError:
        return False  # it goes on over the next lines, or a `#` sits in a string
    return not (isinstance(decorator, ast.Name) and decorator.id in PLAIN_DECORATORS)


def message_method(region: Region) -> bool:
    """A class's `__str__` or message method: `misplaced` refuses its stub, so none is made."""
    return region.kind == FUNCTION and bool(region.classes) and region.name in _NEVER_STUBBED


def build(lines: Sequence[str], placed: Sequence[Region]) -> Skeleton | None:
    """The file with every placed region stubbed; None when no function is among them."""
    if not any(region.kind == FUNCTION for region in placed):
        return None
    starts = {region.line: region for region in placed}
    pieces: list[str] = []
    real_line: list[int] = []
    stub_lines: dict[int, Region] = {}
    number = 1
    while number <= len(lines):
        region = starts.get(number)
        if region is not None:
            statement = f"def {region.name}(): ..." if region.kind == FUNCTION else '""'
            pieces.append(_stub(lines[number - 1], statement))
            real_line.append(number)
            stub_lines[len(real_line)] = region
            number = region.end_line + 1
        else:
            pieces.append(lines[number - 1])
            real_line.append(number)
            number += 1
    return Skeleton("".join(pieces), tuple(real_line), tuple(placed), stub_lines)


def _stub(first_line: str, statement: str) -> str:
    """`statement` at the indentation of `first_line`, ended by the same line break."""
    body = first_line.rstrip("\r\n")
    indent = body[: len(body) - len(body.lstrip())]
    return f"{indent}{statement}{first_line[len(body):] or chr(10)}"


def misplaced(tree: ast.Module, skeletal: Skeleton) -> set[Region]:
    """The stubs the skeleton's tree does not show as what they stand for, where they stand."""
    confirmed: set[int] = set()
    for node, classes, in_class in _statements(tree):
        region = skeletal.stub_lines.get(node.lineno)
        if region is None or region.classes != classes:
            continue
        if region.kind == FUNCTION and isinstance(node, ast.FunctionDef) \
                and node.name == region.name and not node.decorator_list \
                and not (in_class and node.name in _NEVER_STUBBED) and node.end_lineno == node.lineno:
            confirmed.add(node.lineno)
        elif region.kind == STRING and isinstance(node, ast.Expr) \
                and isinstance(node.value, ast.Constant) and node.value.value == "":
            confirmed.add(node.lineno)
    return {region for line, region in skeletal.stub_lines.items() if line not in confirmed}


def fresh_regions(tree: ast.Module, skeletal: Skeleton, lines: Sequence[str]) -> list[Region]:
    """The regions of the file that the skeleton did not stub, read off its tree, on real lines."""
    found = []
    for region in outline(tree, split_lines(skeletal.text)):
        if region.line in skeletal.stub_lines:
            continue
        first, last = skeletal.real_line[region.line - 1], skeletal.real_line[region.end_line - 1]
        found.append(replace(region, line=first, end_line=last,
                             digest=digest(lines, first, last)))
    return found


def region_at(regions: Sequence[Region], line: int) -> int | None:
    """The index of the region holding `line`, if any (regions sorted, never nested)."""
    index = bisect_right(regions, line, key=lambda r: r.line) - 1  # no list per call: a hot path
    if index >= 0 and regions[index].line <= line <= regions[index].end_line:
        return index
    return None


# ---------------------------------------------------------------- in the parent


@dataclass(frozen=True)
class Previous:
    """A file's results where they concern stubs: the previous version's, or those filled in."""

    sites: tuple[RaiseSite, ...]
    pending: tuple[RaiseSite, ...]
    classes: tuple[ClassDef, ...]
    regions: tuple[Region, ...]
    context: str
    counts: RaiseCounts = RaiseCounts()  # filled in: what the stubbed functions add to the skeleton's
    exposed: tuple[ExposedFunction, ...] = ()  # the previous version's, for `exposed.carried`


def fill(sites: Sequence[RaiseSite], pending: Sequence[RaiseSite], classes: Sequence[ClassDef],
         regions: Sequence[Region], stubbed: Sequence[Region], previous: Previous) -> Previous:
    """Add to a skeleton's results each stubbed function's results, moved to its new lines."""
    old: dict[Key, list[Region]] = {}
    for region in previous.regions:
        old.setdefault(region.key, []).append(region)
    sites, pending, classes = list(sites), list(pending), list(classes)
    filled = {r.line: r for r in regions}
    counts = RaiseCounts()
    for region in stubbed:
        if region.kind != FUNCTION:
            continue  # a docstring: no records
        was = old[region.key].pop(0)  # the worker stubbed it because the previous version has it
        shift = region.line - was.line
        sites += [_moved(s, shift) for s in previous.sites if was.line <= s.line <= was.end_line]
        pending += [_moved(s, shift) for s in previous.pending
                    if was.line <= s.line <= was.end_line]
        classes += [_moved_class(c, shift) for c in previous.classes
                    if was.line <= c.line <= was.end_line]
        filled[region.line] = replace(region, counts=was.counts, lookups=was.lookups)
        counts += was.counts
    by_place = lambda s: (s.line, s.column)  # noqa: E731 - stable: a raise's templates keep their order
    return Previous(tuple(sorted(sites, key=by_place)), tuple(sorted(pending, key=by_place)),
                    tuple(sorted(classes, key=lambda c: c.line)),
                    tuple(filled[line] for line in sorted(filled)), previous.context, counts)


def _moved(site: RaiseSite, shift: int) -> RaiseSite:
    if not shift:
        return site
    # `defined_at`: a function or constant of this file followed into, as far from the raise as
    # it was (its region's lookups hold the distance, `crawler.parse.followed`)
    message = replace(site.message, defined_at=_moved_place(site.message.defined_at, shift))
    return replace(site, line=site.line + shift, end_line=site.end_line + shift,
                   snippet_line=site.snippet_line + shift, message=message)


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


def carried(path: str, exposed: Sequence[ExposedFunction], stubbed: Sequence[Region],
            before: Sequence[ExposedFunction], regions_before: Sequence[Region]
            ) -> tuple[ExposedFunction, ...]:
    """A skeleton's exposed functions, with those it stubbed taken from the previous version.

    A stubbed function's text is the previous version's, so what it exposes is too; only its
    lines move, by as much as its region did."""
    have = {function.qualname for function in exposed}
    old: dict[tuple[object, ...], list[Region]] = {}
    for region in regions_before:
        old.setdefault(region.key, []).append(region)
    by_line = {_line(function): function for function in before if function.qualname not in have}
    lines = sorted(by_line)  # looked up by range: a stub stands for hundreds of lines
    kept = []
    for region in stubbed:
        if region.kind != FUNCTION or region.classes or not old.get(region.key):
            continue
        was = old[region.key].pop(0)
        for line in lines[bisect_left(lines, was.line):bisect_right(lines, was.end_line)]:
            function = by_line[line]
            if function.qualname.rpartition(".")[2] == region.name:
                kept.append(replace(function, defined_at=f"{path}:{line + region.line - was.line}"))
    return tuple(sorted([*exposed, *kept], key=lambda f: f.qualname))


def _line(function: ExposedFunction) -> int:
    return int(function.defined_at.rpartition(":")[2])
