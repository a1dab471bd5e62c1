"""scripts/replay_history.py's measure on a real extract: what it counts decides a note's figures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from crawler import pipeline
from crawler.git.diff import LineMap
from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
ALIASED = '''\
def convert(hardware, rounding):
    err = ValueError if hardware else NotImplementedError
    if rounding is not None:
        raise err(f"rounding {rounding} is not supported")
'''


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_history", ROOT / "scripts" / "replay_history.py")
    assert spec is not None and spec.loader is not None
    # its dataclasses look their module up in sys.modules
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


def test_two_classes_of_one_raise_each_keep_their_own_id_when_untouched(tmp_path: Path) -> None:
    """One raise through an alias of two classes is two records on one line with one template:
    an untouched step must count both as kept, not one as holding the other's place."""
    replay = _script()
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/convert.py", ALIASED)
    sha = repo.commit("aliased raise")
    root = tmp_path / "out"
    result = pipeline.extract(str(repo.path), ref=sha, output_root=root, cache_dir=tmp_path / "cache",
                              jobs=1, name=replay.NAME)
    assert result.folder == replay.folder_of(root)
    records = replay.load(root)
    classes = sorted(r.site.exception_qualname for r in records.values())
    assert classes == ["builtins.NotImplementedError", "builtins.ValueError"]
    assert len({(r.site.path, r.site.line, r.site.message.template) for r in records.values()}) == 1

    figures = replay.measure(records, records, LineMap(old=sha, new=sha), {}, set())
    assert figures.untouched_lost_id == []
    assert figures.untouched_kept == 2
