"""Batch runs over real repositories made in temporary folders, on local processes and on Dask."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from crawler.batch import _worker, driver
from crawler.batch.driver import DONE, FAILED, UP_TO_DATE, run_batch
from crawler.batch.reposfile import load_batch
from crawler.cli.commands import main
from crawler.errors import BatchError
from crawler.records import ExtractOptions
from tests.helpers.batch import MODULE, fill, statuses, tree
from tests.helpers.gitrepo import GitRepo

pytestmark = pytest.mark.runs_long

# ---------------------------------------------------------------- the batch file


def test_load_applies_defaults_and_resolves_paths(repos: Path, tmp_path: Path) -> None:
    entries = load_batch(repos, Path("elsewhere"))
    assert [e.source for e in entries] == [str(tmp_path / "alpha"), str(tmp_path / "beta"),
                                           (tmp_path / "gamma").as_uri(), str(tmp_path / "beta")]
    assert [e.ref for e in entries] == ["HEAD", "main", "HEAD", "no-such-tag"]
    assert entries[0].options == ExtractOptions(exclude=("*/mod3.py",))
    assert entries[3].name == "beta-broken"
    assert {e.output_root for e in entries} == {Path("elsewhere")}


@pytest.mark.parametrize(("entry", "expected"), [
    ("  - source: ./b\n    ref: 12\n", "repos.yaml:5: repos[1] (source './b'): ref: 12 is not of type"),
    ("  - source: ./b\n    branch: main\n", "repos.yaml:4: repos[1] (source './b'): (entry): Additional"),
    ("  - ref: main\n", "repos.yaml:4: repos[1]: (entry): 'source' is a required property"),
    ("  - source: ./b\n    include: '*.py'\n", "repos[1] (source './b'): include: '*.py' is not of type"),
    ("  - source: ./b\n    ref: v1\n    commit: abc\n", "repos[1] (source './b'): commit: give `ref` or"),
    ("  - source: ./a\n", "repos.yaml:4: repos[1] (source './a'): source: repeats repos[0]"),
])
def test_bad_entry_is_named_by_index_and_field(tmp_path: Path, entry: str, expected: str) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text("defaults: {}\nrepos:\n  - source: ./a\n" + entry, encoding="utf-8")
    with pytest.raises(BatchError) as caught:
        load_batch(path)
    assert expected in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_bad_top_level_is_named(tmp_path: Path) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text("repo:\n  - source: x\n", encoding="utf-8")
    with pytest.raises(BatchError, match="repos.yaml:1: \\(top\\): .*"):
        load_batch(path)


def test_scheduler_address_from_option_or_dask_config() -> None:
    dask = pytest.importorskip("dask")

    assert driver.scheduler_address("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    with dask.config.set({"scheduler-address": "tcp://10.0.0.6:8786"}):
        assert driver.scheduler_address(None) == "tcp://10.0.0.6:8786"
        assert driver.scheduler_address("local") is None
    with dask.config.set({"scheduler-address": None}):
        assert driver.scheduler_address(None) is None


# ---------------------------------------------------------------- running


def daemonic() -> bool:
    """Run on a Dask worker: is it a daemonic process, as Dask's defaults make it?"""
    import multiprocessing

    return bool(multiprocessing.current_process().daemon)


def test_local_and_dask_write_identical_output(repos: Path, tmp_path: Path) -> None:
    """On a LocalCluster with Dask's defaults: its workers are daemonic processes."""
    distributed = pytest.importorskip("distributed")  # the [dask] extra
    local_cluster = distributed.LocalCluster

    local = run_batch(load_batch(repos, tmp_path / "out-local"), jobs=2)
    with local_cluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                       dashboard_address=":0", worker_dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert all(client.run(daemonic).values())
        dask = run_batch(load_batch(repos, tmp_path / "out-dask"), scheduler=cluster.scheduler_address)
        events = client.get_events(_worker.FILES_TOPIC)  # the workers told of the files they parsed
        assert sum(count for _, count in events) == 3 + 2 + 3

    for result in (local, dask):
        assert statuses(result) == [DONE, DONE, DONE, FAILED]
        assert "no-such-tag" in (result.results[3].error or "")
        assert [r.records for r in result.results[:3]] == [6, 4, 6]  # mod3.py is excluded
        assert result.files == 3 + 2 + 3
    assert dask.scheduler == cluster.scheduler_address
    written = tree(tmp_path / "out-local")
    assert written == tree(tmp_path / "out-dask")
    assert sum(name.endswith("manifest.yaml") for name in written) == 3


