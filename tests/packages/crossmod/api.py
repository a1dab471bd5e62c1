"""Raises whose message or exception is built in another module of the package."""

import crossmod.msgs as m
from crossmod import make_error, shape_error
from crossmod.core import Failure, chained, either, from_class
from crossmod.msgs import expected, too_many


def reshape(s=(2, 3)):
    raise shape_error("reshape", s)


def backend():
    raise make_error("gpu")


def backend_detail(detail="out of memory"):
    raise make_error("tpu", detail=detail)


def alternatives(strict):
    raise either(strict, 3)


def count(n=7):
    raise ValueError(too_many(n))


def through_module(n=9):
    raise ValueError(m.too_many(n))


def joined(got=5):
    raise TypeError("bad input: " + expected("a list", got))


def quoted():
    raise KeyError(m.mentions("x"))


def two_lines():
    raise ValueError(m.lines("first", "second"))


def parameter_class():
    raise from_class(ValueError, "given class")


def chain(n=2):
    raise chained(n)


class Session:
    def _failure(self, n):
        return Failure(m.lines("first", str(n)))

    def run(self, n=2):
        raise self._failure(n)
