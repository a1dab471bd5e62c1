"""The entry-point stage of a run: each record's public callers, set after the merge.

A full run builds the call graph from every file's edges (read with the file and cached with
its outcome, `crawler.parse.call_edges`) and sets `entry_points` on every live record. An update
builds it the same way from the files read again and the kept files' cached outcomes, sets it on
the records it merges, and finds the kept records whose chains may have moved: those a changed
file's function reaches within `MAX_DEPTH` calls, in the graph before or after, and those whose
public spelling changed. Of those, only the records whose entry points really differ are loaded
and rewritten. The graph before is not built again: every run keeps a summary of its graph in
the cache (`crawler.store.graph_cache`: whom each function calls, the public names, a digest of
each raise's entry points), found by the files it was built from. Without it, the graph before
is built from the previous version's edges (from the result cache); when those are not at hand
either, every kept record is compared.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from crawler.catalogue.entry_points import MAX_DEPTH, Graph
from crawler.parse.call_edges import CallFacts
from crawler.parse.call_scopes import graph_node
from crawler.parse.names import module_name
from crawler.parse.workers import FileOutcome
from crawler.records import REMOVED, EntryPoints, ErrorRecord, Manifest, RaiseSite
from crawler.store.graph_cache import GraphCache, GraphSummary, files_digest

NO_ENTRY = EntryPoints()


def graph_of(facts: Iterable[CallFacts | None]) -> Graph:
    return Graph(f for f in facts if f is not None)


def node_of(site: RaiseSite) -> str | None:
    """The graph's node of a raise: its enclosing `def`, nested ones too (`graph_node`); None
    at module level."""
    if site.function is None:
        return None
    return graph_node(module_name(site.path), site.qualname)


def entry_points_of(graph: Graph, site: RaiseSite) -> EntryPoints:
    node = node_of(site)
    if node is None or node not in graph.functions:
        return NO_ENTRY
    return graph.entry_points(node, site.exception_qualname or site.exception, site.line)


def with_entry_points(records: Sequence[ErrorRecord], graph: Graph) -> list[ErrorRecord]:
    """Records with `entry_points` set; a removed record, or one whose value is the same, as it is."""
    out = []
    for record in records:
        if record.status == REMOVED:
            out.append(record)
            continue
        found = entry_points_of(graph, record.site)
        out.append(record if found == record.entry_points else replace(record, entry_points=found))
    return out


def previous_calls(get: Callable[[str, str], FileOutcome | None], previous: Manifest,
                   unchanged: Collection[str]) -> tuple[tuple[str, CallFacts], ...] | None:
    """The previous version's edges of every file not kept, by path, from the result cache
    (`get`); None when one is missing. A cached outcome without edges is one `ast` could not read (a
    syntax newer than this Python's, which LibCST reads): it gave the graph no edges then
    either, so it is no reason to compare every kept record."""
    found = []
    for entry in previous.files:
        if entry.path in unchanged:
            continue
        outcome = get(entry.path, entry.blob)
        if outcome is None:
            return None
        if outcome.calls is not None:
            found.append((entry.path, outcome.calls))
    return tuple(found)


@dataclass(frozen=True)
class Before:
    """An update's graph before (`crawler.pipeline.collecting` fills it): the summary the run
    that built it kept (`crawler.store.graph_cache`), else the previous version's edges of the
    files read again (None: not at hand); and the cache folder where the graph after is kept
    for the next update (None: nowhere)."""

    summary: GraphSummary | None = None
    calls: tuple[tuple[str, CallFacts], ...] | None = None  # path, edges
    cache_root: Path | None = None


def before_of(root: Path | None, previous: Manifest,
              get: Callable[[str, str], FileOutcome | None], unchanged: Collection[str]) -> Before:
    """The graph before an update: its summary when a run kept it, else the edges to build it."""
    summary = None
    if root is not None:
        graphs = GraphCache(root)
        summary = graphs.get(files_digest((e.path, e.blob) for e in previous.files))
        graphs.close()
    calls = previous_calls(get, previous, unchanged) if summary is None else None
    return Before(summary, calls, root)


def _path(outcome: FileOutcome) -> str:
    return outcome.path


def point_key(site: RaiseSite) -> str | None:
    """What a raise's entry points depend on besides the graph (`Graph.entry_points`' key)."""
    node = node_of(site)
    if node is None:
        return None
    return f"{node}\0{site.exception_qualname or site.exception}\0{site.line}"


def digest_of(points: EntryPoints) -> str:
    return hashlib.blake2b(repr(points).encode(), digest_size=12).hexdigest()


def summary_of(graph: Graph, points: dict[str, str]) -> GraphSummary:
    return GraphSummary({q: _module_of(graph, q) for q in graph.functions}, {
        caller: tuple(sorted(callees)) for caller, callees in _callees(graph).items()},
        dict(graph.public), points)


def moved_nodes(before: GraphSummary, after: GraphSummary, changed: Collection[str]) -> set[str]:
    """The functions whose chains may differ: reached from a changed module's function within
    MAX_DEPTH calls in either graph, or under a public name that changed."""
    seeds = {q for g in (before, after) for q, module in g.modules.items()
             if q.rpartition(".")[0] in changed or module in changed}
    seeds |= {q for q in before.public.keys() | after.public.keys()
              if before.public.get(q) != after.public.get(q)}
    reached: set[str] = set()
    for graph in (before, after):
        depth = {seed: 0 for seed in seeds}
        queue = deque(seeds)
        while queue:
            node = queue.popleft()
            reached.add(node)
            if depth[node] >= MAX_DEPTH:
                continue
            for callee in graph.called.get(node, ()):
                if callee not in depth:
                    depth[callee] = depth[node] + 1
                    queue.append(callee)
    return reached


def _module_of(graph: Graph, qualname: str) -> str:
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:cut]) in graph.modules:
            return ".".join(parts[:cut])
    return ""


def _callees(graph: Graph) -> dict[str, set[str]]:
    called: dict[str, set[str]] = {}
    for callee, edges in graph.callers.items():
        for caller, _, _ in edges:
            called.setdefault(caller, set()).add(callee)
    return called


def kept_points(before: Before | None, graph_before: Graph | None, after: Graph,
                kept: Iterable[FileOutcome], moved: Collection[str]
                ) -> tuple[dict[str, str], set[str]]:
    """Each kept raise's entry points after (a digest, by `point_key`), and the kept files
    holding one whose entry points differ from before (all kept files with a raise when the
    graph before is not known). A raise no changed function reaches has the digest it had."""
    known = before.summary.points if before is not None and before.summary is not None else None
    points: dict[str, str] = {}
    paths: set[str] = set()
    for outcome in kept:
        for site in (*outcome.sites, *outcome.pending):
            key = point_key(site)
            if key is None:
                continue
            reached = node_of(site) in moved
            if known is not None:
                old = known.get(key)
                new = old if old is not None and not reached else \
                    digest_of(entry_points_of(after, site))
                changed = new != old
            else:
                new = digest_of(entry_points_of(after, site))
                changed = graph_before is None or (reached and entry_points_of(
                    graph_before, site) != entry_points_of(after, site))
            points[key] = new
            if changed:
                paths.add(outcome.path)
    return points, paths


def _keep(before: Before | None, after: Graph, read: Sequence[FileOutcome],
          points: dict[str, str], summary: GraphSummary | None = None) -> None:
    """Keep the graph after in the cache for the next update, with the digests of every raise."""
    if before is None or before.cache_root is None:
        return
    for outcome in read:
        for site in (*outcome.sites, *outcome.pending):
            key = point_key(site)
            if key is not None and key not in points:
                points[key] = digest_of(entry_points_of(after, site))
    files = [(o.path, o.blob) for o in read if o.failure is None]
    summary = replace(summary, points=points) if summary is not None else summary_of(after, points)
    GraphCache(before.cache_root).put(files_digest(files), summary)


def refresh(outcomes: Sequence[FileOutcome], context: Sequence[FileOutcome],
            before: Before | None, full: bool, previous: Manifest | None,
            records: Sequence[ErrorRecord], others: Sequence[ErrorRecord],
            load: Callable[[set[str]], Sequence[ErrorRecord]]
            ) -> tuple[list[ErrorRecord], tuple[ErrorRecord, ...]]:
    """The merged records with their entry points, and the records outside the merge whose
    entry points changed (with `others`, the evidence stage's, brought up to date first)."""
    if not full and not outcomes:
        return list(records), tuple(others)  # nothing read again: no chain can have moved
    # In the files' order, as a full run reads them: of two chains as short, the graph keeps
    # the one it meets first, so the order of callers must not depend on what was read again.
    after = graph_of(o.calls for o in sorted((*outcomes, *context), key=_path))
    records = with_entry_points(records, after)
    if full or previous is None:
        _keep(before, after, [*outcomes, *context], {})
        return records, tuple(others)
    changed = {module_name(o.path) for o in outcomes} | {
        module_name(e.path) for e in previous.files} - {module_name(o.path) for o in context}
    summary = summary_of(after, {})
    graph_before = None
    if before is not None and before.summary is None and before.calls is not None:
        graph_before = graph_of(facts for _, facts in sorted(
            [*before.calls, *((o.path, o.calls) for o in context)], key=lambda pair: pair[0]))
    was = before.summary if before is not None and before.summary is not None else \
        summary_of(graph_before, {}) if graph_before is not None else None
    moved = moved_nodes(was, summary, changed) if was is not None else set()
    points, paths = kept_points(before, graph_before, after, context, moved)
    _keep(before, after, outcomes, points, summary)
    inside = {r.id for r in records}
    ids = {i for entry in previous.files if entry.path in paths for i in entry.records} - inside
    by_id = {r.id: r for r in others}
    for record in load(ids - by_id.keys()):
        by_id[record.id] = record
    fresh = {r.id: r for r in with_entry_points(list(by_id.values()), after)}
    kept_others = {r.id for r in others}
    return records, tuple(fresh[i] for i in by_id if i in kept_others or fresh[i] is not by_id[i])
