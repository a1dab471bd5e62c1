"""`crawler history` as one task of a batch: picklable in, picklable out.

A walk is a chain of regenerations, each from the folder the one before wrote, so it runs
whole where the output folder is: a local worker process (`LocalPool`) or a Dask worker that
sees the output folder (`executor.submit(run_history, task)`). The folder's lock keeps it
apart from any other run on the same repository. Nothing here prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from crawler.errors import CrawlerError
from crawler.history import walk_releases
from crawler.records import ExtractOptions


@dataclass(frozen=True)
class HistoryTask:
    """One repository's walk: where it is, which tags, where its records and cache go."""

    source: str
    tags: str  # a glob of tag names
    output_root: str
    ref: str = "HEAD"
    since: str | None = None
    name: str | None = None
    cache_dir: str | None = None  # a path on the worker; None for its user cache folder
    options: ExtractOptions = ExtractOptions()
    jobs: int | None = None
    evidence: bool = True


@dataclass(frozen=True)
class HistoryOutcome:
    """What the walk did: the folder, the tags walked in order, and the records at its end; or
    the one line that says why it stopped."""

    folder: str | None = None
    walked: tuple[str, ...] = ()
    records: int = 0
    error: str | None = None
    seconds: float = 0.0


def run_history(task: HistoryTask) -> HistoryOutcome:
    """Walk one repository's releases; a `CrawlerError` comes back as its line, not raised."""
    started = time.perf_counter()
    try:
        result = walk_releases(task.source, tags=task.tags, ref=task.ref,
                               output_root=Path(task.output_root), options=task.options,
                               cache_dir=Path(task.cache_dir) if task.cache_dir else None,
                               name=task.name, jobs=task.jobs, evidence=task.evidence,
                               since=task.since)
    except CrawlerError as error:
        return HistoryOutcome(error=str(error), seconds=time.perf_counter() - started)
    records = result.steps[-1].result.manifest.counts.records if result.steps else 0
    return HistoryOutcome(str(result.folder),
                          tuple(s.tag for s in result.steps if s.tag is not None), records,
                          seconds=time.perf_counter() - started)
