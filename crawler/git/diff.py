"""Git's line mapping between two commits: where each old line went, and which lines the diff touched.

`line_map` asks `diff-tree` (renames and copies detected, no context lines) for every `.py`
file that changed between the two commits, and keeps each file's hunks. A range of old lines
that no hunk touches is the same text at a shifted place in the new file (`LineMap.follow`);
the merge gives such a site its record before it compares any key. Lines inserted right above
or below a range leave it untouched; lines inserted between two of its lines touch it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from crawler.errors import SourceError

if TYPE_CHECKING:  # the merge reads a `LineMap` without git: validate, check and export import
    from crawler.git.pin import PinnedRepo  # it and never run git, nor need GitPython (0.06 s)

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_PY_FILES = ":(glob)**/*.py"

Hunk = tuple[int, int, int, int]  # old start, old count, new start, new count (git's numbers)


@dataclass(frozen=True)
class FileLines:
    """One changed file: where it is now (None: deleted) and the hunks of its diff, in order."""

    new_path: str | None
    hunks: tuple[Hunk, ...] = ()
    similarity: int = 100  # git's similarity index for a rename, 100 otherwise

    def follow(self, line: int, end_line: int) -> int | None:
        """The new first line of old lines `line..end_line` (one-indexed), None if touched."""
        if self.new_path is None:
            return None
        lasts, shifts = self._by_last_line
        index = bisect_left(lasts, line)  # the hunks before it: an update asks once a site
        if index < len(lasts):
            old_start, old_count, _, _ = self.hunks[index]
            if old_start < end_line if old_count == 0 else old_start <= end_line:
                return None  # lines inserted within the range, or some of its lines replaced
        return line + shifts[index]

    @cached_property
    def _by_last_line(self) -> tuple[list[int], list[int]]:
        """Each hunk's last old line (an insertion's: the line it follows), in order, and the
        shift of the lines after the first n hunks, for n from 0 to all of them."""
        lasts, shifts, shift = [], [0], 0
        for old_start, old_count, _, new_count in self.hunks:
            lasts.append(old_start + max(old_count, 1) - 1)
            shift += new_count - old_count
            shifts.append(shift)
        return lasts, shifts


@dataclass(frozen=True)
class LineMap:
    """Git's diff from `old` to `new`: each changed old file's lines, and where files were copied.

    A file not listed is unchanged: its lines are where they were.
    """

    old: str
    new: str
    files: Mapping[str, FileLines] = field(default_factory=dict)  # old path -> its diff
    copies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # old path -> copied to

    def follow(self, path: str, line: int, end_line: int) -> tuple[str, int] | None:
        """Where the old lines `line..end_line` of `path` are now, or None when the diff touched
        them or their file is gone."""
        changed = self.files.get(path)
        if changed is None:
            return (path, line)
        new_line = changed.follow(line, end_line)
        if new_line is None or changed.new_path is None:
            return None
        return (changed.new_path, new_line)

    def moved_to(self, path: str) -> tuple[str, ...]:
        """Other paths git says the file's text went to: its rename, then its copies."""
        changed = self.files.get(path)
        found = [changed.new_path] if changed and changed.new_path not in (None, path) else []
        return tuple(found + [p for p in self.copies.get(path, ()) if p not in found])


