"""Evidence from the repository's own tests: assertions that expect an error, fitted to records.

`AssertionVisitor` walks statement blocks only (`crawler.parse._walk`, like `RaiseVisitor`): the
assertions we read are always a `with` item or an expression statement. It finds

- `pytest.raises(E, match=P)` and `self.assertRaisesRegex(E, P)` (as a context manager or a call);
- `self.assertRaisesWithLiteralMatch(E, text)` (absl);
- `with self.assertRaises(E) as cm:` / `with pytest.raises(E) as info:` followed, later in the same
  block, by a message check on `str(cm.exception)` / `str(info.value)`: `assertEqual`, `assertIn`,
  `assertRegex`, `assert ... in/== ...`, `info.match(P)`.

A pattern is read when it is a string literal, `re.escape(literal)`, an f-string (its expressions
become `.*`), a `+` of those, or a name bound to one earlier in the function or module.

Lines come from `ast` matched in source order, as in the visitor; LibCST's `PositionProvider` is
the fallback and the tests hold both to the same answers.

Fitting the assertions to records is `crawler/catalogue/evidence.py`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from crawler.parse._walk import StatementWalker
from crawler.parse.message.flow import Level
from crawler.parse.outcomes import FileAssertions
from crawler.parse.positions import position_map
from crawler.parse.python_ast import ast_parse_newer, ast_statements
from crawler.records import TestAssertion

REGEX_FORMS = {"assertRaisesRegex": "assertRaisesRegex", "assertRaisesRegexp": "assertRaisesRegex"}
CONTEXT_FORMS = {"assertRaises": "assertRaises", "raises": "pytest.raises"}
LITERAL_FORMS = {"assertRaisesWithLiteralMatch": "assertRaisesWithLiteralMatch"}
ASSERTION_NAMES = frozenset({*REGEX_FORMS, *CONTEXT_FORMS, *LITERAL_FORMS})
# Every name the visitor reads a call by contains one of these words (identifiers are single
# tokens, and the visitor compares their text as written): code without any holds no evidence.
NEEDLES = tuple(sorted(name.encode() for name in ASSERTION_NAMES
                       if not any(other != name and other in name for other in ASSERTION_NAMES)))
_STUBBABLE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# ---------------------------------------------------------------- reading the tests


@dataclass
class _Scope:
    name: str
    is_class: bool
    strings: dict[str, str] = field(default_factory=dict)  # name -> pattern text bound earlier


@dataclass
class AssertionVisitor(StatementWalker[_Scope]):
    """Collects the message-checking assertions of a test module.

    Results are in `found` as (call node, form, check, exception expressions, pattern, test
    qualname), in source order; `calls` lists every candidate call (read or not), in source order,
    for matching to positions; `unread` counts candidates whose pattern could not be read.
    """

    found: list[tuple[cst.Call, str, str, tuple[str, ...], str, str]] = field(default_factory=list)
    calls: list[cst.Call] = field(default_factory=list)
    unread: int = 0
    scopes: list[_Scope] = field(default_factory=lambda: [_Scope("<module>", False)])

    def visit_module(self, module: cst.Module) -> None:
        self.walk(module)

    def open_scope(self, node: cst.ClassDef | cst.FunctionDef) -> _Scope:
        return _Scope(node.name.value, isinstance(node, cst.ClassDef))

    def visit_small(self, small: cst.BaseSmallStatement, level: Level,
                    condition: cst.BaseExpression | None) -> None:
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
                    self.scopes[-1].strings[target.value] = text
                else:
                    self.scopes[-1].strings.pop(target.value, None)

    def visit_with(self, node: cst.With, level: Level) -> None:
        statements, index, _ = level
        for item in node.items:
            self._visit_with_item(item, statements[index + 1:])

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
        exceptions = _exception_names(exception)
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
        names = [scope.name for scope in self.scopes[1:]]
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
            for scope in reversed(self.scopes):
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


def _exception_names(node: cst.BaseExpression) -> tuple[str, ...]:
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


def read_assertions(path: str, blob: str, data: bytes) -> FileAssertions:
    """One test file's assertions; a file that cannot be parsed gives none (it is no record)."""
    try:
        return find_assertions(path, data)
    except Exception:  # noqa: BLE001 - a test file we cannot parse only costs its evidence
        return FileAssertions(path, ())


