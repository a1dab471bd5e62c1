"""`crawler extract`: pin a source, collect every file's sites (or only the changed ones
where the folder is already built) and apply them to the output folder."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from crawler.errors import CrawlerError
from crawler.git.pin import PinnedRepo
from crawler.pipeline import cyclic_gc
from crawler.pipeline.applying import apply
from crawler.pipeline.collecting import (
    Collected,
    built_here,
    collect,
    collect_again,
    load_cache,
    output_folder,
)
from crawler.pipeline.stages import Progress, RunResult
from crawler.records import (
    ExtractOptions,
    Pin,
)
from crawler.store.context import StoreContext
from crawler.store.manifest_file import load_manifest


@cyclic_gc.frozen_during_run()
def extract(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
            options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
            name: str | None = None, jobs: int | None = None, progress: Progress | None = None,
            dry_run: bool = False, wait: float = 0.0, evidence: bool = True,
            web_url: str | None = None, release: str | None = None) -> RunResult:
    """Pin `source` at `ref`, catalogue its raise sites, and merge them into the output folder."""
    started = time.perf_counter()
    store = StoreContext(load_cache(cache_dir))

    def folder_commit(pinned: Pin) -> str | None:
        """The commit the output folder was built at, to diff from; None for a new folder."""
        try:
            previous = load_manifest(output_folder(output_root, pinned), store.loads)
        except CrawlerError:
            return None  # a broken manifest is rebuilt from the records: pair by keys
        return previous.pin.sha if previous is not None else None

    def only_changes(repo: PinnedRepo) -> Collected | None:
        """Nothing to read but what changed, at an update's cost, in a folder built here."""
        folder = output_folder(output_root, repo.pin)
        previous = built_here(folder, repo.pin, options, store)
        if previous is None:
            return None
        return collect_again(repo, previous, folder, cache_dir, jobs, progress, evidence, store)

    collected = collect(source, ref=ref, options=options, cache_dir=cache_dir, name=name,
                        jobs=jobs, progress=progress, evidence=evidence, blocks=store.blocks,
                        diff_from=folder_commit, again=only_changes, web_url=web_url)
    cyclic_gc.settled()  # the outcomes live to the end
    result = apply(collected, output_root, dry_run=dry_run, wait=wait, store=store,
                   progress=progress, release=release)
    return replace(result, seconds=time.perf_counter() - started)
