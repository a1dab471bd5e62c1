"""The entry-point graph of a set of files, kept in the result cache's database for the next update.

An update compares each kept raise's entry points before and after the change. Building the
graph before again costs as much as the graph after (every changed file's previous edges
decoded, every call resolved); what the comparison needs of it is small: a digest of each
raise's entry points, and of each node as a walk back reads it (`entry_stage.node_digests`).
That summary is kept under a key made of the files the graph was built from (path and blob,
sorted) and the sources that decide a graph (`graph_digest`), so it is the graph of exactly
those bytes, whichever run built it.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.store.cache import CacheTable
from crawler.store.parse_cache import reader_digest, sources_digest

GRAPH = "graph"  # the kind of entry


@dataclass(frozen=True)
class GraphSummary:
    """What an update needs of a graph it does not build again."""

    points: dict[str, str]  # a raise's key (`entry_stage.Keys.of`) -> digest of its entry points
    # each node -> a digest of all a chain reads of it (`entry_stage.node_digests`): a raise none
    # of whose callers within MAX_DEPTH calls changed its digest has the entry points it had
    nodes: dict[str, str] = field(default_factory=dict)


# The graph's module and the crawler modules it imports, through one another, relative to the
# package: listed, not followed on every run (see `parse_cache.ASSERTION_READER_SOURCES`);
# tests/callgraph/test_graph_cache.py checks the list against the imports.
GRAPH_SOURCES = (
    "callgraph/entry_points.py", "callgraph/registries.py", "parse/call_edges.py", "parse/call_guards.py",
    "parse/message/__init__.py", "parse/message/type_refs.py", "parse/python_ast.py",
    "parse/registrations.py",
    "records/__init__.py", "records/manifest.py", "records/record.py", "records/sites.py",
)


@functools.cache
def graph_digest() -> str:
    """sha256 of the sources that decide a graph: the reader's (`reader_digest`), the graph's
    module and what it imports (`GRAPH_SOURCES`), the entry-point stage and this module."""
    root = Path(__file__).resolve().parent.parent
    return sources_digest(root, [*(root / name for name in GRAPH_SOURCES),
                                 root / "pipeline" / "entry_stage.py", Path(__file__).resolve()],
                          seed=reader_digest())


def files_digest(files: Iterable[tuple[str, str]]) -> str:
    """sha256 of (path, blob) pairs, sorted: the graph's inputs."""
    digest = hashlib.sha256()
    for path, blob in sorted(set(files)):
        digest.update(f"{path}\0{blob}\n".encode())
    return digest.hexdigest()


class GraphCache(CacheTable):
    """Graph summaries by the files they were built from (`files_digest`)."""

    def key(self, files: str) -> str:
        return self._key(GRAPH, graph_digest(), files)

    def get(self, files: str) -> GraphSummary | None:
        entry = self._get(self.key(files))
        if entry is None:
            return None
        try:
            summary = _summary(entry)
        except (ValueError, KeyError, TypeError, AttributeError):
            self._broken_entry()
            return None
        self.hits += 1
        return summary

    def put(self, files: str, summary: GraphSummary) -> None:
        """Keep a summary and write it at once (one entry a run); never fails the run."""
        if self.database is None:
            return
        self._put(self.key(files), {"kind": GRAPH, "files": files, "points": summary.points,
                                    "nodes": summary.nodes})
        self.close()


def _summary(entry: dict[str, Any]) -> GraphSummary:
    points, nodes = entry["points"], entry["nodes"]
    if not all(isinstance(part, dict) for part in (points, nodes)):
        raise ValueError("not a graph summary")
    return GraphSummary(points, nodes)
