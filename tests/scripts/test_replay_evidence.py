"""scripts/replay_evidence.py's counts on real extracts: what it calls a rewrite for nothing, and
an evidence difference, is what a report's figures say."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from crawler import pipeline
from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
LIB = "def f(x):\n    raise ValueError(f'bad value {x}')\n\n\ndef g():\n    raise KeyError('gone')\n"
TEST = ("import pytest\nfrom lib import f\n\n\ndef test_f():\n"
        "    with pytest.raises(ValueError, match='bad value'):\n        f(1)\n")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_evidence", ROOT / "scripts" / "replay_evidence.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


def test_a_rewrite_without_a_fact_change_and_an_evidence_difference_are_counted(
        tmp_path: Path) -> None:
    replay = _script()
    repo = GitRepo(tmp_path / "repo")
    repo.write("lib.py", LIB)
    repo.write("tests/test_lib.py", TEST)
    sha = repo.commit("a raise and its test")
    folders = [pipeline.extract(str(repo.path), ref=sha, output_root=tmp_path / name,
                                cache_dir=tmp_path / "cache", jobs=1, name=replay.NAME).folder
               for name in ("updated", "fresh")]
    updated, fresh = folders
    before = replay.texts(updated)
    figures, _ = replay.step_figures(updated, fresh, fresh, before)
    assert figures["records"] == 2 and figures["with_evidence"] == 1
    assert (figures["evidence_differs"], figures["rewritten"], figures["rewritten_unchanged"]) == (0, 0, 0)

    repo.write("lib.py", LIB.replace("'gone'", "'gone for good'"))
    second = repo.commit("the untested raise reworded")
    before = replay.texts(updated)
    pipeline.update(str(repo.path), ref=second, output_root=tmp_path / "updated",
                    cache_dir=tmp_path / "cache", jobs=1, name=replay.NAME)
    fresh_after = pipeline.extract(str(repo.path), ref=second, output_root=tmp_path / "fresh2",
                                   cache_dir=tmp_path / "cache", jobs=1, name=replay.NAME).folder
    figures, lines = replay.step_figures(updated, fresh_after, fresh, before)
    assert (figures["evidence_differs"], figures["rewritten"], figures["rewritten_unchanged"]) == (0, 1, 0)

    # the tested record written again with its facts as they were, and with its evidence lost
    (tested,) = [p for p in (updated / "errors").glob("*.yaml")
                 if "bad value" in p.read_text(encoding="utf-8")]
    text = tested.read_text(encoding="utf-8")
    tested.write_text(text + "# the same facts\n", encoding="utf-8")
    figures, lines = replay.step_figures(updated, fresh_after, fresh, before)
    assert (figures["evidence_differs"], figures["rewritten"], figures["rewritten_unchanged"]) == (0, 2, 1)
    assert any(line.startswith("rewritten, facts unchanged: lib.py:2:") for line in lines), lines
    tested.write_text(re.sub(r"\n  evidence:\n(  - .*\n(    .*\n)*)", "\n  evidence: []\n", text),
                      encoding="utf-8")
    figures, lines = replay.step_figures(updated, fresh_after, fresh, before)
    assert figures["evidence_differs"] == 1 and figures["with_evidence"] == 0
    assert (figures["differs"], figures["by_field"]) == (1, {"evidence": 1})
    assert any(line.startswith("evidence differs: lib.py:2:") for line in lines), lines
    # a list other than a fresh extract's is counted by its field; the update's past is not
    assert f"commit: {sha}" in text and "  related: []\n" in text
    tested.write_text(text.replace("  related: []\n", f"  related:\n  - id: {'f' * 16}\n"
                                   "    reason: same_scope\n", 1).replace(
        f"commit: {sha}", f"commit: {second}"), encoding="utf-8")
    figures, lines = replay.step_figures(updated, fresh_after, fresh, before)
    assert (figures["differs"], figures["by_field"]) == (1, {"related": 1}), lines
    assert any(line.startswith("differs: lib.py:2:") for line in lines), lines
