"""A large repository shared out over several tasks, and its shares put back together.

How it is split: a repository with more files to read than its `split_files` (sources, plus test
files when evidence is read) is cut into `ceil(files / split_files)` shares of its sources and as
many of its tests, each share about the same number of bytes (parsing time goes with the bytes:
files are dealt largest first to the lightest share). A share keeps its files in file order; the
driver puts the outcomes back in the repository's file order, so the merged `Collected` is the
one `pipeline.collect` gives, and the output is byte-identical to a run in one task.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from crawler.batch._worker import SOURCES, TESTS, Listing, RepoTask, ShardOutcome, ShardTask
from crawler.pipeline import Collected
from crawler.pipeline.evidence_stage import evidence_digest
from crawler.records import SourceFile


def share_out(files: tuple[SourceFile, ...], shares: int) -> list[tuple[SourceFile, ...]]:
    """`files` cut into at most `shares` groups of about equal bytes, each in file order."""
    shares = max(1, min(shares, len(files)))
    loads = [(0, part) for part in range(shares)]  # (bytes so far, share)
    members: list[list[int]] = [[] for _ in range(shares)]
    for index in sorted(range(len(files)), key=lambda i: (-max(files[i].size, 0), i)):
        size, part = heapq.heappop(loads)
        members[part].append(index)
        heapq.heappush(loads, (size + max(files[index].size, 1), part))
    return [tuple(files[i] for i in sorted(group)) for group in members if group]


def shard_tasks(task: RepoTask, listing: Listing) -> list[ShardTask]:
    """The tasks that visit a listed repository's files between them."""
    entry = task.entry
    assert entry.split_files is not None  # only a repository with a split size is listed
    count = math.ceil((len(listing.sources) + len(listing.tests)) / entry.split_files)
    tasks = []
    for kind, files in ((SOURCES, listing.sources), (TESTS, listing.tests)):
        for part, share in enumerate(share_out(files, count) if files else []):
            tasks.append(ShardTask(entry, task.cache_dir, listing.pin.sha, kind, part, share,
                                   key=f"{task.key}-{kind}-{part}"))
    return tasks


@dataclass
class Assembly:
    """A split repository's shares as they come back; whole once every share is in."""

    listing: Listing
    tasks: tuple[ShardTask, ...]
    evidence: bool
    seconds: float  # the listing task's
    done: dict[str, ShardOutcome]  # by shard key

    def add(self, task: ShardTask, outcome: ShardOutcome) -> None:
        self.done[task.key] = outcome

    @property
    def complete(self) -> bool:
        return len(self.done) == len(self.tasks)

    def error(self) -> str | None:
        """The first failed share's reason, named by its share, or None."""
        for task in self.tasks:
            outcome = self.done.get(task.key)
            if outcome is not None and outcome.error is not None:
                return f"{task.kind} share {task.part + 1} of {self.count(task.kind)}: {outcome.error}"
        return None

    def count(self, kind: str) -> int:
        return sum(1 for task in self.tasks if task.kind == kind)

    def collected(self) -> Collected:
        """The repository as one `pipeline.collect` would have collected it."""
        position = {f.path: i for i, f in enumerate(self.listing.sources)}
        outcomes = sorted((o for t in self.tasks if t.kind == SOURCES
                           for o in self.done[t.key].outcomes), key=lambda o: position[o.path])
        tests = sorted((t for t in self.tasks if t.kind == TESTS), key=lambda t: t.part)
        order = {f.path: i for i, f in enumerate(self.listing.tests)}
        by_file = tuple(sorted((a for t in tests for a in self.done[t.key].assertions),
                               key=lambda a: order.get(a.path, len(order))))
        crashed = tuple(sorted((c for t in tests for c in self.done[t.key].crashed),
                               key=lambda c: order.get(c.path, len(order))))
        seconds = self.seconds + sum(o.seconds for o in self.done.values())
        return Collected(self.listing.pin, self.tasks[0].entry.options, self.listing.total,
                         self.listing.skipped, tuple(outcomes), seconds,
                         assertions=by_file, tests_read=self.evidence,
                         tests_crashed=crashed,
                         evidence_digest=evidence_digest(by_file) if self.evidence else None,
                         notes=self.listing.notes)
