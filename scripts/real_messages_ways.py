"""The two ways scripts/real_messages.py evaluates real messages, each run in a child process.

    python scripts/real_messages_ways.py construct SITES SOURCE IMPORT_ROOT OUT SKIPPED
    python scripts/real_messages_ways.py trace SITES SOURCE IMPORT_ROOT OUT pytest|unittest ARGS...

SITES is a JSON list of `Site`s; OUT gets JSON: one result per site (construct), or the raises
the tests made on the sites' lines (trace). Nothing here imports the crawler: the child holds only
the project under test and what its tests import.
"""

from __future__ import annotations

import ast
import atexit
import collections
import importlib
import json
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SKIPPED_MODULES = ("antigravity", "this", "idlelib.idle", "turtledemo", "__main__", "__phello__",
                   "__hello__")
RECORD_SECONDS = 3  # way a: one raise's evaluation, import included, before it is given up
MESSAGE_CHARS = 20_000  # way b: a longer message is cut here, and is then not checked


@dataclass(frozen=True)
class Site:
    """What the children need of one record: where its raise is and what its message must match."""

    id: str
    path: str
    line: int
    end_line: int
    exception: str
    factory: bool
    kind: str
    template: str
    regex: str
    argument: str | None
    composed: bool  # the template is a class's composition (composed_by) or its default
    filled: str | None  # the template with each placeholder's expression as its value
    declared: bool = False  # the record says its text or class was not followed (need not match)
    textless: bool = False  # the template is placeholders alone: its regex matches any text


# ---------------------------------------------------------------- way a: construct the exception


