"""Records and manifests to and from YAML: safe loading only, atomic writes, schema checks.

A record has two owners. The crawler writes `status`, `extracted` and `history`; the `annotation`
block belongs to people and is carried over as the exact text it had in the file, so that a
rewrite never reformats a person's words or drops their comments.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from crawler.errors import OutputError, RecordError, SchemaError
from crawler.records import (
    SCHEMA_VERSION,
    Annotation,
    Counts,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    History,
    Manifest,
    Pin,
    RaiseSite,
    Skipped,
    Template,
    empty_annotation,
)

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
ERRORS_DIR = "errors"
MANIFEST = "manifest.yaml"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Safe dumper that writes multi-line strings as literal blocks, for readable diffs."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    """Deterministic YAML: keys in the order given, no line folding, unicode kept.

    A text that ends in a block scalar kept with its trailing blank lines (`|+`) gets a
    document-end marker (`...`) from PyYAML; it is dropped, because record files are pieces
    joined into one document, where the next top-level key ends the scalar just as well.
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
    }


def extracted_data(record: ErrorRecord) -> dict[str, Any]:
    """The crawler-owned facts of a record, in the order they are written."""
    return _extracted_fields(record.repo, record.commit, record.url, record.site)


def _extracted_fields(repo: str, commit: str, url: str | None, site: RaiseSite) -> dict[str, Any]:
    return {
        "repo": repo,
        "commit": commit,
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
        "url": url,
        "snippet_line": site.snippet_line,
        "snippet": site.snippet,
    }


def history_data(history: History | None) -> dict[str, Any]:
    history = history or History(first_seen="")
    return asdict(history)


# `extracted` blocks rendered ahead of the merge, by (repo, commit, url, site): the pipeline
# renders each new site's block while the workers are still parsing, on a core that would
# otherwise wait. A record whose facts differ simply misses and is rendered when written.
_PRERENDERED: dict[tuple[str, str, str | None, RaiseSite], str] = {}


def prerender_extracted(repo: str, commit: str, url: str | None, site: RaiseSite) -> None:
    """Render the `extracted` block a record with these facts would have, for `record_text`."""
    _PRERENDERED[(repo, commit, url, site)] = dump_yaml(
        {"extracted": _extracted_fields(repo, commit, url, site)})


def forget_prerendered() -> None:
    _PRERENDERED.clear()


@lru_cache(maxsize=256)
def _history_text(history: History) -> str:
    return dump_yaml({"history": asdict(history)})


@cache
def _empty_annotation_text() -> str:
    return dump_yaml({"annotation": empty_annotation().data})


def record_text(record: ErrorRecord) -> str:
    """The whole file of a record; its annotation block kept as the text it was read with."""
    head = dump_yaml({"schema_version": SCHEMA_VERSION, "id": record.id, "status": record.status})
    body = _PRERENDERED.get((record.repo, record.commit, record.url, record.site))
    if body is None:
        body = dump_yaml({"extracted": extracted_data(record)})
    annotation = record.annotation.text
    if annotation is None:
        if record.annotation.data == empty_annotation().data:
            annotation = _empty_annotation_text()
        else:
            annotation = dump_yaml({"annotation": record.annotation.data})
    tail = _history_text(record.history or History(first_seen=""))
    return head + body + annotation + tail


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
        ),
        cause=ex["cause"],
        condition=ex["condition"],
        snippet=ex["snippet"],
        snippet_line=ex["snippet_line"],
        factory=ex.get("factory", False),
    )
    history = data.get("history") or {}
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
    )


# ---------------------------------------------------------------- safe loading


def load_yaml_file(path: Path) -> tuple[Any, str]:
    """Load one YAML document safely: no tags beyond plain data, no aliases; (data, text)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RecordError(f"not UTF-8 text ({error.reason}); fix or remove the file",
                          path=str(path)) from error
    except OSError as error:
        raise RecordError(f"cannot read: {error.strerror}", path=str(path)) from error
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise RecordError("empty file; restore it from version control", path=str(path))
        _refuse_aliases(node, str(path))
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        raise RecordError(f"{problem}; fix the file by hand, it was left as it is",
                          path=str(path), line=line) from error
    except yaml.YAMLError as error:
        raise RecordError(f"invalid YAML ({error}); fix the file by hand, it was left as it is",
                          path=str(path)) from error
    finally:
        loader.dispose()
    return data, text


def _refuse_aliases(root: yaml.Node, path: str) -> None:
    """Records never hold anchors or aliases; refusing them stops alias bombs before they grow."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise RecordError("YAML alias found (records have none); fix the file by hand",
                              path=path, line=node.start_mark.line + 1)
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


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


