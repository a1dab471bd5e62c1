"""Same inputs, same records: one repository extracted in two folders under different names gives
the same records but for their ids and identity (issue 44: this interpreter's standard library
differed on 17 records' evidence and 268 records' related lists, ties going to the lower id)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crawler.pipeline import extract
from tests.helpers.folder_diff import differing, live_records
from tests.helpers.gitrepo import GitRepo
from tests.helpers.ruff_oracle import stdlib_files, stdlib_root


def stdlib_repo(path: Path) -> GitRepo:
    """A git repository of this interpreter's standard library's .py files, tests included."""
    repo = GitRepo(path)
    root = stdlib_root()
    for relative in stdlib_files():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / relative, target)
    repo.commit("the standard library")
    return repo


@pytest.mark.slow  # two extracts of 1,800 files, tests read for evidence: minutes on two cores
def test_the_standard_library_in_two_folders_gives_the_same_records_but_for_ids(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"  # parse results shared; every match and derivation runs twice
    folders = []
    for name in ("first", "second-name"):
        repo = stdlib_repo(tmp_path / name)
        result = extract(str(repo.path), output_root=tmp_path / f"out-{name}", cache_dir=cache,
                         jobs=2)
        assert result.evidence is not None and result.evidence.records > 400
        folders.append(live_records(result.folder))
    first, second = folders
    assert len(first) > 3000
    assert {r.repo for r in first.values()}.isdisjoint({r.repo for r in second.values()})
    assert differing(first, second) == {}  # every field but id, repo and url, related by site
