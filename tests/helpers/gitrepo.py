"""Real git repositories for tests, built with the git command in a temporary folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Fixed identities and dates: the same steps give the same shas on every machine.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": os.devnull,
}


class GitRepo:
    """A working repository that a test writes files into and commits, step by step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        self._tick += 1
        date = f"2024-01-01T00:{self._tick // 60 % 60:02d}:{self._tick % 60:02d}+00:00"
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV,
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        result = subprocess.run(["git", *args], cwd=self.path, env=env, check=True,
                                capture_output=True, text=True)
        return result.stdout.strip()

    def write(self, relpath: str, text: str | bytes) -> Path:
        target = self.path / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def remove(self, relpath: str) -> None:
        self.git("rm", "-q", relpath)

    def move(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def tag(self, name: str, annotated: bool = False) -> None:
        if annotated:
            self.git("tag", "-a", name, "-m", name)
        else:
            self.git("tag", name)

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("branch", name, start)

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)
