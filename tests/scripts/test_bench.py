"""The benchmark runs end to end on a small repository and reports every measure."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scripts import bench
from tests.helpers.gitrepo import GitRepo

pytestmark = pytest.mark.runs_long


def test_bench_on_a_small_repository(make_repo: Callable[[str], GitRepo], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("lib")
    for i in range(4):
        repo.write(f"pkg/m{i}.py", f"def f():\n    raise ValueError('message number {i}')\n")
    repo.write("tests/test_m1.py", "import pytest\n\n\ndef test_f():\n"
               "    with pytest.raises(ValueError, match='message number 1'):\n        f()\n")
    old = repo.commit("first")
    repo.write("pkg/m0.py", "def f():\n    raise ValueError('message number 0 changed')\n")
    new = repo.commit("second")
    report = tmp_path / "bench.json"
    bench.main([str(repo.path), "--old", old, "--new", new, "--jobs", "2", "--json", str(report)])
    table = capsys.readouterr().out
    assert "bare libcst.parse_module" in table and "update, old -> new" in table
    rows = table.splitlines()[3:]  # after the files line, the heading and its rule
    assert rows[0].startswith("extract (the default: test evidence read), 2 workers")
    assert rows[1].startswith("the same extract again, nothing changed")
    assert rows[-1].startswith("peak memory, any measure") and "< 1024 MiB" in rows[-1]
    data = json.loads(report.read_text(encoding="utf-8"))
    results = data["results"]
    assert results["floor"]["files"] == 4
    assert results["extract_1"]["records"] == results["extract_n"]["records"] == 4
    assert results["extract_default"]["records"] == 4
    assert results["rerun_default"]["files_written"] == 0
    assert results["rerun"]["files_written"] == 0
    assert results["regen"]["files_written"] >= 1
    assert {"extract_1", "extract_n", "rerun", "regen", "rerun_default/extract_default",
            "regen/extract_default"} <= set(data["ratios"])
    assert all(results[name]["cpu_seconds"] > 0 for name in bench.TARGETS)
    # the matching's share of the runs that read the tests: one assertion, one record fitted
    assert results["extract_default"]["assertions"] == 1
    assert results["extract_default"]["records_with_evidence"] == 1
    assert results["extract_default"]["matching_seconds"] >= 0
    assert "matching_seconds" not in results["extract_1"]


def test_bench_times_the_steps_of_a_run(make_repo: Callable[[str], GitRepo], tmp_path: Path
                                        ) -> None:
    """`timed_steps` around a real extract and update: each step that ran, with its CPU split
    between the crawler and its workers; the functions are put back after."""
    from crawler import pipeline

    repo = make_repo("lib")
    repo.write("pkg/m.py", "def f():\n    raise ValueError('message number 1')\n")
    repo.write("tests/test_m.py", "import pytest\n\n\ndef test_f():\n"
               "    with pytest.raises(ValueError, match='message number 1'):\n        f()\n")
    repo.commit("first")
    real = pipeline.visit_files
    with bench.timed_steps() as steps:
        pipeline.extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "c",
                         jobs=1)
    assert pipeline.visit_files is real
    assert {"parse sources", "read tests", "class pass", "match evidence", "write",
            "  write files"} <= set(steps)
    assert steps["parse sources"]["worker_cpu_seconds"] > 0  # the file was parsed in a worker
    assert steps["read tests"]["worker_cpu_seconds"] > 0
    assert steps["write"]["calls"] == 1
    assert steps["  write files"]["outermost_cpu"] == 0  # a part of `write`, counted there
    figures = {"seconds": 1.0, "cpu_seconds": 9.0, "steps": steps}
    shown = bench.steps_table("extract", figures).splitlines()
    assert shown[0] == "extract: 1.00 s, 9.00 CPU s (the crawler and its workers)"
    assert [line.split()[0] for line in shown[2:-1]][:2] == ["parse", "read"]
    assert shown[-1].lstrip().startswith("outside these steps")
