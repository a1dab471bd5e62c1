"""The root commit that names a local repository: stable along first parents, cached by sha."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crawler.git.cache_folder import default_cache_dir
from crawler.git.pin import pin
from crawler.git.root import ROOTS_DIR
from tests.helpers.gitrepo import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "lib")
    repo.write("lib/a.py", "raise ValueError('a')\n")
    repo.commit("first")
    repo.write("lib/b.py", "raise ValueError('b')\n")
    repo.commit("second")
    return repo


def walks(git_calls: list[list[str]]) -> int:
    """How many walks of a whole history for its root git was asked for."""
    return sum(1 for call in git_calls if "--first-parent" in call and "--max-parents=0" in call)


def first_commit(repo: GitRepo) -> str:
    return repo.git("rev-list", "--max-parents=0", "HEAD")


def test_the_root_is_walked_once_then_cached_by_commit(repo: GitRepo,
                                                       git_calls: list[list[str]]) -> None:
    assert pin(str(repo.path)).pin.root == first_commit(repo)
    assert walks(git_calls) == 1
    cached = default_cache_dir() / ROOTS_DIR / repo.head()
    assert cached.read_text() == f"{first_commit(repo)}\n"
    again = pin(str(repo.path)).pin
    assert (again.root, again.owner, walks(git_calls)) == (first_commit(repo), first_commit(repo)[:12], 1)


def test_a_cache_entry_that_names_no_root_here_is_walked_again(repo: GitRepo,
                                                               git_calls: list[list[str]]) -> None:
    cached = default_cache_dir() / ROOTS_DIR / repo.head()
    cached.parent.mkdir(parents=True)
    cached.write_text(f"{repo.head()}\n")  # a commit of this repository, but not a root
    assert pin(str(repo.path)).pin.root == first_commit(repo)
    assert walks(git_calls) == 1
    assert cached.read_text() == f"{first_commit(repo)}\n"


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
def test_a_cache_entry_that_is_no_plain_file_is_not_read(repo: GitRepo, tmp_path: Path,
                                                         kind: str) -> None:
    cached = default_cache_dir() / ROOTS_DIR / repo.head()
    cached.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(cached)  # opened without O_NONBLOCK, a read would wait for a writer forever
    elif kind == "symlink":
        target = tmp_path / "elsewhere"
        target.write_text(f"{first_commit(repo)}\n")
        cached.symlink_to(target)
    else:
        cached.mkdir()
    assert pin(str(repo.path)).pin.root == first_commit(repo)


def test_a_subtree_merge_does_not_move_the_root(repo: GitRepo, tmp_path: Path) -> None:
    """Merging an unrelated history adds a root, maybe a smaller sha; the first parent's
    line still starts where it did, so the folder stays where it was."""
    before = pin(str(repo.path)).pin
    other = GitRepo(tmp_path / "vendored")
    for n in range(20):  # enough unrelated roots that one sorts before ours
        other.git("checkout", "-q", "--orphan", f"o{n}")
        other.write("v.py", f"V = {n}\n")
        other.commit(f"vendored {n}")
    repo.git("fetch", "-q", str(other.path), *(f"o{n}:o{n}" for n in range(20)))
    repo.git("merge", "-q", "--allow-unrelated-histories", "-s", "ours", "-m", "vendor",
             *(f"o{n}" for n in range(20)))
    roots = repo.git("rev-list", "--max-parents=0", "HEAD").split()
    assert len(roots) == 21 and min(roots) != before.root
    after = pin(str(repo.path)).pin
    assert (after.root, after.owner, after.name) == (before.root, before.owner, before.name)


def test_a_new_commit_takes_the_root_cached_for_one_on_its_first_parent_line(
        repo: GitRepo, git_calls: list[list[str]]) -> None:
    """Each update pins a commit not seen before: its line's latest cached commit answers,
    without a walk of the whole history; a commit on another line is walked."""
    assert pin(str(repo.path)).pin.root == first_commit(repo)
    for n in range(3):
        repo.write(f"lib/c{n}.py", f"raise ValueError('c{n}')\n")
        repo.commit(f"week {n}")
    assert pin(str(repo.path)).pin.root == first_commit(repo)
    assert walks(git_calls) == 1
    assert (default_cache_dir() / ROOTS_DIR / repo.head()).read_text() == f"{first_commit(repo)}\n"
    root = first_commit(repo)
    repo.git("checkout", "-q", "--orphan", "other")
    repo.write("lib/o.py", "raise ValueError('o')\n")
    repo.commit("another first commit")
    other = pin(str(repo.path)).pin
    assert other.root == repo.head() != root
    assert walks(git_calls) == 2