def can_hold_evidence(source: bytes) -> bool:
    """False when no assertion can be in `source`: none of the NEEDLES is in its bytes (a file
    that declares another encoding is searched by its parse, as before)."""
    head = source.split(b"\n", 2)[:2]
    if any(b"coding" in line for line in head):
        return True
    return any(needle in source for needle in NEEDLES)


def find_assertions(path: str, source: bytes, whole: bool = False) -> FileAssertions:
    """Parse one test file and read its message-checking assertions. Raises LibCST's errors.

    A file none of whose text can hold an assertion is not parsed at all; else LibCST reads a
    skeleton of it, where each function and class whose text holds none of the NEEDLES is one
    `pass` line (its other lines dropped: `ast`, which read the whole file, gives the lines);
    where `ast` cannot place the calls, the skeleton is read again with every line kept, for
    LibCST's positions. `whole` parses every line, for the tests that hold the two equal.
    """
    if not whole and not can_hold_evidence(source):
        return FileAssertions(path, ())
    tree = ast_parse_newer(source)
    skeleton = None if whole else tree
    text = source if skeleton is None else stubbed(source, skeleton, keep_lines=False)
    module, visitor = _visit(text)
    if not visitor.calls:
        return FileAssertions(path, (), visitor.unread)
    lines, positions = _ast_lines(tree, visitor), "ast"
    if lines is None:
        if skeleton is not None and (kept := stubbed(source, skeleton)) != text:
            module, visitor = _visit(kept)  # LibCST places the calls: no line may move
        lines, positions = _libcst_lines(module, visitor), "libcst"
    found = tuple(
        TestAssertion(path=path, line=lines[id(call)], test=test, form=form, check=check,
                      exceptions=exceptions, pattern=pattern)
        for call, form, check, exceptions, pattern, test in visitor.found
    )
    return FileAssertions(path, found, visitor.unread, positions)


def _visit(text: bytes) -> tuple[cst.Module, AssertionVisitor]:
    module = cst.parse_module(text)
    visitor = AssertionVisitor()
    visitor.visit_module(module)
    return module, visitor


def stubbed(source: bytes, tree: ast.Module, keep_lines: bool = True) -> bytes:
    """`source` with every function and class (at module level, or in a class kept) whose text
    holds none of the NEEDLES made one `pass` at its indentation: what the visitor finds in the
    rest does not change. With `keep_lines`, as many empty lines as it had follow the `pass`,
    so that no line moves; without, its other lines are dropped (a third of the standard
    library's test lines are kept, and LibCST pays for each empty line as for a node).
    """
    lines = source.splitlines(keepends=True)
    if tree.body and (tree.body[-1].end_lineno or 0) > len(lines):
        return source  # `ast` counts lines otherwise: read it whole
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if not isinstance(node, _STUBBABLE):
            continue
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        last = node.end_lineno or node.lineno
        segment = b"".join(lines[first - 1:last])
        if any(needle in segment for needle in NEEDLES):
            if isinstance(node, ast.ClassDef):
                todo.extend(node.body)  # its methods may be stubbed, its assignments stay
            continue
        line = lines[first - 1]
        body = line.lstrip(b" \t\f")
        if not body.startswith((b"@", b"def", b"async", b"class")):
            continue  # not where `ast` says it is: keep it whole
        indent = line[:len(line) - len(body)]
        lines[first - 1] = indent + b"pass" + _ending(line)
        for index in range(first, last):
            lines[index] = _ending(lines[index]) if keep_lines else b""
    return b"".join(lines)


def _ending(line: bytes) -> bytes:
    return line[len(line.rstrip(b"\r\n")):] or b"\n"


def _ast_lines(tree: ast.Module | None, visitor: AssertionVisitor) -> dict[int, int] | None:
    """Lines of the candidate calls from `ast`, matched in source order; None when they disagree."""
    if tree is None:
        return None
    calls: list[ast.Call] = []
    for node in ast_statements(tree):
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
    positions = position_map(module)
    return {id(call): positions[call].start.line for call in visitor.calls}
