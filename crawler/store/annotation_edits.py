"""Record files whose annotation block alone was edited: checked by loading that block only.

People edit the `annotation:` block of a record and nothing else. A file so edited misses the
load cache (its bytes are new), and a full check parses all of it, the snippet and history
included; an update after annotations were written over a whole folder spent most of its time
there. The text outside the block is the same as a file that passed every check before, so the
new file's data is that file's with the block loaded alone in place of its annotation.

That holds only where the block cannot reach outside itself, which `edited_annotation` asks:
every line after `annotation:` is indented, a comment or blank (nothing at the margin that
YAML could read as another key, a document marker or a sequence), the lines end in a plain
newline, and the block loads, alone, as a mapping of the one key `annotation`. The file it was
before the edit is found by its name (`LoadCache.note_file`: the key of the bytes each record
file last had, written or checked): its text is the edited file's with its own kept block in
place of the edited one, which the key confirms. Its shape is asked then: each line at the
margin a key of its own and none another `annotation`, so the block is the document's only
annotation (`_simple`). A file never noted whose block is the empty annotation (every record
a first extract writes) is found the same way by the bytes it has with that block
(`_with_empty_block`). Anything else is checked in full, and so is a file that does not pass:
the full check reports it, with its line in the file.
"""

from __future__ import annotations

from pathlib import Path

from crawler.errors import RecordError
from crawler.store import schemas
from crawler.store.cache import Checked, LoadCache
from crawler.store.render import empty_annotation_text, split_at_annotation, top_level_keys
from crawler.store.safe_yaml import safe_load_text


def edited_annotation(loads: LoadCache, text: str, path: Path) -> Checked | None:
    """What a full check of `text`, the record file at `path`, finds, where its annotation
    block alone differs from the file noted there (`LoadCache.note_file`) that passed every
    check; None where it cannot be told that way, or where the file is broken (the full check
    then says how)."""
    parts = split_at_annotation(text)
    if parts is None or not _closed(*parts):
        return None
    before, block, after = parts
    known = _as_noted(loads, path, before, after) or _with_empty_block(loads, before, after)
    if known is None:
        return None
    try:
        loaded = safe_load_text(block, str(path))
    except RecordError:
        return None  # the full check names the line in the file
    if not isinstance(loaded, dict) or list(loaded) != ["annotation"]:
        return None
    data = {key: loaded["annotation"] if key == "annotation" else value
            for key, value in known[0].items()}
    if not schemas.passes(data, "record"):
        return None  # the full check names what is wrong, and where
    return data, block if block.endswith("\n") else block + "\n"


def _as_noted(loads: LoadCache, path: Path, before: str, after: str) -> Checked | None:
    """What a checked load found in the file last noted at `path`, where that file reads
    `before` and `after` around its own kept block, and has the shape an edit needs."""
    key = loads.noted_key(path)
    checked = loads.get_by_key(key) if key is not None else None
    if checked is None or checked[1] is None:
        return None
    parts = (before, checked[1], after)
    # another key: the file noted reads otherwise outside its block
    return checked if _key_of(loads, parts) == key and _shaped(parts, checked) else None


def _simple(parts: tuple[str, str, str], checked: Checked) -> bool:
    """Whether a file that passed every check, split as `parts`, has the shape an edit needs."""
    data, kept = checked
    if kept is None or not _closed(*parts) or "annotation" not in data:
        return False
    # a key written over two lines, or a second annotation, is not this simple shape
    return top_level_keys(parts[0]) + top_level_keys(parts[2]) + 1 == len(data)


def _with_empty_block(loads: LoadCache, before: str, after: str) -> Checked | None:
    """What a checked load found in the file that reads `before` and `after` around the empty
    annotation block, where that file has the shape an edit needs."""
    parts = (before, empty_annotation_text(), after)
    key = _key_of(loads, parts)
    checked = loads.get_by_key(key) if key is not None else None
    return checked if checked is not None and _shaped(parts, checked) else None


def _key_of(loads: LoadCache, parts: tuple[str, str, str]) -> str | None:
    """The load cache's key of the file `parts` make up; None: not the bytes of any file."""
    try:
        return loads.key("".join(parts).encode("utf-8"))
    except UnicodeEncodeError:
        return None


def _shaped(parts: tuple[str, str, str], checked: Checked) -> bool:
    """Whether the file `parts` make up splits as `parts` and has the simple shape."""
    return split_at_annotation("".join(parts)) == parts and _simple(parts, checked)


def _closed(before: str, block: str, after: str) -> bool:
    """Whether the block is lines of its own: after a plain newline, each line after the first
    indented, a comment or blank, and no line break but `\\n` in it."""
    if before and not before.endswith("\n"):
        return False
    lines = block.split("\n")
    if block.endswith("\n"):
        lines.pop()
    elif after:
        return False
    if lines != block.splitlines():
        return False  # a line break YAML may see that a plain split does not
    return all(not line.strip() or line[0] in " #" for line in lines[1:])
