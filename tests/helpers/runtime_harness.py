"""The runtime harness: each case's raises really run, and `str(exc)` held to its record's regex.

A case is a file `tests/cases/<name>.py` with `<name>.yaml` beside it, or a package folder
`tests/packages/<name>/` with `tests/packages/<name>.yaml`. The yaml's `sites` are the records
the crawler writes for it, after the repository-wide class pass, in order of path and line. A site
says how to reach its raise with `run:`, a Python call expression evaluated in the namespace of
the site's module (`"parse_header(b'x')"`); a site without one is a raise that cannot run (an
import the case does not have, a branch no call reaches), and the harness counts it.

Each run must raise an exception of the record's class (or a subclass: `OSError(13, ...)` makes a
`PermissionError`), from a frame on the record's lines (the
last of the traceback: the raise statement itself, not a call inside its message), and `str(exc)`
(what Python prints after `ExceptionName: `) must fullmatch the record's regex. A record that
says its class's transform could not be read (`not_followed`) keeps the raise's own template, which
need not match: it is run for its class and line, and counted.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from crawler.catalogue import callers, classes, factories
from crawler.parse.call_edges import CallFacts, read_calls
from crawler.parse.message.text_calls import read_text_calls
from crawler.parse.module_names import module_name
from crawler.parse.visitor import FileSites, find_raise_sites
from crawler.records import ClassDef, ExposedFunction, RaiseSite, TextCall

TESTS = Path(__file__).resolve().parents[1]
CASES = TESTS / "cases"
PACKAGES = TESTS / "packages"


@dataclass(frozen=True)
class Case:
    """One case: its source files (relative path, module, bytes) and the records it expects."""

    name: str
    files: tuple[tuple[str, str, Path], ...]
    expected: dict[str, Any]
    package_root: Path | None = None  # the folder to import a package case from

    @property
    def sites(self) -> list[dict[str, Any]]:
        return list(self.expected.get("sites", []))


@dataclass(frozen=True)
class Visited:
    """One file's visit, as the class pass takes it."""

    path: str
    sites: list[RaiseSite]
    pending: list[RaiseSite]
    classes: list[ClassDef]
    exports: dict[str, str] = field(default_factory=dict)
    exposed: tuple[ExposedFunction, ...] = ()  # functions other modules' raises may follow
    calls: CallFacts | None = None  # its call edges, for the callers of a raise's function
    text_calls: tuple[TextCall, ...] = ()  # its calls that pass text


def all_cases() -> list[Case]:
    """Every case file and every package case with expectations, by glob."""
    found = []
    for source in sorted(CASES.glob("*.py")):
        expected = _load(source.with_suffix(".yaml"))
        path = expected.get("path", source.name)
        found.append(Case(source.stem, ((path, expected.get("module", source.stem), source),),
                          expected))
    for described in sorted(PACKAGES.glob("*.yaml")):
        folder = PACKAGES / described.stem
        files = tuple((p.relative_to(PACKAGES).as_posix(),
                       module_name(p.relative_to(PACKAGES).as_posix()), p)
                      for p in sorted(folder.rglob("*.py")))
        found.append(Case(described.stem, files, _load(described), package_root=PACKAGES))
    return found


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def visit(case: Case) -> list[tuple[Visited, FileSites]]:
    visited = []
    for path, module, source in case.files:
        data = source.read_bytes()
        found = find_raise_sites(path, data, module)
        visited.append((Visited(path, found.sites, found.pending, found.classes, found.exports,
                                found.exposed, read_calls(data, module, path.endswith("__init__.py")),
                                read_text_calls(data)), found))
    return visited


def records(case: Case) -> list[RaiseSite]:
    """The sites the crawler makes records of: every file visited, then the repository-wide
    passes (calls of another module's names, the callers' texts, then classes)."""
    settled = factories.settled_files([v for v, _ in visit(case)])
    resolved = classes.resolve(callers.followed_files(settled))
    order = {path: index for index, (path, _, _) in enumerate(case.files)}
    return sorted(resolved.sites, key=lambda s: (order[s.path], s.line, s.column))


