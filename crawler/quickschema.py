"""A quick check that data passes a JSON Schema, for the few keywords our schemas use.

`jsonschema` costs a third to half a millisecond for one record, more than everything else the
crawler does to prime the load cache with a record it writes (`emit.checked_of_written`). This
check is sound, not complete: True means `jsonschema` accepts the data too; False means only
"not known here" (a keyword it does not know, a float where an integer goes), and the caller
asks `jsonschema`. It is strict where the two could differ: only `int` is an integer, only
`str` a string, and an enum value must have the type of the one it equals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

NOTES = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})
_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", bool: "boolean",
                                type(None): "null", dict: "object", list: "array"}


def surely_valid(value: Any, schema: Any) -> bool:
    """True only when `value` passes `schema` for certain."""
    if not isinstance(schema, dict):
        return False  # `true`/`false` schemas and the like: not known here
    for keyword, expected in schema.items():
        if keyword in NOTES:
            continue
        check = _CHECKS.get(keyword)
        if check is None or not check(value, expected, schema):
            return False
    return True


def _type(value: Any, expected: Any, schema: Any) -> bool:
    types = expected if isinstance(expected, list) else [expected]
    return _JSON_TYPES.get(type(value)) in types


def _const(value: Any, expected: Any, schema: Any) -> bool:
    return _scalar(value) and type(value) is type(expected) and value == expected


def _enum(value: Any, expected: Any, schema: Any) -> bool:
    return _scalar(value) and any(type(value) is type(e) and value == e for e in expected)


def _scalar(value: Any) -> bool:
    return type(value) in (str, int, bool, type(None))


def _pattern(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, str) or _compiled(expected).search(value) is not None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # as jsonschema: a search, not a full match


# Each keyword applies to the values `jsonschema` applies it to (`isinstance`, bool no number).

def _min_length(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, str) or len(value) >= expected


def _min_items(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, list) or len(value) >= expected


def _max_items(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, list) or len(value) <= expected


def _minimum(value: Any, expected: Any, schema: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return bool(value >= expected)


def _required(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, dict) or all(key in value for key in expected)


def _properties(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, dict) or all(
        surely_valid(value[key], sub) for key, sub in expected.items() if key in value)


def _additional(value: Any, expected: Any, schema: Any) -> bool:
    if not isinstance(value, dict) or expected is True:
        return True
    known = schema.get("properties", {})
    extra = [key for key in value if key not in known]
    if expected is False:
        return not extra
    return all(surely_valid(value[key], expected) for key in extra)


def _items(value: Any, expected: Any, schema: Any) -> bool:
    return not isinstance(value, list) or all(surely_valid(item, expected) for item in value)


def _one_of(value: Any, expected: Any, schema: Any) -> bool:
    """Exactly one branch passes for certain, and every other fails for certain on its type."""
    passing = [branch for branch in expected if surely_valid(value, branch)]
    return len(passing) == 1 and all(
        branch is passing[0] or _fails_on_type(value, branch) for branch in expected)


def _fails_on_type(value: Any, branch: Any) -> bool:
    if not isinstance(branch, dict) or "type" not in branch or type(value) not in _JSON_TYPES:
        return False
    if type(value) in (int, float):
        return False  # an int may be a "number" too
    return not _type(value, branch["type"], branch)


_CHECKS: dict[str, Callable[[Any, Any, Any], bool]] = {
    "type": _type, "const": _const, "enum": _enum, "pattern": _pattern, "minLength": _min_length,
    "minimum": _minimum, "minItems": _min_items, "maxItems": _max_items, "required": _required,
    "properties": _properties, "additionalProperties": _additional, "items": _items, "oneOf": _one_of,
}
