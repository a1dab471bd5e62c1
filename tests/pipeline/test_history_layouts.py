"""`crawler history` over releases in three layouts, read ahead of the merges, locally and on
a Dask cluster, against the walk where each step reads its own files.

The history (a package that moves twice, as jax's did from `jax/` to `jax/_src/`):

    v1.0  flat: lib/core.py raises "bad size {n}", lib/old.py is Python 2 (`raise E, "msg"`),
          lib/broken.py does not parse with any grammar
    v1.1  lib/_src/core.py: core.py moved, its message the same; lib/old.py gone
    v2.0  src/lib/_src/core.py, tagged on a merge commit (a branch that reworded the message);
          another tag on the same commit sorts after it
    v2.1  src/lib/_src/core.py adds a raise; src/lib/_src/new.py
    HEAD  one more raise after the last release

Every walk writes the same folder, every file's bytes (lookup's own cache aside).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.gitrepo import GitRepo
from tests.helpers.history import folder_bytes
from tests.helpers.killprocs import run
from tests.helpers.processes import child_env

pytestmark = pytest.mark.runs_long

TAGS = "v*"
RELEASES = ("v1.0", "v1.1", "v2.0", "v2.0.0.post1", "v2.1")


def core(message: str, extra: bool = False) -> str:
    text = (f'def check(n):\n    if n < 0:\n        raise ValueError(f"{message}")\n    return n\n'
            '\n\nclass Shape:\n    def grow(self, k):\n        if k > 9:\n'
            '            raise OverflowError("too big to grow")\n        return k\n')
    if extra:
        text += '\n\ndef later():\n    raise KeyError("added after v2.1")\n'
    return text


def build_layouts(path: Path) -> GitRepo:
    repo = GitRepo(path)
    repo.write("lib/__init__.py", "from lib.core import check\n")
    repo.write("lib/core.py", core("bad size {n}"))
    repo.write("lib/old.py", 'def f(x):\n    raise ValueError, "python 2 syntax %s" % x\n')
    repo.write("lib/broken.py", "def f(:\n    raise ValueError('never read')\n")
    repo.commit("flat layout")
    repo.tag("v1.0", annotated=True)
    repo.move("lib/core.py", "lib/_src/core.py")
    repo.write("lib/core.py", "from lib._src.core import check, Shape\n")
    repo.remove("lib/old.py")
    repo.commit("the code moves to lib/_src")
    repo.tag("v1.1")
    repo.branch("reword")
    repo.checkout("reword")
    repo.write("lib/_src/core.py", core("size {n} is negative"))
    repo.commit("reword on a branch")
    repo.checkout("main")
    repo.write("README", "src layout next\n")
    repo.commit("a change beside")
    repo.git("merge", "-q", "--no-ff", "-m", "merge the reword", "reword")
    for old in ("lib/__init__.py", "lib/core.py", "lib/broken.py", "lib/_src/core.py"):
        repo.move(old, f"src/{old}")
    repo.commit("the src layout")
    repo.git("merge", "-q", "--no-ff", "-m", "merge nothing new", "reword")
    repo.tag("v2.0", annotated=True)
    repo.tag("v2.0.0.post1")  # the same merge commit: a step with nothing to read
    repo.write("src/lib/_src/new.py", 'def new():\n    raise RuntimeError("new in 2.1")\n')
    repo.write("src/lib/_src/core.py", core("size {n} is negative") + '\n\ndef more():\n'
               '    raise TypeError("more in 2.1")\n')
    repo.commit("new errors")
    repo.tag("v2.1")
    repo.write("src/lib/_src/core.py", core("size {n} is negative", extra=True))
    repo.commit("after the last release")
    return repo


def history_command(repo: GitRepo, out: Path, cache: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "tests.helpers.child", "crawler", "history", str(repo.path),
            "--tags", TAGS, "--no-evidence", "--jobs", "1", "-o", str(out), "--cache-dir",
            str(cache), *options]


def walked(repo: GitRepo, out: Path, cache: Path, logs: Path, *options: str,
           env: dict[str, str] | None = None) -> dict[str, Any]:
    """The walk's --json summary, once it ended with exit 0."""
    (logs / "stdout").unlink(missing_ok=True)  # `run` appends
    ended = run([*history_command(repo, out, cache, "--json", *options)], logs,
                env=env or child_env())
    assert ended.code == 0, (logs / "stderr").read_text(encoding="utf-8")
    summary: dict[str, Any] = json.loads((logs / "stdout").read_text(encoding="utf-8"))
    return summary


