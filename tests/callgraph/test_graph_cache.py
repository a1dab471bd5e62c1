"""An update finds the graph before in the cache, kept by the run that built it, and stays exact.

Each run keeps a summary of its entry-point graph in the cache folder (`crawler.callgraph.graph_cache`)
under the files it was built from; the next update reads it instead of building the graph before
again. Whether the summary is there or not (then the graph before is built from the previous
edges), the records after an update carry the entry points a fresh extract at the same commit
gives. Run as users type it: the installed `crawler`, in a child process.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from crawler import pipeline
from crawler.callgraph.entry_points import Graph
from crawler.callgraph.graph_cache import GRAPH_SOURCES, GraphCache, GraphSummary, files_digest
from crawler.parse.outcomes import FileOutcome
from crawler.pipeline.entry_stage import previous_calls
from crawler.records import Counts, ExtractOptions, FileEntry, Manifest, Pin, RaiseCounts
from crawler.store.cache import DATABASE
from crawler.store.parse_cache import ResultCache, crawler_imports
from tests.helpers.entry_points import FILES, crawler, first_extract, records
from tests.helpers.gitrepo import GitRepo

# The next commit: open_file is a new public caller of check_path; save, check_mode's only
# caller, goes, and pkg exports open_file in its place.
CHANGED = {
    "pkg/__init__.py": "from pkg.api import load, open_file\n",
    "pkg/api.py": """\
from pkg import _checks


def load(path):
    return _checks.check_path(path)


def open_file(path, mode):
    return _checks.check_path(path), mode
