"""One file to its raise sites: one parse, one pass over its statements, then its records.

`find_raise_sites` parses a file (or the skeleton of its next version, `crawler.parse.skeleton`),
walks it with `RaiseVisitor` (`raise_visitor`), places every raise, function and class on its
lines, and reads the records: raise sites (`site_records`) and classes (`class_records`).

Lines come from `crawler.parse.positions`: Python's own `ast`, held equal to LibCST's
`PositionProvider`.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import json
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from crawler.parse import _source, followed, module_names, python_ast, skeleton
from crawler.parse import positions as _positions
from crawler.parse.class_records import class_record
from crawler.parse.exposed import exposed_functions, may_be_exposed
from crawler.parse.message import class_text, rules
from crawler.parse.message.calls import Follower
from crawler.parse.positions import Unread
from crawler.parse.raise_visitor import (
    RaiseVisitor,
    module_lookup,
    qualify,
)
from crawler.parse.site_records import (
    FOLLOWED,
    PENDING,
    Place,
    sites_of,
    snippet,
)
from crawler.records import ClassDef, ExposedFunction, RaiseCounts, RaiseSite

_SKELETON_READS = 5  # refused stubs put back this many times at most, then the file is read whole


class _ReadWhole(Exception):
    """A skeleton cannot give what a whole read gives here: the file is read whole."""


def module_exports(visitor: RaiseVisitor) -> dict[str, str]:
    """The module's top-level bindings, and under STAR the modules it star-imports."""
    exports = dict(visitor.module_bindings)
    if visitor.star_modules:
        exports[module_names.STAR] = " ".join(visitor.star_modules)
    return exports


@dataclass
class FileSites:
    """What one file gave: its sites, the raises that are not records, and its classes.

    `pending` holds raises without a message (`raise Foo`, `raise Foo()`) of a class that is not
    a builtin: they become records only if the repository-wide pass finds a template for Foo.
    `exports` maps the module's top-level names to qualified names, to follow re-exports; its
    key `module_names.STAR` (no name can be it) lists the modules `from M import *` reads, in order.
    `regions`, `context` and `stubbed` are for reading the file's next version (see
    `crawler.parse.skeleton`): read from a skeleton, `stubbed` lists the functions whose results the
    caller takes from the previous version (`skeleton.fill`).
    """

    sites: list[RaiseSite]
    counts: RaiseCounts
    positions: str  # "ast", "ast+libcst" or "libcst": which gave the lines (`_positions`)
    classes: list[ClassDef] = field(default_factory=list)
    pending: list[RaiseSite] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)
    regions: list[skeleton.Region] = field(default_factory=list)
    context: str = ""
    stubbed: tuple[skeleton.Region, ...] = ()
    followed: bool = False  # some message was read through another function or a constant
    exposed: tuple[ExposedFunction, ...] = ()  # its functions, for other modules' raises
    refused: set[skeleton.Region] = field(default_factory=set)  # stubs a skeleton cannot keep


def find_raise_sites(path: str, source: bytes, module_name: str | None = None,
                     known: skeleton.Known | None = None,
                     tree: ast.Module | None = None) -> FileSites:
    """Parse one file and return its raise sites. Raises libcst's ParserSyntaxError and friends.

    With `known` (the context and functions of the file's previous version), a file whose
    context is unchanged is read as a skeleton: its known functions are stubbed, and listed in
    `stubbed` for the caller to fill in. `tree` is `ast`'s tree of `source` where the caller
    parsed it already (`python_ast.ast_parse`, as a worker does for the call facts too); None:
    the file is parsed by `ast` here, when it has something to place.
    """
    if known is not None:
        found = _skeleton_sites(path, source, module_name, known)
        if found is not None:
            return found
    module = cst.parse_module(source)
    visitor = RaiseVisitor(module_name, is_package=path.endswith("__init__.py"))
    visitor.visit_module(module)
    context = context_digest(visitor, module)
    if not visitor.found and not visitor.classes and not _exposes(visitor):
        return FileSites([], RaiseCounts(), positions="none", exports=module_exports(visitor),
                         context=context)
    text = _decode(source, module.encoding)
    lines = skeleton.line_texts(text)
    tree, unread = (tree, ()) if tree is not None else _positions.ast_read(source, lines, module, text)
    plain = _plain_text(source)
    regions = skeleton.outline(tree, skeleton.split_lines(plain, lines if plain == text else None)) \
        if tree is not None and plain is not None else []
    found = _read(path, module, visitor, tree, lines, lines, regions, unread=unread)
    found.context = context
    return found


