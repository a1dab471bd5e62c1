"""Conditions and placeholders are the file's text exactly: held to LibCST's PositionProvider."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from crawler.parse import _source
from crawler.parse.visitor import RaiseVisitor, find_raise_sites

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
