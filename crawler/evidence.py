"""Evidence from the repository's own tests: assertions that expect an error, fitted to records.

`AssertionVisitor` walks statement blocks only (like `RaiseVisitor`): the assertions we read are
always a `with` item or an expression statement, so expressions are never entered. It finds

- `pytest.raises(E, match=P)` and `self.assertRaisesRegex(E, P)` (as a context manager or a call);
- `self.assertRaisesWithLiteralMatch(E, text)` (absl);
- `with self.assertRaises(E) as cm:` / `with pytest.raises(E) as info:` followed, later in the same
  block, by a message check on `str(cm.exception)` / `str(info.value)`: `assertEqual`, `assertIn`,
  `assertRegex`, `assert ... in/== ...`, `info.match(P)`.

A pattern is read when it is a string literal, `re.escape(literal)`, an f-string (its expressions
become `.*`), a `+` of those, or a name bound to one earlier in the function or module.

Lines come from `ast` matched in source order, as in the visitor; LibCST's `PositionProvider` is
the fallback and the tests hold both to the same answers.

The fit rule (`fits`): see its docstring.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from crawler.records import REMOVED, ErrorRecord, Evidence, TestAssertion

try:  # the regex parser behind `re`; `sre_parse` before Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

REGEX_FORMS = {"assertRaisesRegex": "assertRaisesRegex", "assertRaisesRegexp": "assertRaisesRegex"}
CONTEXT_FORMS = {"assertRaises": "assertRaises", "raises": "pytest.raises"}
LITERAL_FORMS = {"assertRaisesWithLiteralMatch": "assertRaisesWithLiteralMatch"}
ASSERTION_NAMES = frozenset({*REGEX_FORMS, *CONTEXT_FORMS, *LITERAL_FORMS})

MIN_LITERAL = 3  # a pattern with fewer literal characters is no evidence for any one message
MAX_EVIDENCE = 20  # per record: the most specific assertions, then by place
MAX_DP_CELLS = 200_000  # a fit search larger than this is not tried (none in jax comes close)


# ---------------------------------------------------------------- reading the tests


@dataclass
class _Scope:
    name: str
    is_class: bool
    strings: dict[str, str] = field(default_factory=dict)  # name -> pattern text bound earlier


@dataclass
class AssertionVisitor:
    """Collects the message-checking assertions of a test module.

    Results are in `found` as (call node, form, check, exception expressions, pattern, test
    qualname), in source order; `calls` lists every candidate call (read or not), in source order,
    for matching to positions; `unread` counts candidates whose pattern could not be read.
    """

    found: list[tuple[cst.Call, str, str, tuple[str, ...], str, str]] = field(default_factory=list)
    calls: list[cst.Call] = field(default_factory=list)
    unread: int = 0
    _stack: list[_Scope] = field(default_factory=lambda: [_Scope("<module>", False)])

    def visit_module(self, module: cst.Module) -> None:
        self._module = module
        self._visit_block(module.body)

    def _visit_block(self, statements: Sequence[cst.CSTNode]) -> None:
        for index, statement in enumerate(statements):
            if isinstance(statement, cst.SimpleStatementLine):
                self._visit_small(statement.body)
            elif isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
                self._stack.append(_Scope(statement.name.value, isinstance(statement, cst.ClassDef)))
                self._visit_suite(statement.body)
                self._stack.pop()
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    self._visit_with_item(item, statements[index + 1:])
                self._visit_suite(statement.body)
            elif isinstance(statement, cst.If):
                self._visit_if(statement)
            else:
                self._visit_compound(statement)

    def _visit_if(self, node: cst.If) -> None:
        self._visit_suite(node.body)
        if isinstance(node.orelse, cst.If):
            self._visit_if(node.orelse)
        elif node.orelse is not None:
            self._visit_suite(node.orelse.body)

    def _visit_compound(self, node: cst.CSTNode) -> None:
        """try/for/while/match and their else, except, finally and case blocks."""
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            child = getattr(node, name, None)
            if child is None:
                continue
            if isinstance(child, (tuple, list)):
                for part in child:
                    self._visit_suite(part.body)
            elif isinstance(child, cst.BaseSuite):
                self._visit_suite(child)
            else:
                self._visit_suite(child.body)

    def _visit_suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._visit_block(suite.body)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self._visit_small(suite.body)

    def _visit_small(self, statements: Sequence[cst.BaseSmallStatement]) -> None:
        for small in statements:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
                name = _call_name(call.func)
                if name in ASSERTION_NAMES:
                    self.calls.append(call)
                    self._read_call(call, name, None, ())
            elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    text = self._pattern(small.value)
                    if text is not None:
                        self._stack[-1].strings[target.value] = text
                    else:
                        self._stack[-1].strings.pop(target.value, None)

    def _visit_with_item(self, item: cst.WithItem, after: Sequence[cst.CSTNode]) -> None:
        call = item.item
        if not isinstance(call, cst.Call):
            return
        name = _call_name(call.func)
        if name not in ASSERTION_NAMES:
            return
        self.calls.append(call)
        bound = item.asname.name.value if item.asname and isinstance(item.asname.name, cst.Name) else None
        self._read_call(call, name, bound, after)

    def _read_call(self, call: cst.Call, name: str, bound: str | None,
                   after: Sequence[cst.CSTNode]) -> None:
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        exception = positional[0] if positional else keywords.get("expected_exception")
        if exception is None:
            return
        exceptions = _exception_names(exception, self._module)
        if not exceptions:
            self.unread += 1
            return
        checks: list[tuple[str, str, str]] = []  # (form, check, pattern)
        if name in REGEX_FORMS:
            expression = positional[1] if len(positional) > 1 else keywords.get("expected_regex")
            pattern = self._pattern(expression) if expression is not None else None
            if pattern is not None:
                checks.append((REGEX_FORMS[name], "match", pattern))
        elif name in LITERAL_FORMS:
            expression = positional[1] if len(positional) > 1 else keywords.get("expected_exception_message")
            text = self._pattern(expression, literal=True) if expression is not None else None
            if text is not None:
                checks.append((LITERAL_FORMS[name], "equals", "^" + re.escape(text) + "$"))
        elif name == "raises" and "match" in keywords:
            pattern = self._pattern(keywords["match"])
            if pattern is not None:
                checks.append(("pytest.raises", "match", pattern))
        elif bound is not None and len(positional) == 1:
            attribute = "exception" if name == "assertRaises" else "value"
            for check, pattern in self._later_checks(bound, attribute, after):
                checks.append((CONTEXT_FORMS[name], check, pattern))
        if not checks:
            self.unread += 1
            return
        for form, check, pattern in checks:
            self.found.append((call, form, check, exceptions, pattern, self._test_name()))

    def _test_name(self) -> str:
        names = [scope.name for scope in self._stack[1:]]
        return ".".join(names) or "<module>"

    def _pattern(self, node: cst.BaseExpression, literal: bool = False) -> str | None:
        """The regex text (or, with `literal`, the plain text) an expression stands for."""
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return value if isinstance(value, str) else None
        if isinstance(node, cst.FormattedString) and not literal:
            parts: list[str] = []
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    parts.append(part.value.replace("{{", "{").replace("}}", "}"))
                else:
                    parts.append(".*")
            text = "".join(parts)
            if "\\" in text and "r" not in node.prefix.lower():
                return None  # escapes in a non-raw f-string: not worth decoding by hand
            return text
        if isinstance(node, cst.Call) and _call_name(node.func) == "escape" and node.args and not literal:
            inner = self._pattern(node.args[0].value, literal=True)
            return re.escape(inner) if inner is not None else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = self._pattern(node.left, literal), self._pattern(node.right, literal)
            return left + right if left is not None and right is not None else None
        if isinstance(node, cst.Name):
            for scope in reversed(self._stack):
                if node.value in scope.strings:
                    return scope.strings[node.value]
        return None

    def _later_checks(self, bound: str, attribute: str, after: Sequence[cst.CSTNode]
                      ) -> list[tuple[str, str]]:
        """Message checks on `bound` in the statements after the `with`, as (check, pattern)."""
        checks: list[tuple[str, str]] = []
        for statement in after:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                found = self._message_check(small, bound, attribute)
                if found is not None:
                    checks.append(found)
        return checks

    def _message_check(self, small: cst.BaseSmallStatement, bound: str, attribute: str
                       ) -> tuple[str, str] | None:
        def is_message(node: cst.BaseExpression) -> bool:
            return _is_message_of(node, bound, attribute)

        def text(node: cst.BaseExpression) -> str | None:
            return self._pattern(node, literal=True)

        if isinstance(small, cst.Assert):
            test = small.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                op, right = test.comparisons[0].operator, test.comparisons[0].comparator
                if isinstance(op, cst.In) and is_message(right) and (value := text(test.left)):
                    return "contains", re.escape(value)
                if isinstance(op, cst.Equal):
                    for a, b in ((test.left, right), (right, test.left)):
                        if is_message(a) and (value := text(b)) is not None:
                            return "equals", "^" + re.escape(value) + "$"
            return None
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return None
        call = small.value
        name = _call_name(call.func)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if name == "match" and isinstance(call.func, cst.Attribute) and \
                isinstance(call.func.value, cst.Name) and call.func.value.value == bound and args:
            pattern = self._pattern(args[0])
            return ("match", pattern) if pattern is not None else None
        if len(args) < 2:
            return None
        if name in ("assertIn",) and is_message(args[1]) and (value := text(args[0])):
            return "contains", re.escape(value)
        if name in ("assertRegex", "assertRegexpMatches") and is_message(args[0]):
            pattern = self._pattern(args[1])
            return ("match", pattern) if pattern is not None else None
        if name in ("assertEqual", "assertEquals"):
            for a, b in ((args[0], args[1]), (args[1], args[0])):
                if is_message(a) and (value := text(b)) is not None:
                    return "equals", "^" + re.escape(value) + "$"
        return None


def _call_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def _exception_names(node: cst.BaseExpression, module: cst.Module) -> tuple[str, ...]:
    if isinstance(node, cst.Tuple):
        names = [_dotted(element.value) for element in node.elements]
        return tuple(n for n in names if n) if all(names) else ()
    name = _dotted(node)
    return (name,) if name else ()


def _is_message_of(node: cst.BaseExpression, bound: str, attribute: str) -> bool:
    """`str(cm.exception)`, `cm.exception.args[0]` (and `.value` for pytest)."""
    def is_exception(expr: cst.BaseExpression) -> bool:
        return (isinstance(expr, cst.Attribute) and expr.attr.value == attribute
                and isinstance(expr.value, cst.Name) and expr.value.value == bound)

    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "str" \
            and len(node.args) == 1:
        return is_exception(node.args[0].value)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
            and node.value.attr.value == "args" and len(node.slice) == 1:
        index = node.slice[0].slice
        return (is_exception(node.value.value) and isinstance(index, cst.Index)
                and isinstance(index.value, cst.Integer) and index.value.value == "0")
    return False


@dataclass(frozen=True)
class FileAssertions:
    """What one test file gave: its assertions, and how many candidates could not be read."""

    path: str
    assertions: tuple[TestAssertion, ...]
    unread: int = 0
    positions: str = "none"  # "ast", "libcst" or "none"


def find_assertions(path: str, source: bytes) -> FileAssertions:
    """Parse one test file and read its message-checking assertions. Raises LibCST's errors."""
    module = cst.parse_module(source)
    visitor = AssertionVisitor()
    visitor.visit_module(module)
    if not visitor.calls:
        return FileAssertions(path, (), visitor.unread)
    lines, positions = _ast_lines(source, visitor), "ast"
    if lines is None:
        lines, positions = _libcst_lines(module, visitor), "libcst"
    found = tuple(
        TestAssertion(path=path, line=lines[id(call)], test=test, form=form, check=check,
                      exceptions=exceptions, pattern=pattern)
        for call, form, check, exceptions, pattern, test in visitor.found
    )
    return FileAssertions(path, found, visitor.unread, positions)


