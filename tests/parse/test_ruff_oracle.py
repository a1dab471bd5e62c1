"""Ruff's EM101/EM102/EM103 as an oracle, on a sample of this machine's standard library."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.ruff_oracle import ruff_command, run_oracle, stdlib_files, stdlib_root

SAMPLE = 80  # files; `python -m tests.helpers.ruff_oracle` runs the whole library


@pytest.mark.slow
@pytest.mark.skipif(ruff_command() is None, reason="ruff is not installed")
def test_every_raise_ruff_flags_is_a_record(tmp_path: Path) -> None:
    files = [f for f in stdlib_files(include_tests=False) if len(f.parts) == 1][:SAMPLE]
    result = run_oracle(stdlib_root(), files, tmp_path, jobs=1)
    assert result.ruff_sites > 200
    assert result.uncovered == []
    assert result.covered == result.ruff_sites
