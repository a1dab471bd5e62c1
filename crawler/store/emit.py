"""Records and manifests to and from YAML: safe loading only, atomic writes, schema checks.

A record has two owners. The crawler writes `status`, `extracted` and `history`; the `annotation`
block belongs to people and is carried over as the exact text it had in the file, so that a
rewrite never reformats a person's words or drops their comments.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, fields
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from crawler.errors import OutputError, RecordError, SchemaError
from crawler.records import (
    SCHEMA_VERSION,
    Annotation,
    Counts,
    ErrorRecord,
    Evidence,
    ExtractOptions,
    FileEntry,
    History,
    Manifest,
    Pin,
    RaiseCounts,
    RaiseSite,
    Related,
    Skipped,
    Template,
    empty_annotation,
)
from crawler.store._loadcache import MANIFEST as MANIFEST_KIND
from crawler.store._loadcache import Checked, LoadCache, is_plain
from crawler.store._quickschema import surely_valid

if TYPE_CHECKING:
    import jsonschema

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
ERRORS_DIR = "errors"
MANIFEST = "manifest.yaml"
TEMP_SUFFIX = ".tmp"  # write_atomic's temp files: ".<name>.<random>.tmp", beside their target

ID_PATTERN = re.compile(r"[0-9a-f]{16}")  # always with fullmatch: `$` would let "…\n" through
MAX_YAML_BYTES = 64 * 1024 * 1024  # far above any real record; a bigger file is refused unread
# Characters YAML 1.1 does not allow in a stream (libyaml refuses them without a line number).
_NOT_YAML_CHAR = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MAX_YAML_DEPTH = 64  # records nest 4 deep; libyaml's composer recurses and crashes near 10**5

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Safe dumper that writes multi-line strings as literal blocks, for readable diffs."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    value = _writable(value)
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _writable(value: str) -> str:
    """UTF-8 cannot hold a lone surrogate: written as the `\\udc80` a traceback would show."""
    if not value.isascii() and _SURROGATE.search(value):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


class FlowList(list):  # type: ignore[type-arg]
    """A short list written on one line: `[1, 2, 3]`."""


def _represent_flow(dumper: yaml.SafeDumper, value: FlowList) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(FlowList, _represent_flow)


def dump_yaml(data: Any) -> str:
    """Deterministic YAML: keys in the order given, no line folding, unicode kept.

    PyYAML ends a document whose last scalar is a `|+` block (text ending in blank lines) with
    an explicit `...`; a record is three dumps one after the other, and a `...` between them
    would end the document early. Without it the block keeps its blank lines up to the next
    top-level key, so the value reads back the same.
    """
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 16,
                     default_flow_style=False)
    return text[:-4] if text.endswith("\n...\n") else text


# ---------------------------------------------------------------- records to data and back


def template_data(template: Template) -> dict[str, Any]:
    return {
        "kind": template.kind,
        "template": template.template,
        "placeholders": list(template.placeholders),
        "regex": template.regex,
        "argument": template.argument,
        "defined_at": template.defined_at,
        "display": template.display,
    }


def extracted_data(record: ErrorRecord) -> dict[str, Any]:
    """The crawler-owned facts of a record, in the order they are written."""
    return {**_pin_data(record), **site_data(record.site), **_derived_data(record)}


def _pin_data(record: ErrorRecord) -> dict[str, Any]:
    return {"repo": record.repo, "commit": record.commit, "url": record.url}


def site_data(site: RaiseSite) -> dict[str, Any]:
    """What one raise site says, read off its file."""
    return {
        "path": site.path,
        "line": site.line,
        "end_line": site.end_line,
        "column": site.column,
        "class": site.class_name,
        "function": site.function,
        "qualname": site.qualname,
        "exception": site.exception,
        "exception_qualname": site.exception_qualname,
        "factory": site.factory,
        "message": template_data(site.message),
        "cause": site.cause,
        "condition": site.condition,
        "snippet_line": site.snippet_line,
        "snippet": site.snippet,
    }


def _derived_data(record: ErrorRecord) -> dict[str, Any]:
    return {"related": [{"id": r.id, "reason": r.reason} for r in record.related],
            "evidence": [asdict(e) for e in record.evidence]}


def history_data(history: History | None) -> dict[str, Any]:
    history = history or History(first_seen="")
    return asdict(history)


# A site's part of the `extracted` block, rendered while the workers still parse (the crawler's
# own process is otherwise idle then); bounded, since a batch worker never writes records.
_SITE_BLOCKS: dict[RaiseSite, str] = {}
_SITE_BLOCKS_MAX = 100_000


def prerender_sites(sites: Iterable[RaiseSite]) -> None:
    """Render the sites' blocks ahead of `record_text`, which then only joins them."""
    if len(_SITE_BLOCKS) > _SITE_BLOCKS_MAX:
        _SITE_BLOCKS.clear()
    for site in sites:
        if site not in _SITE_BLOCKS:
            _SITE_BLOCKS[site] = _nested(site_data(site))