def line_map(repo: PinnedRepo, old_sha: str) -> LineMap:
    """Git's diff of the `.py` files from `old_sha` to the pin, renames and copies detected.

    RefError when the old commit is not at hand. A blob the fetch's size filter left out cannot
    be diffed (git would fetch it): its file counts as deleted, so its sites are compared by key.
    """
    old = repo.old_commit(old_sha)
    new = repo.pin.sha
    absent = repo.absent_objects(old, new)
    pathspecs = [_PY_FILES]
    if absent:  # git would fetch a left-out blob to diff it: its file counts as deleted
        pathspecs += [f":(exclude,literal){paths[0]}" for _, old_blob, new_blob, paths
                      in _raw_entries(repo, old, new, [_PY_FILES], "--no-renames")
                      if {old_blob, new_blob} & absent]
    raw, patches = _raw_and_patches(repo, old, new, pathspecs)
    if len(patches) != len(raw):  # a type change shows as two patches: map nothing, lose nothing
        raise SourceError(f"[{repo.spec.display}] diff-tree gave {len(raw)} files and "
                          f"{len(patches)} patches between {old[:12]} and {new[:12]}")
    files: dict[str, FileLines] = {}
    copies: dict[str, list[str]] = {}
    for (status, _, _, paths), patch in zip(raw, patches):
        kind = status[0]
        if kind == "A":
            continue
        if kind == "C":
            copies.setdefault(paths[0], []).append(paths[1])
            continue
        if kind == "D":
            files[paths[0]] = FileLines(None)
            continue
        similarity = int(status[1:]) if kind == "R" and status[1:] else 100
        files[paths[0]] = FileLines(paths[-1], tuple(_hunks(patch)), similarity)
    return LineMap(old, new, files, {k: tuple(sorted(v)) for k, v in copies.items()})


def _diff_tree(repo: PinnedRepo, old: str, new: str, pathspecs: list[str], *options: str) -> bytes:
    from crawler.git._cmd import GitFailed  # GitPython, imported by the commands that run git

    try:
        return repo.repo.run("diff-tree", "-r", "--no-abbrev", "--no-ext-diff", "--no-textconv",
                             "--no-color", "-M", "-C", *options, "--end-of-options", old, new,
                             "--", *pathspecs)
    except GitFailed as exc:
        raise SourceError(f"[{repo.spec.display}] git diff-tree failed: {exc.reason}") from None


Entry = tuple[str, str, str, list[str]]  # (status, old blob, new blob, paths) of a changed file


def _raw_entries(repo: PinnedRepo, old: str, new: str, pathspecs: list[str], *options: str
                 ) -> list[Entry]:
    """Each changed file's entry, in git's order."""
    return _read_raw(_diff_tree(repo, old, new, pathspecs, "-z", "--raw", *options))[0]


def _raw_and_patches(repo: PinnedRepo, old: str, new: str, pathspecs: list[str]
                     ) -> tuple[list[Entry], list[bytes]]:
    """`_raw_entries` and each file's patch (no context lines) in the same order, from one
    run, so that git detects renames and copies once. After the raw records git writes one
    NUL more, then the patches: a content line starts with `+`, `-` or a space, so only a
    header starts with `diff --git `."""
    out = _diff_tree(repo, old, new, pathspecs, "-z", "--raw", "-p", "-U0")
    entries, at = _read_raw(out)
    if out.startswith(b"\0", at):
        at += 1
    return entries, re.split(rb"(?m)^diff --git ", out[at:])[1:]


def _read_raw(out: bytes) -> tuple[list[Entry], int]:
    """The raw records `-z` writes at the start of `out` (each field ended by NUL), and where
    they end."""
    entries = []
    at = 0
    while out.startswith(b":", at):
        end = out.index(b"\0", at)
        meta = out[at + 1 : end].decode("ascii").split()
        status = meta[4]
        paths = []
        for _ in range(2 if status[0] in "RC" else 1):
            start, end = end + 1, out.index(b"\0", end + 1)
            paths.append(out[start:end].decode("utf-8", "surrogateescape"))
        entries.append((status, meta[2], meta[3], paths))
        at = end + 1
    return entries, at


def _hunks(patch: bytes) -> Iterator[Hunk]:
    """(old start, old count, new start, new count) of each `@@` line; a count left out is 1."""
    for line in patch.split(b"\n"):
        match = _HUNK.match(line) if line.startswith(b"@@ ") else None
        if match is not None:
            old_start, old_count, new_start, new_count = match.groups()
            yield (int(old_start), 1 if old_count is None else int(old_count),
                   int(new_start), 1 if new_count is None else int(new_count))
