"""Templates against the truth: each case's raise really executed, its regex matched to str(exc).

Every module-level function of a case file is called with its defaults (a parameter without one
gets the string `v_<name>`), plus the extra calls named in the file's `CALLS`; the exception it
raises must match one of the templates read off the raise line it came from.
"""

from __future__ import annotations

import dis
import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
import yaml

from crawler.parse.message.reading import Reader
from crawler.parse.message.templates import build_template, escape_regex
from crawler.parse.visitor import find_raise_sites
from crawler.records import RaiseSite
from tests.helpers import runtime_harness

CASES = Path(__file__).resolve().parents[2] / "cases"
CASE_FILES = sorted(CASES.glob("*.py"))


def run_case(path: Path, sites: list[RaiseSite]) -> dict[int, list[str]]:
    """Execute a case file's functions; raise line: messages that matched a template there."""
    name = f"case_{path.stem}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    code = compile(path.read_bytes(), str(path), "exec")
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:  # noqa: BLE001 - a case that needs missing modules is not executable
        return {}
    finally:
        sys.modules.pop(name, None)
    verified: dict[int, list[str]] = {}
    extra = module.__dict__.get("CALLS", {})
    for function in list(module.__dict__.values()):
        if not inspect.isfunction(function) or function.__code__.co_filename != str(path):
            continue
        for kwargs in [{}, *extra.get(function.__name__, [])]:
            line, error = _call(function, kwargs, str(path))
            if error is None:
                continue
            here = [s for s in sites if s.line <= line <= s.end_line]
            if not here:
                continue
            message = str(error)
            # a record whose class's transform could not be read keeps the raise's own
            # template, and says so: it need not match (the runtime harness runs its line)
            if all(s.message.not_followed for s in here) \
                    and not any(re.fullmatch(s.message.regex, message) for s in here):
                continue
            assert any(re.fullmatch(s.message.regex, message) for s in here), (
                f"{path.name}:{line}: {message!r} matches none of "
                f"{[s.message.regex for s in here]}")
            verified.setdefault(here[0].line, []).append(message)
    return verified


def _call(function: Any, kwargs: dict[str, Any], filename: str) -> tuple[int, BaseException | None]:
    bound = {p.name: f"v_{p.name}" for p in inspect.signature(function).parameters.values()
             if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD}
    try:
        function(**{**bound, **kwargs})
    except Exception as error:  # noqa: BLE001 - the raise under test
        traceback = error.__traceback__
        while traceback is not None and traceback.tb_next is not None:
            traceback = traceback.tb_next
        if traceback is None or traceback.tb_frame.f_code.co_filename != filename:
            return 0, None
        code = traceback.tb_frame.f_code.co_code
        if code[traceback.tb_lasti] != dis.opmap["RAISE_VARARGS"]:
            return 0, None  # raised while building the message, not by the raise statement
        return traceback.tb_lineno, error
    return 0, None


@pytest.mark.parametrize("case", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_raises_match_their_regex(case: Path) -> None:
    expected = yaml.safe_load(case.with_suffix(".yaml").read_text(encoding="utf-8"))
    (whole,) = [c for c in runtime_harness.all_cases() if c.files[0][2] == case]
    verified = run_case(case, runtime_harness.records(whole))  # after the class pass
    missing = set(expected.get("executed", [])) - set(verified)
    assert not missing, f"raises not verified by execution: {sorted(missing)}"


def test_every_regex_compiles_and_names_its_placeholders() -> None:
    for case in CASE_FILES:
        for site in find_raise_sites(case.name, case.read_bytes(), case.stem).sites:
            pattern = re.compile(site.message.regex)
            assert set(pattern.groupindex) <= set(site.message.placeholders), site.line


@pytest.mark.parametrize("text", ["plain", "a.b*c+d?", "{braces}", "tab\there", "quote's \"both\"",
                                  "back\\slash", "naïve ✓", "new\nline", "(x)[y]|z^$"])
def test_literal_regex_matches_its_own_text(text: str) -> None:
    from crawler.parse.message.pieces import Piece
    from crawler.parse.message.templates import _repr_pattern

    template = build_template("literal", [Piece(text)])
    assert re.fullmatch(template.regex, text)
    assert re.fullmatch(escape_regex(text), text)
    assert re.fullmatch(_repr_pattern([Piece(text)], []), repr(text))
    quoted = _repr_pattern([Piece(text), Piece("x", True)], [])
    for value in ["", "'", '"', "both ' \"", "v"]:
        assert re.fullmatch(quoted, repr(text + value)), (text, value)


def test_unreadable_expression_is_one_dynamic_alternative() -> None:
    module = cst.parse_module("x = compute(a) * 2\n")
    statement = module.body[0]
    assert isinstance(statement, cst.SimpleStatementLine)
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign)
    ((kind, pieces),) = Reader(module).message(assign.value, ())
    assert kind == "dynamic"
    assert [p.text for p in pieces] == ["compute(a) * 2"]
