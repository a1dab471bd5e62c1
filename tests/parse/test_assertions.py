"""Test assertions read off test files, their lines, and the rule that fits them to records."""

from __future__ import annotations

import sysconfig
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from crawler.catalogue.evidence import (
    EvidenceStats,
    coverage,
    fits,
    match_evidence,
    pattern_globs,
    template_glob,
)
from crawler.parse import assertions
from crawler.parse.assertions import find_assertions
from crawler.parse.message.pieces import Piece
from crawler.parse.message.templates import build_template
from crawler.records import ErrorRecord, RaiseSite, Template

TEST_FILE = textwrap.dedent('''\
    import re
    import unittest

    import pytest

    BAD = "bad dtype"


    def test_match():
        with pytest.raises(ValueError, match="must be positive"):
            f(-1)


    def test_excinfo():
        with pytest.raises(KeyError) as info:
            g()
        assert "no such key" in str(info.value)


    def test_no_check():
        with pytest.raises(ValueError):
            f(-1)


    class ApiTest(unittest.TestCase):
        def test_regex(self):
            with self.assertRaisesRegex(TypeError, r"got \\d+ arguments"):
                h(1, 2)

        def test_call_form(self):
            self.assertRaisesRegex(errors.ShapeError, "shape " + re.escape("(3,)"), h, 3)

        def test_name(self):
            msg = "expected a callable"
            with self.assertRaisesRegex((TypeError, ValueError), msg):
                h(None)

        def test_module_name(self):
            with self.assertRaisesRegex(TypeError, BAD):
                h("x")

        def test_cm(self):
            with self.assertRaises(RuntimeError) as cm:
                k()
            self.assertEqual(str(cm.exception), "stopped (twice)")
            self.assertIn("stopped", str(cm.exception))

        def test_literal(self):
            self.assertRaisesWithLiteralMatch(ValueError, "a.b [c]", k)

        def test_unreadable(self):
            with self.assertRaisesRegex(ValueError, make_pattern()):
                k()
    ''')


def assertion_rows(source: str) -> list[tuple[int, str, str, str, tuple[str, ...], str]]:
    found = find_assertions("tests/test_x.py", source.encode())
    return [(a.line, a.test, a.form, a.check, a.exceptions, a.pattern) for a in found.assertions]


def test_reads_every_form() -> None:
    assert assertion_rows(TEST_FILE) == [
        (10, "test_match", "pytest.raises", "match", ("ValueError",), "must be positive"),
        (15, "test_excinfo", "pytest.raises", "contains", ("KeyError",), "no\\ such\\ key"),
        (27, "ApiTest.test_regex", "assertRaisesRegex", "match", ("TypeError",), r"got \d+ arguments"),
        (31, "ApiTest.test_call_form", "assertRaisesRegex", "match", ("errors.ShapeError",),
         r"shape \(3,\)"),
        (35, "ApiTest.test_name", "assertRaisesRegex", "match", ("TypeError", "ValueError"),
         "expected a callable"),
        (39, "ApiTest.test_module_name", "assertRaisesRegex", "match", ("TypeError",), "bad dtype"),
        (43, "ApiTest.test_cm", "assertRaises", "equals", ("RuntimeError",), r"^stopped\ \(twice\)$"),
        (43, "ApiTest.test_cm", "assertRaises", "contains", ("RuntimeError",), "stopped"),
        (49, "ApiTest.test_literal", "assertRaisesWithLiteralMatch", "equals", ("ValueError",),
         r"^a\.b\ \[c\]$"),
    ]
    found = find_assertions("tests/test_x.py", TEST_FILE.encode())
    assert found.unread == 2  # test_no_check and test_unreadable
    assert found.positions == "ast"


def libcst_call_lines(source: bytes) -> list[int]:
    module = cst.parse_module(source)
    visitor = assertions.AssertionVisitor()
    visitor.visit_module(module)
    lines = assertions._libcst_lines(module, visitor)
    return [lines[id(call)] for call in visitor.calls]


