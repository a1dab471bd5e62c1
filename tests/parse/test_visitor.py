"""The visitor against data cases, and its lines against LibCST's PositionProvider."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
import yaml

from crawler.parse import positions as _positions
from crawler.parse import site_records, skeleton, visitor
from crawler.parse.python_ast import ast_tree
from crawler.parse.raise_visitor import RaiseVisitor
from crawler.parse.visitor import find_raise_sites
from crawler.records import ErrorRecord, History, record_id
from crawler.store import render
from tests.helpers import runtime_harness
from tests.helpers.visits import site_fields

CASES = Path(__file__).resolve().parents[1] / "cases"
CASE_FILES = sorted(CASES.glob("*.py"))


@pytest.mark.parametrize("case", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case(case: Path) -> None:
    expected = yaml.safe_load(case.with_suffix(".yaml").read_text(encoding="utf-8"))
    found = find_raise_sites(expected.get("path", case.name), case.read_bytes(),
                             expected.get("module", case.stem))
    # the records the crawler writes: after the class pass (a case's own classes compose)
    (whole,) = [c for c in runtime_harness.all_cases() if c.files[0][2] == case]
    actual = [site_fields(site) for site in runtime_harness.records(whole)]
    assert len(actual) == len(expected["sites"]), [a["line"] for a in actual]
    for want, got in zip(expected["sites"], actual):
        want = {k: v for k, v in want.items() if k != "run"}  # how the runtime harness gets there
        assert {k: got[k] for k in want} == want
    for name, value in expected.get("counts", {}).items():
        assert getattr(found.counts, name) == value, name


def libcst_lines(source: bytes) -> list[tuple[int, int, int]]:
    """Every raise's (line, column, end line), the textbook way."""
    module = cst.parse_module(source)
    walker = RaiseVisitor()
    walker.visit_module(module)
    spans, _ = _positions.libcst_positions(module, walker)
    return [(s.line, s.column, s.end_line) for s in (spans[id(f.node)] for f in walker.found)]


def ast_found(source: bytes) -> tuple[cst.Module, RaiseVisitor, Any]:
    """The module, its visitor, and what `ast_positions` finds (None where `ast` cannot)."""
    module = cst.parse_module(source)
    walker = RaiseVisitor()
    walker.visit_module(module)
    text = visitor._decode(source, module.encoding)
    lines = skeleton.line_texts(text)
    tree = ast_tree(source, lines)
    return module, walker, _positions.ast_positions(tree, lines, walker) if tree is not None else None


def ast_lines(source: bytes) -> list[tuple[int, int, int]] | None:
    _, walker, found = ast_found(source)
    if found is None:
        return None
    return [(s.line, s.column, s.end_line) for s in (found[0][id(f.node)] for f in walker.found)]


TRICKY = [
    b"x = 1\r\nif x:\r\n    raise ValueError('crlf')\r\n",
    b"x = 1\rif x:\r    raise ValueError('cr only')\r",
    "s = 'é✓'; raise ValueError(f'{s} wide chars before')\n".encode(),
    b"# -*- coding: latin-1 -*-\ns = '\xe9'; raise ValueError('latin-1')\n",
    b"\xef\xbb\xbfraise ValueError('after a BOM')\n",
    b"def f():\n\tif True:\n\t\traise ValueError('tabs')\n",
    b"x = '''\nraise ValueError('in a string')\n'''\nraise ValueError('real')\n",
    b"if a: raise A('one'); raise B('two')\n",
    b"\x0cdef f():\n    raise ValueError('form feed')\n",
]


# PEP 695 syntax, which this interpreter's `ast` cannot read: lines still come from `ast`, with
# the type parameters blanked out line for line.
GENERIC = [
    b"class Box[T](Base):\n    def get[U](self, x: U) -> U:\n        raise ValueError('generic')\n",
    b"def f[\n    T: (int, str),\n    **P,\n](x: T) -> T:\n    if x:\n        raise KeyError(f'{x}')\n"
    b"    return x\n",
    b"type Alias[T] = list[T]\nclass C[T]:\n    raise TypeError('in a class')\n",
    b"s = '''\ndef g[T](x): raise X(1)\n'''\ndef g[T](x):\n    raise ValueError('after a string')\n",
    b"# -*- coding: latin-1 -*-\ndef h[T](x):\n    raise ValueError('caf\xe9')\n",
]


@pytest.mark.parametrize("source", TRICKY + GENERIC)
def test_lines_agree_with_position_provider(source: bytes) -> None:
    assert ast_lines(source) == libcst_lines(source)


@pytest.mark.parametrize("source", GENERIC)
def test_type_parameters_do_not_need_the_slow_fallback(source: bytes) -> None:
    found = find_raise_sites("m.py", source)
    assert found.positions == "ast" and found.sites