def _ast_lines(source: bytes, visitor: AssertionVisitor) -> dict[int, int] | None:
    """Lines of the candidate calls from `ast`, matched in source order; None when they disagree."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            calls.extend(i.context_expr for i in node.items if isinstance(i.context_expr, ast.Call)
                         and _ast_name(i.context_expr.func) in ASSERTION_NAMES)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and _ast_name(node.value.func) in ASSERTION_NAMES:
            calls.append(node.value)
    if len(calls) != len(visitor.calls):
        return None
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    lines: dict[int, int] = {}
    for cst_call, ast_call in zip(visitor.calls, calls):
        if _call_name(cst_call.func) != _ast_name(ast_call.func):
            return None
        lines[id(cst_call)] = ast_call.lineno
    return lines


def _ast_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _libcst_lines(module: cst.Module, visitor: AssertionVisitor) -> dict[int, int]:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(call): positions[call].start.line for call in visitor.calls}


# ---------------------------------------------------------------- fitting assertions to records

WILD = None  # a glob symbol: any text
Glob = tuple[str | None, ...]


def template_glob(template: str, placeholders: Sequence[str]) -> Glob:
    """A template as a glob: its literal characters, each placeholder one wildcard."""
    symbols: list[str | None] = []
    index, k = 0, 0
    while index < len(template):
        char = template[index]
        if template.startswith("{{", index) or template.startswith("}}", index):
            symbols.append(char)
            index += 2
        elif char == "{" and k < len(placeholders) and \
                template.startswith("{" + placeholders[k] + "}", index):
            if not symbols or symbols[-1] is not WILD:
                symbols.append(WILD)
            index += len(placeholders[k]) + 2
            k += 1
        else:
            symbols.append(char)
            index += 1
    return tuple(symbols)


def pattern_globs(pattern: str) -> tuple[list[Glob], bool]:
    """A searched regex as globs (one per top-level alternative), and whether it ignores case.

    Literal characters are kept; anything else (classes, `.`, repeats, back references) is a
    wildcard; zero-width parts are dropped; `^` and `$` at the ends anchor the glob.
    """
    parsed = _sre.parse(pattern)
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    items = list(parsed)
    branches = [items]
    if len(items) == 1 and items[0][0] == _sre.BRANCH:
        branches = [list(branch) for branch in items[0][1][1]]
    globs = []
    for branch in branches:
        start = bool(branch) and branch[0] == (_sre.AT, _sre.AT_BEGINNING) or \
            bool(branch) and branch[0] == (_sre.AT, _sre.AT_BEGINNING_STRING)
        end = bool(branch) and branch[-1][0] == _sre.AT and branch[-1][1] in (_sre.AT_END, _sre.AT_END_STRING)
        symbols: list[str | None] = [] if start else [WILD]
        _flatten(branch, symbols, ignore_case)
        if not end:
            symbols.append(WILD)
        globs.append(_collapse(symbols))
    return globs, ignore_case


def _flatten(items: Iterable[tuple[object, object]], out: list[str | None], ignore_case: bool) -> None:
    for op, arg in items:
        if op == _sre.LITERAL:
            char = chr(arg)  # type: ignore[arg-type]
            out.append(char.lower() if ignore_case else char)
        elif op == _sre.SUBPATTERN:
            _flatten(arg[-1], out, ignore_case)  # type: ignore[index]
        elif op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue  # zero-width
        else:
            out.append(WILD)


def _collapse(symbols: list[str | None]) -> Glob:
    out: list[str | None] = []
    for symbol in symbols:
        if symbol is WILD and out and out[-1] is WILD:
            continue
        out.append(symbol)
    return tuple(out)


def coverage(template: Glob, pattern: Glob) -> int:
    """The most literal pattern characters matched by literal template characters, over every
    message the template can give that the pattern finds; -1 when there is no such message."""
    rows, cols = len(template), len(pattern)
    if (rows + 1) * (cols + 1) > MAX_DP_CELLS:
        return -1
    impossible = -1
    below = [impossible] * (cols + 1)  # best[i + 1][*]
    for i in range(rows, -1, -1):
        row = [impossible] * (cols + 1)
        for j in range(cols, -1, -1):
            if i == rows and j == cols:
                row[j] = 0
                continue
            a = template[i] if i < rows else False
            b = pattern[j] if j < cols else False
            best = impossible
            if a is WILD:
                best = max(below[j], row[j + 1] if j < cols else impossible)
            if b is WILD:
                best = max(best, row[j + 1], below[j] if i < rows else impossible)
            if a is not WILD and b is not WILD and i < rows and j < cols and a == b:
                if below[j + 1] >= 0:
                    best = max(best, below[j + 1] + 1)
            row[j] = best
        below = row
    return below[0]


def fits(assertion_pattern: str, template: str, placeholders: Sequence[str]) -> bool:
    """The fit rule for one pattern and one template (exception names are checked by the caller).

    A test's pattern fits a template when both hold:

    1. there is a message the template can give that the pattern finds (`re.search`), reading
       each placeholder as any text and each non-literal part of the pattern as any text;
    2. at least half of the pattern's literal characters, and at least MIN_LITERAL, fall on the
       template's own literal text, not on placeholder values: so `raise ValueError(msg)` fits
       no test, and "bad value: {x}" does not take every test that mentions a value.

    Fast path: when the pattern, run by `re` itself, finds the example text (every placeholder
    empty), both hold at once: a STRONG fit. Otherwise the glob search in `coverage` decides: a
    WEAK fit. `match_evidence` keeps an assertion's weak fits only when it has no strong one.
    """
    target = _target_of(template, placeholders)
    compiled = _compile(assertion_pattern)
    if compiled is None:
        return False
    return _fits(compiled, _globs(assertion_pattern), target) != NONE


def _target_of(template: str, placeholders: Sequence[str]) -> tuple[str, Glob, bool]:
    glob = template_glob(template, placeholders)
    example = "".join(s for s in glob if s is not WILD)
    return example, glob, WILD in glob


_COMPILED: dict[str, re.Pattern[str] | None] = {}
_GLOBS: dict[str, tuple[list[Glob], bool, int]] = {}


def _compile(pattern: str) -> re.Pattern[str] | None:
    if pattern not in _COMPILED:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _COMPILED[pattern] = re.compile(pattern)
        except (re.error, RecursionError, OverflowError):
            _COMPILED[pattern] = None
    return _COMPILED[pattern]


def _globs(pattern: str) -> tuple[list[Glob], bool, int]:
    """The pattern's globs, whether it ignores case, and its fewest literal characters."""
    if pattern not in _GLOBS:
        globs, ignore_case = pattern_globs(pattern)
        literal = min(sum(1 for s in g if s is not WILD) for g in globs)
        _GLOBS[pattern] = (globs, ignore_case, literal)
    return _GLOBS[pattern]


