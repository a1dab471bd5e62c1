"""`crawler history`: walk a repository's release tags, one regeneration per tag, to a commit.

Each step is the regeneration `update` makes (`pipeline.update`): only the files whose blob
changed since the previous tag are read again (the result cache and skeleton reads do the rest),
the same matching pairs old records with new sites, and annotations are never touched. The step
names its release, so each record's `versions` and `history.templates` move on with it
(`catalogue.releases.mark_step`). The first step of a folder that no walk built is a full
`extract` (every record is loaded and given its first release); the last step is the requested
commit, which is no release. The manifest lists the tags walked: a later run walks only the
tags after them.

Nothing here prints: each step is handed to `on_step` as it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from crawler.catalogue.releases import Walk, order_tags, plan_walk
from crawler.errors import RefError
from crawler.git.pin import pin
from crawler.git.tags import list_tags
from crawler.pipeline import RunResult, extract, output_folder, update
from crawler.records import ExtractOptions, Manifest
from crawler.store.manifest_file import load_manifest


@dataclass(frozen=True)
class TagStep:
    """One regeneration of a walk: the release it reached (None: the end commit)."""

    tag: str | None
    number: int  # one-indexed, among the steps of this run
    steps: int  # how many this run makes
    result: RunResult


@dataclass(frozen=True)
class HistoryResult:
    """A walk: where it wrote, the steps it made, and the tags it left out, with why."""

    folder: Path
    walk: Walk
    steps: tuple[TagStep, ...]
    seconds: float


def walk_releases(source: str, *, tags: str, ref: str = "HEAD", output_root: Path = Path("output"),
                  options: ExtractOptions = ExtractOptions(), cache_dir: Path | None = None,
                  name: str | None = None, jobs: int | None = None, evidence: bool = True,
                  since: str | None = None,
                  on_step: Callable[[TagStep], None] | None = None) -> HistoryResult:
    """Walk the tags matching `tags` (from `since`, one of them) after those walked before, then
    `ref` (unless `ref` is one of the tags: the walk ends there). Plain arguments: a batch
    worker or a Dask task can run it whole, where the output folder is."""
    started = time.perf_counter()
    with pin(source, ref, cache_dir=cache_dir, name=name) as repo:
        found = list_tags(repo, tags)
        folder = output_folder(output_root, repo.pin)
    if not found:
        raise RefError(f"[{repo.pin.source}] no tag matches {tags!r}; list them with "
                       "`git tag -l` and give --tags a glob that matches the releases")
    walk = order_tags(found)
    if since is not None and since not in {tag.name for tag in walk.tags}:
        raise RefError(f"[{repo.pin.source}] --since {since!r} is not one of the release tags "
                       f"that {tags!r} selects; give one of them")
    previous = load_manifest(folder)
    walk = plan_walk(found, previous.releases if previous is not None else None,
                     stop_at=ref if ref in {tag.name for tag in found} else None, since=since)
    targets: list[str | None] = [tag.name for tag in walk.tags]
    if ref not in {tag.name for tag in found}:
        targets.append(None)  # the end commit, which is no release
    steps = []
    for number, tag in enumerate(targets, 1):
        result = _step(source, tag if tag is not None else ref, tag, previous,
                       output_root=output_root, options=options, cache_dir=cache_dir, name=name,
                       jobs=jobs, evidence=evidence)
        previous = result.manifest
        steps.append(TagStep(tag, number, len(targets), result))
        if on_step is not None:
            on_step(steps[-1])
    return HistoryResult(folder, walk, tuple(steps), time.perf_counter() - started)


def _step(source: str, ref: str, tag: str | None, previous: Manifest | None, *,
          output_root: Path, options: ExtractOptions, cache_dir: Path | None, name: str | None,
          jobs: int | None, evidence: bool) -> RunResult:
    """One regeneration: a full extract where no walk built the folder yet, else an update."""
    if previous is None or previous.releases is None:
        return extract(source, ref=ref, output_root=output_root, options=options,
                       cache_dir=cache_dir, name=name, jobs=jobs, evidence=evidence, release=tag)
    return update(source, ref=ref, output_root=output_root, cache_dir=cache_dir, name=name,
                  jobs=jobs, release=tag)
