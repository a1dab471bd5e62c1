"""`crawler update`: move a folder's records to a new commit, reading again only the files
whose blob changed."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from crawler.catalogue.manifest import check_same_repository
from crawler.errors import OutputError
from crawler.git.pin import pin
from crawler.pipeline import cyclic_gc
from crawler.pipeline.applying import apply
from crawler.pipeline.collecting import collect_again, earlier_local_folder, load_cache, output_folder
from crawler.pipeline.identity import from_manifests
from crawler.pipeline.stages import Progress, RunResult
from crawler.store.context import StoreContext
from crawler.store.manifest_file import load_manifest


@cyclic_gc.frozen_during_run()
def update(source: str, *, ref: str = "HEAD", output_root: Path = Path("output"),
           cache_dir: Path | None = None, name: str | None = None, jobs: int | None = None,
           progress: Progress | None = None, dry_run: bool = False, wait: float = 0.0,
           evidence: bool = True, web_url: str | None = None, release: str | None = None
           ) -> RunResult:
    """Move an existing output folder to `ref`, reading again only the files that changed.

    With `evidence`, the test files are read too (from the evidence cache, but for those that
    changed), and the records whose evidence changed are rewritten."""
    started = time.perf_counter()
    store = StoreContext(load_cache(cache_dir))
    with pin(source, ref, cache_dir=cache_dir, name=name, web_url=web_url) as repo:
        folder = output_folder(output_root, repo.pin)
        previous = load_manifest(folder, store.loads)
        known = (from_manifests(output_root, folder, repo.pin, loads=store.loads,
                                given=name is not None or web_url is not None)
                 if previous is None else None)
        if known is not None:  # the identity extract was given, read from its manifest
            repo.pin, folder, previous = known
        if previous is None:
            hint = "".join(f"; {note}" for note in earlier_local_folder(output_root, repo.pin,
                                                                         None))
            raise OutputError(f"[{repo.pin.repo}] no records in {folder}: run `crawler extract` "
                              f"first (with the same --name, if it was given one){hint}")
        check_same_repository(str(folder), previous, repo.pin)  # before any file is read
        collected = collect_again(repo, previous, folder, cache_dir, jobs, progress, evidence,
                                   store, release)
    cyclic_gc.settled()  # the outcomes and the previous manifest live to the end
    result = apply(collected, output_root, dry_run=dry_run, previous=previous, wait=wait,
                   store=store, progress=progress, release=release)
    return replace(result, seconds=time.perf_counter() - started)  # pinning and loading too
