"""Property: on generated programs the crawler never crashes, and misses no literal message.

Programs come from hypothesmith (Python's grammar, and LibCST's node types), with raises of
generated literal messages put between their statements and inside functions and classes. Every
program runs through real worker processes. Where Python's own `ast` reads the program, every
`raise X('literal')` that `ast` sees must be a record at the same line with the same text.
"""

from __future__ import annotations

import ast
import functools
import warnings
from collections.abc import Iterator

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler.parse.outcomes import FileOutcome
from crawler.parse.workers import Limits, WorkerPool

pytestmark = [pytest.mark.filterwarnings("ignore::SyntaxWarning"), pytest.mark.runs_long]

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(2, Limits(seconds=20)) as shared:
        yield shared


def visit(pool: WorkerPool, source: str | bytes) -> FileOutcome:
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    ((_, outcome),) = list(pool.run([("gen.py", "0" * 40, data, None)]))
    return outcome


def literal_raises(data: bytes) -> list[tuple[int, str]] | None:
    """(line, message) of every `raise E('literal', ...)` that `ast` sees; None if it cannot parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args
                and isinstance(node.exc.args[0], ast.Constant)
                and isinstance(node.exc.args[0].value, str)):
            found.append((node.lineno, node.exc.args[0].value))
    return sorted(found)


def recorded_literals(outcome: FileOutcome) -> list[tuple[int, str]]:
    return sorted(
        (site.line, site.message.template.replace("{{", "{").replace("}}", "}"))
        for site in outcome.sites if site.message.kind == "literal"
    )


def check(pool: WorkerPool, source: str) -> None:
    data = source.encode("utf-8", "surrogatepass")
    outcome = visit(pool, data)  # never raises: every failure is an outcome
    expected = literal_raises(data)
    if expected is None:
        return
    assert outcome.failure is None, (source, outcome.failure)
    assert recorded_literals(outcome) == expected, source


MESSAGES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
EXCEPTIONS = st.sampled_from(["ValueError", "errors.Bad", "self.error_class", "E"])


@st.composite
def raise_lines(draw: st.DrawFn, indent: str) -> str:
    message = draw(MESSAGES)
    exception = draw(EXCEPTIONS)
    extra = draw(st.sampled_from(["", ", 1", ", code=2", ", *rest"]))
    return f"{indent}raise {exception}({message!r}{extra})\n"


@st.composite
def programs_with_raises(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    """A generated program with raises inserted at module level, in functions and classes."""
    program = draw(base)
    lines = program.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    blocks = [
        draw(raise_lines("")),
        "def generated_function(a):\n" + draw(raise_lines("    ")),
        "class Generated:\n    def method(self):\n        if self:\n"
        + draw(raise_lines("            ")),
    ]
    for block in blocks:
        lines.insert(draw(st.integers(0, len(lines))), block)
    return "".join(lines)


@functools.cache
def _grammar() -> st.SearchStrategy[str]:
    """hypothesmith's programs from Python's grammar: built once a process, when first drawn.
    Building it makes a parser of the grammar (about 2 s of CPU), which every process that only
    collects this module (each xdist worker does) used to pay three times over."""
    return hypothesmith.from_grammar()


GRAMMAR = st.deferred(lambda: _grammar())
NODES = st.deferred(lambda: hypothesmith.from_node())


# The plain suite runs a short draw of each; `pytest -m slow` (and CI) the long one.
SHORT = settings(SETTINGS, max_examples=25)
LONG = pytest.mark.slow


@SHORT
@given(source=GRAMMAR)
def test_grammar_programs_never_crash_the_crawler(pool: WorkerPool, source: str) -> None:
    check(pool, source)


@LONG
@SETTINGS
@given(source=GRAMMAR)
def test_grammar_programs_never_crash_the_crawler_long(pool: WorkerPool, source: str) -> None:
    check(pool, source)


@SHORT
@given(source=NODES)
def test_libcst_node_programs_never_crash_the_crawler(pool: WorkerPool, source: str) -> None:
    check(pool, source)


@LONG
@SETTINGS
@given(source=NODES)
def test_libcst_node_programs_never_crash_the_crawler_long(pool: WorkerPool, source: str) -> None:
    check(pool, source)


RAISING = programs_with_raises(GRAMMAR.filter(lambda s: "\\" not in s))


@settings(SETTINGS, max_examples=80)
@given(source=RAISING)
def test_every_literal_raise_python_sees_is_recorded(pool: WorkerPool, source: str) -> None:
    check(pool, source)


@LONG
@settings(SETTINGS, max_examples=200)
@given(source=RAISING)
def test_every_literal_raise_python_sees_is_recorded_long(pool: WorkerPool, source: str) -> None:
    check(pool, source)
