"""The JSON Schemas of the files written, in `schemas/`: a compiled check, then jsonschema.

`quick_valid` is fastjsonschema's validator, compiled once per schema into Python code: it
answers yes or no in full (a record: 50 µs against the 74 µs of the hand-written subset check it
replaced, and a third to half of jsonschema's cost). Where data fails, `jsonschema` names every
problem, and the first becomes one line naming the field (and its line in the file).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import fastjsonschema

from crawler.errors import RecordError, SchemaError
from crawler.store.safe_yaml import line_of_field

if TYPE_CHECKING:
    from collections.abc import Callable

    import jsonschema

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


@cache
def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return data


@cache
def digest(name: str) -> str:
    """The schema's own bytes: an edited schema must not reuse what the old one passed."""
    return hashlib.sha256((SCHEMA_DIR / f"{name}.schema.json").read_bytes()).hexdigest()


def quick_valid(data: Any, name: str) -> bool:
    """Whether `data` passes the schema, by the compiled check (jsonschema agrees: tested)."""
    try:
        _compiled(name)(data)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


def passes(data: Any, name: str) -> bool:
    """Whether `data` passes the schema."""
    return quick_valid(data, name)


@cache
def _compiled(name: str) -> Callable[[Any], Any]:
    """The schema's compiled check: the module `scripts/compile_schemas.py` wrote beside the schema
    (imported, so Python keeps its bytecode: compiling on every run cost 0.06 s of CPU), or,
    where there is none or it was made from another version of the schema, compiled here."""
    module = _written(name)
    if module is not None and getattr(module, "SCHEMA_DIGEST", None) == digest(name):
        return module.validate  # type: ignore[no-any-return]
    return fastjsonschema.compile(schema(name))  # type: ignore[no-any-return]


def _written(name: str) -> ModuleType | None:
    """The compiled check `scripts/compile_schemas.py` wrote for the schema, imported; None where
    there is none, or it was written for a fastjsonschema with names the installed one lacks."""
    try:
        return importlib.import_module(f"crawler.schemas.{name}_check")
    except ImportError:
        return None


def compiled_path(name: str) -> Path:
    """Where `scripts/compile_schemas.py` writes the schema's compiled check."""
    return SCHEMA_DIR / f"{name}_check.py"


def compiled_digest(name: str) -> str | None:
    """The digest of the schema the written compiled check was made from; None without one."""
    return getattr(_written(name), "SCHEMA_DIGEST", None)


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # here: 40 ms to import, and most runs never need it (see `quick_valid`)

    found = schema(name)
    cls = jsonschema.validators.validator_for(found)
    cls.check_schema(found)
    return cls(found)  # type: ignore[no-any-return]


def schema_problems(data: Any, name: str) -> list[str]:
    """Every way `data` breaks the named schema, as `field: problem` lines."""
    return [f"{_field(error)}: {error.message}"
            for error in sorted(validator(name).iter_errors(data), key=lambda e: list(e.path))]


def check_schema(data: Any, name: str, path: Path, text: str) -> None:
    """Raise a RecordError naming the line of the first field that breaks the schema.

    The compiled check first: jsonschema, about half of checking a record file an update did not
    load, runs only where the data is wrong, to name the field."""
    if quick_valid(data, name):
        return
    errors = sorted(validator(name).iter_errors(data), key=lambda e: [str(p) for p in e.path])
    if not errors:
        return
    first = errors[0]
    message = " ".join(first.message.split())[:200]
    raise RecordError(f"{_field(first)}: {message}{_more(len(errors))}; fix the file by hand, it "
                      "was left as it is",
                      path=str(path), line=line_of_field(text, list(first.absolute_path)))


def validate(data: Any, name: str, path: str) -> None:
    """Raise a SchemaError naming the file and the first field that breaks the schema."""
    problems = schema_problems(data, name)
    if problems:
        raise SchemaError(f"{path}: {problems[0]}{_more(len(problems))}")


def _field(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top)"


def _more(count: int) -> str:
    return f" (and {count - 1} more)" if count > 1 else ""