def forget_prerendered() -> None:
    _SITE_BLOCKS.clear()


def _nested(data: dict[str, Any]) -> str:
    """A mapping dumped as it stands one level down: every non-empty line indented by two."""
    return _indented(block_text(data))


# How PyYAML (libyaml's emitter) writes a one-line string of printable ASCII, as a mapping's
# value: plain, unless an indicator or an edge space forbids it or its resolver would read it
# back as another type (`'0'`, `'yes'`); then single-quoted. Anything else is dumped by PyYAML.
_ONE_LINE = re.compile(r"[\x20-\x7e]{1,1000}")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_BLOCK_INDICATOR = re.compile(r"^(?:---|\.\.\.|[?:-](?: |$))|:(?: |$)| #|^ | $")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


@lru_cache(maxsize=1 << 16)
def _scalar(value: str) -> str | None:
    if _ONE_LINE.fullmatch(value) is None:
        return None
    if (value[0] not in _FIRST_INDICATORS and _BLOCK_INDICATOR.search(value) is None
            and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG):
        return value
    return "'" + value.replace("'", "''") + "'"


# A multi-line string of printable ASCII is a literal block (`_represent_str`); libyaml keeps to
# it unless a line ends in a space or the text ends in blank lines.
_LITERAL = re.compile(r"[\x20-\x7e][\x20-\x7e\n]{0,100000}")


def _literal(value: str) -> str | None:
    if (_LITERAL.fullmatch(value) is None or "\n" not in value or " \n" in value
            or value.endswith((" ", "\n\n"))):
        return None
    indent = "2" if value.startswith(" ") else ""  # else its first spaces would read as indent
    chomp = "" if value.endswith("\n") else "-"
    return f"|{indent}{chomp}\n  " + _NEXT_LINE.sub("\n  ", value) + ("\n" if chomp else "")


def block_text(data: Mapping[str, Any]) -> str:
    """`dump_yaml(data)` for a mapping, its one-line scalars written without PyYAML.

    A mapping's block is its keys' blocks one after the other, so a key whose value is not
    simple (a multi-line or non-ASCII string, a list of mappings) is dumped alone by PyYAML.
    A property test holds it to PyYAML's output byte for byte.
    """
    if not data:
        return dump_yaml(data)
    parts = []
    for key, value in data.items():
        kind = type(value)
        if type(key) is not str or _scalar(key) != key:
            parts.append(dump_yaml({key: value}))
        elif value is None:
            parts.append(f"{key}: null\n")
        elif kind is bool:
            parts.append(f"{key}: {'true' if value else 'false'}\n")
        elif kind is int:
            parts.append(f"{key}: {value}\n")
        elif kind is str and (written := _scalar(value)) is not None:
            parts.append(f"{key}: {written}\n")
        elif kind is str and (block := _literal(value)) is not None:
            parts.append(f"{key}: {block}")
        elif kind is dict and value:
            parts.append(f"{key}:\n{_indented(block_text(value))}")
        elif kind is FlowList and all(type(item) is int for item in value):
            parts.append(f"{key}: [{', '.join(map(str, value))}]\n")
        elif kind is list and all(type(item) is str and _scalar(item) for item in value):
            parts.append(f"{key}:\n" + "".join(f"- {_scalar(item)}\n" for item in value)
                         if value else f"{key}: []\n")
        else:
            parts.append(dump_yaml({key: value}))
    return "".join(parts)


