"""The entry-point stage of a run: each record's public callers, set after the merge.

A full run builds the call graph from every file's edges (read with the file and cached with
its outcome, `crawler.parse.call_edges`) and sets `entry_points` on every live record. An update
builds it the same way from the files read again and the kept files' cached outcomes, sets it on
the records it merges, and finds the kept records whose chains may have moved: those a changed
file's function reaches within `MAX_DEPTH` calls, in the graph before or after, and those whose
public spelling changed. Of those, only the records whose entry points really differ are loaded
and rewritten. The graph before is not built again: every run keeps a summary of its graph in
the cache (`crawler.callgraph.graph_cache`: whom each function calls, the public names, a digest of
each raise's entry points), found by the files it was built from. Without it, the graph before
is built from the previous version's edges (from the result cache); when those are not at hand
either, every kept record is compared.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from crawler.callgraph.entry_points import MAX_DEPTH, Graph
from crawler.callgraph.graph_cache import GraphCache, GraphSummary, files_digest
from crawler.parse.call_edges import SETTER, CallFacts, Function, graph_node
from crawler.parse.module_names import module_name
from crawler.parse.outcomes import FileOutcome
from crawler.records import REMOVED, EntryPoints, ErrorRecord, Manifest, RaiseSite

NO_ENTRY = EntryPoints()


def graph_of(facts: Iterable[CallFacts | None]) -> Graph:
    """The graph of these files' facts, built once: the class pass (`callers`) and this stage
    ask for the same files' graph in one run (the facts themselves are the key). Kept per
    thread: a run is one thread's, and runs beside it in other threads keep their own."""
    given = tuple(f for f in facts if f is not None)
    last = getattr(_LAST, "value", None)
    if last is not None and len(last[0]) == len(given) and all(a is b for a, b in zip(last[0], given)):
        return last[1]
    graph = Graph(given)
    _LAST.value = (given, graph)
    return graph


def forget_graph() -> None:
    """Let this thread's last graph go (its run's stage is done with it)."""
    _LAST.value = None


_LAST = threading.local()  # .value: (facts, graph) of this thread's last `graph_of`


def node_of(site: RaiseSite) -> str | None:
    """The graph's node of a raise: its enclosing `def`, nested ones too (`graph_node`); None
    at module level."""
    if site.function is None:
        return None
    return graph_node(module_name(site.path), site.qualname)


def node_in(graph: Graph, site: RaiseSite) -> str | None:
    """`node_of` in a graph: a raise in a property's setter is on the setter's node, which
    Python names as its getter (`C.x`), told apart by the raise's line."""
    node = node_of(site)
    setter = graph.functions.get(f"{node}{SETTER}") if node is not None else None
    if setter is not None and setter.line <= site.line <= setter.end_line:
        return setter.qualname
    return node


def entry_points_of(graph: Graph, site: RaiseSite) -> EntryPoints:
    node = node_in(graph, site)
    if node is None or node not in graph.functions:
        return NO_ENTRY
    return graph.entry_points(node, site.exception_qualname or site.exception, site.line)


def with_entry_points(records: Sequence[ErrorRecord], graph: Graph,
                      reuse: Reuse | None = None) -> list[ErrorRecord]:
    """Records with `entry_points` set; a removed record, or one whose value is the same, as it
    is (with `reuse`, one whose value is the one it had before and that no change reaches)."""
    out = []
    for record in records:
        if record.status == REMOVED or reuse is not None and reuse.holds(record):
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
    that built it kept (`crawler.callgraph.graph_cache`), else the previous version's edges of the
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


def calls_in_order(outcomes: Iterable[FileOutcome]) -> list[CallFacts | None]:
    """The files' call facts in the order of their paths, as a full run reads them: of two
    chains as short, the graph keeps the one it meets first."""
    return [o.calls for o in sorted(outcomes, key=_path)]


def _path(outcome: FileOutcome) -> str:
    return outcome.path


