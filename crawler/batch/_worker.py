"""The worker's part of a batch: pin and visit one repository, and report files parsed.

Runs in a local worker process or on a Dask worker. It only collects (`pipeline.collect`); the
driver merges and writes. Progress goes back through a shared counter (local processes) or a
Dask event (`FILES_TOPIC`), never through output.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crawler.batch.reposfile import RepoEntry
from crawler.errors import CrawlerError
from crawler.git.pin import pin
from crawler.pipeline import Collected, collect
from crawler.records import Pin

FILES_TOPIC = "crawler-files-parsed"  # Dask event by which workers report files parsed
FILES_EVERY = 0.5  # seconds between two such events from one worker


@dataclass(frozen=True)
class RepoTask:
    """What a worker is sent for one repository: its batch entry and where to cache; picklable."""

    entry: RepoEntry
    cache_dir: str | None  # a path on the worker; None for its user cache folder
    fresh: tuple[tuple[str, str], ...] = ()  # (slug, sha) pairs that are already up to date
    attempt: int = 0


@dataclass(frozen=True)
class RepoOutcome:
    """What a worker sends back: the collected sites, or that it is up to date, or why it failed."""

    pin: Pin | None = None
    collected: Collected | None = None  # None when up to date or failed
    error: str | None = None
    seconds: float = 0.0


_files_parsed: Any = None  # a shared counter in local worker processes, for live progress


def init_local_worker(counter: Any) -> None:
    global _files_parsed
    _files_parsed = counter
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a parser that segfaults writes no core


_last_done = 0  # files done so far in the task this worker runs (one at a time)


def _count_file(done: int, total: int) -> None:
    """collect's progress callback on a worker: `done` files of this repository so far."""
    global _unsent, _last_done
    step, _last_done = max(0, done - _last_done), done  # cache hits arrive many at once
    if _files_parsed is not None:
        with _files_parsed.get_lock():
            _files_parsed.value += step
        return
    _unsent += step
    if time.monotonic() - _sent_at >= FILES_EVERY:
        _send_files()


_unsent, _sent_at = 0, 0.0  # on a Dask worker: files parsed and not yet told, and when last told


def _send_files() -> None:
    """On a Dask worker, tell the driver how many more files were parsed (progress only)."""
    global _unsent, _sent_at
    if _unsent and "distributed" in sys.modules:
        try:
            from distributed import get_worker

            get_worker().log_event(FILES_TOPIC, _unsent)
        except Exception:  # noqa: BLE001, S110 - not on a worker, or the event was lost: no progress
            pass
    _unsent, _sent_at = 0, time.monotonic()


def collect_repo(task: RepoTask) -> RepoOutcome:
    """Pin and visit one repository (on a worker); every failure comes back as a reason.

    When the output already holds this repository, the ref is resolved first: at the same
    commit with the same options there is nothing to do. Otherwise the files are visited at
    the resolved sha, so a branch that moves meanwhile cannot mix two commits.
    """
    started = time.perf_counter()
    try:
        return _collect(task, started)
    finally:
        _send_files()


def _collect(task: RepoTask, started: float) -> RepoOutcome:
    global _last_done
    _last_done = 0
    entry, cache_dir, resolved = task.entry, _path(task.cache_dir), None
    try:
        if task.fresh:
            with pin(entry.source, entry.ref, cache_dir=cache_dir, name=entry.name,
                     web_url=entry.web_url) as repo:
                resolved = repo.pin
            if (resolved.slug, resolved.sha) in task.fresh:
                return RepoOutcome(resolved, seconds=time.perf_counter() - started)
        collected = collect(entry.source, ref=resolved.sha if resolved else entry.ref,
                            options=entry.options, cache_dir=cache_dir, name=entry.name, jobs=1,
                            progress=_count_file, web_url=entry.web_url)
        if resolved is not None:  # visited at the resolved sha; keep the ref as the user gave it
            collected = replace(collected, pin=resolved)
    except CrawlerError as error:
        return RepoOutcome(error=str(error), seconds=time.perf_counter() - started)
    except Exception as error:  # noqa: BLE001 - one repository's crash must not stop the batch
        return RepoOutcome(error=f"crashed: {type(error).__name__}: {error}"[:500],
                           seconds=time.perf_counter() - started)
    return RepoOutcome(collected.pin, collected, seconds=time.perf_counter() - started)


def _path(value: str | None) -> Path | None:
    return Path(value) if value is not None else None