def _indented(text: str) -> str:
    if _ASCII_LINES.fullmatch(text):  # no line break but "\n": one substitution does it
        return ("" if text.startswith("\n") else "  ") + _NEXT_LINE.sub("\n  ", text)
    return "".join("  " + line if line != "\n" else line for line in text.splitlines(keepends=True))


_ASCII_LINES = re.compile(r"[\x20-\x7e\n]*")
_NEXT_LINE = re.compile(r"\n(?=[^\n])")  # a line break before a line that is not empty


def _derived_text(record: ErrorRecord) -> str:
    """`_nested(_derived_data(record))`, with each related item rendered once a run.

    A record names its related records, and each of those names it back: the same few items
    recur across thousands of records, and dumping them costs more than the rest of the file.
    """
    if not record.related:
        related = "related: []\n"
    else:
        related = "related:\n" + "".join(_related_item(r) for r in record.related)
    return _indented(related + block_text({"evidence": [asdict(e) for e in record.evidence]}))


@lru_cache(maxsize=1 << 16)
def _related_item(related: Related) -> str:
    """One item of a `related` list, as a block sequence under its key writes it."""
    return "- " + _indented(block_text({"id": related.id, "reason": related.reason}))[2:]


@lru_cache(maxsize=1 << 10)
def _pin_text(repo: str, commit: str, url: str | None) -> str:
    """The pin's part of the `extracted` block: the same for every record of a run."""
    return _nested({"repo": repo, "commit": commit, "url": url})


@lru_cache(maxsize=1 << 10)
def _history_text(history: History | None) -> str:
    """The history block: most records of a run share theirs."""
    return dump_yaml({"history": history_data(history)})


@cache
def _empty_annotation_text() -> str:
    return dump_yaml({"annotation": empty_annotation().data})


def record_text(record: ErrorRecord) -> str:
    """The whole file of a record, one YAML document, joined from blocks dumped apart.

    The annotation block is the exact text it was read with, when it was read from a file.
    """
    site_block = _SITE_BLOCKS.get(record.site) or _nested(site_data(record.site))
    return (block_text({"schema_version": SCHEMA_VERSION, "id": record.id, "status": record.status})
            + "extracted:\n" + _pin_text(record.repo, record.commit, record.url) + site_block
            + _derived_text(record) + _annotation_text(record) + _history_text(record.history))


def _annotation_text(record: ErrorRecord) -> str:
    annotation = record.annotation
    if annotation.text is not None:
        return annotation.text
    if annotation.data == empty_annotation().data:
        return _empty_annotation_text()
    return dump_yaml({"annotation": annotation.data})


def checked_of_written(record: ErrorRecord, text: str) -> Checked | None:
    """What `check_record_bytes` finds in `text`, the file `record_text(record)` made, unread.

    The data is the record's, as the YAML reads back (lists for tuples, a lone surrogate as
    its escape); a kept annotation block's data is the one loaded with it (see `Annotation`).
    The block is the annotation text the file holds, since a full load keeps it (it was kept
    when read, or it was dumped from the data). None where that cannot be told for sure: an
    annotation block the text does not hold as such, or data the schema refuses.
    """
    annotation = record.annotation
    try:
        data = _as_read_back({
            "schema_version": SCHEMA_VERSION, "id": record.id, "status": record.status,
            "extracted": extracted_data(record),
            "annotation": {} if annotation.text is not None else annotation.data,
            "history": history_data(record.history),
        })
    except _Unsure:
        return None
    if annotation.text is not None:  # read from this very block, not dumped: no trip to make
        if not is_plain(annotation.data):
            return None
        data["annotation"] = annotation.data
    block = _annotation_text(record)
    if annotation_block(text) != block or not _passes_record_schema(data):
        return None
    return data, block


def _passes_record_schema(data: dict[str, Any]) -> bool:
    """The schema check of a full load, at a sixth of its cost where the quick check can tell."""
    return surely_valid(data, _schema("record")) or _validator("record").is_valid(data)