def ast_call_lines(source: bytes) -> list[int] | None:
    module = cst.parse_module(source)
    visitor = assertions.AssertionVisitor()
    visitor.visit_module(module)
    lines = assertions._ast_lines(assertions.ast_parse_newer(source), visitor)  # the tree it reads
    return None if lines is None else [lines[id(call)] for call in visitor.calls]


def test_lines_agree_with_position_provider() -> None:
    source = TEST_FILE.encode()
    assert ast_call_lines(source) == libcst_call_lines(source)


@pytest.mark.slow
def test_lines_agree_on_the_standard_library_tests() -> None:
    """The standard library's own unittest suites, where this interpreter ships them."""
    folder = Path(sysconfig.get_paths()["stdlib"]) / "test"
    files = [p for p in sorted(folder.glob("test_*.py")) if p.stat().st_size < 40_000][:25]
    if not files:
        pytest.skip("this interpreter ships no test package")
    compared = 0
    for path in files:
        source = path.read_bytes()
        try:
            expected = libcst_call_lines(source)
        except cst.ParserSyntaxError:
            continue
        got = ast_call_lines(source)
        if got is not None:
            assert got == expected, path.name
            compared += len(got)
    assert compared > 50


def test_newer_syntax_falls_back_to_position_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assertions, "_ast_lines", lambda source, visitor: None)
    found = find_assertions("t.py", TEST_FILE.encode())
    assert found.positions == "libcst"
    assert [a.line for a in found.assertions] == [row[0] for row in assertion_rows(TEST_FILE)]


# ---------------------------------------------------------------- the fit rule


def fstring(*parts: str) -> Template:
    """A template from parts; `{name}` parts are placeholders."""
    pieces = [Piece(p[1:-1], True) if p.startswith("{") else Piece(p) for p in parts]
    return build_template("fstring", pieces)


FIT_CASES = [
    # (pattern, template parts, fits?, why)
    ("must be positive", ("x must be positive",), True, "a literal substring"),
    ("must be negative", ("x must be positive",), False, "different text"),
    ("^x must", ("x must be positive",), True, "anchored at the start"),
    ("^must", ("x must be positive",), False, "anchored where the text is not"),
    ("positive$", ("x must be positive",), True, "anchored at the end"),
    ("Expected a callable value.*", ("Expected a callable value, got ", "{fun}"), True,
     "a wildcard over the placeholder"),
    ("No such compile option: 'invalid_key'", ("No such compile option: '", "{key}", "'"), True,
     "a value where the placeholder is"),
    ("got 3 arguments", ("got ", "{n}", " arguments"), True, "a value inside the text"),
    ("shape mismatch", ("{msg}",), False, "a bare placeholder is no evidence"),
    ("Invalid: shape mismatch in the operands", ("Invalid: ", "{detail}"), False,
     "most of the pattern would come from the placeholder"),
    ("Invalid: shape", ("Invalid: ", "{detail}"), True, "most of the pattern is the template's"),
    ("x.*positive", ("x must be positive",), True, "a wildcard between literal parts"),
    ("(?i)MUST BE", ("x must be positive",), True, "ignoring case"),
    ("must be (positive|negative)", ("x must be negative",), True, "an alternative in a group"),
    ("zero|must be negative", ("x must be negative",), True, "a top-level alternative"),
    (".*", ("x must be positive",), False, "no literal text"),
    ("ab", ("ab",), False, "under MIN_LITERAL characters"),
    (r"got \d+ arguments", ("got ", "{n}", " arguments"), True, "a class where the value is"),
    (r"^got 3 arguments, expected 2$", ("got ", "{n}", " arguments"), False, "more text than the "
     "template can end with"),
    ("[unclosed", ("x [unclosed",), False, "a pattern that does not compile"),
]


@pytest.mark.parametrize("pattern, parts, expected, why", FIT_CASES, ids=[c[3] for c in FIT_CASES])
def test_fit_rule(pattern: str, parts: tuple[str, ...], expected: bool, why: str) -> None:
    template = fstring(*parts)
    assert fits(pattern, template.template, template.placeholders) is expected