def test_rerun_skips_what_is_up_to_date(repos: Path, tmp_path: Path,
                                        make_repo: Callable[[str], GitRepo]) -> None:
    out = tmp_path / "out"
    run_batch(load_batch(repos, out), jobs=2)
    before = tree(out)
    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.yaml")}

    again = run_batch(load_batch(repos, out), jobs=2)
    assert statuses(again) == [UP_TO_DATE, UP_TO_DATE, UP_TO_DATE, FAILED]
    assert [r.records for r in again.results[:3]] == [6, 4, 6]
    assert tree(out) == before and mtimes == {p: p.stat().st_mtime_ns for p in out.rglob("*.yaml")}

    beta = GitRepo(tmp_path / "beta")  # upstream moves: only beta is extracted again
    beta.write("beta/mod0.py", MODULE.format(name="Beta0") + "\nraise KeyError('at import')\n")
    beta.commit("move")
    moved = run_batch(load_batch(repos, out), jobs=2)
    assert statuses(moved) == [UP_TO_DATE, DONE, UP_TO_DATE, FAILED]
    assert (moved.results[1].added, moved.results[1].records) == (1, 5)

    forced = run_batch(load_batch(repos, out), jobs=2, force=True)
    assert statuses(forced) == [DONE, DONE, DONE, FAILED]
    assert all(r.files_written == 0 for r in forced.results)


