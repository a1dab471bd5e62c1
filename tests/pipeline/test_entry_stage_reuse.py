"""An update takes over the entry points of raises no change reaches, and recomputes the others.

Each run keeps, with its graph's summary, a digest of every node a walk enters, as it reads it (its facts
with lines counted from its `def`, its callers in their order, its public name:
`entry_stage.node_digests`). The next update searches chains again only for raises that a
changed node reaches within MAX_DEPTH calls (`moved_since`); the others keep the entry points
they had. Either way, the records after the update carry what a fresh extract gives: checked
with the installed `crawler` in a child process, on repositories the tests write.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.parse.call_edges import read_calls
from crawler.pipeline.entry_stage import graph_of, moved_since, node_digests
from tests.helpers.entry_points import crawler, first_extract, records
from tests.helpers.gitrepo import GitRepo

CHAIN = {
    "pkg/__init__.py": "from pkg.api import load\nfrom pkg.other import helper\n",
    "pkg/api.py": "from pkg import _mid\n\n\ndef load(path):\n    return _mid.step(path)\n",
    "pkg/_mid.py": "from pkg import _deep\n\n\ndef step(path):\n    return _deep.inner(path)\n",
    "pkg/_deep.py": "from pkg import _checks\n\n\ndef inner(path):\n    return _checks.check_path(path)\n",
    "pkg/_checks.py": """\
def check_path(path):
    if not path:
        raise ValueError(f"no path given: {path!r}")
    return path
""",
    "pkg/other.py": "def helper(x):\n    raise RuntimeError(f'an unrelated raise: {x}')\n",
}
# the raise's file moves down two lines, and an unrelated module gains a function
UNRELATED = {
    "pkg/_checks.py": "# checks\n\n" + CHAIN["pkg/_checks.py"],
    "pkg/other.py": CHAIN["pkg/other.py"] + "\n\ndef more():\n    return 1\n",
}
# deep in the chain, inner reaches check_path through a new function of its own module
DEEP = {"pkg/_deep.py": CHAIN["pkg/_deep.py"].replace(
    "return _checks.check_path(path)", "return _through(path)") + """

def _through(path):
    return _checks.check_path(path)
"""}


def digests(files: dict[str, str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    graph = graph_of(read_calls(text, path[:-3].replace("/", ".").removesuffix(".__init__"),
                                path.endswith("__init__.py")) for path, text in sorted(files.items()))
    return node_digests(graph), graph.callees


def test_only_nodes_a_change_reaches_are_searched_again() -> None:
    before, _ = digests(CHAIN)
    after, called = digests({**CHAIN, **UNRELATED})
    moved = moved_since(before, after, called)
    assert "pkg._checks.check_path" not in moved  # moved down two lines: its chains are the same
    assert after["pkg._checks.check_path"] == before["pkg._checks.check_path"]
    assert {"pkg.other.more"} <= moved and "pkg.other.helper" not in moved

    deep, called = digests({**CHAIN, **DEEP})
    moved = moved_since(before, deep, called)
    assert {"pkg._deep.inner", "pkg._deep._through", "pkg._checks.check_path"} <= moved
    assert "pkg.other.helper" not in moved


def run(make_repo: Callable[[str], GitRepo], tmp_path: Path, change: dict[str, str]
        ) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]], Path]:
    """Entry points by function before and after an update of `change`, checked against a
    fresh extract of the same commit; and the output folder."""
    repo, common, folder = first_extract(make_repo, tmp_path, CHAIN)
    before = {f: found[3] for f, found in records(folder).items()}
    for path, text in change.items():
        repo.write(path, text)
    repo.commit("change")
    assert crawler("update", str(repo.path), *common)["files_read_again"] == len(change)
    fresh = Path(str(crawler("extract", str(repo.path), "-o", str(tmp_path / "fresh"),
                             "--cache-dir", str(tmp_path / "fresh-cache"))["folder"]))
    after = {f: found[3] for f, found in records(folder).items()}
    assert after == {f: found[3] for f, found in records(fresh).items()}
    return before, after, folder


def test_an_unrelated_change_keeps_the_chains_and_gives_the_extracts_result(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    before, after, _ = run(make_repo, tmp_path, UNRELATED)
    assert after == before
    assert after["check_path"]["entry_points"] == [{"name": "pkg.load", "chain": [
        "pkg.api.load", "pkg._mid.step", "pkg._deep.inner", "pkg._checks.check_path"]}]


def test_a_change_deep_in_a_chain_recomputes_it(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    before, after, _ = run(make_repo, tmp_path, DEEP)
    assert before["check_path"]["entry_points"] == [{"name": "pkg.load", "chain": [
        "pkg.api.load", "pkg._mid.step", "pkg._deep.inner", "pkg._checks.check_path"]}]
    assert after["check_path"]["entry_points"] == [{"name": "pkg.load", "chain": [
        "pkg.api.load", "pkg._mid.step", "pkg._deep.inner", "pkg._deep._through",
        "pkg._checks.check_path"]}]
    assert after["helper"] == before["helper"]


# a rule run only from a registry: no public function reaches it, so no walk enters it
RULE = {"pkg/_rules.py": "from pkg import _checks\n\n\ndef lower(path):\n    return _checks.check_path(path)"
                         "\n\n\nRULES = {'lower': lower}\n"}
# then a public function calls it: it is new to the walks
CALLED = {**RULE, "pkg/api.py": CHAIN["pkg/api.py"].replace("_mid", "_mid, _rules", 1)
          + "\n\ndef compile(path):\n    return _rules.lower(path)\n"}


def test_a_change_no_walk_enters_searches_nothing_again() -> None:
    before, _ = digests({**CHAIN, **RULE})
    assert "pkg._rules.lower" not in before
    rule = RULE["pkg/_rules.py"].replace("    return", "    path = str(path)\n    return", 1)
    after, called = digests({**CHAIN, "pkg/_rules.py": rule})
    assert after == before and not moved_since(before, after, called)
    reached, called = digests({**CHAIN, **CALLED})
    assert "pkg._rules.lower" in reached
    assert {"pkg._rules.lower", "pkg._checks.check_path"} <= moved_since(before, reached, called)


def test_a_function_a_public_one_comes_to_call_gives_the_extracts_result(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    before, after, _ = run(make_repo, tmp_path, CALLED)
    had = before["check_path"]["entry_points"]
    assert isinstance(had, list) and len(had) == 1
    assert after["check_path"]["entry_points"] == [  # the package's own name first
        *had,
        {"name": "pkg.api.compile",
         "chain": ["pkg.api.compile", "pkg._rules.lower", "pkg._checks.check_path"]}]
