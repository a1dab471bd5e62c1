"""Check the entry-point pass against a real run: a library's own tests under a tracer.

    python scripts/trace_entry_points.py trace LIBROOT OUT.json -- python -m pytest tests
    (TRACE_ONLY=json/,argparse.py: only those files under LIBROOT are the library)
    python scripts/trace_entry_points.py compare LIBROOT CATALOGUE OBSERVED.json [--sample N]

`trace` runs the command with this file as a `sitecustomize` hook (`TRACE_LIBROOT` names the
library's source root): every exception raised in a library file is written with the file and
line of its raise, the outermost library frame of the contiguous library frames around it
(as `module.qualname`), and whether the exception reached that frame (False: the library
caught it itself first). `compare` keeps the raises at the catalogue's sites, and says how many
observed (outermost frame, site) pairs the static pass finds: its graph reaches the raise from
that frame within MAX_DEPTH calls (statically, or across one `stops` call), per kind of miss;
then, as issue 49 counts what a user sees, the public pairs each record lists among its entry
points and the records whose first entry point is a top-level export; then it prints a sample of
static pairs no test observed, for reading by hand.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.callgraph.entry_points import Graph
    from crawler.parse.call_edges import CallFacts


def _hook() -> None:
    """Installed in the traced interpreter: record raises in library files."""
    import atexit
    import threading

    root = os.path.realpath(os.environ["TRACE_LIBROOT"]) + os.sep
    out_path = os.environ["TRACE_OUT"]
    seen: dict[tuple[str, int, str, bool], int] = {}
    reached: dict[int, set[int]] = {}  # id(exception) -> ids of frames it passed through
    pending: list[tuple[object, str, int, str, object]] = []

    only = tuple(root + p for p in os.environ.get("TRACE_ONLY", "").split(",") if p) or (root,)

    def inside(frame: object) -> bool:
        return frame.f_code.co_filename.startswith(only)  # type: ignore[attr-defined]

    lost = [0, 0]  # events the tracer failed on; times Python unset it and it was set again

    # Python unsets a trace function that raises, for the rest of the run, and says nothing: a
    # test that recursed to the limit made the call of the tracer itself fail (before any line of
    # it runs), and every raise after it went unrecorded. An event whose reading fails is counted
    # and the tracing goes on; an unset tracer is set again at the next audit event (an import,
    # an open, a compile: many in every test), and the times it was are counted.
    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        try:
            record(frame, event, arg)
        except Exception:  # noqa: BLE001 - never let the tracer be unset
            lost[0] += 1
        return local

    def record(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "exception":
            exc = arg[1]
            passed = reached.setdefault(id(exc), set())
            if not passed:  # first event: the raise's own frame
                outer = frame
                while outer.f_back is not None and inside(outer.f_back):
                    outer = outer.f_back
                code = outer.f_code
                rel = os.path.relpath(code.co_filename, root)
                module = rel[:-3].replace(os.sep, ".").removesuffix(".__init__")
                name = f"{module}.{code.co_qualname.split('.<locals>')[0]}"
                pending.append((exc, os.path.relpath(frame.f_code.co_filename, root),
                                frame.f_lineno, name, outer))
            passed.add(id(frame))

    def global_trace(frame, event, arg):  # type: ignore[no-untyped-def]
        try:
            return local if inside(frame) else None
        except Exception:  # noqa: BLE001 - as `local`
            lost[0] += 1
            return None

    setting = [False]

    def set_again(event: str, args: object) -> None:
        if setting[0] or event == "sys.settrace" or sys.gettrace() is not None:
            return
        setting[0] = True  # settrace is an audit event too
        try:
            lost[1] += 1
            sys.settrace(global_trace)
        finally:
            setting[0] = False

    def settle() -> None:
        for exc, path, line, name, outer in pending:
            key = (path, line, name, id(outer) in reached.get(id(exc), ()))
            seen[key] = seen.get(key, 0) + 1
        pending.clear()

    def write() -> None:
        settle()
        rows = [{"path": p, "line": ln, "outer": n, "reached": r, "count": c}
                for (p, ln, n, r), c in seen.items()]
        with open(out_path, "w", encoding="utf-8") as handle:
            json.dump(rows, handle)
        if any(lost):
            print(f"trace_entry_points: {lost[0]} events the tracer failed on, {lost[1]} times "
                  "Python unset it and it was set again (raises in between not recorded)",
                  file=sys.stderr)

    sys.settrace(global_trace)
    threading.settrace(global_trace)
    sys.addaudithook(set_again)
    atexit.register(write)


def trace(libroot: str, out: str, command: list[str]) -> int:
    hook = Path(out).with_suffix(".hook")
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import trace_entry_points\ntrace_entry_points._hook()\n", encoding="utf-8")
    env = {**os.environ, "TRACE_LIBROOT": libroot, "TRACE_OUT": out,
           "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(command, env=env)
    return process.wait()


def compare(libroot: str, catalogue: str, observed_file: str, sample: int) -> None:
    import yaml

    from crawler.callgraph.entry_points import Graph
    from crawler.parse.call_edges import read_calls
    from crawler.parse.module_names import module_name
    from crawler.pipeline.entry_stage import node_of
    from crawler.pipeline.selection import is_test_path
    from crawler.records import RaiseSite, Template

    root = Path(libroot)
    facts = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if is_test_path(rel):  # the extract's own rule: its graph leaves test files out
            continue
        read = read_calls(path.read_bytes(), module_name(rel), path.name == "__init__.py")
        if read is not None:
            facts.append(read)
    graph = Graph(facts)
    records = []
    listed: dict[tuple[str, int], list[dict[str, object]]] = {}  # each site's entry points
    for file in sorted(Path(catalogue).rglob("errors/*.yaml")):
        ex = yaml.safe_load(file.read_text(encoding="utf-8"))["extracted"]
        site = RaiseSite(ex["path"], ex["line"], ex["end_line"], 0, ex["class"], ex["function"],
                         ex["qualname"], ex["exception"], ex["exception_qualname"],
                         Template("literal", "", (), ""), None, None, "", 0)
        records.append(site)
        listed[site.path, site.line] = list(ex.get("entry_points") or ())
    at = {(s.path, line): s for s in records for line in range(s.line, s.end_line + 1)}
    observed = json.loads(Path(observed_file).read_text(encoding="utf-8"))
    pairs: dict[tuple[str, str, int], bool] = {}
    for row in observed:
        hit = at.get((row["path"], row["line"]))
        if hit is not None:
            key = (row["outer"].removeprefix("src."), hit.path, hit.line)
            pairs[key] = pairs.get(key, False) or row["reached"]
    by_site = {(s.path, s.line): s for s in records}
    found = {"static": 0, "stops": 0, "missed": 0}
    misses: list[str] = []
    for reached_user in (True, False):
        chosen = [k for k, v in pairs.items() if v is reached_user]
        counts = {"static": 0, "stops": 0, "missed": 0}
        alone = {outer: _graph_for(facts, outer) for outer, _, _ in chosen}
        for outer, where, line in sorted(chosen):
            site = by_site[(where, line)]
            how = _reaches(alone[outer], outer, node_of(site), line)
            counts[how] += 1
            if how == "missed" and reached_user:
                misses.append(f"{outer} -> {node_of(site)} ({where}:{line})")
        label = "reached the outermost library frame" if reached_user else "caught by the library first"
        total = len(chosen)
        print(f"{label}: {total} pairs; found statically {counts['static']}, across one stop "
              f"{counts['stops']}, missed {counts['missed']}; recall "
              f"{(counts['static'] + counts['stops']) / total:.1%}" if total else f"{label}: 0")
        if reached_user:
            found = counts
    for miss in misses:
        print("  missed:", miss)
    _print_listed(graph, pairs, listed)
    observed_keys = {(o, p, ln) for o, p, ln in pairs}
    unobserved = []
    for site in records:
        node = node_of(site)
        if node is None or node not in graph.functions:
            continue
        for entry in graph.entry_points(node, site.exception_qualname or site.exception, site.line).items:
            if (entry.chain[0], site.path, site.line) not in observed_keys:
                unobserved.append((entry.name, entry.chain, entry.stops, entry.caught_by, site.path,
                                   site.line))
    random.Random(36).shuffle(unobserved)
    print(f"static pairs not observed: {len(unobserved)}; a sample of {sample}:")
    for item in unobserved[:sample]:
        print("  ", json.dumps(item))
    del found


_CONSTRUCTORS = ("__init__", "__new__", "__post_init__")


def _print_listed(graph: Graph, pairs: dict[tuple[str, str, int], bool],
                  listed: dict[tuple[str, int], list[dict[str, object]]]) -> None:
    """What a user of the catalogue sees, as issue 49 counts it: of the observed pairs whose
    outermost frame is a public function (a public class, for its constructor) and whose
    exception reached it, how many the record lists among its entry points (by the chain's first
    node); and of the records with entry points, how many list a top-level export first (a name
    `package.Name...` whose `package.Name` is no module: what the package's `__init__` gives)."""
    public = [(outer, path, line) for (outer, path, line), reached in sorted(pairs.items())
              if reached and _public_node(graph, outer)]
    hit = [key for key in public if _node_of_call(graph, key[0]) in
           {str(entry["chain"][0]) for entry in listed.get((key[1], key[2]), ())}]  # type: ignore[index]
    share = f"{len(hit) / len(public):.1%}" if public else "-"
    print(f"public pairs listed on their record: {len(hit)} of {len(public)} ({share})")
    for outer, path, line in sorted(set(public) - set(hit)):
        print(f"  not listed: {outer} -> {path}:{line}")
    with_entries = [entries for entries in listed.values() if entries]
    first_top = sum(_top_level_export(graph, str(entries[0]["name"])) for entries in with_entries)
    share = f"{first_top / len(with_entries):.1%}" if with_entries else "-"
    print(f"records with entry points that name a top-level export first: {first_top} of "
          f"{len(with_entries)} ({share})")


def _node_of_call(graph: Graph, outer: str) -> str:
    """The graph's node a traced outermost frame stands for: a constructor is its class."""
    owner, _, method = outer.rpartition(".")
    return owner if method in _CONSTRUCTORS and owner in graph.public else outer


def _public_node(graph: Graph, outer: str) -> bool:
    return _node_of_call(graph, outer) in graph.public


def _top_level_export(graph: Graph, name: str) -> bool:
    parts = name.split(".")
    return len(parts) >= 2 and ".".join(parts[:2]) not in graph.modules


def _reaches(graph: Graph, outer: str, node: str | None, line: int) -> str:
    """'static', 'stops' or 'missed': whether `graph` (`outer`'s, `_graph_for`) reaches `node`
    from `outer` (the raise at `line`: a call whose constants make its guard false does not)."""
    if node is None:
        return "missed"
    if outer == node:
        return "static"
    for entry in graph.entry_points(node, "", line).items:
        return "static" if entry.stops is None else "stops"
    return "missed"


def _graph_for(facts: Sequence[CallFacts], outer: str) -> Graph:
    """A graph of the same files whose one public name is `outer`, and whose walks enter what
    `outer` reaches: made apart, since a graph keeps its walks and the callers it enters for
    its own public names."""
    from crawler.callgraph.entry_points import Graph, reached_by_public

    graph = Graph(facts)
    graph.public = {outer: outer}
    graph.useful = reached_by_public([outer], graph.callees)
    return graph


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["trace"]:
        split = args.index("--")
        sys.exit(trace(args[1], args[2], args[split + 1:]))
    if args[:1] == ["compare"]:
        count = int(args[args.index("--sample") + 1]) if "--sample" in args else 30
        compare(args[1], args[2], args[3], count)
        sys.exit(0)
    sys.exit(__doc__)