@pytest.mark.slow
def test_functions_and_raises_agree_on_the_standard_library() -> None:
    """Every raise in a real code base (a sample of the stdlib) gets PositionProvider's lines."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(stdlib.glob("*.py"))[:60]
    compared = 0
    for path in files:
        source = path.read_bytes()
        try:
            expected = libcst_lines(source)
        except cst.ParserSyntaxError:
            continue
        got = ast_lines(source)
        if got is not None:
            assert got == expected, path.name
            compared += len(got)
    assert compared > 300


# PEP 701 f-strings in some statements: `ast` reads the others one by one, LibCST the rest.
NEWER = [
    b'import x\n\ndef f(d):\n    raise KeyError(f"{d["k"]}")\n\n\ndef g():\n'
    b"    raise ValueError('old syntax')\n",
    b"# c\r\n\r\nclass E(Exception):\r\n    message = 'e'\r\n\r\nclass C:\r\n    def m(self, d):\r\n"
    b"        raise E(f'{d['k']}')\r\n\r\n    def n(self):\r\n        raise E('x')\r\n"
    b"raise TypeError('at the end')\r\n# trailing comment\r\n",
    b"if x:\n    raise A(f\"{'a' if x else 'b'}\")\nelse:\n    raise B('b')\n"
    b'@decorated\n\n# comment\ndef h():\n    raise C(f"{x!r:>{"w"}}")\n',
]


@pytest.mark.parametrize("source", NEWER)
def test_newer_syntax_in_some_statements_keeps_ast_lines_for_the_others(
        source: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SyntaxError):
        ast.parse(source)
    found = find_raise_sites("m.py", source)
    assert found.positions == "ast+libcst"
    assert [(s.line, s.column, s.end_line) for s in found.sites] == libcst_lines(source)
    monkeypatch.setattr(_positions, "_tree_by_statement", lambda module, text: None)
    whole = find_raise_sites("m.py", source)  # PositionProvider over the whole file
    assert whole.positions == "libcst"
    assert (found.sites, found.classes, found.pending, found.counts) == (
        whole.sites, whole.classes, whole.pending, whole.counts)


def test_snippet_is_the_enclosing_function() -> None:
    source = b"import x\n\n@decorate\ndef f(a):\n    '''doc'''\n    raise ValueError('no')\n\ny = 2\n"
    (site,) = find_raise_sites("m.py", source).sites
    assert site.snippet == "def f(a):\n    '''doc'''\n    raise ValueError('no')\n"
    assert site.snippet_line == 4


def test_long_function_snippet_is_a_window() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(300))
    source = f"def f():\n{body}    raise ValueError('late')\n".encode()
    (site,) = find_raise_sites("m.py", source).sites
    assert site.line == 302
    assert site.snippet_line == 302 - site_records.SNIPPET_BEFORE
    assert site.snippet.endswith("raise ValueError('late')\n")


def test_newer_syntax_falls_back_to_libcst_positions() -> None:
    # A match statement with a raise parses in LibCST whatever the interpreter; force the fallback.
    source = b"match x:\n    case 1:\n        raise ValueError('one')\n"
    found = find_raise_sites("m.py", source)
    assert [s.line for s in found.sites] == [3]
    module = cst.parse_module(source)
    walker = RaiseVisitor()
    walker.visit_module(module)
    spans, _ = _positions.libcst_positions(module, walker)
    assert [s.line for s in spans.values()] == [3]


def test_class_lines_agree_with_position_provider() -> None:
    """The class and template lines from `ast` are the ones PositionProvider gives."""
    package = Path(__file__).resolve().parents[1] / "packages" / "clspkg"
    sources = [p.read_bytes() for p in sorted(package.glob("*.py"))]
    sources.append(b"class A(Exception):\n    message = (\n        'x'\n    )\n\n"
                   b"@decorated\nclass B(A):\n    def __init__(self, n):\n        if n:\n"
                   b"            super().__init__(f'n is {n}')\n")
    compared = 0
    for source in sources:
        module, walker, found = ast_found(source)
        assert found is not None
        assert found[2] == _positions.libcst_class_lines(module, walker)
        compared += len(found[2])
    assert compared >= 12


def test_a_lone_surrogate_is_kept_as_a_traceback_shows_it() -> None:
    """`"\\uDCff"` cannot be written as UTF-8; a traceback prints it as `\\udcff`, and so do we."""
    (site,) = find_raise_sites("m.py", b'raise ValueError("surrogate:\\uDCff")\n').sites
    assert site.message.template == "surrogate:\\udcff"
    text = render.record_text(ErrorRecord(id="0" * 16, status="active", repo="r", commit="a" * 40,
                                        url=None, site=site, history=History(first_seen="a" * 40)))
    assert yaml.safe_load(text.encode("utf-8"))["extracted"]["message"]["template"] == "surrogate:\\udcff"
    assert record_id("r", site.key(), 0)
