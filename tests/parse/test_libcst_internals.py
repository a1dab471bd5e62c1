"""The LibCST internal that worker processes patch (`file_tasks.trust_parser_output`) is still there.

Workers replace LibCST's private `CSTNode.__post_init__`, which only runs `self._validate()`, to
skip re-validating the nodes LibCST's own parser builds. pyproject.toml caps libcst at the next
minor version not yet tested; these tests fail, naming what changed, before a new LibCST can make
the patch silently do nothing or skip more than validation.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
import textwrap
from importlib.metadata import version

import libcst as cst
import pytest

from tests.helpers.processes import ROOT, child_env

LIBCST = f"libcst {version('libcst')}"
WHAT_TO_DO = ("re-measure the patch in crawler/parse/file_tasks.py (trust_parser_output) against "
              "this LibCST, then raise the cap on libcst in pyproject.toml")


def _cst_node() -> type:
    try:
        from libcst._nodes.base import CSTNode
    except ImportError as error:
        pytest.fail(f"{LIBCST} has no libcst._nodes.base.CSTNode ({error}): the workers' patch "
                    f"now does nothing; {WHAT_TO_DO}")
    return CSTNode


def test_cst_node_defines_post_init_and_it_only_validates() -> None:
    node = _cst_node()
    post_init = node.__dict__.get("__post_init__")
    assert post_init is not None, f"{LIBCST}: CSTNode no longer defines __post_init__; {WHAT_TO_DO}"
    try:
        source = inspect.getsource(post_init)
    except (OSError, TypeError) as error:
        pytest.fail(f"{LIBCST}: cannot read CSTNode.__post_init__'s source ({error}); {WHAT_TO_DO}")
    definition = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(definition, ast.FunctionDef)
    body = [ast.unparse(statement) for statement in definition.body]
    assert body == ["self._validate()"], (
        f"{LIBCST}: CSTNode.__post_init__ now runs {body}, not only self._validate(): skipping it "
        f"would skip that too; {WHAT_TO_DO}")


def test_no_node_class_has_its_own_post_init() -> None:
    """A subclass with its own `__post_init__` would not be reached by patching the base's."""
    node = _cst_node()
    seen: set[type] = set()
    todo = [node]
    while todo:
        for subclass in todo.pop().__subclasses__():
            if subclass not in seen:
                seen.add(subclass)
                todo.append(subclass)
    own = sorted(c.__qualname__ for c in seen if "__post_init__" in c.__dict__)
    assert len(seen) > 100, f"{LIBCST}: only {len(seen)} node classes found under CSTNode"
    assert own == [], f"{LIBCST}: these node classes define their own __post_init__: {own}; {WHAT_TO_DO}"


def test_validation_runs_through_post_init_and_the_patch_skips_it() -> None:
    """In a process of its own (the patch is for a worker's whole life), as a worker does it."""
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # an invalid hand-built node: validated here, where nothing is patched
    script = textwrap.dedent("""
        import json
        import libcst as cst
        from crawler.parse.file_tasks import trust_parser_output

        def builds():
            try:
                cst.Name("")
            except cst.CSTValidationError:
                return False
            return True

        before = builds()
        trust_parser_output()
        after = builds()
        module = cst.parse_module("raise ValueError('x')\\n")
        print(json.dumps({"before": before, "after": after, "code": module.code}))
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=child_env(),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["before"] is False, f"{LIBCST}: an empty Name is no longer refused at all"
    assert seen["after"] is True, (
        f"{LIBCST}: with CSTNode.__post_init__ patched, an invalid node is still refused: "
        f"validation no longer runs through it, so the patch saves nothing; {WHAT_TO_DO}")
    assert seen["code"] == "raise ValueError('x')\n"