STRONG, WEAK, NONE = 2, 1, 0  # how a pattern fits: on the template's own text, through a value


def _fits(compiled: re.Pattern[str], globs: tuple[list[Glob], bool, int],
          target: tuple[str, Glob, bool]) -> int:
    """STRONG when the pattern finds the example text, WEAK when it fits only through
    placeholder values (the glob search), NONE otherwise."""
    example, glob, has_placeholders = target
    branches, ignore_case, literal = globs
    if literal < MIN_LITERAL:
        return NONE
    if compiled.search(example):
        return STRONG
    if not has_placeholders:
        return NONE  # the example is the only message this template gives
    if ignore_case:
        glob = tuple(s.lower() if s is not WILD else s for s in glob)
    for branch in branches:
        needed = sum(1 for s in branch if s is not WILD)
        if coverage(glob, branch) >= max(MIN_LITERAL, (needed + 1) // 2):
            return WEAK
    return NONE


def _names(record: ErrorRecord) -> frozenset[str]:
    site = record.site
    names = {site.exception.rsplit(".", 1)[-1]}
    if site.exception_qualname:
        names.add(site.exception_qualname.rsplit(".", 1)[-1])
    return frozenset(names)


@dataclass
class EvidenceStats:
    """How a matching went, for the run's summary and the report."""

    assertions: int = 0
    fitted: int = 0  # assertions that fit at least one record
    records: int = 0  # records that gained evidence
    seconds: float = 0.0


def match_evidence(records: Sequence[ErrorRecord], assertions: Sequence[TestAssertion],
                   stats: EvidenceStats | None = None) -> dict[str, tuple[Evidence, ...]]:
    """Evidence by record id, for every record (removed ones are not matched) that an assertion fits.

    Exception names must agree: the last part of one of the test's exceptions equals the last
    part of the record's exception as written or of its qualname. Each record keeps at most
    MAX_EVIDENCE items, the most specific first (fewest fits), then listed by path and line.
    An assertion that fits some records on their own text (STRONG) is not listed on records it
    fits only through a placeholder's value (WEAK): "cannot encode None" goes to the raise that
    says so, not also to "cannot encode {value!r} as {kind}".
    """
    by_name: dict[str, list[tuple[ErrorRecord, tuple[str, Glob, bool]]]] = defaultdict(list)
    targets: dict[tuple[str, tuple[str, ...]], tuple[str, Glob, bool]] = {}
    for record in records:
        if record.status == REMOVED:
            continue
        message = record.site.message
        key = (message.template, message.placeholders)
        if key not in targets:
            targets[key] = _target_of(*key)
        for name in _names(record):
            by_name[name].append((record, targets[key]))
    found: dict[str, list[Evidence]] = defaultdict(list)
    for assertion in sorted(set(assertions), key=_assertion_order):
        compiled = _compile(assertion.pattern)
        if compiled is None:
            continue
        globs = _globs(assertion.pattern)
        tiers: dict[int, dict[str, str]] = {STRONG: {}, WEAK: {}}  # id -> exception as written
        for written in assertion.exceptions:
            for record, target in by_name.get(written.rsplit(".", 1)[-1], ()):
                tier = _fits(compiled, globs, target)
                if tier != NONE:
                    tiers[tier].setdefault(record.id, written)
        hits = tiers[STRONG] or tiers[WEAK]
        if stats is not None:
            stats.assertions += 1
            stats.fitted += bool(hits)
        for record_id, written in hits.items():
            found[record_id].append(Evidence(
                path=assertion.path, line=assertion.line, test=assertion.test, form=assertion.form,
                check=assertion.check, exception=written, pattern=assertion.pattern, fits=len(hits)))
    result: dict[str, tuple[Evidence, ...]] = {}
    for record_id, items in found.items():
        kept = sorted(items, key=lambda e: (e.fits, e.path, e.line, e.pattern))[:MAX_EVIDENCE]
        result[record_id] = tuple(sorted(kept, key=lambda e: (e.path, e.line, e.pattern, e.check)))
    if stats is not None:
        stats.records = len(result)
    return result


def _assertion_order(a: TestAssertion) -> tuple[str, int, str, str, str]:
    return (a.path, a.line, a.pattern, a.check, a.form)