class _Unsure(Exception):
    """A value whose trip through YAML `checked_of_written` cannot vouch for."""


def _as_read_back(value: Any) -> Any:
    """A record's data as a YAML load of its dump gives it back."""
    kind = type(value)
    if kind is str:
        return _writable(value)
    if kind in (bool, int, type(None)):
        return value
    if kind in (list, tuple, FlowList):
        return [_as_read_back(item) for item in value]
    if kind is dict:
        back = {}
        for key, item in value.items():  # the common scalars inline: a record has a hundred
            if type(key) is not str or _writable(key) is not key:
                raise _Unsure("key")
            kind = type(item)
            if kind is str:
                back[key] = item if item.isascii() else _writable(item)
            elif kind is int or kind is bool or item is None:
                back[key] = item
            else:
                back[key] = _as_read_back(item)
        return back
    raise _Unsure(kind.__name__)  # a float, a date: read back, it may not be the same value


def record_from_data(data: dict[str, Any], annotation_text: str | None) -> ErrorRecord:
    """An `ErrorRecord` from a loaded, schema-valid mapping."""
    ex = data["extracted"]
    message = ex["message"]
    site = RaiseSite(
        path=ex["path"],
        line=ex["line"],
        end_line=ex["end_line"],
        column=ex["column"],
        class_name=ex["class"],
        function=ex["function"],
        qualname=ex["qualname"],
        exception=ex["exception"],
        exception_qualname=ex["exception_qualname"],
        message=Template(
            kind=message["kind"],
            template=message["template"],
            placeholders=tuple(message["placeholders"]),
            regex=message["regex"],
            argument=message.get("argument"),
            defined_at=message.get("defined_at"),
            display=message.get("display", "str"),
        ),
        cause=ex["cause"],
        condition=ex["condition"],
        snippet=ex["snippet"],
        snippet_line=ex["snippet_line"],
        factory=ex.get("factory", False),
    )
    history = data.get("history") or {}
    # `related` and `evidence` came after schema version 1's first records: absent means none.
    related = tuple(Related(id=r["id"], reason=r["reason"]) for r in ex.get("related") or ())
    evidence = tuple(Evidence(**e) for e in ex.get("evidence") or ())
    return ErrorRecord(
        id=data["id"],
        status=data["status"],
        repo=ex["repo"],
        commit=ex["commit"],
        url=ex["url"],
        site=site,
        annotation=Annotation(data=data.get("annotation") or {}, text=annotation_text),
        history=History(
            first_seen=history.get("first_seen") or "",
            removed_in=history.get("removed_in"),
            previous_template=history.get("previous_template"),
        ),
        evidence=evidence,
        related=related,
    )


# ---------------------------------------------------------------- safe loading


def load_yaml_file(path: Path) -> tuple[Any, str]:
    """Load one YAML document safely: plain data only, no aliases, bounded depth; (data, text)."""
    text = yaml_text(read_capped(path), str(path))
    return safe_load_text(text, str(path)), text


def read_capped(path: Path) -> bytes:
    """A file's bytes, unless it is too large to be a record."""
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise RecordError(f"{size} bytes, too large for a record; it was left as it is",
                              path=str(path))
        return path.read_bytes()
    except OSError as error:
        raise RecordError(f"cannot read: {error.strerror}", path=str(path)) from error


def yaml_text(raw: bytes, where: str) -> str:
    """The text of a YAML file: UTF-8, and none of the characters YAML does not allow."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise RecordError(f"not UTF-8 text ({error.reason} at byte {error.start}); fix the file "
                          "by hand, it was left as it is", path=where, line=line) from error
    bad = _NOT_YAML_CHAR.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise RecordError(f"control character U+{ord(bad.group()):04X} (YAML allows none); fix the "
                          "file by hand, it was left as it is", path=where, line=line)
    return text


def safe_load_text(text: str, where: str) -> Any:
    """The data of one YAML document, after a scan of its events that refuses aliases and depth.

    The scan runs first because libyaml's composer recurses: a document nested 10**5 deep
    (`- - - - ...` or `[[[[...`) kills the process with a segmentation fault, and an alias bomb
    grows without bound once constructed. The scan stops at the first alias or too deep a level.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    _scan_events(text, where)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise RecordError("empty file; restore it from version control", path=where)
        try:
            return loader.construct_document(node)
        except (ValueError, TypeError, AttributeError, ArithmeticError) as error:
            # PyYAML's constructors raise these for odd plain values; the file is broken.
            raise RecordError(f"a value cannot be read ({type(error).__name__}); fix the file by "
                              "hand, it was left as it is", path=where) from error
    except yaml.YAMLError as error:
        raise _yaml_error(error, where) from error
    finally:
        loader.dispose()