@dataclass
class Outcome:
    """What running one case's raises showed."""

    ran: int = 0
    cannot_run: int = 0
    not_followed: int = 0  # records that say their class's transform could not be read
    failures: list[str] = field(default_factory=list)


def run_case(case: Case) -> Outcome:
    """Run every site's `run:` and check the exception, the line and the regex."""
    made = records(case)
    outcome = Outcome()
    if len(made) != len(case.sites):
        outcome.failures.append(f"{case.name}: {len(made)} records, {len(case.sites)} expected")
        return outcome
    with _modules(case) as namespaces:
        for want, site in zip(case.sites, made):
            call = want.get("run")
            if call is None:
                outcome.cannot_run += 1
                continue
            outcome.ran += 1
            followed = site.message.not_followed is None
            outcome.not_followed += 0 if followed else 1
            problem = check_raise(site, call, namespaces.get(site.path), match=followed)
            if problem is not None:
                outcome.failures.append(f"{case.name}: {site.path}:{site.line}: {problem}")
    return outcome


def check_raise(site: RaiseSite, call: str, namespace: dict[str, Any] | None,
                match: bool = True) -> str | None:
    """None when `call` raises the site's exception from the site, with a message its regex
    fullmatches (unless not `match`); else what went wrong."""
    if namespace is None:
        return "its module cannot be loaded"
    try:
        eval(call, namespace)  # noqa: S307 - the case's own test expression
    except Exception as error:  # noqa: BLE001 - the raise under test
        frame = _last_frame(error)
        if frame is None or not site.line <= frame[1] <= site.end_line \
                or not _same_file(frame[0], site.path):
            return f"{call}: raised {type(error).__name__} at {frame}, not at the raise"
        wanted = site.exception_qualname or site.exception
        # A record with no qualified class claims none (`exc_type(msg)`, a class passed in).
        claims = site.exception_qualname is not None or site.exception.isidentifier() and \
            site.exception[:1].isupper()
        if claims and wanted.rpartition(".")[2] not in {k.__name__ for k in type(error).__mro__}:
            return f"{call}: raised {type(error).__qualname__}, the record says {wanted}"
        message = str(error)
        if match and re.fullmatch(site.message.regex, message) is None:
            return f"{call}: {message!r} does not fullmatch {site.message.regex!r}"
        return None
    return f"{call}: raised nothing"


def _last_frame(error: BaseException) -> tuple[str, int] | None:
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    if traceback is None:
        return None
    return traceback.tb_frame.f_code.co_filename, traceback.tb_lineno


def _same_file(filename: str, path: str) -> bool:
    return Path(filename).as_posix().endswith(path) or Path(filename).name == Path(path).name


@contextmanager
def _modules(case: Case) -> Iterator[dict[str, dict[str, Any]]]:
    """Each file's module namespace (None where it cannot load); sys.modules restored after."""
    before = set(sys.modules)
    namespaces: dict[str, dict[str, Any]] = {}
    if case.package_root is not None:
        sys.path.insert(0, str(case.package_root))
    try:
        for path, name, source in case.files:
            loaded = _load_module(name, source, package=case.package_root is not None)
            if loaded is not None:
                namespaces[path] = loaded.__dict__
        yield namespaces
    finally:
        if case.package_root is not None:
            sys.path.remove(str(case.package_root))
        for name in set(sys.modules) - before:
            del sys.modules[name]


def _load_module(name: str, source: Path, package: bool) -> types.ModuleType | None:
    """A package module imported by name; a case file executed as a module of its own."""
    try:
        if package:
            return importlib.import_module(name)
        module = types.ModuleType(name)
        module.__file__ = str(source)
        sys.modules[name] = module
        exec(compile(source.read_bytes(), str(source), "exec"), module.__dict__)  # noqa: S102
        return module
    except Exception:  # noqa: BLE001 - a case whose imports are not here cannot run
        return None
