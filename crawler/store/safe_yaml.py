"""YAML in and out, behind one module: deterministic dumps, and safe loads only.

Dumps keep keys in the order given and write multi-line strings as literal blocks, for readable
diffs; `block_text` writes the common one-line scalars without PyYAML, byte for byte as it
would. Loads scan the document's events first, refusing aliases, tags and deep nesting, then
construct plain data with the C safe loader, refusing a key written twice in one mapping
(PyYAML would keep the last alone, and a person's first block would be lost without a word).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

import yaml

from crawler.errors import RecordError
from crawler.store.plain_files import MAX_READ_BYTES, read_plain

MAX_YAML_BYTES = MAX_READ_BYTES  # far above any real record; a bigger file is refused
# Characters YAML 1.1 does not allow in a stream (libyaml refuses them without a line number).
_NOT_YAML_CHAR = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MAX_YAML_DEPTH = 64  # records nest 4 deep; libyaml's composer recurses and crashes near 10**5


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeysLoader(_Loader):  # type: ignore[misc, valid-type]
    """The safe loader, refusing a mapping that holds one key twice, at the second's line."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping: dict[Any, Any] = super().construct_mapping(node, deep)
        if len(mapping) != len(node.value):
            _refuse_repeated_key(self, node)
        return mapping


def _refuse_repeated_key(loader: Any, node: yaml.MappingNode) -> None:
    first: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)  # a scalar's is cached: no second build
        if key in first:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} written twice in one mapping (first at line "
                f"{first[key].start_mark.line + 1}; a load would keep the last alone)",
                key_node.start_mark)
        first[key] = key_node
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Safe dumper that writes multi-line strings as literal blocks, for readable diffs."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    value = writable(value)
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def writable(value: str) -> str:
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


# ---------------------------------------------------------------- dumping blocks


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
    simple (a non-ASCII string, a list of lists) is dumped alone by PyYAML; a list of mappings
    is its items' blocks, each opened by `- ` (an entry point's name and chain).
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
            parts.append(f"{key}:\n{indented(block_text(value))}")
        elif kind is FlowList and all(type(item) is int for item in value):
            parts.append(f"{key}: [{', '.join(map(str, value))}]\n")
        elif kind is list and all(type(item) is str and _scalar(item) for item in value):
            parts.append(f"{key}:\n" + "".join(f"- {_scalar(item)}\n" for item in value)
                         if value else f"{key}: []\n")
        elif kind is list and value and all(type(item) is dict and item for item in value):
            parts.append(f"{key}:\n" + "".join("- " + indented(block_text(item))[2:] for item in value))
        else:
            parts.append(dump_yaml({key: value}))
    return "".join(parts)


def indented(text: str) -> str:
    if _ASCII_LINES.fullmatch(text):  # no line break but "\n": one substitution does it
        return ("" if text.startswith("\n") else "  ") + _NEXT_LINE.sub("\n  ", text)
    return "".join("  " + line if line != "\n" else line for line in text.splitlines(keepends=True))


_ASCII_LINES = re.compile(r"[\x20-\x7e\n]*")
_NEXT_LINE = re.compile(r"\n(?=[^\n])")  # a line break before a line that is not empty


# ---------------------------------------------------------------- safe loading


def load_yaml_file(path: Path) -> tuple[Any, str]:
    """Load one YAML document safely: plain data only, no aliases, bounded depth; (data, text)."""
    text = yaml_text(read_capped(path), str(path))
    return safe_load_text(text, str(path)), text


def read_capped(path: Path) -> bytes:
    """A file's bytes, unless it is too large to be a record or is not a plain file.

    Read by `plain_files.read_plain`: never through a link, never a FIFO or a device, and
    capped by the bytes actually read, not by the size the file reports.
    """
    return read_plain(path, MAX_YAML_BYTES)


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
    loader = _UniqueKeysLoader(text)
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
        _raise_yaml_error(error, where)
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
        _raise_yaml_error(error, where)
    finally:
        loader.dispose()


def _implicit(event: yaml.Event) -> bool:
    """True unless the document spelled out a tag: `!!python/object`, `!!timestamp`, `!x`."""
    implicit = getattr(event, "implicit", True)
    return any(implicit) if isinstance(implicit, tuple) else bool(implicit)


def _line(event: yaml.Event) -> int | None:
    mark = event.start_mark
    return mark.line + 1 if mark is not None else None


def _raise_yaml_error(error: yaml.YAMLError, where: str) -> NoReturn:
    """Raise one line for what PyYAML found wrong, at its line when it says (raised here, not
    returned, so that the crawler reads each message's template exactly)."""
    if not isinstance(error, yaml.MarkedYAMLError):
        raise RecordError(f"invalid YAML ({error}); fix the file by hand, it was left as it is",
                          path=where) from error
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = " ".join(str(error.problem or error.context or "invalid YAML").split())
    raise RecordError(f"{problem}; fix the file by hand, it was left as it is", path=where,
                      line=line) from error


def line_of_field(text: str, parts: list[Any]) -> int | None:
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