def _skeleton_sites(path: str, source: bytes, module_name: str | None, known: skeleton.Known
                    ) -> FileSites | None:
    """The file read as a skeleton; None when it must be read whole after all."""
    text = _plain_text(source)
    if text is None:
        return None
    real_lines = skeleton.split_lines(text)
    followed_into = followed.targets(known.regions)
    placed = skeleton.place(real_lines, known.regions)
    apart = followed.apart(placed, known.regions, module_name)
    placed = [region for region in placed if region not in apart
              and not skeleton.message_method(region)
              and followed.stubbable(region, module_name, followed_into, real_lines)]
    placed = followed.named_in_read(placed, module_name, followed_into, real_lines)
    lines = skeleton.line_texts(text)
    whole_tree: list[bool] = []
    for _ in range(_SKELETON_READS):  # a stub refused is put back, and the skeleton read again
        skeletal = skeleton.build(real_lines, placed)
        if skeletal is None:
            return None
        read = _read_skeleton(skeletal, path, module_name, known)
        if read is None:
            return None
        module, visitor, tree, unread, refused, skeleton_lines = read
        if refused:
            placed = [region for region in placed if region not in refused]
            continue
        regions = sorted([*skeletal.stubbed, *skeleton.fresh_regions(tree, skeletal, real_lines)],
                         key=lambda r: r.line)
        functions = [r for r in regions if r.kind == skeleton.FUNCTION]
        try:
            found = _read(path, module, visitor, tree, skeleton_lines, lines, functions,
                          skeletal.real_line, unread, stubbed=skeletal.stubbed, real_text=text,
                          whole_tree=whole_tree)
        except _ReadWhole:
            return None
        if not found.refused:
            break
        placed = [region for region in placed if region not in found.refused]
    else:
        return None
    counted = {r.line: r for r in found.regions}
    found.regions = [counted.get(r.line, r) for r in regions]
    found.context = known.context
    found.stubbed = skeletal.stubbed
    return found


def _read_skeleton(skeletal: skeleton.Skeleton, path: str, module_name: str | None,
                   known: skeleton.Known
                   ) -> tuple[cst.Module, RaiseVisitor, ast.Module, Unread,
                              set[skeleton.Region], list[str]] | None:
    """The skeleton parsed and visited, the stubs it cannot keep, and its lines; None: read
    it whole."""
    try:
        module = cst.parse_module(skeletal.text.encode("utf-8", "surrogatepass"))
    except Exception:  # noqa: BLE001 - a skeleton LibCST refuses: read the file whole instead
        return None
    skeleton_lines = skeleton.line_texts(skeletal.text)
    tree, unread = _positions.ast_read(skeletal.text, skeleton_lines, module, skeletal.text)
    if tree is None:
        return None  # nothing to check the stubs against
    visitor = RaiseVisitor(module_name, is_package=path.endswith("__init__.py"))
    visitor.visit_module(module)
    if context_digest(visitor, module) != known.context:
        return None
    _unfollowable_stubs(visitor, skeletal.stubbed)
    refused = skeleton.misplaced(tree, skeletal)
    refused.update(region for region in skeletal.stubbed if region.kind == skeleton.FUNCTION
                   and any(parts[0] != FOLLOWED and module_lookup(visitor, list(parts)) != answer
                           for parts, answer in region.lookups))  # FOLLOWED: checked by `_read`
    return module, visitor, tree, unread, refused, skeleton_lines