def folder_of(out: Path) -> Path:
    (manifest,) = out.rglob("manifest.yaml")
    return manifest.parent


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return build_layouts(tmp_path_factory.mktemp("layouts ü") / "repo")


@pytest.fixture(scope="module")
def sequential(layouts: GitRepo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The walk whose steps each read their own files, as before the reading ran ahead."""
    root = tmp_path_factory.mktemp("sequential")
    walked(layouts, root / "out", root / "cache", root / "logs", "--read-ahead", "0")
    return root / "out"


def records_by_template(out: Path) -> dict[str, dict[str, Any]]:
    records = [yaml.safe_load(path.read_text(encoding="utf-8"))
               for path in sorted((folder_of(out) / "errors").glob("*.yaml"))]
    return {record["extracted"]["message"]["template"]: record for record in records}


def test_three_layouts_walk_to_the_end_with_each_old_file_skipped_with_why(
        sequential: Path) -> None:
    manifest = yaml.safe_load((folder_of(sequential) / "manifest.yaml").read_text("utf-8"))
    assert [release["tag"] for release in manifest["releases"]["walked"]] == list(RELEASES)
    skipped = {entry["path"]: entry["reason"] for entry in manifest["skipped"]}
    assert skipped["src/lib/broken.py"] == "parse_failed"  # at the end, in the src layout
    by_template = records_by_template(sequential)
    moved = by_template["too big to grow"]  # same wording in all three layouts: one record
    spans = [(span["first"], span["last"], span["path"]) for span in moved["history"]["templates"]]
    assert spans == [("v1.0", "v1.0", "lib/core.py"), ("v1.1", "v1.1", "lib/_src/core.py"),
                     ("v2.0", None, "src/lib/_src/core.py")]
    assert moved["versions"] == {"first": "v1.0", "last": None}
    reworded = by_template["size {n} is negative"]  # reworded on the branch the merge brought
    assert [(span["template"], span["first"], span["last"])
            for span in reworded["history"]["templates"]] == [
        ("bad size {n}", "v1.0", "v1.0"), ("bad size {n}", "v1.1", "v1.1"),
        ("size {n} is negative", "v2.0", None)]
    assert by_template["added after v2.1"]["history"]["templates"][0]["first"] is None


def test_the_python_2_file_is_listed_with_its_reason_at_the_release_that_had_it(
        layouts: GitRepo, tmp_path: Path) -> None:
    summary = walked(layouts, tmp_path / "out", tmp_path / "cache", tmp_path / "logs",
                     "--commit", "v1.0")
    assert [step["tag"] for step in summary["steps"]] == ["v1.0"]
    manifest = yaml.safe_load((folder_of(tmp_path / "out") / "manifest.yaml").read_text("utf-8"))
    skipped = {entry["path"]: entry for entry in manifest["skipped"]}
    assert skipped["lib/old.py"]["reason"] == "parse_failed"
    assert skipped["lib/broken.py"]["reason"] == "parse_failed"
    assert skipped["lib/old.py"]["detail"]


def test_the_walk_read_ahead_writes_the_sequential_walks_bytes(
        layouts: GitRepo, sequential: Path, tmp_path: Path) -> None:
    summary = walked(layouts, tmp_path / "out", tmp_path / "cache", tmp_path / "logs",
                     "--read-ahead", "3")
    assert len(summary["steps"]) == len(RELEASES) + 1
    assert folder_bytes(tmp_path / "out") == folder_bytes(sequential)


def test_a_walk_killed_at_a_random_point_and_run_again_writes_the_same_bytes(
        layouts: GitRepo, sequential: Path, tmp_path: Path) -> None:
    """SIGKILL just before a file step drawn at random among the walk's (counted first), read
    ahead two tags and writing every two; then a run with nothing killed goes on from there."""
    counted = tmp_path / "steps"
    walked(layouts, tmp_path / "count", tmp_path / "cache", tmp_path / "logs",
           "--checkpoint-steps", "2", env=child_env(CRAWLER_TEST_COUNT_STEPS=str(counted)))
    seed = random.randrange(1 << 30)
    kill_at = random.Random(seed).randrange(1, int(counted.read_text()))
    args = history_command(layouts, tmp_path / "out", tmp_path / "cache 2", "--checkpoint-steps",
                           "2", "--read-ahead", "2", "-q")
    ended = run(args, tmp_path / "logs", env=child_env(CRAWLER_TEST_KILL_AT=str(kill_at)))
    assert ended.killed and not ended.leftovers, (seed, kill_at, ended)
    again = run(args, tmp_path / "logs")
    assert again.code == 0, (tmp_path / "logs" / "stderr").read_text(encoding="utf-8")
    assert folder_bytes(tmp_path / "out") == folder_bytes(sequential), (seed, kill_at)


def test_a_second_run_with_nothing_new_walks_no_release_and_writes_nothing(
        layouts: GitRepo, tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    walked(layouts, out, cache, tmp_path / "logs")
    before = written(out)
    summary = walked(layouts, out, cache, tmp_path / "logs 2")
    assert [step["tag"] for step in summary["steps"]] == [None]  # no release is walked again
    assert summary["steps"][0]["changed"] == summary["steps"][0]["added"] == 0
    assert written(out) == before


def written(out: Path) -> dict[Path, int]:
    """When each record file and the manifest were last written."""
    return {path: path.stat().st_mtime_ns for path in out.rglob("*.yaml")}


def test_the_walk_read_on_a_dask_cluster_writes_the_sequential_walks_bytes(
        layouts: GitRepo, sequential: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")  # the [dask] extra
    from distributed import Client

    from tests.helpers.dask_cluster import started_cluster

    with started_cluster(tmp_path, 2) as (address, _, _):
        summary = walked(layouts, tmp_path / "out", tmp_path / "cache", tmp_path / "logs",
                         "--scheduler", address)
        with Client(address, timeout=30) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: list(
                dask_scheduler.task_prefixes))
    assert "visit_file" in prefixes  # the files were parsed on the cluster's workers
    assert summary["read_ahead"] > 0
    assert folder_bytes(tmp_path / "out") == folder_bytes(sequential)


def test_a_history_entry_of_a_dask_batch_is_read_by_the_cluster_and_writes_the_walks_bytes(
        layouts: GitRepo, sequential: Path, tmp_path: Path) -> None:
    """A batch entry with `history:` merges on one worker while the cluster reads its files: on
    a cluster of one single-threaded worker too, where a task that waited inside the worker's
    only thread would wait for ever."""
    pytest.importorskip("distributed")  # the [dask] extra
    from distributed import Client

    from tests.helpers.dask_cluster import started_cluster

    repos = tmp_path / "repos.yaml"
    repos.write_text(yaml.safe_dump({"repos": [{"source": str(layouts.path), "evidence": False,
                                                "history": {"tags": TAGS}}]}), encoding="utf-8")
    with started_cluster(tmp_path, 1) as (address, _, _):
        ended = run([sys.executable, "-m", "tests.helpers.child", "crawler", "batch", str(repos),
                     "--scheduler", address, "-o", str(tmp_path / "out"), "--json"],
                    tmp_path, env=child_env())
        with Client(address, timeout=30) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: list(
                dask_scheduler.task_prefixes))
    assert ended.code == 0, (tmp_path / "stderr").read_text(encoding="utf-8")
    assert "visit_file" in prefixes  # the walk's files were parsed as tasks of their own
    assert folder_bytes(tmp_path / "out") == folder_bytes(sequential)
