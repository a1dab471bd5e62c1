"""Which of a commit's files a run parses, which it passes over and why, and which are tests.

Policy over the listing git gives (`SourceFile`: path, blob, mode, size) and the options the run
was asked for (`ExtractOptions`); it reads no file and calls no git, so it sits beside the record
types rather than in `crawler.git`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import PurePosixPath

from crawler.records import ExtractOptions, Skipped, SourceFile

SYMLINK, SUBMODULE = "120000", "160000"  # git modes of entries that are not files' text
TEST_DIRS = frozenset({"test", "tests"})


def is_test_path(path: str) -> bool:
    """Files of a test suite: under a test folder (`tests`, or a suite named like attrs'
    `typing_tests`), or named like a test module."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        any(part in TEST_DIRS or part.endswith("_tests") for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def select_files(files: Iterable[SourceFile], options: ExtractOptions
                 ) -> tuple[list[SourceFile], list[Skipped], int]:
    """The .py files to parse, the ones passed over with the reason, and how many .py there are."""
    chosen: list[SourceFile] = []
    skipped: list[Skipped] = []
    total = 0
    for entry in files:
        if not entry.path.endswith(".py"):
            continue
        total += 1
        reason = _skip_reason(entry, options)
        if reason is None:
            chosen.append(entry)
        else:
            skipped.append(Skipped(entry.path, *reason))
    return chosen, skipped, total


def _skip_reason(entry: SourceFile, options: ExtractOptions) -> tuple[str, str | None] | None:
    if entry.mode == SYMLINK:
        return "symlink", "a link is recorded, never followed"
    if entry.mode == SUBMODULE:
        return "submodule", f"gitlink to {entry.blob}; submodules are not followed"
    if options.include and not any(fnmatch.fnmatchcase(entry.path, g) for g in options.include):
        return "not_included", None
    if any(fnmatch.fnmatchcase(entry.path, glob) for glob in options.exclude):
        return "excluded", None
    if not options.include_tests and is_test_path(entry.path):
        return "test_file", None
    if entry.size < 0:
        return "too_large", "left out of the fetch by its size"
    if entry.size > options.max_file_bytes:
        return "too_large", f"{entry.size} bytes, over the cap of {options.max_file_bytes}"
    return None


def select_test_files(files: Iterable[SourceFile], options: ExtractOptions) -> list[SourceFile]:
    """The test files read for evidence: skipped for cataloguing (unless asked for), read anyway.

    `--exclude` globs apply (a suite can be left out); `--include` does not, since it narrows the
    catalogue to library code and the tests that exercise it live elsewhere.
    """
    return [
        entry for entry in files
        if entry.path.endswith(".py") and is_test_path(entry.path)
        and entry.mode not in (SYMLINK, SUBMODULE) and 0 <= entry.size <= options.max_file_bytes
        and not any(fnmatch.fnmatchcase(entry.path, glob) for glob in options.exclude)
    ]