def test_changed_options_are_not_up_to_date(repos: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_batch(load_batch(repos, out)[:1], jobs=1)
    repos.write_text(repos.read_text(encoding="utf-8").replace("'*/mod3.py'", "'*/mod2.py'"),
                     encoding="utf-8")
    result = run_batch(load_batch(repos, out)[:1], jobs=1)
    assert statuses(result) == [DONE]


def test_interrupted_batch_resumes(repos: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean = tmp_path / "clean"
    run_batch(load_batch(repos, clean), jobs=2)

    out = tmp_path / "out"
    applied: list[str] = []
    real_apply = driver.apply

    def apply_then_stop(collected, output_root, **kwargs):  # type: ignore[no-untyped-def]
        if applied:
            raise KeyboardInterrupt  # Ctrl-C while the driver writes the second repository
        applied.append(collected.pin.name)
        return real_apply(collected, output_root, **kwargs)

    monkeypatch.setattr(driver, "apply", apply_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_batch(load_batch(repos, out), jobs=1)
    monkeypatch.setattr(driver, "apply", real_apply)
    assert len(applied) == 1 and sum(1 for _ in out.rglob("manifest.yaml")) == 1

    resumed = run_batch(load_batch(repos, out), jobs=2)
    first = [r.entry.source for r in resumed.results].index(str(tmp_path / applied[0]))
    assert resumed.results[first].status == UP_TO_DATE
    assert sorted(statuses(resumed)) == sorted([UP_TO_DATE, DONE, DONE, FAILED])
    assert tree(out) == tree(clean)


def test_scan_reads_manifests_in_any_layout_and_passes_over_broken_ones(repos: Path,
                                                                        tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_batch(load_batch(repos, out)[:3], jobs=2)
    manifests = sorted(out.rglob("manifest.yaml"))
    data = yaml.safe_load(manifests[0].read_text(encoding="utf-8"))
    reordered = {"exception_classes": data.pop("exception_classes"), **data}
    manifests[0].write_text(yaml.safe_dump(reordered, sort_keys=False), encoding="utf-8")
    manifests[1].write_text("source: [unclosed\n", encoding="utf-8")
    found = {k.folder: k for k in driver.scan_outputs({out})}
    assert set(found) == {manifests[0].parent, manifests[2].parent}
    assert found[manifests[0].parent].sha == data["commit"]
    assert found[manifests[0].parent].slug == manifests[0].parent.relative_to(out).as_posix()


def test_killed_batch_resumes_without_writing_twice(make_repo: Callable[[str], GitRepo],
                                                   tmp_path: Path) -> None:
    """SIGKILL a real `crawler batch` (driver and workers) once its first repository is written."""
    names = [f"repo{i}" for i in range(6)]
    for name in names:
        fill(make_repo(name), name, 12)
    path = tmp_path / "repos.yaml"
    path.write_text("repos:\n" + "".join(f"  - source: ./{n}\n" for n in names), encoding="utf-8")
    clean, out = tmp_path / "clean", tmp_path / "out"
    run_batch(load_batch(path, clean), jobs=2)

    command = [sys.executable, "-m", "crawler", "batch", str(path), "-o", str(out), "-j", "1", "-q"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not any(out.rglob("manifest.yaml")) and time.monotonic() < deadline:
            assert process.poll() is None, "the batch ended before it could be killed"
            time.sleep(0.005)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finished = {m.parent for m in out.rglob("manifest.yaml")}
    assert 1 <= len(finished) < len(names)

    resumed = run_batch(load_batch(path, out), jobs=2)
    for result in resumed.results:
        assert result.status == (UP_TO_DATE if result.folder in finished else DONE), result
    def visible(files: dict[str, bytes]) -> dict[str, bytes]:  # the lock file is no output
        return {k: v for k, v in files.items() if not k.rsplit("/", 1)[-1].startswith(".")}

    assert visible(tree(out)) == visible(tree(clean))


def test_half_written_repository_is_finished(repos: Path, tmp_path: Path) -> None:
    """Records written but no manifest (killed before the last write): the re-run completes it."""
    clean, out = tmp_path / "clean", tmp_path / "out"
    run_batch(load_batch(repos, clean), jobs=2)
    run_batch(load_batch(repos, out), jobs=2)
    manifest = next(out.rglob("gamma/manifest.yaml"))
    manifest.unlink()
    result = run_batch(load_batch(repos, out), jobs=2)
    assert statuses(result) == [UP_TO_DATE, UP_TO_DATE, DONE, FAILED]
    assert result.results[2].added == 0 and result.results[2].files_written == 1  # the manifest
    assert tree(out) == tree(clean)


def test_two_entries_writing_one_folder_fail_the_second(make_repo: Callable[[str], GitRepo],
                                                        tmp_path: Path) -> None:
    fill(make_repo("alpha"), "alpha", 1)
    path = tmp_path / "repos.yaml"
    path.write_text("repos:\n  - source: ./alpha\n  - source: ./alpha\n    ref: main\n",
                    encoding="utf-8")
    result = run_batch(load_batch(path, tmp_path / "out"), jobs=1)
    assert sorted(statuses(result)) == [DONE, FAILED]
    assert "writes the same folder as repos[" in (result.failed[0].error or "")


def test_a_repository_that_kills_its_process_fails_alone(make_repo: Callable[[str], GitRepo],
                                                         tmp_path: Path) -> None:
    for name in ("alpha", "beta", "gamma"):
        fill(make_repo(name), name, 1)
    crasher = make_repo("crasher")
    depth = 20_000  # LibCST 1.9's parser segfaults on this many nested parentheses
    crasher.write("crash.py", "x = " + "(" * depth + "1" + ")" * depth + "\n")
    crasher.commit()
    path = tmp_path / "repos.yaml"
    path.write_text("repos:\n" + "".join(f"  - source: ./{n}\n" for n in
                                         ("alpha", "crasher", "beta", "gamma")), encoding="utf-8")
    result = run_batch(load_batch(path, tmp_path / "out"), jobs=2)
    assert [statuses(result)[i] for i in (0, 2, 3)] == [DONE, DONE, DONE]
    crashed = result.results[1]
    if crashed.status == FAILED:  # the parser ran in the pool's own process
        assert "worker process died" in (crashed.error or "")
    else:  # the parser ran in a child process, which took the crash: only the file is lost
        assert crashed.status == DONE and crashed.records == 0


# ---------------------------------------------------------------- the command line


def test_cli_reports_failures_table_and_json(repos: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path / "out")
    shown = runner.invoke(main, ["batch", str(repos), "-o", out, "-j", "2"])
    assert shown.exit_code == 1, shown.output
    assert "repos[3]: " in shown.stderr and "no-such-tag" in shown.stderr
    for word in ("repository", "sha", "records", "changes", "time", "status", "done", "failed",
                 "+6 ~0 -0", "+added ~changed -removed"):
        assert word in shown.stdout

    as_json = runner.invoke(main, ["batch", str(repos), "-o", out, "--json", "-j", "2"])
    assert as_json.exit_code == 1
    summary = json.loads(as_json.stdout)
    assert [r["status"] for r in summary["repos"]] == [UP_TO_DATE] * 3 + [FAILED]
    assert summary["failed"] == 1 and summary["scheduler"] == "local"


def test_cli_bad_batch_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text("repos:\n  - source: ./a\n    ref: [main]\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["batch", str(path)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {path}:3: repos[0] (source './a'): ref: ['main'] is not of type 'string'"]


def test_local_run_does_not_import_distributed(repos: Path, tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path; from crawler.batch.driver import run_batch; "
            "from crawler.batch.reposfile import load_batch; "
            f"run_batch(load_batch(Path({str(repos)!r}), Path({str(tmp_path / 'out')!r})), jobs=1); "
            "assert 'distributed' not in sys.modules, 'distributed imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])
