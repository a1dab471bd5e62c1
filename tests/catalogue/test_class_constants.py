"""A class whose `__init__` hands its base a module constant's text with the message."""

from __future__ import annotations

from tests.helpers.classes import messages, resolve_sources


def test_a_module_constant_the_init_prefixes_is_read_as_its_text() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
PREFIX = (
    "Pallas encountered an internal verification error. "
    "Error details: "
)


class VerificationError(Exception):
    def __init__(self, message: str):
        super().__init__(PREFIX + message)


class Shadowed(Exception):
    def __init__(self, message: str, PREFIX: str = "x"):
        super().__init__(PREFIX + message)


def verify(d):
    raise VerificationError(f"bad op {d}")


def shadowed(d):
    raise Shadowed(f"bad op {d}")
'''}))
    (verified,) = got["verify"]
    assert (verified.kind, verified.template) == (
        "class_default",
        "Pallas encountered an internal verification error. Error details: bad op {d}")
    assert verified.regex == ("^Pallas encountered an internal verification error\\. "
                              "Error details: bad op (?P<d>[\\s\\S]*?)$")
    (shadowed,) = got["shadowed"]  # a parameter of the constant's name is not the constant
    assert "Pallas" not in shadowed.template
