"""What a worker answers for one file, as the crawler's own process reads it.

A worker parses (`crawler.parse.file_tasks`); the pool that runs workers (`crawler.parse.workers`),
the caches and the pipeline only carry these answers. Kept apart from the parsers, so a process
that parses nothing never imports one (LibCST alone costs a quarter of a second to import).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.parse.call_edges import CallFacts
from crawler.parse.skeleton import Known, Region
from crawler.records import (
    ClassDef,
    ExposedFunction,
    RaiseCounts,
    RaiseSite,
    Skipped,
    TestAssertion,
    TextCall,
)

# (path, blob sha, file bytes, what the file's previous version held or None)
Job = tuple[str, str, bytes, Known | None]


# What a worker does with a job: find a source file's raises, or a test file's assertions.
VISIT, ASSERTIONS = "visit", "assertions"


PARSE_FAILED = "parse_failed"


PARSER_CRASHED = "parser_crashed"


TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class FileOutcome:
    """What visiting one file gave: its sites, or why it could not be read."""

    path: str
    blob: str
    sites: tuple[RaiseSite, ...] = ()
    counts: RaiseCounts = field(default_factory=RaiseCounts)
    failure: Skipped | None = None
    pending: tuple[RaiseSite, ...] = ()  # message-less raises that may take a class default
    classes: tuple[ClassDef, ...] = ()
    exports: dict[str, str] = field(default_factory=dict)  # module-level names: qualified names
    regions: tuple[Region, ...] = ()  # its functions, for reading its next version
    context: str = ""  # what its functions take from the module (`visitor.context_digest`)
    stubbed: tuple[Region, ...] = ()  # read as a skeleton: functions to fill from the previous
    exposed: tuple[ExposedFunction, ...] = ()  # functions other modules' raises may follow
    calls: CallFacts | None = None  # its definitions and call edges, for the entry-point pass
    text_calls: tuple[TextCall, ...] = ()  # its calls that pass text (`crawler.catalogue.callers`)


@dataclass(frozen=True)
class FileAssertions:
    """What one test file gave: its assertions, and how many candidates could not be read."""

    path: str
    assertions: tuple[TestAssertion, ...]
    unread: int = 0
    positions: str = "none"  # "ast", "libcst" or "none"
    failure: Skipped | None = None  # why its worker gave nothing: a crash, the time limit


Answer = FileOutcome | FileAssertions  # a FileOutcome with a failure for any file a worker lost


def failed(path: str, blob: str, reason: str, detail: str) -> FileOutcome:
    """The outcome of a file that gave no sites, with the reason the manifest lists."""
    return FileOutcome(path, blob, failure=Skipped(path, reason, detail))
