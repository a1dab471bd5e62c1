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
from crawler.store.documents import (
    entry_points_data,
    history_data,
    manifest_data,
    site_data,
    versions_data,
)
from crawler.store.safe_yaml import (
    block_text,
    dump_yaml,
    indented,
    line_of_field,
    safe_load_text,
)


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
    return indented(related + block_text({"evidence": [asdict(e) for e in record.evidence],
                                          **entry_points_data(record)}))


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
    after it (None: no such block); the three joined are `text`.

    Lines end at `\n` alone: a U+2028, U+0085 or `\r` inside a person's quoted value stays
    inside the block's bytes. YAML breaks lines there too, so a block is kept only where it,
    loaded alone, is the annotation the whole file holds (`kept_annotation_block`).
    """
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
    """How many lines of `text` (ended by `\n` alone) start a top-level key, as
    `split_at_annotation` tells them."""
    return len(_KEY_LINE.findall(text))


# A line that starts a top-level key: not indented (`\s` is `str.isspace`), no comment, no
# sequence item, no document end. `^` of a multi-line pattern follows `\n` alone.
_KEY_LINE = re.compile(r"^(?!\.\.\.)[^\s#-]", re.MULTILINE)


def kept_annotation_block(text: str, data: dict[str, Any], where: str) -> str | None:
    """The annotation block to write back byte for byte (None: the file has no annotation).

    A person's block is never written again from its loaded data, which would drop their
    comments and layout: a block that cannot be kept as it stands (its key quoted or spaced,
    a line at the margin or a line break YAML ends it at inside it) is a `RecordError` naming
    its line, and the file is left as it is.
    """
    if "annotation" not in data:
        return None
    parts = split_at_annotation(text)
    if parts is None:
        raise RecordError("the annotation key is not written `annotation:` at the start of a "
                          "line; write it so (no quotes, no space before the colon), it was left "
                          "as it is", path=where, line=line_of_field(text, ["annotation"]))
    block = block_of(parts) or ""
    if block == empty_annotation_text() and data["annotation"] == empty_annotation().data:
        return block
    try:
        alone = safe_load_text(block, where)
    except RecordError:
        alone = None
    if alone != {"annotation": data["annotation"]}:
        raise RecordError("the annotation block reads otherwise on its own than in the file (a "
                          "line at the margin inside it, or a U+2028, U+2029 or U+0085 outside "
                          "quotes); indent every line of the block, it was left as it is",
                          path=where, line=parts[0].count("\n") + 1)
    return block
