"""Record and manifest files as text: one YAML document each, joined from blocks dumped apart.

A record has two owners. The crawler writes `status`, `extracted` and `history`; the `annotation`
block belongs to people and is carried over as the exact text it had in the file, so that a
rewrite never reformats a person's words or drops their comments. Blocks that recur across a
run's records (the pin, a related item, a history) are rendered once; a site's block can be
rendered ahead, while the workers still parse (`SiteBlocks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict
from functools import cache, lru_cache
from typing import Any

from crawler.errors import RecordError
from crawler.records import (
    SCHEMA_VERSION,
    ErrorRecord,
    History,
    Manifest,
    RaiseSite,
    Related,
    empty_annotation,
)
from crawler.store.documents import history_data, manifest_data, site_data, versions_data
from crawler.store.safe_yaml import block_text, dump_yaml, indented, safe_load_text


class SiteBlocks:
    """Sites' parts of the `extracted` block, rendered ahead of `record_text`, which joins them.

    Bounded: a caller that renders ahead and never writes (a batch worker) holds at most `limit`.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._blocks: dict[RaiseSite, str] = {}

    def render(self, sites: Iterable[RaiseSite]) -> None:
        if len(self._blocks) > self.limit:
            self._blocks.clear()
        for site in sites:
            if site not in self._blocks:
                self._blocks[site] = _nested(site_data(site))

    def get(self, site: RaiseSite) -> str | None:
        return self._blocks.get(site)


def record_text(record: ErrorRecord, blocks: SiteBlocks | None = None) -> str:
    """The whole file of a record, one YAML document, joined from blocks dumped apart.

    The annotation block is the exact text it was read with, when it was read from a file.
    """
    site_block = (blocks.get(record.site) if blocks is not None else None
                  ) or _nested(site_data(record.site))
    return (block_text({"schema_version": SCHEMA_VERSION, "id": record.id, "status": record.status})
            + "extracted:\n" + _pin_text(record.repo, record.commit, record.url) + site_block
            + _derived_text(record) + annotation_text(record) + _history_text(record.history)
            + (block_text(versions_data(record.versions)) if record.versions is not None else ""))


def manifest_text(manifest: Manifest) -> str:
    return block_text(manifest_data(manifest))


def annotation_text(record: ErrorRecord) -> str:
    """The record's annotation block: as it was read, or dumped from its data."""
    annotation = record.annotation
    if annotation.text is not None:
        return annotation.text
    if annotation.data == empty_annotation().data:
        return empty_annotation_text()
    return dump_yaml({"annotation": annotation.data})


@cache
def empty_annotation_text() -> str:
    return dump_yaml({"annotation": empty_annotation().data})


def _nested(data: dict[str, Any]) -> str:
    """A mapping dumped as it stands one level down: every non-empty line indented by two."""
    return indented(block_text(data))


def _derived_text(record: ErrorRecord) -> str:
    """`_nested` of the derived part of `extracted_data(record)`, with each related item rendered once a run.

    A record names its related records, and each of those names it back: the same few items
    recur across thousands of records, and dumping them costs more than the rest of the file.
    """
    if not record.related:
        related = "related: []\n"
    else:
        related = "related:\n" + "".join(_related_item(r) for r in record.related)
    return indented(related + block_text({"evidence": [asdict(e) for e in record.evidence]}))


@lru_cache(maxsize=1 << 16)
def _related_item(related: Related) -> str:
    """One item of a `related` list, as a block sequence under its key writes it."""
    return "- " + indented(block_text({"id": related.id, "reason": related.reason}))[2:]


@lru_cache(maxsize=1 << 10)
def _pin_text(repo: str, commit: str, url: str | None) -> str:
    """The pin's part of the `extracted` block: the same for every record of a run."""
    return _nested({"repo": repo, "commit": commit, "url": url})


@lru_cache(maxsize=1 << 10)
def _history_text(history: History | None) -> str:
    """The history block: most records of a run share theirs."""
    return dump_yaml({"history": history_data(history)})


# ---------------------------------------------------------------- the annotation block


def annotation_block(text: str) -> str | None:
    """The exact lines of the top-level `annotation:` block, comments included."""
    return block_of(split_at_annotation(text))


def block_of(parts: tuple[str, str, str] | None) -> str | None:
    """`annotation_block` of the text `split_at_annotation` made `parts` of."""
    if parts is None:
        return None
    block = parts[1]
    return block if block.endswith("\n") else block + "\n"


def split_at_annotation(text: str) -> tuple[str, str, str] | None:
    """The text before the top-level `annotation:` block, the block's exact lines, and the text
    after it (None: no such block); the three joined are `text`."""
    if _only_newlines(text):
        return _split_at_newlines(text)
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("annotation:")), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not _starts_top_level_key(lines[end]):
        end += 1
    return "".join(lines[:start]), "".join(lines[start:end]), "".join(lines[end:])


def _split_at_newlines(text: str) -> tuple[str, str, str] | None:
    """`split_at_annotation` of a text whose only line break is `\n`, found by searching the
    text rather than splitting it: every record written calls this."""
    if text.startswith("annotation:"):
        start = 0
    else:
        start = text.find("\nannotation:") + 1
        if not start:
            return None
    following = text.find("\n", start) + 1
    found = _KEY_LINE.search(text, following) if following else None
    end = found.start() if found is not None else len(text)
    return text[:start], text[start:end], text[end:]


def top_level_keys(text: str) -> int:
    """How many lines of `text` start a top-level key (as `annotation_block` tells them)."""
    if _only_newlines(text):
        return len(_KEY_LINE.findall(text))
    return sum(map(_starts_top_level_key, text.splitlines()))


def _starts_top_level_key(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("#", "-", "..."))


# `_starts_top_level_key` as a search, for texts whose lines end in `\n` alone (`\s` is
# `str.isspace`); a line break `str.splitlines` knows besides sends a text the long way.
_KEY_LINE = re.compile(r"^(?!\.\.\.)[^\s#-]", re.MULTILINE)
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what `splitlines` breaks at, but `\n`


def _only_newlines(text: str) -> bool:
    """Whether `\n` is the only line break in `text`: one search of the text per other break,
    each a scan of its bytes, where a pattern of all of them tried each character in turn."""
    return not any(map(text.__contains__, _OTHER_BREAKS))


def kept_annotation_block(text: str, data: dict[str, Any], where: str) -> str | None:
    """The annotation block to write back as it stands, or None where its layout is unusual."""
    block = annotation_block(text)
    if block is None or (block == empty_annotation_text()
                         and data.get("annotation") == empty_annotation().data):
        return block
    try:
        reparsed = safe_load_text(block, where)
    except RecordError:
        reparsed = None
    if not isinstance(reparsed, dict) or reparsed.get("annotation") != data.get("annotation"):
        return None  # an unusual layout: fall back to writing the data itself
    return block

