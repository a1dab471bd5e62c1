from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], GitRepo]:
    """Build a fresh git repository under the test's temporary folder."""

    def make(name: str = "repo") -> GitRepo:
        return GitRepo(tmp_path / name)

    return make


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never let a test read or write the user's real cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