class Sample(str):
    """A stand-in for a value the raise reads: its text is the expression it stands for."""

    def __getattr__(self, name: str) -> Sample:
        if name.startswith("__"):
            raise AttributeError(name)
        return Sample(f"{self}.{name}")

    def __call__(self, *args: object, **kwargs: object) -> Sample:
        return Sample(f"{self}()")

    def __getitem__(self, key: object) -> Sample:  # type: ignore[override]
        return Sample(f"{self}[{key}]")

    def __iter__(self) -> Any:
        return iter((Sample(f"{self}[0]"),))

    def __format__(self, spec: str) -> str:
        return str(self)

    def __add__(self, other: object) -> Sample:  # type: ignore[override]
        return Sample(f"{self}+{other}")

    def __radd__(self, other: object) -> Sample:
        return Sample(f"{other}+{self}")

    def __mod__(self, other: object) -> Sample:  # type: ignore[override]
        return Sample(f"{self}%{other}")


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def function_locals(tree: ast.Module) -> dict[int, set[str]]:
    """For each line, the names its enclosing functions bind (parameters, assignments, imports)."""
    bound: dict[int, set[str]] = {}

    def walk(node: ast.AST, names: frozenset[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = names | _bound_in(child)
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    bound[line] = set(inner)
                walk(child, inner)
            else:
                walk(child, names)

    walk(tree, frozenset())
    return bound


def _bound_in(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    arguments = function.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def raise_of(tree: ast.Module, site: Site) -> ast.Raise | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.lineno == site.line \
                and node.end_lineno == site.end_line and node.exc is not None:
            return node
    return None


def chosen_call(expression: ast.expr, site: Site) -> ast.expr:
    """The alternative of `raise (A(...) if c else B(...))` that is this record's."""
    if isinstance(expression, ast.IfExp):
        for branch in (expression.body, expression.orelse):
            called = branch.func if isinstance(branch, ast.Call) else branch
            if ast.unparse(called).rpartition(".")[2] == site.exception.rpartition(".")[2]:
                return branch
    return expression


def construct(site: Site, module: dict[str, Any], tree: ast.Module,
              bound: dict[int, set[str]]) -> tuple[str, str]:
    """(status, text): `message` and str(exc), or `unevaluable` and why."""
    node = raise_of(tree, site)
    if node is None or node.exc is None:
        return "unevaluable", "no raise statement with a value on the record's lines"
    expression = chosen_call(node.exc, site)
    namespace = dict(module)
    namespace.update({name: Sample(name) for name in bound.get(site.line, ())})
    namespace.update({name: Sample(name) for name in ("self", "cls") if name not in module})

    def value(node: ast.expr) -> Any:
        return eval(compile(ast.Expression(node), site.path, "eval"), namespace)  # noqa: S307

    called = expression.func if isinstance(expression, ast.Call) else expression
    target = value(called)
    if isinstance(target, Sample):
        return "unevaluable", f"the exception is a value the function holds: {ast.unparse(called)}"
    if isinstance(target, BaseException):
        return "message", str(target)
    if not callable(target):
        return "unevaluable", f"{ast.unparse(called)} is no class and no function"
    if not isinstance(expression, ast.Call):
        return "message", str(target())
    args: list[Any] = []
    for index, argument in enumerate(expression.args):
        if isinstance(argument, ast.Starred):
            spread = value(argument.value)
            if isinstance(spread, Sample):
                return "unevaluable", f"*{ast.unparse(argument.value)} is a value the function holds"
            args.extend(spread)
            continue
        args.append(_message_or(site, str(index), value(argument)))
    kwargs = {k.arg: _message_or(site, k.arg, value(k.value))
              for k in expression.keywords if k.arg is not None}
    if any(isinstance(a, _Opaque) for a in [*args, *kwargs.values()]):
        return "unevaluable", "the message is held in a local and the class composes it"
    made = target(*args, **kwargs)
    if not isinstance(made, BaseException):
        return "unevaluable", f"{ast.unparse(called)}(...) returned {type(made).__name__}"
    return "message", str(made)


class _Opaque:
    """The message argument is a local's value and the template is not that local's text."""


def _message_or(site: Site, argument: str, given: Any) -> Any:
    """The argument itself, or, where it is a local holding the message, the record's text."""
    if type(given) is not Sample or argument != (site.argument or "0"):
        return given
    if site.composed or site.filled is None:
        return _Opaque()
    return site.filled


def evaluate(sites: list[Site], source: Path, import_root: Path, skipped: tuple[str, ...],
             ) -> list[dict[str, Any]]:
    """Way a, in this (child) process: one result per site."""
    sys.path.insert(0, str(import_root))
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    trees: dict[str, tuple[ast.Module, dict[int, set[str]]]] = {}
    results = []
    for site in sites:
        name = module_of(site.path, source, import_root)
        status, text = "unevaluable", "its module is outside the import root"
        if name is not None and _skipped(name, skipped):
            text = "its module is not imported here (it starts a program or a browser)"
        elif name is not None:
            status, text = _evaluate_one(site, name, source, trees)
        results.append({"id": site.id, "status": status, "text": text})
    return results


def _evaluate_one(site: Site, name: str, source: Path,
                  trees: dict[str, tuple[ast.Module, dict[int, set[str]]]]) -> tuple[str, str]:
    signal.alarm(RECORD_SECONDS)
    try:
        module = importlib.import_module(name)
        if site.path not in trees:
            tree = ast.parse((source / site.path).read_bytes())
            trees[site.path] = (tree, function_locals(tree))
        return construct(site, vars(module), *trees[site.path])
    except _Timeout:
        return "unevaluable", f"gave up after {RECORD_SECONDS} s"
    except BaseException as error:  # noqa: BLE001 - a raise's arguments may raise anything
        return "unevaluable", f"{type(error).__name__}: {_first_line(error)}"
    finally:
        signal.alarm(0)


def _first_line(error: BaseException) -> str:
    try:
        return str(error).splitlines()[0] if str(error) else ""
    except Exception:  # noqa: BLE001 - a broken __str__
        return "(str() failed)"


def _skipped(name: str, skipped: tuple[str, ...]) -> bool:
    parts = name.split(".")
    return any(name == s or name.startswith(s + ".") or s in parts for s in skipped)


def module_of(path: str, source: Path, import_root: Path) -> str | None:
    """The dotted name a file is imported by, from the import root; None outside it."""
    try:
        relative = (source / path).relative_to(import_root)
    except ValueError:
        return None
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


# ---------------------------------------------------------------- way b: trace the project's tests


class RaiseTracer:
    """Notes each exception where it is first raised, on the given files' given lines only."""

    def __init__(self, source: Path, lines: dict[str, set[int]]) -> None:
        self.source = str(source.resolve()) + os.sep
        self.lines = lines
        self.paths: dict[str, str | None] = {}  # co_filename -> record path, None: not traced
        self.seen: collections.Counter[tuple[str, int, str, tuple[str, ...], str]] = \
            collections.Counter()

    def _path(self, filename: str) -> str | None:
        real = os.path.realpath(filename)
        path = real[len(self.source):].replace(os.sep, "/") if real.startswith(self.source) \
            else None
        self.paths[filename] = path if path in self.lines else None
        return self.paths[filename]

    def on_call(self, frame: Any, event: str, arg: object) -> Any:
        filename = frame.f_code.co_filename
        path = self.paths[filename] if filename in self.paths else self._path(filename)
        if path is None:
            return None
        frame.f_trace_lines = False
        return self.on_event

    def on_event(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "exception" and arg[2].tb_next is None:
            path = self.paths[frame.f_code.co_filename]
            if path is not None and frame.f_lineno in self.lines[path]:
                self._note(path, frame.f_lineno, arg[1])
        return self.on_event

    def _note(self, path: str, line: int, error: BaseException) -> None:
        try:
            text = str(error)
        except Exception:  # noqa: BLE001 - a __str__ that fails before its __init__ ran
            return
        classes = tuple(k.__name__ for k in type(error).__mro__)
        self.seen[(path, line, type(error).__qualname__, classes, text[:MESSAGE_CHARS])] += 1

    def start(self) -> None:
        threading.settrace(self.on_call)
        sys.settrace(self.on_call)

    def rearm(self) -> None:
        """Trace again: Python stops tracing when the hook itself raises (a RecursionError in a
        test of deep nesting), so each test starts by putting it back."""
        if sys.gettrace() is None:
            sys.settrace(self.on_call)

    def events(self) -> list[dict[str, Any]]:
        return [{"path": p, "line": n, "type": t, "classes": list(c), "text": x, "count": count}
                for (p, n, t, c, x), count in sorted(self.seen.items())]


def trace(sites: list[Site], source: Path, import_root: Path, runner: str, args: list[str],
          written: Path) -> None:
    """Way b, in this (child) process: run the tests under the tracer, write what was raised."""
    lines: dict[str, set[int]] = collections.defaultdict(set)
    for site in sites:
        lines[site.path].update(range(site.line, site.end_line + 1))
    tracer = RaiseTracer(source, dict(lines))
    sys.path.insert(0, str(import_root))

    def write() -> None:
        sys.settrace(None)
        written.write_text(json.dumps(tracer.events()), encoding="utf-8")

    atexit.register(write)
    tracer.start()
    if runner == "pytest":
        import pytest

        class Rearm:
            @staticmethod
            def pytest_runtest_setup(item: object) -> None:
                tracer.rearm()

        pytest.main(["-q", "-p", "no:cacheprovider", *args], plugins=[Rearm()])
    else:
        import unittest

        from test import support  # the standard library's own tests: no network, no GUI

        support.use_resources = []
        start_test = unittest.TestResult.startTest

        def rearmed(result: unittest.TestResult, test: unittest.TestCase) -> None:
            tracer.rearm()
            start_test(result, test)

        unittest.TestResult.startTest = rearmed  # type: ignore[method-assign,assignment]
        unittest.main(module=None, argv=["unittest", *args], exit=False, verbosity=0)


def _child_main(argv: list[str]) -> None:
    way, given, source, import_root, out, *rest = argv
    sites = [Site(**s) for s in json.loads(Path(given).read_text(encoding="utf-8"))]
    if way == "construct":
        skipped = tuple(rest[0].split(",")) if rest and rest[0] else ()
        results = evaluate(sites, Path(source), Path(import_root), skipped)
        Path(out).write_text(json.dumps(results), encoding="utf-8")
    else:
        trace(sites, Path(source), Path(import_root), rest[0], rest[1:], Path(out))


if __name__ == "__main__":
    _child_main(sys.argv[1:])
