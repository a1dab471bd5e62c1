"""The entry-point stage of a run: each record's public callers, set after the merge.

A full run builds the call graph from every file's edges (read with the file and cached with
its outcome, `crawler.parse.call_edges`) and sets `entry_points` on every live record. An update
builds it the same way from the files read again and the kept files' cached outcomes, sets it on
the records it merges, and finds the kept records whose chains may have moved: those a changed
file's function reaches within `MAX_DEPTH` calls, in the graph before or after (the previous
version's edges come from the result cache), and those whose public spelling changed. Of those,
only the records whose entry points really differ are loaded and rewritten. When the previous
edges are not at hand, every kept record is compared.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace

from crawler.catalogue.entry_points import MAX_DEPTH, Graph
from crawler.parse.call_edges import CallFacts
from crawler.parse.call_scopes import graph_node
from crawler.parse.names import module_name
from crawler.parse.workers import FileOutcome
from crawler.records import REMOVED, EntryPoints, ErrorRecord, Manifest, RaiseSite

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
                   unchanged: Collection[str]) -> tuple[CallFacts, ...] | None:
    """The previous version's edges of every file not kept, from the result cache (`get`);
    None when one is missing."""
    found = []
    for entry in previous.files:
        if entry.path in unchanged:
            continue
        outcome = get(entry.path, entry.blob)
        if outcome is None or (outcome.calls is None and outcome.failure is None):
            return None
        if outcome.calls is not None:
            found.append(outcome.calls)
    return tuple(found)


def moved_nodes(before: Graph, after: Graph, changed: Collection[str]) -> set[str]:
    """The functions whose chains may differ: reached from a changed module's function within
    MAX_DEPTH calls in either graph, or under a public name that changed."""
    seeds = {q for g in (before, after) for q in g.functions
             if q.rpartition(".")[0] in changed or _module_of(g, q) in changed}
    seeds |= {q for q in before.public.keys() | after.public.keys()
              if before.public.get(q) != after.public.get(q)}
    reached: set[str] = set()
    for graph in (before, after):
        called = _callees(graph)
        depth = {seed: 0 for seed in seeds}
        queue = deque(seeds)
        while queue:
            node = queue.popleft()
            reached.add(node)
            if depth[node] >= MAX_DEPTH:
                continue
            for callee in called.get(node, ()):
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


def kept_paths_to_reread(before: Graph | None, after: Graph, kept: Iterable[FileOutcome],
                         changed: Collection[str]) -> set[str]:
    """The kept files holding a raise whose entry points differ between the graphs (all kept
    files with a raise when the graph before is not known)."""
    kept = list(kept)
    if before is None:
        return {o.path for o in kept if o.sites or o.pending}
    moved = moved_nodes(before, after, changed)
    paths = set()
    for outcome in kept:
        for site in (*outcome.sites, *outcome.pending):
            node = node_of(site)
            if node in moved and entry_points_of(before, site) != entry_points_of(after, site):
                paths.add(outcome.path)
                break
    return paths


def refresh(outcomes: Sequence[FileOutcome], context: Sequence[FileOutcome],
            before: tuple[CallFacts, ...] | None, full: bool, previous: Manifest | None,
            records: Sequence[ErrorRecord], others: Sequence[ErrorRecord],
            load: Callable[[set[str]], Sequence[ErrorRecord]]
            ) -> tuple[list[ErrorRecord], tuple[ErrorRecord, ...]]:
    """The merged records with their entry points, and the records outside the merge whose
    entry points changed (with `others`, the evidence stage's, brought up to date first)."""
    if not full and not outcomes:
        return list(records), tuple(others)  # nothing read again: no chain can have moved
    after = graph_of(o.calls for o in (*outcomes, *context))
    records = with_entry_points(records, after)
    if full or previous is None:
        return records, tuple(others)
    changed = {module_name(o.path) for o in outcomes} | {
        module_name(e.path) for e in previous.files} - {module_name(o.path) for o in context}
    graph_before = graph_of([*before, *(o.calls for o in context)]) if before is not None else None
    paths = kept_paths_to_reread(graph_before, after, context, changed)
    inside = {r.id for r in records}
    ids = {i for entry in previous.files if entry.path in paths for i in entry.records} - inside
    by_id = {r.id: r for r in others}
    for record in load(ids - by_id.keys()):
        by_id[record.id] = record
    fresh = {r.id: r for r in with_entry_points(list(by_id.values()), after)}
    kept_others = {r.id for r in others}
    return records, tuple(fresh[i] for i in by_id if i in kept_others or fresh[i] is not by_id[i])