def _read(path: str, module: cst.Module, visitor: RaiseVisitor, tree: ast.Module | None,
          parsed_lines: list[str], lines: list[str], regions: list[skeleton.Region],
          real_line: Sequence[int] | None = None, unread: Unread = (),
          stubbed: Sequence[skeleton.Region] = (), real_text: str = "",
          whole_tree: list[bool] | None = None) -> FileSites:
    """Sites, pending raises and classes of a visited module; `real_line` maps a skeleton's lines.

    A skeleton's read lists in `refused` the stubs it cannot keep: those it tried to follow
    into, and those whose followed functions or constants changed (`crawler.parse.followed`).
    """
    exports = module_exports(visitor)
    if not visitor.found and not visitor.classes and not _exposes(visitor):
        return FileSites([], RaiseCounts(), "none", exports=exports, regions=regions)
    spans, function_spans, class_lines, positions = _positions.positions(
        module, tree, parsed_lines, visitor, unread)
    if real_line is not None:
        spans, function_spans, class_lines = _positions.moved_to(real_line, spans, function_spans,
                                                                 class_lines)
    sites: list[RaiseSite] = []
    pending: list[RaiseSite] = []
    follower = Follower(module, visitor.index,
                        lambda parts, scopes: qualify(parts, scopes, visitor))  # type: ignore[arg-type]

    # for a skeleton: whether a whole read has a tree to count lines on, asked once a file
    whole_tree = [] if whole_tree is None else whole_tree

    def line_of(node: object) -> int | None:
        """The line of a function or constant a message was followed into."""
        if isinstance(node, cst.FunctionDef) and id(node) in function_spans:
            return function_spans[id(node)].line
        line = _positions.top_level_line(tree, module, node, unread)
        if line is None or real_line is None:
            return line
        if not whole_tree:
            whole_tree.append(_whole_read_has_tree(real_text, lines))
        if not whole_tree[0]:
            raise _ReadWhole
        return real_line[line - 1]

    def where(name: str) -> str | None:
        """The path:line of a function or constant a message was followed into."""
        line = line_of(follower.defined.get(name))
        return f"{path}:{line}" if line is not None else None

    tests: dict[int, str] = {}
    counts = RaiseCounts()
    tallies = [RaiseCounts() for _ in regions]
    lookups: list[set[tuple[str, ...]]] = [set() for _ in regions]
    for found in visitor.found:
        looked = len(visitor.lookups)
        span = spans[id(found.node)]
        function = next((s for s in reversed(found.scopes) if not s.is_class), None)
        snippet_span = function_spans.get(id(function.node)) if function else None
        place = Place(path, module, found, span, snippet(lines, span, snippet_span), follower,
                       visitor, where, tests)
        touched = len(follower.touched)
        rules.at_raise(span.line)  # (only while `rules.tracing`)
        made, raised = sites_of(place)
        visitor.lookups.extend((FOLLOWED, name) for name in follower.touched[touched:])
        counts += raised
        pending.extend(site for site in made if site.message.kind == PENDING)
        sites.extend(site for site in made if site.message.kind != PENDING)
        index = skeleton.region_at(regions, span.line)
        if index is not None:
            tallies[index] += raised
            lookups[index].update(visitor.lookups[looked:])
    classes = []
    rules.at_raise(0)  # a class's own message: no raise statement's
    constants = class_text.module_constants(visitor.index.constants, follower.bound_once_at_top)
    for found_class in visitor.classes:
        looked = len(visitor.lookups)
        made_class = class_record(path, module, found_class, class_lines[id(found_class.node)],
                                  visitor, constants)
        classes.append(made_class)
        index = skeleton.region_at(regions, made_class.line)
        if index is not None:
            lookups[index].update(visitor.lookups[looked:])
    # A skeleton's stubbed functions are carried from the previous version (`exposed.carried`),
    # so what each function's exposure read looked up or followed goes to its region's lookups.
    marks = [len(visitor.lookups), len(follower.touched)]

    def exposure_read(node: cst.FunctionDef) -> None:
        visitor.lookups.extend((FOLLOWED, name) for name in follower.touched[marks[1]:])
        index = skeleton.region_at(regions, function_spans[id(node)].line)
        if index is not None:
            lookups[index].update(visitor.lookups[marks[0]:])
        marks[:] = [len(visitor.lookups), len(follower.touched)]

    exposed = exposed_functions(
        follower, lambda node: f"{path}:{function_spans[id(node)].line}", exposure_read)

    stub_ends = {region.line: region.end_line for region in stubbed
                 if region.kind == skeleton.FUNCTION}

    def function_text(node: cst.CSTNode) -> str | None:
        """A function's decorators and its lines in the file: its text without LibCST's codegen.
        A stub's are the lines it stands for (a stub followed into is undecorated)."""
        span = function_spans.get(id(node))
        if span is None or not isinstance(node, cst.FunctionDef):
            return None
        written = "".join(_source.node_code(module, decorator) for decorator in node.decorators)
        return written + "\n".join(lines[span.line - 1:stub_ends.get(span.line, span.end_line)])

    dependencies = followed.Dependencies(follower, line_of, function_text)

    def answer(parts: tuple[str, ...], region: skeleton.Region) -> str | None:
        if parts[0] == FOLLOWED:
            return dependencies.answer(parts[1], region.line)
        return module_lookup(visitor, parts)

    counted = [_counted(r, t, tuple((parts, answer(parts, r)) for parts in sorted(u)))
               for r, t, u in zip(regions, tallies, lookups)]
    refused = followed.touched_stubs(follower, stubbed, visitor.module_name) | {
        region for region in stubbed if region.kind == skeleton.FUNCTION
        and dependencies.changed(region)}
    return FileSites(sites, counts, positions, classes, pending, exports, regions=counted,
                     followed=bool(follower.touched), exposed=exposed, refused=refused)


