"""Check records against the messages their raises really print: does each regex fullmatch `str(exc)`?

Given an output folder and the source tree it was extracted from (the same commit), each record's
real message is evaluated in two ways, and its regex must fullmatch it:

  a. construct: the record's module is imported from the source tree, and the raise's own
     exception expression is evaluated with a stand-in value for each name the function binds
     (`Sample`: its text is the name, and it answers attributes, calls and arithmetic with more
     stand-ins); a message held in a local (`variable`, `dynamic`) is the record's template with
     each placeholder's expression as its value. What the class does to the text (`__init__`,
     `__str__`, KeyError's repr) is then really run.
  b. trace: the project's own tests run under a trace hook on the source tree's frames alone
     (`sys.settrace`, line events off), which notes where each exception is first raised (file,
     line, class, `str(exc)`); an exception raised on a record's lines, of its class, is checked.

Each way runs in a child process (with a time limit) so that imports and tests cannot touch the
check itself. Printed per repository: records, sites evaluated by each way, matched, mismatched
(each with path:line, template and the real message), kinds; the mismatches go to a JSON-lines
file. With --before, the same source's records by an earlier crawler are compared: `dynamic`
counts and the records whose template changed, with examples.

    PYTHONPATH=. python scripts/real_messages.py OUTPUT/local/local/click --source /tmp/click \\
        --import-root src --pytest tests --mismatches mismatches.jsonl
"""

from __future__ import annotations

import argparse
import ast
import atexit
import collections
import importlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Modules never imported by way a: importing them opens a browser, starts a program or prints.
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


# ---------------------------------------------------------------- the check, in this process


def sites_of(folder: Path) -> tuple[list[Site], collections.Counter[str]]:
    """The folder's active records as Sites, and the count of records by message kind."""
    from crawler.serve.lookup import load_records

    records, problems = load_records(folder)
    for problem in problems:
        print(f"skipped: {problem}", file=sys.stderr)
    kinds: collections.Counter[str] = collections.Counter(r.site.message.kind for r in records)
    sites = [_site(r.id, r.site) for r in records if r.status != "removed"]
    return sorted(sites, key=lambda s: (s.path, s.line, s.id)), kinds


def _site(record_id: str, site: Any) -> Site:
    from crawler.parse.messages import pieces_of

    message = site.message
    pieces = pieces_of(message)
    filled = None if pieces is None else "".join(p.text or "x" if p.is_placeholder else p.text
                                                 for p in pieces)
    return Site(record_id, site.path, site.line, site.end_line, site.exception, site.factory,
                message.kind, message.template, message.regex, message.argument,
                message.composed_by is not None or message.kind == "class_default", filled,
                message.not_followed is not None or message.reason is not None)


def _child(args: list[str], cwd: Path, timeout: float) -> None:
    command = [sys.executable, str(Path(__file__).resolve()), *args]
    try:
        subprocess.run(command, cwd=cwd, timeout=timeout, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"stopped after {timeout:.0f} s: {' '.join(args[:1])}", file=sys.stderr)


@dataclass(frozen=True)
class Mismatch:
    """One real message its record's regex does not fullmatch."""

    way: str
    id: str
    path: str
    line: int
    exception: str
    kind: str
    template: str
    regex: str
    message: str
    declared: bool  # the record says it was not followed: a mismatch it warns of


def by_construction(sites: list[Site], results: list[dict[str, Any]]
                    ) -> tuple[int, int, list[Mismatch], collections.Counter[str]]:
    """(evaluated, matched, mismatches, why the others were not evaluated). A raise whose message
    has alternatives (`ngettext`, `a if c else b`) is one record per alternative: the message one
    sample gives matches when any of them does."""
    known = {s.id: s for s in sites}
    alternatives: dict[tuple[str, int, int, str], list[Site]] = collections.defaultdict(list)
    for site in sites:
        alternatives[_raise_of(site)].append(site)
    evaluated = matched = 0
    mismatches: list[Mismatch] = []
    why: collections.Counter[str] = collections.Counter()
    for result in results:
        site = known[result["id"]]
        if result["status"] != "message":
            why[re.sub(r"'[^']*'|\d+", "_", result["text"])[:90]] += 1
            continue
        evaluated += 1
        if any(re.fullmatch(s.regex, result["text"]) for s in alternatives[_raise_of(site)]):
            matched += 1
        else:
            mismatches.append(_mismatch("construct", site, result["text"]))
    return evaluated, matched, mismatches, why


