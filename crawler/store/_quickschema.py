"""A quick check that data passes a JSON Schema, for the few keywords our schemas use.

`jsonschema` costs a third to half a millisecond for one record, more than everything else the
crawler does to prime the load cache with a record it writes (`record_files.checked_of_written`). This
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
    return _check_of(schema)(value)


Check = Callable[[Any], bool]
_CHECK_OF: dict[int, tuple[Any, Check]] = {}  # by id; the schema is held, so its id stays its own


def _check_of(schema: Any) -> Check:
    """`schema` turned once into one function of the value: a record is checked three times
    faster than by reading the schema's keywords again at every value."""
    held = _CHECK_OF.get(id(schema))
    if held is not None and held[0] is schema:
        return held[1]
    check = _compile(schema)
    if len(_CHECK_OF) > 4096:
        _CHECK_OF.clear()
    _CHECK_OF[id(schema)] = (schema, check)
    return check


def _compile(schema: Any) -> Check:
    if not isinstance(schema, dict):
        return _unknown  # `true`/`false` schemas and the like: not known here
    checks = []
    for keyword, expected in schema.items():
        if keyword in NOTES:
            continue
        make = _CHECKS.get(keyword)
        if make is None:
            return _unknown
        checks.append(make(expected, schema))
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:  # a loop, not all(): this runs for every value of every record
            if not check(value):
                return False
        return True
    return every


def _unknown(value: Any) -> bool:
    return False


# Each maker turns a keyword and its value into a check; each check applies to the values
# `jsonschema` applies the keyword to (`isinstance`, a bool no number).

def _type(expected: Any, schema: Any) -> Check:
    types = expected if isinstance(expected, list) else [expected]
    if all(isinstance(name, str) for name in types):
        names = frozenset(types)
        return lambda value: _JSON_TYPES.get(type(value)) in names
    return lambda value: _JSON_TYPES.get(type(value)) in types


def _const(expected: Any, schema: Any) -> Check:
    return lambda value: _scalar(value) and type(value) is type(expected) and value == expected


def _enum(expected: Any, schema: Any) -> Check:
    return lambda value: _scalar(value) and any(type(value) is type(e) and value == e
                                                for e in expected)


def _scalar(value: Any) -> bool:
    return type(value) in (str, int, bool, type(None))


def _pattern(expected: Any, schema: Any) -> Check:
    def check(value: Any) -> bool:
        return not isinstance(value, str) or _compiled(expected).search(value) is not None
    return check


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # as jsonschema: a search, not a full match


def _min_length(expected: Any, schema: Any) -> Check:
    return lambda value: not isinstance(value, str) or len(value) >= expected


def _min_items(expected: Any, schema: Any) -> Check:
    return lambda value: not isinstance(value, list) or len(value) >= expected


def _max_items(expected: Any, schema: Any) -> Check:
    return lambda value: not isinstance(value, list) or len(value) <= expected


def _minimum(expected: Any, schema: Any) -> Check:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return True
        return bool(value >= expected)
    return check


def _required(expected: Any, schema: Any) -> Check:
    keys = frozenset(expected) if all(isinstance(key, str) for key in expected) else None
    if keys is None:
        return lambda value: not isinstance(value, dict) or all(key in value for key in expected)
    return lambda value: not isinstance(value, dict) or value.keys() >= keys


def _properties(expected: Any, schema: Any) -> Check:
    checks = [(key, _check_of(sub)) for key, sub in expected.items()]

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for key, sub in checks:
            if key in value and not sub(value[key]):
                return False
        return True
    return check


def _additional(expected: Any, schema: Any) -> Check:
    if expected is True:
        return lambda value: True
    known = schema.get("properties", {})
    if expected is False:
        return lambda value: not isinstance(value, dict) or known.keys() >= value.keys()
    sub = _check_of(expected)
    return lambda value: not isinstance(value, dict) or all(
        sub(value[key]) for key in value if key not in known)


def _items(expected: Any, schema: Any) -> Check:
    sub = _check_of(expected)

    def check(value: Any) -> bool:
        if isinstance(value, list):
            for item in value:
                if not sub(item):
                    return False
        return True
    return check


def _one_of(expected: Any, schema: Any) -> Check:
    """Exactly one branch passes for certain, and every other fails for certain on its type."""
    branches = [(branch, _check_of(branch)) for branch in expected]

    def check(value: Any) -> bool:
        passing = [branch for branch, sub in branches if sub(value)]
        return len(passing) == 1 and all(
            branch is passing[0] or _fails_on_type(value, branch) for branch in expected)
    return check


def _fails_on_type(value: Any, branch: Any) -> bool:
    if not isinstance(branch, dict) or "type" not in branch or type(value) not in _JSON_TYPES:
        return False
    if type(value) in (int, float):
        return False  # an int may be a "number" too
    types = branch["type"] if isinstance(branch["type"], list) else [branch["type"]]
    return _JSON_TYPES.get(type(value)) not in types


_CHECKS: dict[str, Callable[[Any, Any], Check]] = {
    "type": _type, "const": _const, "enum": _enum, "pattern": _pattern, "minLength": _min_length,
    "minimum": _minimum, "minItems": _min_items, "maxItems": _max_items, "required": _required,
    "properties": _properties, "additionalProperties": _additional, "items": _items, "oneOf": _one_of,
}
