from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from crawler.git.permalink import permalink
from crawler.pipeline import extract
from crawler.records import Pin
from tests.helpers.gitrepo import GIT_ENV, GitRepo

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("host", "line", "end", "expected"),
    [
        ("github.com", 10, 12, f"https://github.com/o/n/blob/{SHA}/a%20b/c.py#L10-L12"),
        ("github.com", 10, 10, f"https://github.com/o/n/blob/{SHA}/a%20b/c.py#L10"),
        ("gitlab.com", 10, 12, f"https://gitlab.com/o/n/-/blob/{SHA}/a%20b/c.py#L10-12"),
        ("gitlab.example.org", 3, 3, f"https://gitlab.example.org/o/n/-/blob/{SHA}/a%20b/c.py#L3"),
        ("bitbucket.org", 1, 2, f"https://bitbucket.org/o/n/src/{SHA}/a%20b/c.py#lines-1:2"),
        ("codeberg.org", 1, 2, f"https://codeberg.org/o/n/src/commit/{SHA}/a%20b/c.py#L1-L2"),
        ("git.example.org", 1, 2, None),
    ],
)
def test_permalinks(host: str, line: int, end: int, expected: str | None) -> None:
    pin = Pin(source="x", host=host, owner="o", name="n", ref="main", sha=SHA,
              web_url=f"https://{host}/o/n")
    assert permalink(pin, "a b/c.py", line, end) == expected


def test_no_permalink_without_a_web_url() -> None:
    pin = Pin(source=".", host="local", owner="local", name="n", ref="HEAD", sha=SHA)
    assert permalink(pin, "c.py", 1, 1) is None


# --- tree entries a browser would resolve (issue 14, case 10) -----------------------------

DOT_SEGMENT = re.compile(r"(?:\.|%2e){1,2}", re.IGNORECASE)  # WHATWG: %2e is a dot too


def browser_safe(url: str, sha: str) -> bool:
    """No segment after the sha that a WHATWG URL parser drops or climbs over, and no
    backslash (which it reads as '/')."""
    path = url.split("#")[0].split(f"/blob/{sha}/", 1)[1]
    return "\\" not in path and not any(DOT_SEGMENT.fullmatch(part) for part in path.split("/"))


def raising(message: str) -> bytes:
    return f"def f():\n    raise ValueError({message!r})\n".encode()


def test_entries_named_dot_dot_get_no_link_that_resolves_elsewhere(tmp_path: Path) -> None:
    """A tree made with `git mktree`: `..`, `.`, `%2e%2e` and a backslash, end to end."""
    repo = GitRepo(tmp_path / "dots")
    repo.git("config", "remote.origin.url", "https://github.com/acme/dots.git")

    def git(*args: str, data: bytes = b"") -> str:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
        return subprocess.run(["git", *args], cwd=repo.path, input=data, env=env, check=True,
                              capture_output=True).stdout.decode().strip()

    def tree(entries: dict[str, tuple[str, str]]) -> str:
        lines = "".join(f"{mode} {kind} {sha}\t{name}\n" for name, (mode, kind, sha) in entries.items())
        return git("mktree", data=lines.encode())

    def blob(message: str) -> tuple[str, str, str]:
        return ("100644", "blob", git("hash-object", "-w", "--stdin", data=raising(message)))

    def folder(message: str) -> tuple[str, str, str]:
        return ("040000", "tree", tree({"x.py": blob(message)}))

    root = tree({"..": folder("up"), ".": folder("here"), "%2e%2e": folder("encoded"),
                 "a\\b.py": blob("backslash"), "ok.py": blob("plain")})
    sha = git("commit-tree", root, "-m", "dots")
    git("update-ref", "refs/heads/main", sha)

    result = extract(str(repo.path), ref="main", output_root=tmp_path / "out", jobs=1,
                     evidence=False)
    urls = {r.site.path: r.url for r in result.merged.records}
    base = f"https://github.com/acme/dots/blob/{sha}"
    assert urls == {"../x.py": None, "./x.py": None,
                    "%2e%2e/x.py": f"{base}/%252e%252e/x.py#L2",
                    "a\\b.py": f"{base}/a%5Cb.py#L2", "ok.py": f"{base}/ok.py#L2"}
    assert all(browser_safe(url, sha) for url in urls.values() if url is not None)
    assert not browser_safe(f"{base}/%2E%2E/x.py", sha)  # the check itself sees the trap
    written = sorted(p.name for p in (result.folder / "errors").iterdir())
    assert written == sorted(f"{r.id}.yaml" for r in result.merged.records)


@pytest.mark.parametrize("path", ["..", "a/../b.py", "./b.py", "a/./b.py", "a//b.py"])
def test_dot_segments_have_no_permalink(path: str) -> None:
    pin = Pin(source="x", host="github.com", owner="o", name="n", ref="main", sha=SHA,
              web_url="https://github.com/o/n")
    assert permalink(pin, path, 1, 1) is None


def test_a_path_that_is_not_utf8_is_linked_by_its_bytes() -> None:
    pin = Pin(source="x", host="github.com", owner="o", name="n", ref="main", sha=SHA,
              web_url="https://github.com/o/n")
    path = b"caf\xe9.py".decode("utf-8", "surrogateescape")
    assert permalink(pin, path, 1, 1) == f"https://github.com/o/n/blob/{SHA}/caf%E9.py#L1"