def _raise_of(site: Site) -> tuple[str, int, int, str]:
    return site.path, site.line, site.end_line, site.exception


def by_trace(sites: list[Site], events: list[dict[str, Any]]
             ) -> tuple[int, int, int, list[Mismatch]]:
    """(sites evaluated, distinct messages, sites matched, mismatches) from the traced raises."""
    at: dict[tuple[str, int], list[Site]] = collections.defaultdict(list)
    for site in sites:
        for line in range(site.line, site.end_line + 1):
            at[(site.path, line)].append(site)
    evaluated: set[str] = set()
    failed: set[str] = set()
    mismatches: list[Mismatch] = []
    messages = 0
    for event in events:
        candidates = [s for s in at.get((event["path"], event["line"]), [])
                      if _same_class(s, event["classes"])]
        if not candidates or len(event["text"]) >= MESSAGE_CHARS:
            continue
        messages += 1
        hit = next((s for s in candidates if re.fullmatch(s.regex, event["text"])), None)
        if hit is not None:
            evaluated.add(hit.id)
            continue
        for site in candidates:
            evaluated.add(site.id)
            failed.add(site.id)
            mismatches.append(_mismatch("trace", site, event["text"]))
    return len(evaluated), messages, len(evaluated - failed), mismatches


def _same_class(site: Site, classes: list[str]) -> bool:
    name = site.exception.rpartition(".")[2]
    claims = not site.factory and name[:1].isupper() and name.isidentifier()
    return not claims or name in classes


def _mismatch(way: str, site: Site, message: str) -> Mismatch:
    return Mismatch(way, site.id, site.path, site.line, site.exception, site.kind, site.template,
                    site.regex, message, site.declared)