class Keys:
    """Each raise's key in a graph: its function, its exception with the classes the graph makes
    of it (what a handler on the chain is weighed against) and its line counted from its `def`,
    so a raise whose function only moved keeps its key. None: no entry points (not in the graph)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._exceptions: dict[str, str] = {}

    def of(self, site: RaiseSite) -> str | None:
        node = node_in(self.graph, site)
        function = self.graph.functions.get(node) if node is not None else None
        if function is None:
            return None
        exception = site.exception_qualname or site.exception
        if exception not in self._exceptions:
            graph = self.graph
            classes = [exception, *graph.mro(graph.definition(exception) or exception)]
            self._exceptions[exception] = _digest([(k, graph.definition(k)) for k in classes])
        return f"{node}\0{exception}\0{site.line - function.line}\0{self._exceptions[exception]}"


def digest_of(points: EntryPoints | None) -> str:
    return _digest(points)


def _digest(value: object) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=12).hexdigest()


def node_digests(graph: Graph) -> dict[str, str]:
    """Each node's digest of all the walk back from a raise reads of it (`Graph._reach`,
    `_weigh`, `_edges`, `_item`): its facts, its callers in their order with the call each
    edge comes from, the classes `self` is on those edges, its public name (and its own class's,
    where it is spelled under a class that inherits it), whether it is a class, and what the
    classes it catches are. Lines are counted from each function's `def`.

    Only the nodes a walk enters (`Graph.useful`) have one, over the callers it enters: a walk
    from any other finds nothing, whatever it is. A node that becomes one, or stops being one,
    is new or gone, so what it reaches is walked again."""
    functions, useful = graph.functions, graph.useful
    base = {q: f.line for q, f in functions.items()}
    dispatch: dict[str, list[tuple[str, int, tuple[str, ...]]]] = {}
    for (callee, caller, line), selves in graph.dispatch.items():
        if caller in useful:
            dispatch.setdefault(callee, []).append((caller, line - base.get(caller, 0),
                                                    tuple(sorted(selves))))
    found = {}
    for node in useful:
        function = functions.get(node)
        callers = zip(graph.callers.get(node, ()), graph.via.get(node, ()))
        edges = tuple((caller, at - base.get(caller, 0) if at else None, stop, index)
                      for (caller, at, stop), index in callers if caller in useful)
        found[node] = _digest((
            _facts(function, graph) if function is not None else None, node in graph.classes,
            graph.public.get(node), graph.own_public.get(node), edges,
            sorted(dispatch.get(node, ()))))
    return found


def _facts(function: Function, graph: Graph) -> tuple[object, ...]:
    line = function.line
    return (function.end_line - line, function.returns, function.decorators,
            function.is_property,
            [(c.kind, c.target, c.name, c.line - line, c.args) for c in function.calls],
            [(start - line, end - line, names, [graph.definition(n) for n in names])
             for start, end, names in function.catches])


def reached_from(called: dict[str, list[str]], seeds: Iterable[str]) -> set[str]:
    """The nodes that `seeds` reach within MAX_DEPTH calls: those whose walk back to their
    public callers can meet a seed."""
    depth = dict.fromkeys(seeds, 0)
    queue = deque(depth)
    while queue:
        node = queue.popleft()
        if depth[node] >= MAX_DEPTH:
            continue
        for callee in called.get(node, ()):
            if callee not in depth:
                depth[callee] = depth[node] + 1
                queue.append(callee)
    return set(depth)


def moved_since(before: dict[str, str], after: dict[str, str], called: dict[str, list[str]]
                ) -> set[str]:
    """The nodes whose walk back can read a node changed since `before` (`node_digests` of
    each graph; `called`: whom each node calls after): those a changed, new or gone node
    reaches within MAX_DEPTH calls. A removed caller changes its callees' digests."""
    changed = {q for q, digest in after.items() if before.get(q) != digest}
    return reached_from(called, changed | (before.keys() - after.keys()))


@dataclass
class Reuse:
    """What an update takes over from the graph before: the digest of each raise's entry
    points (by `Keys.of`) where no node it reads changed (`moved`: the nodes a changed one
    reaches; every node when the graph before is not summarized)."""

    keys: Keys
    known: dict[str, str]
    moved: Collection[str]

    def digest(self, site: RaiseSite) -> str | None:
        """The digest the raise's entry points had, where they cannot have changed."""
        if node_in(self.keys.graph, site) in self.moved:
            return None
        key = self.keys.of(site)
        return self.known.get(key) if key is not None else None

    def holds(self, record: ErrorRecord) -> bool:
        """Whether a record's entry points are those it had and no change reaches them."""
        known = self.digest(record.site)
        return known is not None and known == digest_of(record.entry_points)


def moved_nodes(before: Graph, after: Graph, changed: Collection[str]) -> set[str]:
    """Without the nodes' digests before: the functions whose chains may differ, reached from a
    changed module's function within MAX_DEPTH calls in either graph, or under a public name
    that changed."""
    seeds = {q for g in (before, after) for q, module in g.module_of.items()
             if q.rpartition(".")[0] in changed or module in changed}
    seeds |= {q for q in before.public.keys() | after.public.keys()
              if before.public.get(q) != after.public.get(q)}
    return reached_from(before.callees, seeds) | reached_from(after.callees, seeds)