def _scan_events(text: str, where: str) -> None:
    loader = _Loader(text)
    depth = 0
    try:
        while (event := loader.get_event()) is not None:
            if isinstance(event, yaml.AliasEvent):
                raise RecordError("YAML alias found (records have none); fix the file by hand, "
                                  "it was left as it is", path=where, line=_line(event))
            tag = getattr(event, "tag", None)
            if tag is not None and not _implicit(event):
                raise RecordError(f"YAML tag {tag!r} found (records have none); fix the file by "
                                  "hand, it was left as it is", path=where, line=_line(event))
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise RecordError(f"nested more than {MAX_YAML_DEPTH} levels deep (records are "
                                      "not); fix the file by hand, it was left as it is",
                                      path=where, line=_line(event))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError as error:
        raise _yaml_error(error, where) from error
    finally:
        loader.dispose()


def _implicit(event: yaml.Event) -> bool:
    """True unless the document spelled out a tag: `!!python/object`, `!!timestamp`, `!x`."""
    implicit = getattr(event, "implicit", True)
    return any(implicit) if isinstance(implicit, tuple) else bool(implicit)


def _line(event: yaml.Event) -> int | None:
    mark = event.start_mark
    return mark.line + 1 if mark is not None else None


def _yaml_error(error: yaml.YAMLError, where: str) -> RecordError:
    """One line for what PyYAML found wrong, at its line when it says."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return RecordError(f"invalid YAML ({error}); fix the file by hand, it was left as it is",
                           path=where)
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = " ".join(str(error.problem or error.context or "invalid YAML").split())
    return RecordError(f"{problem}; fix the file by hand, it was left as it is", path=where,
                       line=line)


def annotation_block(text: str) -> str | None:
    """The exact lines of the top-level `annotation:` block, comments included."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("annotation:")), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not _starts_top_level_key(lines[end]):
        end += 1
    block = "".join(lines[start:end])
    return block if block.endswith("\n") else block + "\n"


def _starts_top_level_key(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("#", "-", "..."))


_LOADS: ContextVar[LoadCache | None] = ContextVar("loads", default=None)


@contextmanager
def cached_loads(cache: LoadCache | None) -> Iterator[None]:
    """Within it, `load_record(path)` keeps and reuses checked loads in `cache` (None: none).

    For `output.load_folder`, which calls `load_record` with the path alone: tests and tools
    wrap that one-argument call to see which records a run loads.
    """
    token = _LOADS.set(cache)
    try:
        yield
    finally:
        _LOADS.reset(token)


def load_record(path: Path, cache: LoadCache | None = None) -> ErrorRecord:
    """A record file, safely loaded and checked against the record schema and its file name.

    With a `cache` (given, or set around the call by `cached_loads`), bytes that passed every
    check before are not checked again; the checks of the file's name run on every load, since
    the same bytes may sit under another name.
    """
    cache = cache if cache is not None else _LOADS.get()
    if not is_record_id(path.stem):
        raise RecordError("not a record file name (16 hex digits and .yaml); it was ignored",
                          path=str(path))
    raw = read_capped(path)
    record = _cached_record(cache, raw) if cache is not None else None
    if record is None:
        data, block = check_record_bytes(raw, path)
        if cache is not None:
            cache.put(raw, (data, block))
        record = record_from_data(data, block)
    if record.id != path.stem:
        text = raw.decode("utf-8")
        line = next((i for i, row in enumerate(text.splitlines(), 1) if row.startswith("id:")), None)
        raise RecordError(f"id {record.id!r} is not the file's name {path.stem!r}; rename the file "
                          "or fix the id, it was left as it is", path=str(path), line=line)
    return record


