"""The batch tests' fixture: repos.yaml with three good repositories and one broken entry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.batch import fill
from tests.helpers.gitrepo import GitRepo


@pytest.fixture
def repos(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> Path:
    """repos.yaml with three good repositories and one broken entry (a ref that does not exist)."""
    for name, modules in (("alpha", 3), ("beta", 2), ("gamma", 4)):
        fill(make_repo(name), name, modules)
    path = tmp_path / "repos.yaml"
    path.write_text(
        "defaults:\n"
        "  exclude: ['*/mod3.py']\n"
        "repos:\n"
        "  - source: ./alpha\n"
        "  - source: ./beta\n"
        "    ref: main\n"
        f"  - source: {(tmp_path / 'gamma').as_uri()}\n"  # fetched into the cache, not read in place
        "  - source: ./beta\n"
        "    commit: no-such-tag\n"
        "    name: beta-broken\n",
        encoding="utf-8",
    )
    return path