""",
}


def graph_entries(cache: Path) -> int:
    db = sqlite3.connect(cache / DATABASE)
    try:
        return int(db.execute("SELECT count(*) FROM entries WHERE json_extract(entry, '$.kind') "
                              "= 'graph'").fetchone()[0])
    finally:
        db.close()


def forget_graphs(cache: Path) -> None:
    db = sqlite3.connect(cache / DATABASE)
    try:
        with db:
            db.execute("DELETE FROM entries WHERE json_extract(entry, '$.kind') = 'graph'")
    finally:
        db.close()


def entry_points(folder: Path) -> dict[str, dict[str, object]]:
    return {function: found[3] for function, found in records(folder).items()}


@pytest.mark.parametrize("kept", [True, False], ids=["graph kept", "graph rebuilt"])
def test_an_update_gives_the_entry_points_of_a_fresh_extract(
        make_repo: Callable[[str], GitRepo], tmp_path: Path, kept: bool) -> None:
    repo = make_repo("repo")
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    folder = Path(str(crawler("extract", str(repo.path), "-o", str(out), "--cache-dir",
                              str(cache))["folder"]))
    before = entry_points(folder)
    assert graph_entries(cache) == 1  # the extract's graph, for the next update
    if not kept:
        forget_graphs(cache)

    for path, text in CHANGED.items():
        repo.write(path, text)
    repo.commit("open_file for save")
    update = crawler("update", str(repo.path), "-o", str(out), "--cache-dir", str(cache))
    fresh = Path(str(crawler("extract", str(repo.path), "-o", str(tmp_path / "fresh"),
                             "--cache-dir", str(tmp_path / "fresh-cache"))["folder"]))

    after = entry_points(folder)
    assert after == entry_points(fresh)
    assert update["files_read_again"] == 2  # pkg/__init__.py and pkg/api.py
    assert after["check_path"]["entry_points"] == [
        {"name": "pkg.load", "chain": ["pkg.api.load", "pkg._checks.check_path"]},
        {"name": "pkg.open_file", "chain": ["pkg.api.open_file", "pkg._checks.check_path"]}]
    assert before["check_mode"]["entry_points"] == [
        {"name": "pkg.save", "chain": ["pkg.api.save", "pkg._checks.check_mode"]}]
    assert after["check_mode"]["entry_points"] == []  # a private module's function, no caller
    assert after["other"] == before["other"]
    assert graph_entries(cache) == (2 if kept else 1)  # the update's graph is kept in turn


def test_a_cached_outcome_without_edges_is_a_file_with_none(tmp_path: Path) -> None:
    """A file `ast` cannot read (a syntax newer than this Python's) has no edges in either
    graph: the previous version's edges are still at hand, so not every kept record is loaded."""
    cache = ResultCache(tmp_path)
    cache.put(FileOutcome("pkg/new_syntax.py", "b1", (), RaiseCounts(), calls=None))
    cache.flush()
    manifest = Manifest(Pin("repo", "local", "o", "pkg", "HEAD", "0" * 40), "0", ExtractOptions(),
                        Counts(), (FileEntry("pkg/new_syntax.py", "b1", ()),
                                   FileEntry("pkg/kept.py", "b2", ())), ())
    assert previous_calls(cache.get, manifest, {"pkg/kept.py"}) == ()  # found: no edges
    missing = replace(manifest, files=(FileEntry("pkg/new_syntax.py", "b3", ()),))  # not cached
    assert previous_calls(cache.get, missing, {"pkg/kept.py"}) is None


def test_a_graph_summary_is_found_by_its_files_alone(tmp_path: Path) -> None:
    summary = GraphSummary({"pkg.g\0ValueError\x003": "ab12"}, {"pkg.g": "cd34"})
    GraphCache(tmp_path).put(files_digest([("pkg/__init__.py", "b1"), ("pkg/a.py", "b2")]),
                             summary)
    graphs = GraphCache(tmp_path)
    assert graphs.get(files_digest([("pkg/a.py", "b2"), ("pkg/__init__.py", "b1")])) == summary
    assert graphs.get(files_digest([("pkg/a.py", "b3"), ("pkg/__init__.py", "b1")])) is None


TIES = {
    "pkg/__init__.py": "from pkg.api import run\n",
    "pkg/_n.py": "def check(x):\n    if x is None:\n        raise ValueError(f'no value: {x!r}')\n",
    "pkg/a_kept.py": "from pkg._n import check\n\n\ndef via_a(x):\n    return check(x)\n",
    "pkg/api.py": """\
from pkg.a_kept import via_a
from pkg.z_changed import via_z


def run(x):
    return via_z(x) or via_a(x)
""",
    "pkg/z_changed.py": "from pkg._n import check\n\n\ndef via_z(x):\n    return check(x)\n",
}


def test_of_two_chains_as_short_an_update_keeps_the_one_an_extract_gives(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """pkg.run reaches check through via_a and via_z, both two calls: the chain is the one the
    graph meets first, in the files' order, whichever files the update read again."""
    repo, common, folder = first_extract(make_repo, tmp_path, TIES)
    repo.write("pkg/z_changed.py", TIES["pkg/z_changed.py"] + "\n\ndef other():\n    return 1\n")
    repo.commit("z changed")
    assert crawler("update", str(repo.path), *common)["files_read_again"] == 1
    fresh = Path(str(crawler("extract", str(repo.path), "-o", str(tmp_path / "fresh"),
                             "--cache-dir", str(tmp_path / "fresh-cache"))["folder"]))
    assert entry_points(folder) == entry_points(fresh)
    found = entry_points(fresh)["check"]["entry_points"]
    assert isinstance(found, list)
    assert {"name": "pkg.run", "chain": ["pkg.api.run", "pkg.a_kept.via_a", "pkg._n.check"]} \
        in found  # pkg/a_kept.py comes first


def test_the_class_pass_and_the_stage_build_one_graph(
        make_repo: Callable[[str], GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A raise of a parameter sends the class pass to the call graph for its callers' texts; the
    entry-point stage then walks the same graph, built once for both."""
    repo = make_repo("repo")
    repo.write("pkg/__init__.py", "from pkg.api import run\n")
    repo.write("pkg/api.py", "def fail(message):\n    raise ValueError(message)\n\n\n"
                             "def run():\n    fail('no run today')\n")
    repo.commit("a raise of a parameter")
    built = []
    real = Graph.__init__

    def counted(self: Graph, *args: object, **kwargs: object) -> None:
        built.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(Graph, "__init__", counted)
    pipeline.extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "cache",
                     jobs=1)
    assert len(built) == 1
    record = next((tmp_path / "out").rglob("errors/*.yaml")).read_text(encoding="utf-8")
    assert "no run today" in record and "pkg.run" in record  # both used it


def test_a_run_in_another_thread_neither_takes_nor_drops_this_runs_graph() -> None:
    """The graph kept for a run's stage is its thread's: another thread's run, building its own
    graph and letting it go, leaves this one's as it was."""
    from crawler.parse.call_edges import read_calls
    from crawler.pipeline.entry_stage import forget_graph, graph_of

    mine = [read_calls(b"def f():\n    return g()\n\n\ndef g():\n    return 1\n", "pkg.a", False)]
    theirs = [read_calls(b"def h():\n    return 2\n", "pkg.b", False)]
    graph = graph_of(mine)
    seen: list[bool] = []

    def beside() -> None:
        seen.append(graph_of(mine) is graph)  # the same facts, but not this thread's graph
        graph_of(theirs)
        forget_graph()

    thread = threading.Thread(target=beside)
    thread.start()
    thread.join()
    assert seen == [False]
    assert graph_of(mine) is graph
    forget_graph()
    assert graph_of(mine) is not graph
    forget_graph()


def test_the_graph_digest_lists_what_the_graph_module_imports() -> None:
    root = Path(pipeline.__file__).resolve().parent.parent
    imported = crawler_imports(root, root / "callgraph" / "entry_points.py")
    assert sorted(f.relative_to(root).as_posix() for f in imported) == sorted(GRAPH_SOURCES), \
        "the graph module's imports changed: list them in GRAPH_SOURCES"