def check_record_bytes(raw: bytes, path: Path) -> Checked:
    """Every check of a record file that depends on its bytes alone: its data and kept block."""
    text = yaml_text(raw, str(path))
    data = safe_load_text(text, str(path))
    check_schema(data, "record", path, text)
    return data, kept_annotation_block(text, data, str(path))


def kept_annotation_block(text: str, data: dict[str, Any], where: str) -> str | None:
    """The annotation block to write back as it stands, or None where its layout is unusual."""
    block = annotation_block(text)
    if block is None or (block == _empty_annotation_text()
                         and data.get("annotation") == empty_annotation().data):
        return block
    try:
        reparsed = safe_load_text(block, where)
    except RecordError:
        reparsed = None
    if not isinstance(reparsed, dict) or reparsed.get("annotation") != data.get("annotation"):
        return None  # an unusual layout: fall back to writing the data itself
    return block


def _cached_record(cache: LoadCache, raw: bytes) -> ErrorRecord | None:
    checked = cache.get(raw)
    if checked is None:
        return None
    try:
        return record_from_data(*checked)
    except (KeyError, TypeError, ValueError, AttributeError):
        cache.spoiled()  # an entry that does not make a record: loaded in full, stored again
        return None


def is_record_id(value: object) -> bool:
    """True for exactly 16 lowercase hex digits: the only names a record file may have."""
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


def record_path(root: Path, record_id: str) -> Path:
    """The file of a record, built from its id alone, after the id is checked."""
    if not is_record_id(record_id):
        raise OutputError(f"{root}: refused record id {record_id!r}: ids are 16 hex digits, "
                          "never a path")
    return root / ERRORS_DIR / f"{record_id}.yaml"


def iter_record_paths(root: Path) -> Iterator[Path]:
    """Record files of one repository folder (every *.yaml in errors/), sorted by name."""
    errors = root / ERRORS_DIR
    if errors.is_dir():
        yield from sorted(p for p in errors.glob("*.yaml") if not p.name.startswith("."))


# ---------------------------------------------------------------- manifests


def manifest_data(manifest: Manifest) -> dict[str, Any]:
    pin = manifest.pin
    return {
        "schema_version": SCHEMA_VERSION,
        "crawler_version": manifest.crawler_version,
        "source": pin.source,
        "repo": pin.repo,
        "host": pin.host,
        "owner": pin.owner,
        "name": pin.name,
        "ref": pin.ref,
        "commit": pin.sha,
        "reachable": pin.reachable,
        "options": {
            "include": list(manifest.options.include),
            "exclude": list(manifest.options.exclude),
            "include_tests": manifest.options.include_tests,
            "max_file_bytes": manifest.options.max_file_bytes,
        },
        "counts": _counts_data(manifest.counts),
        "exception_classes": list(manifest.exception_classes),
        "skipped": [asdict(s) for s in manifest.skipped],
        "files": {f.path: {"blob": f.blob, "records": list(f.records), "raises": FlowList(f.raises.as_list())}
                  for f in manifest.files},
        "removed": {path: list(ids) for path, ids in sorted(manifest.removed.items()) if ids},
        "needs_review": sorted(manifest.needs_review),
    }


# The manifest's `counts` is one flat mapping: the raise counts sit among the others, in this order.
_COUNTS_ORDER = ("files", "parsed", "skipped", "raise_statements", "records", "removed",
                 "bare_raise", "reraise", "without_message")
_RAISE_COUNTS = frozenset(f.name for f in fields(RaiseCounts))


def _counts_data(counts: Counts) -> dict[str, int]:
    """`counts` as a manifest writes it: `raises` flattened among the others."""
    flat = {**asdict(counts), **asdict(counts.raises)}
    return {name: flat[name] for name in _COUNTS_ORDER}


def _counts_from_data(data: dict[str, int]) -> Counts:
    """The counts `_counts_data` wrote; a count an older manifest lacks is 0."""
    raises = RaiseCounts(**{k: v for k, v in data.items() if k in _RAISE_COUNTS})
    return Counts(**{k: v for k, v in data.items() if k not in _RAISE_COUNTS}, raises=raises)


