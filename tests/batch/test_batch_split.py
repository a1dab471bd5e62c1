"""A large repository shared out over tasks, per-entry options, and failures made visible."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from crawler.batch._executors import LocalPool
from crawler.batch._shards import share_out
from crawler.batch.driver import DONE, FAILED, BatchResult, RepoResult, _Driver, run_batch
from crawler.batch.reposfile import SPLIT_FILES, load_batch
from crawler.cli.commands import main
from crawler.cli.summaries import BatchSummary
from crawler.errors import BatchError, CrawlerError
from crawler.records import SourceFile
from tests.helpers.batch import fill, statuses, tree
from tests.helpers.gitrepo import GitRepo


def source(path: str, size: int) -> SourceFile:
    return SourceFile(path, "0" * 40, "100644", size)


def test_shares_are_of_about_equal_bytes_and_keep_file_order() -> None:
    files = tuple(source(f"m{i:02}.py", size) for i, size in
                  enumerate([900, 10, 10, 500, 400, 30, 300, 300, 20, 20]))
    shares = share_out(files, 3)
    assert sorted(f.path for share in shares for f in share) == [f.path for f in files]
    assert all(list(share) == sorted(share, key=lambda f: f.path) for share in shares)
    loads = sorted(sum(f.size for f in share) for share in shares)
    assert loads == [790, 800, 900]  # largest first to the lightest: no share over the 900-byte file
    assert share_out(files[:2], 5) == [(files[0],), (files[1],)]  # never an empty share


def test_entry_options_and_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text("defaults:\n  evidence: false\n  jobs: 2\nrepos:\n  - source: ./a\n"
                    "  - source: ./b\n    evidence: true\n    split_files: 0\n"
                    "  - source: ./c\n    jobs: 3\n    split_files: 40\n", encoding="utf-8")
    entries = load_batch(path, split_files=100)
    assert [(e.evidence, e.jobs, e.split_files) for e in entries] == [
        (False, 2, 100), (True, 2, None), (False, 3, 40)]
    assert load_batch(path)[0].split_files == SPLIT_FILES


@pytest.mark.parametrize(("field", "expected"), [
    ("jobs: 0", "repos.yaml:4: repos[0] (source './a'): jobs: 0 is less than the minimum of 1"),
    ("split_files: -1", "repos.yaml:4: repos[0] (source './a'): split_files: -1 is less than"),
    ("evidence: 'yes'", "repos.yaml:4: repos[0] (source './a'): evidence: 'yes' is not of type"),
    ("jobs: 1.5", "repos.yaml:4: repos[0] (source './a'): jobs: 1.5 is not of type 'integer'"),
])
def test_a_bad_entry_option_is_one_line(tmp_path: Path, field: str, expected: str) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text(f"repos:\n  - source: ./a\n\n    {field}\n", encoding="utf-8")
    with pytest.raises(BatchError) as caught:
        load_batch(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)
    assert expected in str(caught.value)


def test_a_split_repository_writes_what_one_task_writes(make_repo: Callable[[str], GitRepo],
                                                       tmp_path: Path) -> None:
    """Local processes: shares of sources and of test files (for evidence), merged in file
    order on the driver, give the bytes of the repository run in one task."""
    big = make_repo("big")
    fill(big, "big", 5)
    big.write("tests/test_more.py", "import pytest\n\n\ndef test():\n"
                                    "    with pytest.raises(ValueError, match='negative'):\n"
                                    "        raise ValueError('Big0: negative values')\n")
    big.commit("another test file")
    path = tmp_path / "repos.yaml"
    path.write_text("repos:\n  - source: ./big\n    jobs: 2\n", encoding="utf-8")
    split = run_batch(load_batch(path, tmp_path / "split", split_files=3), jobs=2)
    whole = run_batch(load_batch(path, tmp_path / "whole"), jobs=2)
    assert statuses(split) == statuses(whole) == [DONE]
    assert split.results[0].tasks == 1 + 3 + 2  # ceil(7 / 3) shares of 5 sources, 2 of 2 tests
    assert whole.results[0].tasks == 1
    assert split.results[0].records == whole.results[0].records == 10
    assert tree(tmp_path / "split") == tree(tmp_path / "whole")


def test_a_task_that_ran_out_of_workers_says_how_many_it_killed(tmp_path: Path) -> None:
    """Dask's own error, as the driver gets it when every worker that ran a task died."""
    scheduler = pytest.importorskip("distributed.scheduler")
    entry = load_batch(_one_entry(tmp_path))[0]
    driver = _Driver([entry], [], False, None)
    task = driver.plan(None)[0]
    pool = LocalPool(1)
    try:
        pool.losses.died(task.key, 2.5)  # one death seen as an event; the scheduler counted four
        reason = driver._remote_error(task, scheduler.KilledWorker(task.key, None, 3), pool)
        driver._count_losses(task, pool, gave_up=True)
    finally:
        pool.shutdown()
    assert reason.startswith("killed 4 workers: each died while running it")
    tally = driver.tallies[entry.index]
    assert (tally.workers_lost, tally.retries, tally.seconds_lost) == (4, 3, 2.5)


def _one_entry(folder: Path) -> Path:
    path = folder / "repos.yaml"
    path.write_text("repos:\n  - source: ./a\n", encoding="utf-8")
    return path


def test_the_summary_shows_tasks_and_workers_lost(tmp_path: Path) -> None:
    entry = load_batch(_one_entry(tmp_path))[0]
    rows = (RepoResult(entry, DONE, tasks=6, workers_lost=1, retries=1, seconds=9.5,
                       seconds_lost=2.25),
            RepoResult(entry, FAILED, tasks=1, workers_lost=4, retries=3, seconds_lost=8.0,
                       error="killed 4 workers"))
    summary = BatchSummary(BatchResult(rows, 12.0, "tcp://127.0.0.1:8786"))
    console = Console(file=StringIO(), width=200)
    for line in summary.lines():
        console.print(line)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "6, 1 lost 2.2s" in text and "1, 4 lost 8.0s" in text and "N lost Ts" in text
    quiet = BatchSummary(BatchResult((RepoResult(entry, DONE, tasks=1),), 1.0, "local"))
    headers = [column.header for line in quiet.lines() for column in line.columns]  # type: ignore[union-attr]
    assert "tasks" not in headers and "lost" not in headers and "status" in headers
    data = json.loads(summary.to_json())
    assert data["workers_lost"] == 5
    assert [(r["tasks"], r["workers_lost"], r["retries"], r["seconds_lost"]) for r in data["repos"]] \
        == [(6, 1, 1, 2.25), (1, 4, 3, 8.0)]


def test_a_cluster_without_workers_is_one_line_within_seconds(make_repo: Callable[[str], GitRepo],
                                                              tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    fill(make_repo("a"), "a", 1)
    with distributed.LocalCluster(n_workers=0, dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        started = time.monotonic()
        with pytest.raises(CrawlerError, match="no worker joined the cluster within 1 s"):
            run_batch(load_batch(_one_entry(tmp_path), tmp_path / "out"), scheduler=address,
                      wait_workers=1)
        assert time.monotonic() - started < 15
        shown = CliRunner().invoke(main, ["batch", str(tmp_path / "repos.yaml"), "--scheduler",
                                          address, "--wait-workers", "1", "-o", str(tmp_path / "out")])
    assert shown.exit_code == 1
    assert shown.stderr.strip().splitlines() == [
        f"Error: --scheduler {address}: no worker joined the cluster within 1 s; start some with "
        f"`dask worker {address}` (or wait longer with --wait-workers)"]
    assert not (tmp_path / "out").exists()
