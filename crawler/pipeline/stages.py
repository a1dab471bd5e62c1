"""The stages a run reports progress on, the progress callback, and what a run returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from crawler.catalogue.evidence import EvidenceStats
from crawler.catalogue.merge import MergeResult
from crawler.records import (
    ErrorRecord,
    Manifest,
    Pin,
)

# The stages a run reports progress on, in the order they run.
PARSING, EVIDENCE, CLASSES, MATCHING, WRITING = (
    "parsing", "test evidence", "class pass", "matching evidence", "writing")


STAGES = (PARSING, EVIDENCE, CLASSES, MATCHING, WRITING)


WRITE_CHUNK = 500  # records rendered and compared between two reports of the writing stage


class Progress(Protocol):
    """Told how far a stage has come: `done` of `total` (files, assertions or records), several
    times a second at most per item; a stage that has nothing to do is not reported."""

    def __call__(self, done: int, total: int, stage: str = PARSING) -> None: ...


def stage_callback(progress: Progress | None, stage: str) -> Callable[[int, int], None] | None:
    """`progress` for one stage, as a plain (done, total) callback."""
    return None if progress is None else partial(_report, progress, stage)


def _report(progress: Progress, stage: str, done: int, total: int) -> None:
    progress(done, total, stage)


@dataclass(frozen=True)
class RunResult:
    """One extraction's outcome: where it wrote, the manifest, and what changed."""

    pin: Pin
    folder: Path
    manifest: Manifest
    merged: MergeResult
    files_written: int
    seconds: float
    problems: tuple[str, ...] = ()  # files in the folder that could not be loaded: left as they are
    notes: tuple[str, ...] = ()  # what the run healed: temp files removed, a manifest rebuilt
    parsed: int = 0  # files visited (read from the cache or parsed) in this run
    pending: tuple[str, ...] = ()  # files whose text this run changes (or would, in a dry run)
    stale: tuple[ErrorRecord, ...] = ()  # live records whose annotation names another template
    evidence: EvidenceStats | None = None  # None when the tests were not read
