"""A stand-in for crawler/pin.py (being written on its own branch), for local test repos only.

It follows the agreed interface: `pin(source, ref, cache_dir=, name=) -> PinnedRepo` with `.pin`,
`.list_files()`, `.read_blobs(shas)`, `.changed_paths(old_sha)`, used as a context manager.
conftest.py installs it only while `crawler.pin` cannot be imported.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from crawler.errors import RefError
from crawler.records import Pin, SourceFile


class PinnedRepo:
    def __init__(self, path: Path, pinned: Pin) -> None:
        self.path = path
        self.pin = pinned

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True,
                              text=True).stdout

    def list_files(self) -> list[SourceFile]:
        out = self._git("ls-tree", "-r", "-l", "-z", self.pin.sha)
        files = []
        for item in out.split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, _, blob, size = meta.split()
            files.append(SourceFile(path, blob, mode, int(size) if size != "-" else 0))
        return sorted(files, key=lambda f: f.path)

    def read_blobs(self, shas: list[str]) -> Iterator[tuple[str, bytes]]:
        for sha in shas:
            data = subprocess.run(["git", "cat-file", "blob", sha], cwd=self.path, check=True,
                                  capture_output=True).stdout
            yield sha, data

    def changed_paths(self, old_sha: str) -> tuple[dict[str, str], set[str]]:
        out = self._git("diff", "--name-status", "-M", "-z", old_sha, self.pin.sha)
        parts = out.split("\0")
        renames: dict[str, str] = {}
        changed: set[str] = set()
        i = 0
        while i < len(parts) and parts[i]:
            status = parts[i]
            if status.startswith(("R", "C")):
                old, new = parts[i + 1], parts[i + 2]
                if status.startswith("R"):
                    renames[old] = new
                changed.update((old, new))
                i += 3
            else:
                changed.add(parts[i + 1])
                i += 2
        return renames, changed

    def __enter__(self) -> PinnedRepo:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        return None


def pin(source: str, ref: str = "HEAD", *, cache_dir: Path | None = None,
        name: str | None = None) -> PinnedRepo:
    path = Path(source)
    try:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=path,
                             check=True, capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError as error:
        raise RefError(f"[{source}] no commit {ref!r}") from error
    pinned = Pin(source=source, host="local", owner="local", name=name or path.name, ref=ref,
                 sha=sha)
    return PinnedRepo(path, pinned)