def manifest_from_data(data: dict[str, Any]) -> Manifest:
    options = data["options"]
    return Manifest(
        pin=Pin(source=data["source"], host=data["host"], owner=data["owner"], name=data["name"],
                ref=data["ref"], sha=data["commit"],
                web_url=data["repo"] if data["repo"].startswith("http") else None,
                reachable=data["reachable"]),
        crawler_version=data["crawler_version"],
        options=ExtractOptions(include=tuple(options["include"]), exclude=tuple(options["exclude"]),
                               include_tests=options["include_tests"],
                               max_file_bytes=options["max_file_bytes"]),
        counts=_counts_from_data(data["counts"]),
        files=tuple(FileEntry(path, entry["blob"], tuple(entry["records"]),
                              RaiseCounts.from_list(entry.get("raises") or ()))
                    for path, entry in data["files"].items()),
        skipped=tuple(Skipped(**entry) for entry in data["skipped"]),
        exception_classes=tuple(data.get("exception_classes") or ()),
        removed={path: tuple(ids) for path, ids in (data.get("removed") or {}).items()},
        needs_review=tuple(data.get("needs_review") or ()),
    )


def load_manifest(root: Path, cache: LoadCache | None = None) -> Manifest | None:
    """The manifest of a repository folder, or None when there is none yet.

    With a `cache`, bytes that passed every check before (as the manifest a run wrote, see
    `prime_manifest`) are not checked again: a fifth of the time, for the first thing an update
    reads.
    """
    path = root / MANIFEST
    if not path.exists():
        return None
    raw = read_capped(path)
    if cache is not None and (checked := cache.get(raw, MANIFEST_KIND)) is not None:
        try:
            return manifest_from_data(checked[0])
        except (KeyError, TypeError, ValueError, AttributeError):
            cache.spoiled()
    data = safe_load_text(yaml_text(raw, str(path)), str(path))
    if not surely_valid(data, _schema("manifest")):  # a sixth of jsonschema's time where it can tell
        validate(data, "manifest", str(path))
    manifest = manifest_from_data(data)
    if cache is not None:
        cache.put(raw, (data, None), kind=MANIFEST_KIND)
        cache.flush()
    return manifest


def prime_manifest(cache: LoadCache, manifest: Manifest, text: str) -> None:
    """Store what a checked load of `text`, the file `manifest_text(manifest)` made, finds."""
    try:
        data = _as_read_back(manifest_data(manifest))
    except _Unsure:
        return
    if surely_valid(data, _schema("manifest")):
        cache.put(text.encode("utf-8"), (data, None), plain=True, kind=MANIFEST_KIND)
        cache.flush()


# ---------------------------------------------------------------- schemas


@cache
def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return data


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # here: 40 ms to import, and most runs never need it (see `quickschema`)

    schema = _schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)  # type: ignore[no-any-return]


def schema_problems(data: Any, schema: str) -> list[str]:
    """Every way `data` breaks the named schema, as `field: problem` lines."""
    problems = []
    for error in sorted(_validator(schema).iter_errors(data), key=lambda e: list(e.path)):
        where = ".".join(str(part) for part in error.absolute_path) or "(top)"
        problems.append(f"{where}: {error.message}")
    return problems


def check_schema(data: Any, schema: str, path: Path, text: str) -> None:
    """Raise a RecordError naming the line of the first field that breaks the schema."""
    errors = sorted(_validator(schema).iter_errors(data), key=lambda e: [str(p) for p in e.path])
    if not errors:
        return
    first = errors[0]
    where = ".".join(str(part) for part in first.absolute_path) or "(top)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    message = " ".join(first.message.split())[:200]
    raise RecordError(f"{where}: {message}{more}; fix the file by hand, it was left as it is",
                      path=str(path), line=_line_of(text, list(first.absolute_path)))


