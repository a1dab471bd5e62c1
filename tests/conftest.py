from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import tests.helpers.processes  # noqa: F401  # first: it takes the system's temporary folder before TMPDIR moves
from tests.helpers.gitrepo import GitRepo


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


@pytest.fixture(autouse=True, scope="session")
def _system_temp_in_the_runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What the suite's processes put in the system's temporary folder goes to a folder of this
    run instead: multiprocessing's `pymp-*` folders (a fork server's socket; left behind by a
    process a test stops with a signal) and Dask's scratch space. Every process a test starts
    inherits TMPDIR."""
    folder = tmp_path_factory.mktemp("system-temp")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
        tempfile.tempdir = None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (the configured default): two test processes per core. Most tests wait on the
    processes they start (a `crawler` command, its workers, a Dask cluster) for much of their
    time; with one test process per core, a quiet 2-core machine was idle 29 % of the suite
    (687 CPU seconds in 8 min 5 s); with two, 7 min 20 s for the same work."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order the test processes are handed whole files in (`--dist loadfile`): the files
    marked `runs_long` first, then the files with the most tests. xdist's own order (by number of
    tests alone) handed the few long tests of the kill and cluster files out last, and one test
    process ran them alone for the last minute of the suite while the other core stood idle."""
    counts = Counter(item.path for item in items)
    first = {path: index for index, path in enumerate(dict.fromkeys(item.path for item in items))}
    items.sort(key=lambda item: (item.get_closest_marker("runs_long") is None,
                                 -counts[item.path], first[item.path]))
