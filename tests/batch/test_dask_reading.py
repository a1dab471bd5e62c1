"""A walk's files read on a Dask cluster (`batch.dask_reading.DaskPool`): a few tasks on the
cluster at a time, each released once its result is back, so neither the scheduler nor the
workers hold a whole tag's files; and the walk's test files read there too, so the last step
starts no parser process of its own."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import pytest

from crawler.batch.dask_reading import IN_FLIGHT, DaskPool
from crawler.parse.assertions import read_assertions
from crawler.parse.file_tasks import visit_file
from tests.helpers.dask_cluster import started_cluster
from tests.helpers.gitrepo import GitRepo
from tests.helpers.history import folder_bytes
from tests.helpers.killprocs import run
from tests.helpers.processes import child_env

pytest.importorskip("distributed")  # the [dask] extra

SOURCE = 'def check(n):\n    if n < {k}:\n        raise ValueError(f"too small: {{n}} < {k}")\n'
TEST = ("import pytest\nfrom lib.core import check\n\n\ndef test_check():\n"
        '    with pytest.raises(ValueError, match="{text}"):\n        check(-1)\n')


def scheduler_tasks(dask_scheduler: object) -> int:
    return len(dask_scheduler.tasks)  # type: ignore[attr-defined]


def test_the_pool_keeps_a_few_tasks_on_the_cluster_and_releases_each_one(tmp_path: Path) -> None:
    from distributed import Client

    jobs = [(f"lib/m{k}.py", f"{k:040x}", SOURCE.format(k=k).encode(), None) for k in range(40)]
    tests = [(f"tests/test_{k}.py", f"{k:040x}", TEST.format(text=f"small {k}").encode())
             for k in range(10)]
    with started_cluster(tmp_path, 2) as (address, _, _), Client(address, timeout=30) as watch:
        pool = DaskPool(address)
        try:
            held, outcomes = [], {}
            for index, outcome in pool.run(iter(jobs)):
                held.append(watch.run_on_scheduler(scheduler_tasks))
                outcomes[index] = outcome
            found = dict(pool.read_tests(iter(tests)))
            deadline = time.monotonic() + 10
            while watch.run_on_scheduler(scheduler_tasks) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = watch.run_on_scheduler(scheduler_tasks)
        finally:
            pool.close()
    assert pool.jobs == 2
    assert outcomes == {index: visit_file(*job) for index, job in enumerate(jobs)}
    assert found == {index: read_assertions(*test) for index, test in enumerate(tests)}
    # each file in flight is two keys (its task and its scattered bytes), and one finished
    # file's pair may not be forgotten yet: the steady state (the median sample) is that bound.
    # The client batches its releases, and under load a few more finished pairs lingered once
    # (16 keys against 14), so no single sample is held to it: none comes near all 40 files
    assert statistics.median(held) <= 2 * (IN_FLIGHT * pool.jobs + 1), held
    assert max(held) < len(jobs), held  # 40 keys: 20 files, half the 80 keys of all 40
    assert left == 0  # every future released once its result came back


def walk(repo: GitRepo, out: Path, logs: Path, *options: str) -> None:
    ended = run([sys.executable, "-m", "tests.helpers.child", "crawler", "history", str(repo.path),
                 "--tags", "v*", "--jobs", "1", "-q", "-o", str(out), "--cache-dir",
                 str(logs / "cache"), *options], logs, env=child_env())
    assert ended.code == 0, (logs / "stderr").read_text(encoding="utf-8")


def test_a_walk_with_evidence_reads_its_tests_on_the_cluster_and_writes_the_local_walks_bytes(
        tmp_path: Path) -> None:
    from distributed import Client

    repo = GitRepo(tmp_path / "repo")
    repo.write("lib/__init__.py", "from lib.core import check\n")
    for number, k in enumerate((0, 3, 5)):
        repo.write("lib/core.py", SOURCE.format(k=k))
        repo.write("tests/test_core.py", TEST.format(text=f"too small: -1 < {k}"))
        repo.commit(f"release {number}")
        repo.tag(f"v1.{number}")
    repo.write("lib/extra.py", 'def extra():\n    raise KeyError("after the last release")\n')
    repo.commit("after the last release")
    (tmp_path / "local").mkdir()
    walk(repo, tmp_path / "local" / "out", tmp_path / "local", "--scheduler", "local")
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path, 1) as (address, _, _):
        walk(repo, tmp_path / "dask" / "out", tmp_path / "dask", "--scheduler", address)
        with Client(address, timeout=30) as client:
            prefixes = client.run_on_scheduler(lambda dask_scheduler: list(
                dask_scheduler.task_prefixes))
    assert {"visit_file", "read_assertions"} <= set(prefixes)
    local = folder_bytes(tmp_path / "local" / "out")
    assert any(b"too small: -1 < 5" in text for name, text in local.items()
               if name.endswith(".yaml") and "manifest" not in name)  # the test's evidence
    assert folder_bytes(tmp_path / "dask" / "out") == local
