"""What a batch finds already written: each repository folder's pin, options and counts.

Read from the manifests under the output roots, so a re-run skips what is up to date.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from crawler.errors import CrawlerError
from crawler.records import ExtractOptions
from crawler.store.manifest_file import MANIFEST
from crawler.store.plain_files import read_plain
from crawler.store.safe_yaml import safe_load_text


@dataclass(frozen=True)
class Known:
    """A repository folder already written: enough of its manifest to tell if it is up to date."""

    folder: Path
    slug: str  # host/owner/name, the folder under its output root
    source: str
    sha: str
    options: ExtractOptions
    crawler_version: str
    files: int
    records: int


def scan_outputs(roots: set[Path]) -> list[Known]:
    """Every manifest under the output roots; a manifest that cannot be read counts as absent."""
    known = []
    for root in sorted(roots):
        for folder in _manifest_folders(root):
            head = _manifest_head(folder / MANIFEST)
            if head is not None:
                known.append(replace(head, slug=folder.relative_to(root).as_posix()))
    return known


def _manifest_folders(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        if MANIFEST in filenames:
            dirnames.clear()  # a repository folder: its errors/ may hold thousands of files
            yield Path(dirpath)
        else:
            dirnames.sort()


def _manifest_head(path: Path) -> Known | None:
    """What a manifest says of its pin, parsed without its long lists of skipped and read files.

    `manifest_data` writes the pin, options and counts first; a manifest laid out otherwise is parsed
    whole. One that cannot be read at all counts as absent: the repository is extracted again.
    """
    try:
        text = read_plain(path).decode("utf-8")  # a link or a FIFO counts as absent, unopened
        head = text.split("\nexception_classes:", 1)[0]
        for part in (head, text) if head != text else (text,):
            data = safe_load_text(part, str(path))  # refuses tags, aliases, deep nesting
            if isinstance(data, dict) and {"source", "commit", "options", "counts",
                                           "crawler_version"} <= data.keys():
                break
        options = data["options"]
        return Known(
            folder=path.parent, slug="", source=data["source"], sha=data["commit"],
            options=ExtractOptions(include=tuple(options["include"]),
                                   exclude=tuple(options["exclude"]),
                                   include_tests=options["include_tests"],
                                   max_file_bytes=options["max_file_bytes"]),
            crawler_version=data["crawler_version"],
            files=data["counts"]["files"], records=data["counts"]["records"],
        )
    except (OSError, UnicodeDecodeError, yaml.YAMLError, CrawlerError, KeyError, TypeError):
        return None