def _unfollowable_stubs(visitor: RaiseVisitor, stubbed: Sequence[skeleton.Region]) -> None:
    """Mark the stubs of functions `calls` never follows (decorated, `async`) as such, so that a
    read follows into them no more than a whole read follows into what they stand for."""
    for region in stubbed:
        if not skeleton.unfollowable(region):
            continue
        scope = visitor.index.methods.get((".".join(region.classes), region.name)) \
            if region.classes else visitor.index.functions.get(region.name)
        if scope is not None and _is_stub(scope.node):
            scope.followable = False


def _is_stub(node: cst.CSTNode | None) -> bool:
    """`def name(): ...` as a skeleton writes it: no decorator, no parameter, `...` its body."""
    if not isinstance(node, cst.FunctionDef) or node.decorators or node.asynchronous \
            or not isinstance(node.body, cst.SimpleStatementSuite):
        return False
    params = node.params
    if params.params or params.posonly_params or params.kwonly_params \
            or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return False
    body = node.body.body
    return len(body) == 1 and isinstance(body[0], cst.Expr) and isinstance(body[0].value, cst.Ellipsis)


def _whole_read_has_tree(text: str, lines: list[str]) -> bool:
    """Whether a whole read of `text` has `ast`'s tree, of the file or statement by statement.

    Without a lone carriage return the statement-by-statement tree is always made
    (`_positions.ast_read`), and it counts top-level lines as the whole file's tree does: the
    file need not be parsed again to know.
    """
    if not _positions.lone_carriage_return(text):
        return True
    return python_ast.ast_tree(text, lines) is not None


def _counted(region: skeleton.Region, counts: RaiseCounts,
             lookups: tuple[skeleton.Lookup, ...]) -> skeleton.Region:
    """The region with its raises and lookups; itself when they are its own already (most
    functions raise nothing and look nothing up), without a `replace` for each."""
    if counts == region.counts and lookups == region.lookups:
        return region
    return replace(region, counts=counts, lookups=lookups)


def _exposes(visitor: RaiseVisitor) -> bool:
    """Some top-level function may build text or an exception another module's raise takes."""
    functions = visitor.index.functions
    return any(f is not None and may_be_exposed(f, functions) for f in functions.values())


def context_digest(visitor: RaiseVisitor, module: cst.Module) -> str:
    """What every function's records take from the module: its name, and its line break.

    The module-level names a function's records depend on are its region's `lookups`.
    """
    parts = (visitor.module_name, visitor.is_package, module.default_newline)
    text = json.dumps(parts, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("ascii")).hexdigest()


def _plain_text(source: bytes) -> str | None:
    """The text of a UTF-8 file with no BOM and no other declared encoding; else None."""
    if source.startswith(codecs.BOM_UTF8):
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode("utf-8")
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return text if encoding == "utf-8" else None


def _decode(source: bytes, encoding: str) -> str:
    text = source.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text
