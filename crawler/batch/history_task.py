"""`crawler history` as one task of a batch: picklable in, picklable out.

A walk is a chain of regenerations, each from the folder the one before wrote, so its merges
run where the output folder is: a local worker process (`LocalPool`) or a Dask worker that
sees the output folder (`executor.submit(run_history, task)`). On a Dask worker, the walk's
files are read by the whole cluster (`--scheduler`'s reading, `batch.dask_reading`) while the
task waits outside the worker's thread pool (`distributed.secede`), so a cluster of one thread
cannot deadlock on it. The folder's lock keeps it
apart from any other run on the same repository. Nothing here prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from crawler.batch.dask_reading import cluster_pool
from crawler.batch.reposfile import RepoEntry
from crawler.errors import CrawlerError
from crawler.pipeline.history_run import walk_releases
from crawler.records import ExtractOptions, Pin


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
    scheduler: str | None = None  # the Dask scheduler whose workers read the walk's files


@dataclass(frozen=True)
class HistoryOutcome:
    """What the walk did: the folder, the tags walked in order, and the records at its end; or
    the one line that says why it stopped."""

    folder: str | None = None
    walked: tuple[str, ...] = ()
    records: int = 0
    error: str | None = None
    seconds: float = 0.0
    pin: Pin | None = None  # the commit the walk ended at
    files: int = 0  # files visited over all its steps (read from the cache or parsed)


def run_history(task: HistoryTask) -> HistoryOutcome:
    """Walk one repository's releases; a `CrawlerError` comes back as its line, not raised."""
    started = time.perf_counter()
    try:
        result = walk_releases(task.source, tags=task.tags, ref=task.ref,
                               output_root=Path(task.output_root), options=task.options,
                               cache_dir=Path(task.cache_dir) if task.cache_dir else None,
                               name=task.name, jobs=task.jobs, evidence=task.evidence,
                               since=task.since, cluster_pool=cluster_pool(task.scheduler))
    except CrawlerError as error:
        return HistoryOutcome(error=str(error), seconds=time.perf_counter() - started)
    last = result.steps[-1].result if result.steps else None
    return HistoryOutcome(str(result.folder),
                          tuple(s.tag for s in result.steps if s.tag is not None),
                          last.manifest.counts.records if last is not None else 0,
                          seconds=time.perf_counter() - started,
                          pin=last.pin if last is not None else None,
                          files=sum(s.result.parsed for s in result.steps))


def history_task(entry: RepoEntry, cache_dir: str | None,
                 scheduler: str | None = None) -> HistoryTask:
    """The walk a repos.yaml entry with `history:` asks for, to its `ref`; with `scheduler`,
    its files are read by that Dask cluster's workers while the steps merge here."""
    assert entry.history is not None
    return HistoryTask(entry.source, entry.history.tags, str(entry.output_root), ref=entry.ref,
                       since=entry.history.since, name=entry.name, cache_dir=cache_dir,
                       options=entry.options, jobs=entry.jobs, evidence=entry.evidence,
                       scheduler=scheduler)
