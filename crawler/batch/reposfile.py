"""repos.yaml, the list of repositories of a batch: checked against its schema, defaults filled in.

A bad file stops the batch before anything runs, with one line that names the file, the line,
the entry (its index and source) and the field. The schema is `schemas/batch.schema.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from crawler.errors import BatchError
from crawler.records import ExtractOptions
from crawler.store.safe_yaml import load_yaml_file
from crawler.store.schemas import SCHEMA_DIR


@dataclass(frozen=True)
class RepoEntry:
    """One repository of a batch, with the defaults filled in and paths resolved."""

    index: int  # zero-indexed position in `repos:`, as error messages name it
    source: str
    ref: str
    options: ExtractOptions
    name: str | None
    output_root: Path
    evidence: bool = True  # read the test files for the assertions that name an error
    jobs: int = 1  # parser processes per worker for this repository
    split_files: int | None = None  # files past which it is shared out over tasks; None: never
    web_url: str | None = None  # a self-hosted forge's page of the repository


SPLIT_FILES = 500  # default `split_files`: about 15 CPU-seconds of parsing per task


@cache
def _batch_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMA_DIR / "batch.schema.json").read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)  # type: ignore[no-any-return]


def load_batch(path: Path, output_root: Path = Path("output"), *, output_given: bool = False,
               split_files: int = SPLIT_FILES) -> list[RepoEntry]:
    """The entries of a repos.yaml; a bad file raises one `BatchError` naming the entry and field.

    Relative local sources (`./x`, `../x`) and `output` folders are taken from the file's own
    folder; `output_root` (the command line's `-o`) is the output of entries that give none.
    An `output` must stay inside the file's folder (see `_confined`), or inside `output_root`
    where the user gave it on the command line (`output_given`). `split_files` (the command
    line's `--split-files`; 0: never) is the split size of entries that give none.
    """
    data, text = load_yaml_file(path)
    error = jsonschema.exceptions.best_match(_batch_validator().iter_errors(data))
    if error is not None:
        raise BatchError(_describe_error(path, text, data, list(error.absolute_path), error.message))
    defaults = data.get("defaults") or {}
    base = path.resolve().parent
    entries: list[RepoEntry] = []
    seen: dict[tuple[str, str, str | None, Path], int] = {}
    for index, raw in enumerate(data["repos"]):
        if "ref" in raw and "commit" in raw:
            raise BatchError(_describe_error(path, text, data, ["repos", index, "commit"],
                                             "give `ref` or `commit`, not both"))
        field = {**defaults, **raw}
        source = raw["source"]
        if source.startswith(("./", "../")):
            source = str((base / source).resolve())
        output = Path(raw["output"]) if "output" in raw else None
        if output is None and "output" in defaults:
            output = Path(defaults["output"])
        root = base / output if output is not None else output_root
        if output is not None:
            allowed = [base, output_root.resolve()] if output_given else [base]
            if not _confined(root, allowed):
                where = ["repos", index, "output"] if "output" in raw else ["defaults", "output"]
                raise BatchError(_describe_error(path, text, data, where, _LEAVES))
        entry = RepoEntry(
            index=index,
            source=source,
            ref=raw.get("commit") or raw.get("ref") or defaults.get("ref") or "HEAD",
            options=ExtractOptions(
                include=tuple(field.get("include", ())),
                exclude=tuple(field.get("exclude", ())),
                include_tests=field.get("include_tests", False),
                max_file_bytes=field.get("max_file_bytes", ExtractOptions.max_file_bytes),
            ),
            name=raw.get("name"),
            output_root=root,
            evidence=field.get("evidence", True),
            jobs=field.get("jobs", 1),
            split_files=field.get("split_files", split_files) or None,
            web_url=raw.get("web_url"),
        )
        key = (entry.source, entry.ref, entry.name, entry.output_root.resolve())
        if key in seen:
            raise BatchError(_describe_error(path, text, data, ["repos", index, "source"],
                                             f"repeats repos[{seen[key]}] (same source, ref, "
                                             "name and output); remove one"))
        seen[key] = index
        entries.append(entry)
    return entries


_LEAVES = ("leaves the folder of this file (an absolute path, `..` or a link leading out), so "
           "nothing was run; give a folder inside it, or the output root with -o")


def _confined(folder: Path, allowed: list[Path]) -> bool:
    """Whether `folder`, every link followed, lies inside one of the `allowed` folders (resolved).

    A repos.yaml comes from others: its `output` may not send writes anywhere else on the
    machine (`/etc`, `../../home`), whereas a root given with -o is the user's own choice.
    """
    real = folder.resolve()
    return any(real.is_relative_to(root) for root in allowed)


def _describe_error(path: Path, text: str, data: Any, where: list[Any], problem: str) -> str:
    """`repos.yaml:12: repos[3] (source 'x'): ref: problem`, as close to the entry as we can."""
    line = _line_of(text, where)
    place = f"{path}:{line}" if line else str(path)
    if len(where) >= 2 and where[0] == "repos" and isinstance(where[1], int):
        entry = data["repos"][where[1]]
        source = entry.get("source") if isinstance(entry, dict) else None
        label = f"repos[{where[1]}]" + (f" (source {source!r})" if isinstance(source, str) else "")
        field = ".".join(str(part) for part in where[2:]) or "(entry)"
        return f"{place}: {label}: {field}: {problem}"
    field = ".".join(str(part) for part in where) or "(top)"
    return f"{place}: {field}: {problem}"


def _line_of(text: str, where: list[Any]) -> int | None:
    """The one-indexed line of the YAML node at `where`, or of its nearest parent."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    line = None
    for part in where:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line