def test_template_glob_reads_doubled_braces_and_placeholders() -> None:
    template = build_template("fstring", [Piece("{a} "), Piece("d[k]", True), Piece("!")])
    assert template.template == "{{a}} {d[k]}!"
    assert template_glob(template.template, template.placeholders) == (
        *"{a} ", None, "!")


def test_pattern_globs() -> None:
    globs, ignore_case = pattern_globs(r"^a\.b.*c$")
    assert globs == [("a", ".", "b", None, "c")] and not ignore_case
    globs, _ = pattern_globs("xy|zw")
    assert globs == [(None, "x", "y", None), (None, "z", "w", None)]


def test_coverage_counts_template_text_only() -> None:
    assert coverage(tuple("ab"), (None, "a", "b", None)) == 2
    assert coverage(("a", None), (None, "a", "x", "y", None)) == 1
    assert coverage(tuple("ab"), (None, "c", None)) == -1


# ---------------------------------------------------------------- matching to records


def record(record_id: str, exception: str, template: Template, qualname: str | None = None,
           path: str = "pkg/m.py", line: int = 1) -> ErrorRecord:
    site = RaiseSite(path=path, line=line, end_line=line, column=4, class_name=None, function="f",
                     qualname="f", exception=exception, exception_qualname=qualname,
                     message=template, cause=None, condition=None, snippet="", snippet_line=1)
    return ErrorRecord(id=record_id, status="active", repo="local/o/n", commit="0" * 40, url=None,
                       site=site)


def test_match_evidence_by_exception_and_template() -> None:
    assertions = find_assertions("tests/test_x.py", TEST_FILE.encode()).assertions
    records = [
        record("a" * 16, "ValueError", fstring("{x}", " must be positive"), "builtins.ValueError"),
        record("b" * 16, "TypeError", fstring("must be positive")),  # another exception
        record("c" * 16, "errors.ShapeError", fstring("bad shape ", "{s}")),
        record("d" * 16, "TypeError", fstring("expected a callable, got ", "{f}")),
        record("e" * 16, "ValueError", fstring("expected a callable")),
        record("f" * 16, "RuntimeError", fstring("stopped (twice)")),
        record("0" * 16, "RuntimeError", fstring("stopped")),
    ]
    stats = EvidenceStats()
    found = match_evidence(records, assertions, stats)
    assert {k: [(e.test, e.check, e.fits) for e in v] for k, v in found.items()} == {
        "a" * 16: [("test_match", "match", 1)],
        "c" * 16: [("ApiTest.test_call_form", "match", 1)],
        "d" * 16: [("ApiTest.test_name", "match", 2)],
        "e" * 16: [("ApiTest.test_name", "match", 2)],
        "f" * 16: [("ApiTest.test_cm", "equals", 1), ("ApiTest.test_cm", "contains", 2)],
        "0" * 16: [("ApiTest.test_cm", "contains", 2)],
    }
    assert stats.records == 6 and stats.fitted == 5 and stats.assertions == 9


def test_removed_records_get_no_evidence() -> None:
    assertions = find_assertions("tests/test_x.py", TEST_FILE.encode()).assertions
    gone = record("a" * 16, "ValueError", fstring("x must be positive"))
    gone = ErrorRecord(**{**gone.__dict__, "status": "removed"})
    assert match_evidence([gone], assertions) == {}


def test_an_assertion_that_fits_too_many_records_is_listed_nowhere() -> None:
    from crawler.catalogue.evidence import MAX_FITS
    from crawler.records import TestAssertion

    vague = TestAssertion(path="tests/test_v.py", line=3, test="test_v", form="pytest.raises",
                          check="match", exceptions=("ValueError",), pattern=".*supported")
    records = [record(f"{i:016x}", "ValueError", fstring(f"thing {i} is not supported"))
               for i in range(MAX_FITS + 1)]
    stats = EvidenceStats()
    assert match_evidence(records, [vague], stats) == {}
    assert stats.fitted == 1 and stats.too_vague == 1
    assert len(match_evidence(records[:MAX_FITS], [vague])) == MAX_FITS
