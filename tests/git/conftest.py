"""Fixtures shared by the git stage's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_user_git_config(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's ~/.gitconfig must not change what the tests see."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
