"""The tasks a worker runs on one file: its raises, classes and call facts (`visit_file`), or a
test file's assertions (`read_assertions`). Only worker processes import this module (the fork
server preloads it): it holds the parsers.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler.parse.assertions import read_assertions
from crawler.parse.message.text_calls import read_call_facts
from crawler.parse.module_names import module_name
from crawler.parse.outcomes import ASSERTIONS, PARSE_FAILED, VISIT, Answer, FileOutcome, failed
from crawler.parse.python_ast import ast_parse
from crawler.parse.skeleton import Known
from crawler.parse.visitor import find_raise_sites


def visit_file(path: str, blob: str, data: bytes, known: Known | None = None) -> FileOutcome:
    """Parse one file and find its sites; a file that cannot be parsed becomes a reason.

    With `known`, only the functions that changed since the previous version may be parsed;
    the outcome's `stubbed` then lists those to fill in from it (`crawler.parse.skeleton.fill`).
    """
    tree = ast_parse(data)  # one `ast` tree for the raises' lines and the call facts
    try:
        found = find_raise_sites(path, data, module_name(path), known, tree)
    except RecursionError:
        return failed(path, blob, PARSE_FAILED, "nested too deeply")
    except MemoryError:
        return failed(path, blob, PARSE_FAILED, "out of memory: over the worker's memory limit")
    except Exception as error:  # noqa: BLE001 - any parser failure is this file's, not the run's
        return failed(path, blob, PARSE_FAILED, _describe(error))
    calls, text_calls = read_call_facts(data, module_name(path), path.endswith("__init__.py"), tree)
    return FileOutcome(path, blob, tuple(found.sites), found.counts, pending=tuple(found.pending),
                       classes=tuple(found.classes), exports=found.exports,
                       regions=tuple(found.regions), context=found.context,
                       stubbed=found.stubbed, exposed=found.exposed,
                       calls=calls, text_calls=text_calls)


TASKS: dict[str, Callable[..., Answer]] = {
    VISIT: visit_file, ASSERTIONS: lambda path, blob, data, known=None: read_assertions(path, blob, data)}


def _describe(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    detail = lines[0] if lines else ""
    if hasattr(error, "raw_line"):  # libcst's ParserSyntaxError
        detail = f"line {error.raw_line}: {getattr(error, 'message', detail)}"
    return f"{type(error).__name__}: {detail}"[:300]


def trust_parser_output() -> None:
    """Skip LibCST's per-node validation: the nodes its parser builds are valid by construction.

    Every node's `__post_init__` re-checks the node's invariants, which only a hand-built node
    can break; LibCST's own note there says the parse could skip it. It is 10 to 15% of
    `parse_module` (measured on the stdlib). Only worker processes do this, and they build no
    nodes of their own; a test holds their records equal to an in-process parse. libcst is
    capped below its next untested minor version; tests/parse/test_libcst_internals.py fails,
    naming what changed, if this internal does.
    """
    try:
        from libcst._nodes.base import CSTNode
    except ImportError:  # a LibCST that moved it: validate, as before
        return
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]


def _no_validation(self: object) -> None:
    return None