def load_record(path: Path) -> ErrorRecord:
    """A record file, safely loaded and checked against the record schema."""
    data, text = load_yaml_file(path)
    validate(data, "record", str(path))
    block = annotation_block(text)
    if block is not None:
        reparsed = yaml.load(block, Loader=_Loader)  # noqa: S506 - the C safe loader
        if not isinstance(reparsed, dict) or reparsed.get("annotation") != data.get("annotation"):
            block = None  # an unusual layout: fall back to writing the data itself
    return record_from_data(data, block)


def iter_record_paths(root: Path) -> Iterator[Path]:
    """Record files of one repository folder, sorted by name."""
    errors = root / ERRORS_DIR
    if errors.is_dir():
        yield from sorted(errors.glob("*.yaml"))


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
        "counts": asdict(manifest.counts),
        "exception_classes": list(manifest.exception_classes),
        "skipped": [asdict(s) for s in manifest.skipped],
        "files": {f.path: {"blob": f.blob, "records": list(f.records)} for f in manifest.files},
    }


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
        counts=Counts(**data["counts"]),
        files=tuple(FileEntry(path, entry["blob"], tuple(entry["records"]))
                    for path, entry in data["files"].items()),
        skipped=tuple(Skipped(**entry) for entry in data["skipped"]),
        exception_classes=tuple(data.get("exception_classes") or ()),
    )


def load_manifest(root: Path) -> Manifest | None:
    """The manifest of a repository folder, or None when there is none yet."""
    path = root / MANIFEST
    if not path.exists():
        return None
    data, _ = load_yaml_file(path)
    validate(data, "manifest", str(path))
    return manifest_from_data(data)


# ---------------------------------------------------------------- schemas


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
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


def validate(data: Any, schema: str, path: str) -> None:
    problems = schema_problems(data, schema)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SchemaError(f"{path}: {problems[0]}{more}")


# ---------------------------------------------------------------- atomic writes


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that a crash leaves either the old or the new content, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        _discard(tmp)
        raise OutputError(f"{path}: cannot write ({error.strerror}); nothing there was changed"
                          ) from error
    except BaseException:
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
    path = root / ERRORS_DIR / f"{record.id}.yaml"
    text = record_text(record)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, text)
    return True


def write_records(root: Path, records: Iterable[ErrorRecord]) -> int:
    """Write every record whose file text changes, atomically each; how many were written.

    The same guarantee as `write_atomic` for each file (a crash leaves it as it was or as it
    should be), at a fraction of the cost: every new text goes to a temp file beside its record,
    one `sync` makes them all durable, then each is renamed over its record. One fsync per file
    cost 5 ms each here, more than all of the YAML (measured: 3,500 records of the stdlib).
    """
    folder = root / ERRORS_DIR
    staged: list[tuple[str, Path]] = []
    try:
        for record in records:
            path = folder / f"{record.id}.yaml"
            text = record_text(record)
            if _holds(path, text):
                continue
            if not staged:
                folder.mkdir(parents=True, exist_ok=True)
            staged.append((_stage(path, text), path))
        _make_durable([tmp for tmp, _ in staged])
        for index, (tmp, path) in enumerate(staged):
            os.replace(tmp, path)
            staged[index] = ("", path)
    except OSError as error:
        where = error.filename or folder
        raise OutputError(f"{where}: cannot write ({error.strerror}); every record there is "
                          "either as it was or fully written") from error
    finally:
        for tmp, _ in staged:
            if tmp:
                _discard(tmp)
    return len(staged)


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def _stage(path: Path, text: str) -> str:
    """A temp file beside `path` holding `text`, written but not yet synced."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


def write_manifest(root: Path, manifest: Manifest) -> bool:
    path = root / MANIFEST
    text = dump_yaml(manifest_data(manifest))
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, text)
    return True
