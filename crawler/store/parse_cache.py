"""The parse results' caches: a file's visit result and a test file's assertions, read once.

Both are tables of the store's one SQLite cache (`cache.CacheTable`), keyed by (path, blob sha)
and a digest of the sources of the code that read them:

- `ResultCache`: a file's visit results depend only on its bytes, its path (records and module
  names carry it) and the crawler that read it: the digest covers the reading code's sources
  (`crawler/parse`, its message reading included, and its types), so an edited parser never
  reuses what the old one read (or a crash it had), whatever the version number says. The same
  blob at the same path in a fork, a later commit or another clone is read once.
- `EvidenceCache`: a test file's assertions, by the sources of the assertion reader
  (`crawler/parse/assertions.py` and what it imports from the crawler): a test file whose blob
  did not change is never parsed again, by `extract` or `update`, and an edit of the source
  visitor does not throw the tests' entries away.

Apart from `cache` because these need the parser's types (and with them LibCST), which the
commands that only load records (validate, check, export) never import.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.parse.outcomes import FileAssertions, FileOutcome
from crawler.parse.python_ast import parse_module
from crawler.records import Skipped, TestAssertion
from crawler.store import _outcome_json
from crawler.store.cache import EVIDENCE, RESULTS, CacheTable, is_plain


@functools.cache
def reader_digest() -> str:
    """sha256 of the sources that decide a file's visit result: crawler/parse (its message reading
    included) and its types."""
    root = Path(__file__).resolve().parent.parent
    return sources_digest(root, [*(root / "parse").rglob("*.py"), *(root / "records").glob("*.py"),
                                 root / "store" / "_outcome_json.py"])


class ResultCache(CacheTable):
    """Visit results by (path, blob): the `FileOutcome` of a file already read."""

    def key(self, path: str, blob: str) -> str:
        return self._key(RESULTS, reader_digest(), path, blob)

    def get(self, path: str, blob: str) -> FileOutcome | None:
        """The cached outcome of visiting `path` at `blob`, or None."""
        return self._file_entry(self.key(path, blob), path, blob, _outcome_json.outcome_from_data)

    def put(self, outcome: FileOutcome) -> None:
        """Store a file's outcome (read in full, nothing stubbed); never fails the run."""
        if self.database is not None:
            self._put(self.key(outcome.path, outcome.blob), _outcome_json.outcome_data(outcome))


# The crawler modules that decide a test file's assertions: `parse/assertions.py` and every crawler
# module it imports, through one another (`crawler_imports`), relative to the package. Listed here
# rather than followed on every run, where parsing each with `ast` cost 0.10 s of CPU a run:
# tests/store/test_cache_evidence.py checks the list against the imports, so an import added to the
# reader fails the suite until it is listed here.
ASSERTION_READER_SOURCES = (
    "parse/_source.py", "parse/_walk.py", "parse/assertions.py", "parse/call_edges.py",
    "parse/call_guards.py", "parse/message/__init__.py", "parse/message/flow.py",
    "parse/message/known_names.py", "parse/message/type_refs.py", "parse/outcomes.py",
    "parse/positions.py", "parse/python_ast.py", "parse/registrations.py", "parse/skeleton.py",
    "records/__init__.py", "records/manifest.py", "records/record.py", "records/sites.py",
)


@functools.cache
def assertion_reader_digest() -> str:
    """sha256 of the sources that decide a test file's assertions: `ASSERTION_READER_SOURCES`
    and this module."""
    root = Path(__file__).resolve().parent.parent
    return sources_digest(root, [*(root / name for name in ASSERTION_READER_SOURCES),
                                 Path(__file__).resolve()])


def sources_digest(root: Path, files: Iterable[Path], seed: str = "") -> str:
    """sha256 of `seed`, then each file's path (relative to `root`) and bytes, in path order."""
    digest = hashlib.sha256(seed.encode())
    for file in sorted(set(files)):
        digest.update(f"{file.relative_to(root).as_posix()}\0".encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def crawler_imports(root: Path, start: Path) -> set[Path]:
    """`start` and the crawler modules it imports, directly or through one another: what the
    digests' fixed lists of sources are checked against."""
    seen: set[Path] = set()
    todo = [start]
    while todo:
        file = todo.pop()
        if file in seen or not file.is_file():
            continue
        seen.add(file)
        for node in _runtime_imports(parse_module(file.read_bytes())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                # `from crawler.parse.message import flow` names a module as an attribute
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            todo.extend(_module_file(root, name) for name in names if name.startswith("crawler."))
    return seen


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement but those under `if TYPE_CHECKING:` (for the type checker only),
    in functions and classes too. Only statements are visited (an import is one, and only a
    statement's body, branches and handlers hold statements): walking every node, the two
    digests that need this took 0.34 s of CPU on every run; walking statements, 0.11 s."""
    statements: list[ast.AST] = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            statements.extend(node.orelse)
        else:
            for body in ("body", "orelse", "finalbody", "handlers", "cases"):
                held = getattr(node, body, None)
                if isinstance(held, list):
                    statements.extend(held)


def _module_file(root: Path, name: str) -> Path:
    module = root.joinpath(*name.split(".")[1:])
    return module / "__init__.py" if module.is_dir() else module.with_suffix(".py")


class EvidenceCache(CacheTable):
    """Test files' assertions by (path, blob): the `FileAssertions` of a test file already read
    (a crash or a timeout too: the same bytes are not handed to the parser again)."""

    def key(self, path: str, blob: str) -> str:
        return self._key(EVIDENCE, assertion_reader_digest(), path, blob)

    def get(self, path: str, blob: str) -> FileAssertions | None:
        """The cached assertions of `path` at `blob`, or None."""
        return self._file_entry(self.key(path, blob), path, blob, assertions_from_data)

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        super().__init__(root, version)
        self.unstorable = 0  # files whose assertions JSON cannot hold exactly (a lone surrogate)

    def put(self, blob: str, found: FileAssertions) -> None:
        """Store what reading a test file at `blob` gave; never fails the run. A pattern with a
        lone surrogate (the standard library's own tests have some) is not stored: its file
        is read again next time."""
        if self.database is None:
            return
        data = assertions_data(found)
        if not is_plain(data):
            self.unstorable += 1
            return
        self._put(self.key(found.path, blob), {"blob": blob, **data})


def assertions_data(found: FileAssertions) -> dict[str, Any]:
    """A test file's `FileAssertions` as JSON's plain data."""
    return {"path": found.path, "unread": found.unread, "positions": found.positions,
            "failure": asdict(found.failure) if found.failure is not None else None,
            "assertions": [[a.line, a.test, a.form, a.check, list(a.exceptions), a.pattern]
                           for a in found.assertions]}


def assertions_from_data(data: dict[str, Any]) -> FileAssertions:
    path = data["path"]
    if not isinstance(path, str):
        raise TypeError("path is not a string")
    failure = Skipped(**data["failure"]) if data["failure"] is not None else None
    found = tuple(TestAssertion(path, int(line), str(test), str(form), str(check),
                                tuple(str(e) for e in exceptions), str(pattern))
                  for line, test, form, check, exceptions, pattern in data["assertions"])
    return FileAssertions(path, found, int(data["unread"]), str(data["positions"]), failure)
