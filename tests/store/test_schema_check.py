"""The compiled schema check (fastjsonschema) agrees with jsonschema, yes and no alike."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.store import render, safe_yaml, schemas
from tests.helpers.records import a_record

SCHEMA = json.loads((schemas.SCHEMA_DIR / "record.schema.json").read_text(encoding="utf-8"))
VALIDATOR = schemas.validator("record")


def compiled_valid(value: Any, schema: Any) -> bool:
    """fastjsonschema's answer for `value` against `schema` (a whole schema or a part of one)."""
    try:
        _compile(json.dumps(schema, sort_keys=True))(value)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


@functools.cache
def _compile(schema: str) -> Any:
    part = json.loads(schema)  # a part's `$ref`s point into the whole schema's `$defs`
    return fastjsonschema.compile({"$schema": SCHEMA["$schema"], "$defs": SCHEMA.get("$defs", {}),
                                   **part})


def record_data() -> dict[str, Any]:
    data = safe_yaml.safe_load_text(render.record_text(a_record()), "x")
    assert isinstance(data, dict)
    return data


def test_a_record_the_crawler_writes_passes_quickly() -> None:
    assert schemas.quick_valid(record_data(), "record")


def test_every_record_in_a_real_output_passes_quickly() -> None:
    root = Path(__file__).resolve().parents[2] / "output"
    paths = list(root.rglob("errors/*.yaml"))
    assert paths
    for path in paths:
        assert schemas.quick_valid(safe_yaml.load_yaml_file(path)[0], "record"), path


@pytest.mark.parametrize(("value", "schema"), [
    (1.0, {"type": "integer"}), (True, {"type": "integer"}), (True, {"enum": [1]}),
    (1, {"const": True}), (0.5, {"minimum": 1}), ("x", {"oneOf": [{"type": "string"},
                                                                  {"minLength": 1}]}),
    ("\U0001F600", {"minLength": 2}), ("ééé", {"maxLength": 3}),
])
def test_where_python_and_json_differ_both_answer_alike(value: Any, schema: Any) -> None:
    assert compiled_valid(value, schema) == jsonschema_valid(value, schema)


def jsonschema_valid(value: Any, schema: Any) -> bool:
    return bool(VALIDATOR.evolve(schema=schema).is_valid(copy.deepcopy(value)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.sampled_from(
        ["", "a", "active", "removed", "literal", "same_scope", "pytest.raises", "match", "str",
         "^x$", "a" * 40, "0123456789abcdef", "https://x", "0" * 16]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "reason", "path", "line", "x", "kind", "first_seen", "removed_in"]),
        inner, max_size=3),
    max_leaves=10)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _part(path: tuple[Any, ...]) -> Any:
    schema: Any = SCHEMA
    for part in path:
        schema = schema[part]
    return schema


# every subschema: a property's schema or an array's items (not the `properties` maps themselves)
SCHEMA_PARTS = sorted(path for path in _paths(SCHEMA) if isinstance(_part(path), dict)
                      and (path[-2:-1] == ("properties",) or path[-1:] == ("items",)))
EDGES = ["", "x", "a" * 40, "0123456789abcdef", "^x$", "https://x", "active", "same_scope", 0, 1,
         -1, 0.0, 1.0, 1.5, True, False, None, [], [""], {}, {"id": "0" * 16, "reason": "same_shape"}]


def mutated(value: Any, data: st.DataObject, edits: int, keys: list[str]) -> Any:
    """`value` with parts replaced, dropped or added anywhere, `edits` times."""
    for _ in range(edits):
        where = data.draw(st.sampled_from(_paths(value)[1:]))
        parent = value
        for part in where[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[where[-1]] = data.draw(json_values)
        elif action == "drop":
            del parent[where[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(keys))] = data.draw(json_values)
        else:
            parent.append(data.draw(json_values))
    return value


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(data=st.data(), edits=st.integers(1, 4))
def test_a_mutated_record_that_passes_quickly_passes_jsonschema(data: st.DataObject,
                                                                edits: int) -> None:
    """Replace, drop or add parts of a record's data anywhere: quick yes implies jsonschema yes."""
    value = mutated(record_data(), data, edits, ["x", "id", "line", "fits"])
    assert schemas.quick_valid(value, "record") == VALIDATOR.is_valid(value), json.dumps(value)[:400]


def _against_the_schema(value: Any, schema_path: tuple[Any, ...]) -> None:
    schema: Any = SCHEMA
    for part in schema_path:
        schema = schema[part]
    assert compiled_valid(value, schema) == jsonschema_valid(value, schema), (schema_path, value)


@settings(max_examples=400, deadline=None)
@given(value=json_values, schema_path=st.sampled_from(SCHEMA_PARTS))
def test_any_value_against_any_part_of_the_schema(value: Any, schema_path: tuple[Any, ...]) -> None:
    """400 draws in a plain `pytest` (new ones each run); 1,500 more under `-m slow`."""
    _against_the_schema(value, schema_path)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(value=json_values, schema_path=st.sampled_from(SCHEMA_PARTS))
def test_any_value_against_any_part_of_the_schema_long(value: Any, schema_path: tuple[Any, ...]) -> None:
    _against_the_schema(value, schema_path)



@pytest.mark.parametrize("schema_path", SCHEMA_PARTS, ids=lambda path: ".".join(map(str, path)))
def test_each_part_of_the_schema_on_edge_values(schema_path: tuple[Any, ...]) -> None:
    schema: Any = SCHEMA
    for part in schema_path:
        schema = schema[part]
    for value in EDGES:
        assert compiled_valid(value, schema) == jsonschema_valid(value, schema), (schema_path, value)


MANIFEST_SCHEMA = json.loads((schemas.SCHEMA_DIR / "manifest.schema.json").read_text(encoding="utf-8"))
MANIFEST_VALIDATOR = schemas.validator("manifest")


def manifest_data() -> dict[str, Any]:
    """A fresh copy of this repository's own manifest, read once (a property test asks 1,500 times)."""
    return copy.deepcopy(_own_manifest())


@functools.cache
def _own_manifest() -> dict[str, Any]:
    root = Path(__file__).resolve().parents[2] / "output"
    (path,) = root.rglob("manifest.yaml")
    data, _ = safe_yaml.load_yaml_file(path)
    assert isinstance(data, dict)
    return data


def test_the_manifest_of_a_real_output_passes_quickly() -> None:
    assert schemas.quick_valid(manifest_data(), "manifest")


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(data=st.data(), edits=st.integers(1, 4))
def test_a_mutated_manifest_that_passes_quickly_passes_jsonschema(data: st.DataObject,
                                                                  edits: int) -> None:
    value = mutated(manifest_data(), data, edits, ["x", "path", "blob", "records", "raises"])
    assert schemas.quick_valid(value, "manifest") == MANIFEST_VALIDATOR.is_valid(value), \
        json.dumps(value)[:400]
