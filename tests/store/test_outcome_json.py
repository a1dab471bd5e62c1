"""A file's outcome as the result cache stores it: `ENCODER` writes what `asdict` did."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, is_dataclass

import pytest

from crawler.parse.file_tasks import visit_file
from crawler.store._outcome_json import outcome_from_data, outcome_json
from crawler.store.cache import ENCODER, record_fields

SOURCE = b'''
import enum


class Colour(enum.Enum):
    RED = 1


class ShapeError(ValueError):
    """A bad shape."""

    prefix = "shape: "

    def __init__(self, shape, *, axis=0):
        self.shape = shape
        super().__init__(f"bad shape {shape} on axis {axis}")

    def __str__(self):
        return self.prefix + str(self.shape)


def bad_value(name, value="?"):
    return ValueError(f"bad value for {name}: {value!r}")


def check(x):
    if x < 0:
        raise bad_value("x", x)
    if x > 10:
        raise ShapeError(x)
    raise TypeError("x is %s" % type(x).__name__)
'''


def _as_before(value: object) -> str:
    """What the cache wrote before `ENCODER`: JSON of `asdict`."""
    return json.dumps(asdict(value) if is_dataclass(value) else value, separators=(",", ":"),
                      ensure_ascii=False)


def test_the_encoder_writes_what_json_made_of_asdict_at_every_depth() -> None:
    outcome = visit_file("pkg/shapes.py", "a" * 40, SOURCE)
    assert outcome.sites and outcome.classes and outcome.exposed  # every part is exercised
    parts = (outcome.counts, *outcome.classes, *outcome.exposed, *outcome.sites,
             *(call for site in outcome.sites for call in site.cross_calls),
             *(region for region in outcome.regions))
    for part in parts:
        assert ENCODER.encode(part) == _as_before(part)
    assert ENCODER.encode(parts) == _as_before([asdict(part) for part in parts])
    assert ENCODER.encode({"a": ((1, "é"), [2], None)}) == '{"a":[[1,"é"],[2],null]}'


@dataclass(frozen=True)
class _One:
    only: tuple[int, ...]


@dataclass(frozen=True)
class _Nothing:
    pass


def test_records_of_one_field_or_none_and_what_is_no_record() -> None:
    assert record_fields(_One((1,))) == {"only": (1,)} and record_fields(_Nothing()) == {}
    assert ENCODER.encode([_One((1, 2)), _Nothing()]) == '[{"only":[1,2]},{}]'
    with pytest.raises(TypeError, match="set is not a record"):
        ENCODER.encode({"a": {1}})


def test_an_outcome_comes_back_from_its_json_as_it_was() -> None:
    outcome = visit_file("pkg/shapes.py", "a" * 40, SOURCE)
    assert outcome_from_data(json.loads(outcome_json(outcome))) == outcome