def kept_points(reuse: Reuse, graph_before: Graph | None, after: Graph,
                kept: Iterable[FileOutcome], known: bool) -> tuple[dict[str, str], set[str]]:
    """Each kept raise's entry points after (a digest, by `Keys.of`), and the kept files
    holding one whose entry points differ from before (all kept files with a raise when the
    graph before is not known). A raise no changed node reaches has the digest it had."""
    points: dict[str, str] = {}
    paths: set[str] = set()
    for outcome in kept:
        for site in (*outcome.sites, *outcome.pending):
            key = reuse.keys.of(site)
            if key is None:
                continue
            if known:
                old = reuse.known.get(key)
                new = reuse.digest(site) or digest_of(entry_points_of(after, site))
                changed = new != old
            else:
                new = digest_of(entry_points_of(after, site))
                changed = graph_before is None or (node_in(after, site) in reuse.moved and entry_points_of(
                    graph_before, site) != entry_points_of(after, site))
            points[key] = new
            if changed:
                paths.add(outcome.path)
    return points, paths


def _keep(before: Before | None, after: Graph, read: Sequence[FileOutcome], reuse: Reuse,
          points: dict[str, str], summary: GraphSummary | None = None) -> None:
    """Keep the graph after in the cache for the next update, with the digests of every raise."""
    if before is None or before.cache_root is None:
        return
    for outcome in read:
        for site in (*outcome.sites, *outcome.pending):
            key = reuse.keys.of(site)
            if key is not None and key not in points:
                points[key] = reuse.digest(site) or digest_of(entry_points_of(after, site))
    files = [(o.path, o.blob) for o in read if o.failure is None]
    summary = replace(summary, points=points) if summary is not None else GraphSummary(
        points, node_digests(after))
    GraphCache(before.cache_root).put(files_digest(files), summary)


def refresh(outcomes: Sequence[FileOutcome], context: Sequence[FileOutcome],
            before: Before | None, full: bool, previous: Manifest | None,
            records: Sequence[ErrorRecord], others: Sequence[ErrorRecord],
            load: Callable[[set[str]], Sequence[ErrorRecord]]
            ) -> tuple[list[ErrorRecord], tuple[ErrorRecord, ...]]:
    """The merged records with their entry points, and the records outside the merge whose
    entry points changed (with `others`, the evidence stage's, brought up to date first)."""
    try:
        return _refresh(outcomes, context, before, full, previous, records, others, load)
    finally:
        forget_graph()


def _refresh(outcomes: Sequence[FileOutcome], context: Sequence[FileOutcome],
             before: Before | None, full: bool, previous: Manifest | None,
             records: Sequence[ErrorRecord], others: Sequence[ErrorRecord],
             load: Callable[[set[str]], Sequence[ErrorRecord]]
             ) -> tuple[list[ErrorRecord], tuple[ErrorRecord, ...]]:
    if not full and not outcomes:
        return list(records), tuple(others)  # nothing read again: no chain can have moved
    # In the files' order, as a full run reads them: of two chains as short, the graph keeps
    # the one it meets first, so the order of callers must not depend on what was read again.
    after = graph_of(calls_in_order([*outcomes, *context]))
    if full or previous is None:
        nothing = Reuse(Keys(after), {}, ())
        records = with_entry_points(records, after)
        _keep(before, after, [*outcomes, *context], nothing, {})
        return records, tuple(others)
    nodes = node_digests(after)
    summary = GraphSummary({}, nodes)  # what the next update reads of this graph
    was = before.summary if before is not None else None
    reuse = Reuse(Keys(after), {}, set(nodes))  # nothing known: every node moved
    graph_before = None
    if was is not None and was.nodes:
        reuse = Reuse(reuse.keys, was.points, moved_since(was.nodes, nodes, after.callees))
    elif before is not None and before.calls is not None:
        graph_before = graph_of(facts for _, facts in sorted(
            [*before.calls, *((o.path, o.calls) for o in context)], key=lambda pair: pair[0]))
        modules = {module_name(o.path) for o in outcomes} | {
            module_name(e.path) for e in previous.files} - {module_name(o.path) for o in context}
        reuse = Reuse(reuse.keys, {}, moved_nodes(graph_before, after, modules))
    records = with_entry_points(records, after, reuse)
    points, paths = kept_points(reuse, graph_before, after, context, bool(reuse.known))
    _keep(before, after, outcomes, reuse, points, summary)
    inside = {r.id for r in records}
    ids = {i for entry in previous.files if entry.path in paths for i in entry.records} - inside
    by_id = {r.id: r for r in others}
    for record in load(ids - by_id.keys()):
        by_id[record.id] = record
    fresh = {r.id: r for r in with_entry_points(list(by_id.values()), after, reuse)}
    kept_others = {r.id for r in others}
    return records, tuple(fresh[i] for i in by_id if i in kept_others or fresh[i] is not by_id[i])
