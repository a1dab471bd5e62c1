"""A file's outcome as the result cache stores it: `plain` writes what `asdict` did."""

from __future__ import annotations

import json
from dataclasses import asdict

from crawler.parse.workers import visit_file
from crawler.store._outcome_json import outcome_data, outcome_from_data, plain

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


def test_plain_is_what_json_makes_of_asdict_at_every_depth() -> None:
    outcome = visit_file("pkg/shapes.py", "a" * 40, SOURCE)
    assert outcome.sites and outcome.classes and outcome.exposed  # every part is exercised
    for part in (outcome.counts, *outcome.classes, *outcome.exposed, *outcome.sites,
                 *(call for site in outcome.sites for call in site.cross_calls)):
        assert json.dumps(plain(part)) == json.dumps(asdict(part))
    assert plain(None) is None and plain(((1, "a"), [2])) == [[1, "a"], [2]]


def test_an_outcome_comes_back_from_its_plain_data_as_it_was() -> None:
    outcome = visit_file("pkg/shapes.py", "a" * 40, SOURCE)
    data = json.loads(json.dumps(outcome_data(outcome)))
    assert outcome_from_data(data) == outcome
