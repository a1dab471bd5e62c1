"""The lookup tests' fixtures: a small repository extracted once per module, a copy per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.lookup_index import SOURCE, extract


@pytest.fixture(scope="module")
def _extracted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("repo") / "small")
    for path, text in SOURCE.items():
        repo.write(path, text)
    repo.commit()
    out = tmp_path_factory.mktemp("once") / "out"
    extract(repo, out)
    return out


@pytest.fixture
def out(_extracted_once: Path, tmp_path: Path) -> Path:
    """An output root holding the small repository's folder, extracted once per module."""
    return Path(shutil.copytree(_extracted_once, tmp_path / "out"))
