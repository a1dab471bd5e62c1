"""Fixtures shared by the git stage's tests."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _no_user_git_config(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's ~/.gitconfig must not change what the tests see."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every git argv the stage runs, recorded."""
    calls: list[list[str]] = []
    real = subprocess.Popen

    def spy(args: list[str], *rest: Any, **kwargs: Any) -> Any:
        if args and args[0] == "git":
            calls.append(list(args))
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    return calls
