"""Git's line mapping between two commits (`crawler.git.diff`), on real repositories."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crawler.errors import RefError
from crawler.git.diff import FileLines, line_map
from crawler.git.pin import pin
from tests.helpers.gitrepo import GitRepo

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


def test_untouched_lines_follow_inserts_and_deletes_around_them(
        make_repo: Callable[[str], GitRepo]) -> None:
    repo = make_repo("r")
    repo.write("a.py", TEXT)
    repo.write("gone.py", "x = 1\n")
    repo.write("moved.py", TEXT)
    repo.write("copied.py", TEXT.replace("line", "row"))
    old = repo.commit("first")
    lines = TEXT.splitlines(keepends=True)
    # two lines inserted at the top, line 5 deleted, a line inserted between 10 and 11
    repo.write("a.py", "new 1\nnew 2\n" + "".join(lines[:4] + lines[5:10]) + "inside\n" + "".join(lines[10:]))
    repo.remove("gone.py")
    repo.move("moved.py", "pkg/moved.py")
    repo.write("pkg/moved.py", TEXT.replace("line 20\n", "line twenty\n"))
    repo.write("copied.py", TEXT.replace("line", "row") + "more\n")
    repo.write("copy.py", TEXT.replace("line", "row") + "copy\n")
    repo.commit("second")
    with pin(str(repo.path), repo.head()) as pinned:
        mapped = line_map(pinned, old)
    assert mapped.old == old and mapped.new == repo.head()
    assert mapped.follow("a.py", 1, 4) == ("a.py", 3)  # below the insertion: shifted by 2
    assert mapped.follow("a.py", 4, 6) is None  # line 5 was deleted: touched
    assert mapped.follow("a.py", 6, 10) == ("a.py", 7)  # +2 -1; the insertion after 10 is beside
    assert mapped.follow("a.py", 10, 11) is None  # a line inserted between 10 and 11
    assert mapped.follow("a.py", 12, 20) == ("a.py", 14)
    assert mapped.follow("gone.py", 1, 1) is None
    assert mapped.follow("moved.py", 3, 4) == ("pkg/moved.py", 3)  # git's rename
    assert mapped.follow("moved.py", 19, 20) is None
    assert mapped.follow("untouched.py", 7, 8) == ("untouched.py", 7)  # not in the diff: as it was
    assert mapped.moved_to("moved.py") == ("pkg/moved.py",)
    assert mapped.moved_to("copied.py") == ("copy.py",)  # git's copy detection
    assert mapped.follow("copied.py", 1, 20) == ("copied.py", 1)  # the copy takes nothing


@pytest.mark.parametrize("hunks, expected", [
    (((3, 0, 4, 2),), 7),  # two lines inserted after line 3: above the range
    (((4, 0, 5, 1),), 6),  # inserted after line 4, right above the range: beside it
    (((6, 0, 7, 1),), None),  # inserted between lines 6 and 7
    (((8, 0, 9, 3),), 5),  # inserted right after the range's last line
    (((1, 2, 1, 0), (9, 1, 7, 1)), 3),  # two removed above; a change below
    (((8, 1, 8, 1),), None),  # the last line changed
])
def test_a_range_is_touched_only_by_hunks_inside_it(hunks: tuple, expected: int | None) -> None:
    assert FileLines("f.py", hunks).follow(5, 8) == expected


def test_one_diff_run_reads_odd_names_and_no_change_at_all(
        make_repo: Callable[[str], GitRepo]) -> None:
    """The raw records and the patches come from one `diff-tree` run, split at the NUL after
    the records: names with spaces, quotes, a colon and non-ASCII letters, a rename among them."""
    repo = make_repo("r")
    repo.write("a b.py", TEXT)
    repo.write(':é "q".py', TEXT)
    repo.write("notes.txt", "text\n")
    old = repo.commit("first")
    repo.write("a b.py", "new\n" + TEXT)
    repo.move(':é "q".py', "dir/:é \"q\" 2.py")
    repo.write("notes.txt", "more text\n")
    middle = repo.commit("second")
    repo.write("notes.txt", "only text changed\n")
    repo.commit("third")
    with pin(str(repo.path), middle) as pinned:
        mapped = line_map(pinned, old)
    assert mapped.follow("a b.py", 1, 2) == ("a b.py", 2)
    assert mapped.follow(':é "q".py', 3, 4) == ('dir/:é "q" 2.py', 3)
    with pin(str(repo.path), repo.head()) as pinned:
        unchanged = line_map(pinned, middle)
    assert dict(unchanged.files) == {} and dict(unchanged.copies) == {}


def test_a_commit_that_is_not_there_is_a_ref_error(make_repo: Callable[[str], GitRepo]) -> None:
    repo = make_repo("r")
    repo.write("a.py", TEXT)
    repo.commit()
    with pin(str(repo.path), repo.head()) as pinned, pytest.raises(RefError):
        line_map(pinned, "0" * 40)


def _follow_hunk_by_hunk(hunks: tuple, line: int, end_line: int) -> int | None:
    """The mapping read off the hunks one by one, as git prints them: what the index answers."""
    shift = 0
    for old_start, old_count, _, new_count in hunks:
        last = old_start if old_count == 0 else old_start + old_count - 1
        if last < line:
            shift += new_count - old_count
        elif old_start < end_line if old_count == 0 else old_start <= end_line:
            return None
        else:
            break
    return line + shift


@pytest.mark.parametrize("seed", range(3))
def test_the_hunk_index_maps_every_range_as_the_hunks_one_by_one_do(seed: int) -> None:
    import random

    rng = random.Random(seed)
    for _ in range(3_000):
        hunks, at = [], rng.randint(0, 3)
        for _ in range(rng.randint(0, 5)):  # insertions (no old lines) and replacements, in order
            count = rng.choice([0, 0, 1, 2, 3])
            start = at if count == 0 else at + 1
            hunks.append((start, count, start, rng.randint(0 if count else 1, 4)))
            at = start + max(count, 1) + rng.randint(0, 3)
        changed = FileLines("a.py", tuple(hunks))
        for line in range(1, at + 5):
            for end_line in range(line, line + 4):
                assert changed.follow(line, end_line) == _follow_hunk_by_hunk(tuple(hunks), line, end_line)
