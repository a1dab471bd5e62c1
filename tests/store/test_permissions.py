"""Every file the crawler writes has the permissions the umask gives a new file.

A web server running as another user reads the records and exports: 0644 under umask 022.
Under 077 they stay private (0600). Records, manifests, the caches' files and every export.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.store.atomic import write_all, write_atomic
from tests.helpers.gitrepo import GitRepo


@pytest.fixture
def umask() -> Iterator[None]:
    saved = os.umask(0o022)
    os.umask(saved)
    yield
    os.umask(saved)


def modes(folder: Path) -> dict[str, int]:
    """The permission bits of every plain file below `folder` (the lock file too)."""
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
            for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_take_the_umask(tmp_path: Path, umask: None, mask: int, expected: int) -> None:
    os.umask(mask)
    write_atomic(tmp_path / "one.yaml", "a: 1\n")
    write_all([(tmp_path / "two.yaml", "b: 2\n"), (tmp_path / "three.yaml", "c: 3\n")])
    write_atomic(tmp_path / "one.yaml", "a: 2\n")  # replacing keeps to the umask too
    assert modes(tmp_path) == {"one.yaml": expected, "two.yaml": expected, "three.yaml": expected}


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_records_manifests_caches_and_exports_take_the_umask(
        tmp_path: Path, umask: None, mask: int, expected: int) -> None:
    repo = GitRepo(tmp_path / "lib")
    repo.write("lib/a.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit("first")
    os.umask(mask)
    out, cache, exports = tmp_path / "out", tmp_path / "cache", tmp_path / "exports"
    runner = CliRunner()
    result = runner.invoke(main, ["extract", str(repo.path), "-o", str(out), "--cache-dir", str(cache),
                                  "--name", "github.com/o/lib", "-j", "1", "-q"])
    assert result.exit_code == 0, result.output
    for fmt in ("jsonl", "json", "sqlite"):
        result = runner.invoke(main, ["export", str(out), "--format", fmt,
                                      "--to", str(exports / f"export.{fmt}"), "-q"])
        assert result.exit_code == 0, result.output
    written = {**modes(out), **{f"exports/{k}": v for k, v in modes(exports).items()},
               **{f"cache/{k}": v for k, v in modes(cache).items() if not k.startswith("repos/")}}
    assert any(name.startswith("cache/roots/") for name in written), written  # the root cache
    assert any(name.endswith(".metadata.json") for name in written), written
    assert {name: mode for name, mode in written.items() if mode != expected} == {}
