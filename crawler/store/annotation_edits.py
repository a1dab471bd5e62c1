"""Record files whose annotation block alone was edited: checked by loading that block only.

People edit the `annotation:` block of a record and nothing else. A file so edited misses the
load cache (its bytes are new), and a full check parses all of it, the snippet and history
included; an update after annotations were written over a whole folder spent most of its time
there. The text outside the block is the same as a file that passed every check before, so the
new file's data is that file's with the block loaded alone in place of its annotation.

That holds only where the block cannot reach outside itself, which `edited_annotation` asks:
every line after `annotation:` is indented, a comment or blank (nothing at the margin that
YAML could read as another key, a document marker or a sequence), the lines end in a plain
newline, and the block loads, alone, as a mapping of the one key `annotation`. The text
outside it is noted only from a file where each line at the margin is a key of its own and
none is another `annotation` (`note_outside`), so the block is the document's only annotation.
A file whose block is the empty annotation (every record a first extract writes) is not noted:
its text is the edited file's with that block in place of the edited one, so its checked load
is found by those bytes (`_with_empty_block`), and the same shape is asked of it then.
Anything else is checked in full, and so is a file that does not pass: the full check
reports it, with its line in the file.
"""

from __future__ import annotations

from crawler.errors import RecordError
from crawler.store import schemas
from crawler.store.cache import Checked, LoadCache
from crawler.store.render import empty_annotation_text, split_at_annotation, top_level_keys
from crawler.store.safe_yaml import safe_load_text

_SEPARATOR = "\0"  # never in a YAML file (`safe_yaml.yaml_text` refuses it)


def edited_annotation(loads: LoadCache, text: str, where: str) -> Checked | None:
    """What a full check of `text` finds, where its annotation block alone differs from a file
    that passed every check (`note_outside`); None where it cannot be told that way, or where
    the file is broken (the full check then says how)."""
    parts = split_at_annotation(text)
    if parts is None or not _closed(*parts):
        return None
    before, block, after = parts
    known = loads.get_outside(_outside(before, after)) or _with_empty_block(loads, before, after)
    if known is None:
        return None
    try:
        loaded = safe_load_text(block, where)
    except RecordError:
        return None  # the full check names the line in the file
    if not isinstance(loaded, dict) or list(loaded) != ["annotation"]:
        return None
    data = {key: loaded["annotation"] if key == "annotation" else value
            for key, value in known[0].items()}
    if not schemas.passes(data, "record"):
        return None  # the full check names what is wrong, and where
    return data, block if block.endswith("\n") else block + "\n"


def note_outside(loads: LoadCache, parts: tuple[str, str, str] | None, raw_key: str,
                 checked: Checked) -> None:
    """Note the text outside the annotation block of a file that passed every check, stored
    under `raw_key` (`LoadCache.put`), when that block is its annotation exactly (`checked`
    kept it). `parts`: `split_at_annotation` of the file's text, which its caller has made."""
    if parts is None or parts[1] == empty_annotation_text() or not _simple(parts, checked):
        return  # the empty block: its file is found by its own bytes (`_with_empty_block`)
    loads.put_outside(_outside(parts[0], parts[2]), raw_key)


def _simple(parts: tuple[str, str, str], checked: Checked) -> bool:
    """Whether a file that passed every check, split as `parts`, has the shape a note needs."""
    data, kept = checked
    if kept is None or not _closed(*parts) or "annotation" not in data:
        return False
    # a key written over two lines, or a second annotation, is not this simple shape
    return top_level_keys(parts[0]) + top_level_keys(parts[2]) + 1 == len(data)


def _with_empty_block(loads: LoadCache, before: str, after: str) -> Checked | None:
    """What a checked load found in the file that reads `before` and `after` around the empty
    annotation block, where that file has the shape `note_outside` would have noted."""
    parts = (before, empty_annotation_text(), after)
    text = "".join(parts)
    try:
        checked = loads.get_uncounted(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # not the bytes of any file
    if checked is None or split_at_annotation(text) != parts or not _simple(parts, checked):
        return None
    return checked


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


def _outside(before: str, after: str) -> bytes:
    return (before + _SEPARATOR + after).encode("utf-8", "surrogatepass")