def _line_of(text: str, parts: list[Any]) -> int | None:
    """The line of a field, found in the node tree of a document already scanned as safe."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in parts:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def validate(data: Any, schema: str, path: str) -> None:
    problems = schema_problems(data, schema)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SchemaError(f"{path}: {problems[0]}{more}")


# ---------------------------------------------------------------- atomic writes


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that a crash leaves either the old or the new content, never half."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        if tmp is not None:
            _discard(tmp)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OutputError(f"{path}: disk full ({error.strerror}); this file was left as it "
                              "was; free some space and run again") from error
        raise OutputError(f"{path}: cannot write ({error.strerror}); this file was left as it "
                          "was") from error
    except BaseException:
        if tmp is not None:
            _discard(tmp)
        raise


def sync_folder(folder: Path) -> None:
    """Make the renames in a folder durable."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_record(root: Path, record: ErrorRecord) -> bool:
    """Write a record unless the file already holds exactly this text; True if written."""
    path = record_path(root, record.id)
    text = record_text(record)
    if _holds(path, text):
        return False
    write_atomic(path, text)
    return True


def write_records(root: Path, records: Iterable[ErrorRecord],
                  texts: Mapping[str, str] | None = None, *, compared: bool = False,
                  cache: LoadCache | None = None) -> int:
    """Write every record whose file text changes, atomically each; how many were written.

    The same guarantee as `write_atomic` for each file (a crash leaves it as it was or as it
    should be), at a fraction of the cost: every new text goes to a temp file beside its record,
    one `sync` makes them all durable, then each is renamed over its record. One fsync per file
    cost 5 ms each here, more than all of the YAML (measured: 3,500 records of the stdlib).

    With `compared`, the caller found each text of `texts` to differ from its file already (see
    `pipeline.pending_writes`): those files are not read again. With a `cache`, each file
    written primes it with what a checked load of its text finds, so the next run need not
    check what this one wrote.
    """
    folder = root / ERRORS_DIR
    staged: list[tuple[str, Path]] = []
    written: list[tuple[ErrorRecord, str]] = []
    try:
        for record in records:
            path = record_path(root, record.id)  # ids only, checked
            given = texts.get(record.id) if texts else None
            text = given if given is not None else record_text(record)
            if not (compared and given is not None) and _holds(path, text):
                continue
            if not staged:
                folder.mkdir(parents=True, exist_ok=True)
            staged.append((_stage(path, text), path))
            written.append((record, text))
        _make_durable([tmp for tmp, _ in staged])
        for index, (tmp, path) in enumerate(staged):
            os.replace(tmp, path)
            staged[index] = ("", path)
    except OSError as error:
        where = error.filename or folder
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OutputError(f"{where}: disk full ({error.strerror}); every record there is "
                              "either as it was or fully written; free some space and run again"
                              ) from error
        raise OutputError(f"{where}: cannot write ({error.strerror}); every record there is "
                          "either as it was or fully written") from error
    finally:
        for tmp, _ in staged:
            if tmp:
                _discard(tmp)
    if cache is not None:
        prime(cache, written)
    return len(staged)


def prime(cache: LoadCache, written: Iterable[tuple[ErrorRecord, str]]) -> None:
    """Store what a checked load of each record's file text finds, found without loading it."""
    for record, text in written:
        checked = checked_of_written(record, text)
        if checked is not None:
            cache.put(text.encode("utf-8"), checked, plain=True)  # made by `_as_read_back`
    cache.flush()


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _stage(path: Path, text: str) -> str:
    """A temp file beside `path` holding `text`, written but not yet synced."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def _make_durable(paths: list[str]) -> None:
    """Flush written files to disk: one `sync` for all where there is one, else each file."""
    if not paths:
        return
    if hasattr(os, "sync"):
        os.sync()
        return
    for path in paths:  # pragma: no cover - Windows
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def manifest_text(manifest: Manifest) -> str:
    return block_text(manifest_data(manifest))


def write_manifest(root: Path, manifest: Manifest | str, *, compared: bool = False) -> bool:
    """Write the manifest (or its text, made already) unless the file holds exactly that.

    With `compared`, the caller found the file to hold another text already: it is not read.
    """
    path = root / MANIFEST
    text = manifest if isinstance(manifest, str) else manifest_text(manifest)
    if not compared and _holds(path, text):
        return False
    write_atomic(path, text)
    return True
