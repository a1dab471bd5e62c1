"""The benchmark runs end to end on a small repository and reports every measure."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler import bench
from tests.gitrepo import GitRepo


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
