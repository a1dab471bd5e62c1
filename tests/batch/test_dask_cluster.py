"""A batch on a Dask cluster started the way users start one: `dask scheduler` and `dask worker`
as processes, with Dask's default settings (daemonic workers under a nanny), on loopback only;
and on a `LocalCluster` made in Python with its defaults."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.batch._worker import STARTED_TOPIC
from crawler.batch.driver import DONE, FAILED, run_batch
from crawler.batch.reposfile import load_batch
from tests.helpers.batch import fill, statuses, tree
from tests.helpers.dask_cluster import group_alive, started_cluster, stop
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT, child_env

pytestmark = pytest.mark.runs_long

pytest.importorskip("distributed")  # the [dask] extra


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A scheduler and two single-threaded workers, shared by this module's tests; the
    scheduler's address and the workers. None of their processes outlives the module."""
    with started_cluster(tmp_path_factory.mktemp("cluster"), 2) as (address, _, workers):
        yield address, workers


def test_a_batch_on_dask_worker_processes_with_default_settings(
        repos: Path,  # noqa: F811 - the fixture imported above
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    address, _ = cluster
    local = run_batch(load_batch(repos, tmp_path / "out-local"), jobs=2)
    on_dask = run_batch(load_batch(repos, tmp_path / "out-dask"), scheduler=address)
    assert statuses(on_dask) == statuses(local) == [DONE, DONE, DONE, FAILED]
    assert on_dask.scheduler == address
    written = tree(tmp_path / "out-local")
    assert written == tree(tmp_path / "out-dask")
    assert sum(name.endswith("manifest.yaml") for name in written) == 3


# ---------------------------------------------------------------- a large repository, split


BIG_MODULES, SPLIT = 24, 8  # 25 files with its test file: 4 shares of sources and 1 of tests


@pytest.fixture(scope="module")
def split_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """repos.yaml with a large repository split into shares and three small ones, and what a
    local batch writes for it (in one task per repository: no `split_files` there)."""
    folder = tmp_path_factory.mktemp("split")
    for name, modules in (("big", BIG_MODULES), ("alpha", 2), ("beta", 3), ("gamma", 1)):
        fill(GitRepo(folder / name), name, modules)
    big = (folder / "big").as_uri()  # fetched: each worker pins its share from its own cache
    whole = f"repos:\n  - source: {big}\n" + "".join(f"  - source: ./{n}\n" for n in
                                                       ("alpha", "beta", "gamma"))
    (folder / "whole.yaml").write_text(whole, encoding="utf-8")
    path = folder / "repos.yaml"
    path.write_text(whole.replace(f"{big}\n", f"{big}\n    split_files: {SPLIT}\n"),
                    encoding="utf-8")
    local = run_batch(load_batch(folder / "whole.yaml", folder / "out-local"), jobs=2,
                      cache_dir=folder / "cache")
    assert statuses(local) == [DONE] * 4 and [r.tasks for r in local.results] == [1] * 4
    return path, tree(folder / "out-local")


def kill_a_worker_mid_task(address: str, deadline: float) -> str:
    """SIGKILL a worker process once it runs a crawler task; the worker's address."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        while time.monotonic() < deadline:
            processing = client.processing()
            for _, started in reversed(client.get_events(STARTED_TOPIC)):
                worker = started["worker"]
                if started["key"] in processing.get(worker, ()):
                    os.kill(client.run(os.getpid, workers=[worker])[worker], signal.SIGKILL)
                    return str(worker)
            time.sleep(0.02)
    raise AssertionError("no crawler task was seen running on a worker")


def last_task_started_on(address: str, worker: str) -> str:
    """The key of the last task a worker began: for a worker killed, the task it died running
    (the task seen running when the kill was sent may have ended before the signal came)."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        return str([event["key"] for _, event in client.get_events(STARTED_TOPIC)
                    if event["worker"] == worker][-1])


def test_a_worker_killed_mid_batch_is_retried_and_reported(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]],
        split_batch: tuple[Path, dict[str, bytes]]) -> None:
    """The batch as users run it (`crawler batch --scheduler --json`), one worker SIGKILLed
    while it runs one of the batch's tasks: every repository is done, the output is the local
    run's, and the death, the retry and the time lost are told against that task's repository."""
    address, _ = cluster
    path, local = split_batch
    command = [sys.executable, "-m", "crawler", "batch", str(path), "-o", str(tmp_path / "out"),
               "--scheduler", address, "--cache-dir", str(tmp_path / "cache"), "--json"]
    driver = subprocess.Popen(command, cwd=ROOT, env=child_env(), start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        worker = kill_a_worker_mid_task(address, time.monotonic() + 120)
        out, err = driver.communicate(timeout=240)
    finally:
        stop(driver)
    killed = last_task_started_on(address, worker)
    assert driver.returncode == 0, err
    assert group_alive(driver.pid) == []
    summary: dict[str, Any] = json.loads(out)
    rows = summary["repos"]
    assert [r["status"] for r in rows] == [DONE] * 4
    assert rows[0]["tasks"] == 1 + 5  # the listing, then its shares
    assert [r["tasks"] for r in rows[1:]] == [1, 1, 1]
    victim = int(re.search(r"-repo(\d+)", killed).group(1))  # type: ignore[union-attr]
    assert [r["workers_lost"] for r in rows] == [int(i == victim) for i in range(4)], killed
    assert [r["retries"] for r in rows] == [int(i == victim) for i in range(4)]
    assert rows[victim]["seconds_lost"] >= 0 and summary["workers_lost"] == 1
    assert tree(tmp_path / "out") == local


def test_a_local_cluster_with_defaults_splits_a_large_repository(
        tmp_path: Path, split_batch: tuple[Path, dict[str, bytes]]) -> None:
    """A `LocalCluster()` made in Python (its workers daemonic, on loopback): the large
    repository's shares spread over both workers, and the output is the local run's."""
    import distributed

    path, local = split_batch
    with distributed.LocalCluster(dashboard_address=":0") as local_cluster, \
            distributed.Client(local_cluster) as client:
        assert local_cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        client.wait_for_workers(2, timeout=60)
        result = run_batch(load_batch(path, tmp_path / "out"), scheduler=local_cluster.scheduler_address,
                           cache_dir=tmp_path / "cache")
        workers = {event["worker"] for _, event in client.get_events(STARTED_TOPIC)}
    assert statuses(result) == [DONE] * 4
    assert [r.tasks for r in result.results] == [6, 1, 1, 1]
    assert [r.workers_lost for r in result.results] == [0] * 4
    assert len(workers) == 2  # both workers ran tasks
    assert tree(tmp_path / "out") == local
