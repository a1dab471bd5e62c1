"""The assertion reader parses only what can hold evidence, and finds what a whole read finds."""

from __future__ import annotations

import random
import sysconfig
import textwrap
from pathlib import Path

import pytest

from crawler.parse import assertions
from crawler.parse.assertions import ASSERTION_NAMES, NEEDLES, can_hold_evidence, find_assertions
from crawler.parse.outcomes import FileAssertions
from crawler.pipeline.selection import is_test_path

SUITE = textwrap.dedent('''\
    import re
    import unittest

    import pytest

    PATTERN = "must be positive"


    def helper(x):
        """Not a test: no assertion on an error."""
        if x:
            return [i for i in range(x)]
        return None


    @pytest.mark.parametrize("x", [1, 2])
    def test_plain(x):
        assert helper(x)


    def test_match():
        with pytest.raises(ValueError, match=PATTERN):
            helper(-1)


    class Other:
        text = "no such key"

        def method(self):
            return self.text


    class T(unittest.TestCase):
        message = r"bad \\d+"

        def setUp(self):
            self.x = 1

        def test_regex(self):
            with self.assertRaisesRegex(KeyError, message):
                pass

        async def test_context(self):
            with self.assertRaises(TypeError) as cm:
                pass
            self.assertEqual(str(cm.exception), "expected a number")

        class Inner:
            def deep(self):
                return 2
''')


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(SUITE.splitlines(), start=1) if text in line)


def whole_and_skeleton(path: str, source: bytes) -> tuple[object, object]:
    """What a whole read and the skeleton read give (an exception's type where they raise)."""
    out: list[object] = []
    for whole in (True, False):
        try:
            found = find_assertions(path, source, whole=whole)
            out.append((found.assertions, found.unread))
        except Exception as error:  # noqa: BLE001 - compared, not hidden
            out.append(type(error).__name__)
    return out[0], out[1]


def test_the_needles_are_derived_from_the_names_the_visitor_reads() -> None:
    assert NEEDLES == (b"assertRaises", b"raises")
    assert all(any(needle.decode() in name for needle in NEEDLES) for name in ASSERTION_NAMES)


def test_a_file_without_any_needle_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_: bytes) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(assertions.cst, "parse_module", refuse)
    source = b"def test_plain():\n    assert 1 + 1 == 2\n" + b"x = (" * 3000  # broken: never read
    assert not can_hold_evidence(source)
    assert find_assertions("tests/test_plain.py", source) == FileAssertions("tests/test_plain.py", ())


def test_a_file_declaring_its_encoding_is_parsed_whatever_its_bytes() -> None:
    source = "# -*- coding: latin-1 -*-\ndef test_plain():\n    assert 'é'\n".encode("latin-1")
    assert can_hold_evidence(source)


def test_functions_and_classes_without_a_needle_become_pass_on_the_same_lines() -> None:
    source = SUITE.encode()
    tree = assertions.ast_parse_newer(source)
    assert tree is not None
    text = assertions.stubbed(source, tree).decode()
    assert text.count("\n") == SUITE.count("\n")
    kept = [line for line in text.splitlines() if line.strip()]
    assert "def helper(x):" not in text and "class Other:" not in text
    assert "def setUp(self):" not in text and "class Inner:" not in text
    assert "    message = r\"bad \\d+\"" in kept and 'PATTERN = "must be positive"' in kept
    found = find_assertions("tests/test_suite.py", source)
    assert [(a.line, a.test, a.pattern) for a in found.assertions] == [
        (line_of("pytest.raises"), "test_match", "must be positive"),
        (line_of("assertRaisesRegex"), "T.test_regex", r"bad \d+"),
        (line_of("assertRaises("), "T.test_context", "^expected\\ a\\ number$"),
    ]
    assert whole_and_skeleton("tests/test_suite.py", source) == \
        ((found.assertions, found.unread),) * 2


def test_libcst_reads_only_the_kept_lines_and_ast_places_the_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stub's other lines are dropped before LibCST reads the file (it pays for an empty line
    as for a node); the lines found are still the file's, since `ast` gives them."""
    source = textwrap.dedent("""\
        import pytest


        @pytest.mark.slow
        def helper(x):
            y = x + 1
            return y


        def test_match():
            with pytest.raises(ValueError, match="bad"):
                helper(-1)
        """).encode()
    read: list[bytes] = []
    parse = assertions.cst.parse_module

    def recording(text: bytes) -> object:
        read.append(text)
        return parse(text)

    monkeypatch.setattr(assertions.cst, "parse_module", recording)
    found = find_assertions("tests/test_small.py", source)
    assert read == [b"import pytest\n\n\npass\n\n\ndef test_match():\n"
                    b"    with pytest.raises(ValueError, match=\"bad\"):\n        helper(-1)\n"]
    assert [(a.line, a.test, a.pattern) for a in found.assertions] == [(11, "test_match", "bad")]
    assert found.positions == "ast"


def test_where_ast_cannot_place_the_calls_libcst_places_them_on_a_skeleton_whose_lines_stay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    expected = find_assertions("tests/test_suite.py", SUITE.encode())
    monkeypatch.setattr(assertions, "_ast_lines", lambda tree, visitor: None)
    found = find_assertions("tests/test_suite.py", SUITE.encode())
    assert found.positions == "libcst"
    assert found.assertions == expected.assertions
    assert [a.line for a in found.assertions] == [
        line_of("pytest.raises"), line_of("assertRaisesRegex"), line_of("assertRaises(")]


@pytest.mark.parametrize("seed", range(40))
def test_random_edits_read_the_same_whole_or_as_a_skeleton(seed: int) -> None:
    """Lines deleted, duplicated, dedented and swapped: the two reads agree, even on what
    does not parse (both refuse it, or the skeleton finds only what a whole read finds)."""
    rng = random.Random(seed)
    lines = SUITE.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        edit = rng.choice(("delete", "copy", "dedent", "swap", "crlf"))
        if edit == "delete":
            del lines[i]
        elif edit == "copy":
            lines.insert(j, lines[i])
        elif edit == "dedent":
            lines[i] = lines[i].lstrip(" ")
        elif edit == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = lines[i].rstrip("\n") + "\r\n"
    whole, skeleton = whole_and_skeleton("tests/test_edit.py", "".join(lines).encode())
    if isinstance(whole, str):  # LibCST refuses the file: the skeleton may read a part of it
        assert isinstance(skeleton, str) or not skeleton[0]  # type: ignore[index]
    else:
        assert skeleton == whole


STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.mark.slow
def test_the_standard_librarys_tests_read_the_same_whole_or_as_a_skeleton() -> None:
    files = sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts
                   and is_test_path(p.relative_to(STDLIB).as_posix()))
    assert len(files) > 500
    differ = []
    for path in files:
        whole, skeleton = whole_and_skeleton(path.name, path.read_bytes())
        if isinstance(whole, str):
            if not (isinstance(skeleton, str) or not skeleton[0]):  # type: ignore[index]
                differ.append(path.name)
        elif skeleton != whole:
            differ.append(path.name)
    assert differ == []
