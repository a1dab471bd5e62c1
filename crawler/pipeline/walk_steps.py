"""The steps of a `crawler history` walk on a folder held in memory: collect a release's
changes against the held manifest, and write the held folder at a checkpoint."""

from __future__ import annotations

import time
from pathlib import Path

from crawler.catalogue.manifest import check_same_repository
from crawler.git.pin import PinnedRepo
from crawler.parse.workers import WorkerPool
from crawler.pipeline.applying import refresh_lookup_index
from crawler.pipeline.collecting import Collected, collect_again, collect_pinned
from crawler.records import (
    ExtractOptions,
    Manifest,
)
from crawler.store import repo_output
from crawler.store.context import StoreContext
from crawler.store.held_folder import write_checkpoint
from crawler.store.parse_cache import ResultCache


def collect_held(repo: PinnedRepo, previous: Manifest | None, folder: Path, store: StoreContext,
                 *, options: ExtractOptions, cache_dir: Path | None, jobs: int | None,
                 evidence: bool, release: str | None, pool: WorkerPool | None = None,
                 results: ResultCache | None = None) -> Collected:
    """A walk's step whose folder is held in memory (`store.held`): every file where the
    folder has no manifest yet (an extract's), else what changed since `previous` (an
    update's); `apply` with the same `store` then merges it in memory. `pool` and `results`
    are what the walk keeps across its steps: its workers, and the result cache it reads
    through (`held_folder.HeldResults`)."""
    if previous is None:
        return collect_pinned(repo, options, cache_dir, jobs, None, evidence, store.blocks, None,
                               time.perf_counter(), pool=pool, results=results)
    check_same_repository(str(folder), previous, repo.pin)  # before any file is read
    return collect_again(repo, previous, folder, cache_dir, jobs, None, evidence, store, release,
                          pool=pool, results=results)


def write_held(folder: Path, store: StoreContext, wait: float = 0.0) -> tuple[int, list[str]]:
    """Write what a walk's held folder changed since its last checkpoint, under the folder's
    lock (`wait` seconds at most; see `held_folder.write_checkpoint`): how many files, and notes."""
    if store.held is None:
        return 0, []
    with repo_output.lock(folder, wait=wait):
        written = write_checkpoint(folder, store.held, store.blocks, store.loads)
        notes = refresh_lookup_index(folder, store.held.records.values()) if written else []
    return written, notes
