"""Output folders for tests: a pinned repository's sites collected from source text, no git."""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawler.parse.file_tasks import visit_file
from crawler.pipeline import Collected
from crawler.records import ExtractOptions, Pin

REPO = "https://github.com/acme/widgets"
SHA_A = "a" * 40
SHA_B = "b" * 40


def make_pin(sha: str = SHA_A) -> Pin:
    return Pin(source=REPO, host="github.com", owner="acme", name="widgets", ref="main", sha=sha,
               web_url=REPO)


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def collected(files: dict[str, str], sha: str = SHA_A) -> Collected:
    """What `collect` would return for these files at this commit."""
    outcomes = []
    for path in sorted(files):
        data = files[path].encode("utf-8")
        outcomes.append(visit_file(path, blob_sha(data), data))
    return Collected(make_pin(sha), ExtractOptions(), len(files), (), tuple(outcomes), 0.0)


def module(name: str, count: int, offset: int = 0, extra: str = "") -> str:
    """A module of `count` functions that each raise their own message."""
    head = "\n" * offset
    body = "".join(
        f"def {name}_{i}(value):\n"
        f"    if value < {i}:\n"
        f"        raise ValueError(f\"{name} {i}: bad value {{value}}\")\n"
        f"    return value\n\n\n"
        for i in range(count)
    )
    return head + body + extra


def folder_of(root: Path) -> Path:
    return root / "github.com" / "acme" / "widgets"


ANNOTATION = re.compile(r"^annotation:\n(?:[ #].*\n|\n)*", re.MULTILINE)


def annotate(path: Path, words: str) -> str:
    """Write a person's annotation into a record file, with a comment; the new block's text."""
    block = (
        "annotation:\n"
        "  # written by hand: keep this comment\n"
        "  written_for: null\n"
        f"  what_it_means: {words!r}\n"
        "  solutions:\n"
        "  - check the value first\n"
        "  example_fix: null\n"
        "  defensive_patterns: []\n"
        "  prevention: []\n"
        "  when_it_happens: null\n"
        "  related: []\n"
    )
    text = path.read_text(encoding="utf-8")
    new, count = ANNOTATION.subn(block, text, count=1)
    assert count == 1, text
    path.write_text(new, encoding="utf-8")
    return block


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under the folder but the lock, by relative path."""
    files = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath, name)
            rel = path.relative_to(folder).as_posix()
            # the lock; lookup's cache and the rollback journal a killed run may leave beside it
            # (SQLite rolls it back at the next open)
            if rel != ".crawler.lock" and not rel.startswith("lookup.sqlite"):
                files[rel] = path.read_bytes()
    return files


def record_texts(folder: Path) -> dict[str, bytes]:
    """Each record file of a repository folder by its name, as bytes (what a rewrite changes)."""
    return {p.name: p.read_bytes() for p in sorted((folder / "errors").glob("*.yaml"))}


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s result (or its exception), or a failure where it has not returned in time."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds}s: a special file stalled it"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