def compare(before: Path, after: Path, examples: int) -> list[str]:
    """Lines on what an earlier crawler made of the same source: dynamic counts, changed templates."""
    from crawler.serve.lookup import load_records

    old_records, new_records = load_records(before)[0], load_records(after)[0]
    old = {(r.site.path, r.site.line, r.site.exception): r.site for r in old_records}
    new = {(r.site.path, r.site.line, r.site.exception): r.site for r in new_records}
    changed = [(old[k], new[k]) for k in sorted(old.keys() & new.keys())
               if old[k].message.template != new[k].message.template]
    kinds = collections.Counter(f"{o.message.kind}->{n.message.kind}" for o, n in changed)
    lines = [f"dynamic records: before {_count(old_records, 'dynamic')}, "
             f"after {_count(new_records, 'dynamic')}",
             f"records: before {len(old_records)}, after {len(new_records)}; raises at the same "
             f"place {len(old.keys() & new.keys())}",
             f"templates changed: {len(changed)} "
             f"({', '.join(f'{k} {n}' for k, n in kinds.most_common())})"]
    step = max(1, len(changed) // max(1, examples))
    for was, now in changed[::step][:examples]:
        lines.append(f"  {now.path}:{now.line} {now.exception}")
        lines.append(f"    before {was.message.kind}: {was.message.template!r}")
        lines.append(f"    after  {now.message.kind}: {now.message.template!r}"
                     + (f" (composed_by {now.message.composed_by})" if now.message.composed_by
                        else ""))
    return lines


def _count(records: list[Any], kind: str) -> int:
    return sum(1 for r in records if r.site.message.kind == kind)


def check(options: argparse.Namespace) -> int:
    folder, source = options.folder.resolve(), options.source.resolve()
    import_root = (source / options.import_root).resolve()
    if not (folder / "manifest.yaml").is_file() or not source.is_dir():
        print(f"{options.folder}: not a repository's output folder, or {options.source} is no "
              "folder; give the folder that holds manifest.yaml and the tree it was made from",
              file=sys.stderr)
        return 2
    sites, kinds = sites_of(folder)
    total = sum(kinds.values())
    print(f"{folder.name}: {total} records; kinds: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    mismatches: list[Mismatch] = []
    with tempfile.TemporaryDirectory(prefix="real-messages-") as work:
        scratch = Path(work)
        given = scratch / "sites.json"
        given.write_text(json.dumps([asdict(s) for s in sites]), encoding="utf-8")
        if not options.no_construct:
            mismatches += _construct_way(sites, given, source, import_root, scratch, options)
        if options.pytest is not None or options.unittest is not None:
            mismatches += _trace_way(sites, given, source, import_root, scratch, options)
    if options.mismatches is not None:
        options.mismatches.write_text("".join(json.dumps(asdict(m)) + "\n" for m in mismatches),
                                      encoding="utf-8")
    for m in sorted(mismatches, key=lambda m: (m.declared, m.way, m.path, m.line)):
        flag = " (says not followed)" if m.declared else ""
        print(f"  {m.way}{flag} {m.path}:{m.line} {m.exception} ({m.kind}) {m.template!r}\n"
              f"      real: {m.message[:300]!r}")
    if options.before is not None:
        print("\n".join(compare(options.before.resolve(), folder, options.examples)))
    return 0


def _construct_way(sites: list[Site], given: Path, source: Path, import_root: Path,
                   scratch: Path, options: argparse.Namespace) -> list[Mismatch]:
    out = scratch / "constructed.json"
    _child(["_construct", str(given), str(source), str(import_root), str(out),
            ",".join(options.skip_module)], scratch, options.timeout)
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    evaluated, matched, mismatches, why = by_construction(sites, results)
    print(f"  a. construct: evaluated {evaluated} of {len(results)}, matched {matched}, "
          f"mismatched {_split(mismatches)}")
    for reason, count in why.most_common(options.reasons):
        print(f"       not evaluated {count}: {reason}")
    return mismatches


def _trace_way(sites: list[Site], given: Path, source: Path, import_root: Path, scratch: Path,
               options: argparse.Namespace) -> list[Mismatch]:
    out = scratch / "traced.json"
    runner, args = ("pytest", options.pytest) if options.pytest is not None \
        else ("unittest", options.unittest)
    cwd = source if runner == "pytest" else scratch
    _child(["_trace", str(given), str(source), str(import_root), str(out), runner, *args.split()],
           cwd, options.timeout)
    events = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    evaluated, messages, matched, mismatches = by_trace(sites, events)
    print(f"  b. trace ({runner} {args}): evaluated {evaluated} sites with {messages} "
          f"distinct messages, matched {matched}, mismatched {_split(mismatches)}")
    return mismatches


def _split(mismatches: list[Mismatch]) -> str:
    """Mismatched sites, and how many of them say they were not followed."""
    sites = {m.id: m.declared for m in mismatches}
    declared = sum(sites.values())
    return f"{len(sites)} ({len(sites) - declared} unflagged, {declared} say not followed)"


def _child_main(argv: list[str]) -> None:
    way, given, source, import_root, out, *rest = argv
    sites = [Site(**s) for s in json.loads(Path(given).read_text(encoding="utf-8"))]
    if way == "_construct":
        skipped = tuple(rest[0].split(",")) if rest and rest[0] else ()
        results = evaluate(sites, Path(source), Path(import_root), skipped)
        Path(out).write_text(json.dumps(results), encoding="utf-8")
    else:
        trace(sites, Path(source), Path(import_root), rest[0], rest[1:], Path(out))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("_construct", "_trace"):
        _child_main(sys.argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the repository's output folder")
    parser.add_argument("--source", type=Path, required=True,
                        help="the source tree the folder was extracted from")
    parser.add_argument("--import-root", default=".",
                        help="the folder of the source tree that goes on sys.path (src)")
    parser.add_argument("--pytest", help="way b: pytest's arguments, run in the source tree")
    parser.add_argument("--unittest", help="way b: test module names, run with unittest")
    parser.add_argument("--no-construct", action="store_true", help="skip way a")
    parser.add_argument("--skip-module", action="append", default=list(SKIPPED_MODULES))
    parser.add_argument("--mismatches", type=Path, help="write the mismatches here (JSON lines)")
    parser.add_argument("--before", type=Path,
                        help="the same source's output folder by an earlier crawler")
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--reasons", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=1800.0)
    return check(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
