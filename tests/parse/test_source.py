"""Conditions and placeholders are the file's text exactly: held to LibCST's PositionProvider."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from crawler.parse import _source
from crawler.parse.raise_visitor import RaiseVisitor
from crawler.parse.visitor import find_raise_sites

NESTED = '''\
class C:
\tdef f(self, a, b):
\t\tif (a is not None and
\t\t        b > 3):
\t\t\tfor x in a:
\t\t\t\traise ValueError(f"""bad {sum(
\t\t\t\t    x
\t\t\t\t        for x in a)}""")
\t\telif a or (
\t\t    b):
\t\t\traise ValueError("elif")
\t\telse:
\t\t\traise ValueError("else")
'''


def test_tests_keep_their_text_exactly() -> None:
    sites = find_raise_sites("m.py", NESTED.encode(), "m").sites
    assert [s.condition for s in sites] == [
        "(a is not None and\n\t\t        b > 3)",
        "not (a is not None and\n\t\t        b > 3) and (a or (\n\t\t    b))",
        "not (a is not None and\n\t\t        b > 3) and not (a or (\n\t\t    b))",
    ]
    assert sites[0].message.placeholders == ("sum(\n\t\t\t\t    x\n\t\t\t\t        for x in a)",)


def _text_at(lines: list[str], where: cst.metadata.CodeRange) -> str:
    start_line, start_col = where.start.line, where.start.column
    end_line, end_col = where.end.line, where.end.column
    if start_line == end_line:
        return lines[start_line - 1][start_col:end_col]
    middle = lines[start_line:end_line - 1]
    return "\n".join([lines[start_line - 1][start_col:], *middle, lines[end_line - 1][:end_col]])


STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.mark.parametrize("name", ["argparse.py", "enum.py", "_pyio.py", "logging/__init__.py"])
def test_every_guard_is_the_files_text(name: str) -> None:
    source = (STDLIB / name).read_text(encoding="utf-8")
    module = cst.parse_module(source)
    visitor = RaiseVisitor("m")
    visitor.visit_module(module)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = source.split("\n")
    checked = 0
    for found in visitor.found:
        for guard in found.guards:  # PositionProvider's range leaves out the test's own parens
            bare = guard.test.with_changes(lpar=(), rpar=())
            assert _source.exact(module, bare, guard.indent) == _text_at(
                lines, positions[guard.test])
            checked += 1
    assert checked > 20


CORNERS = '''\
x = (name)
y = a . b . c
z = a.b(c).d
w = (a).b
u = a.\\
    b
s = ('text')
r = b'bytes' + rb"raw" + 0x1F + (1)
q = a[ 0 ].b
'''


class _Nodes(cst.CSTVisitor):
    """Every node of a module of one kind (any node, by default)."""

    def __init__(self, kind: type[cst.CSTNode] = cst.CSTNode) -> None:
        self.kind = kind
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found.append(node)
        return True


@pytest.mark.parametrize("source", [CORNERS, (STDLIB / "argparse.py").read_text(encoding="utf-8")],
                         ids=["corners", "argparse"])
def test_code_is_libcsts_codegen_for_every_expression(source: str) -> None:
    """The shortcut for names, dotted names and literals writes what LibCST's codegen writes,
    parentheses and spaces around dots included (those take the codegen)."""
    module = cst.parse_module(source)
    expressions = _Nodes(cst.BaseExpression)
    module.visit(expressions)
    assert len(expressions.found) > 20
    for node in expressions.found:
        assert _source.exact(module, node) == module.code_for_node(node)


def test_only_bare_names_dotted_names_and_literals_skip_the_codegen() -> None:
    shortcut = {text: _source._plain_code(cst.parse_expression(text)) is not None
                for text in ("name", "a.b.c", "'text'", "0x1F", "(name)", "a . b", "(a).b",
                             "a.b(c)", "a[0]", "a.\\\n b")}
    assert shortcut == {"name": True, "a.b.c": True, "'text'": True, "0x1F": True,
                        "(name)": False, "a . b": False, "(a).b": False, "a.b(c)": False,
                        "a[0]": False, "a.\\\n b": False}


@pytest.mark.parametrize("source", [CORNERS, NESTED, (STDLIB / "argparse.py").read_text(encoding="utf-8")],
                         ids=["corners", "nested", "argparse"])
def test_node_code_is_libcsts_codegen_for_every_node_with_or_without_an_indent(source: str) -> None:
    """`node_code` records no positions (its null context): the tokens are LibCST's own."""
    from libcst._nodes.internal import CodegenState

    module = cst.parse_module(source)
    nodes = _Nodes()
    module.visit(nodes)
    assert len(nodes.found) > 100
    for node in nodes.found:
        assert _source.node_code(module, node) == module.code_for_node(node)
        state = CodegenState(default_indent=module.default_indent,
                             default_newline=module.default_newline, indent_tokens=["\t  "])
        node._codegen(state)
        assert _source.node_code(module, node, "\t  ") == "".join(state.tokens)
