"""Factories and helpers that other modules of the package call."""

PREFIX = "crossmod"


def shape_error(name, shape):
    return TypeError(f"{name} got shape {shape}")


def make_error(backend, detail="no detail"):
    return RuntimeError(_line(backend) + f": {detail}")


def _line(backend):
    return f"[{PREFIX}] backend {backend!r} failed"


def either(strict, value):
    if strict:
        return ValueError(f"strict: {value}")
    return TypeError("lenient")


def from_class(exc_type, message):
    return exc_type(message)


def chained(n):
    from crossmod import msgs

    return ValueError(msgs.too_many(n))


class Failure(Exception):
    """A class of the package a method of another module builds (`api.Session._failure`)."""
