"""A class's text attribute read by the class's own name (`HelpError._help`), as jax's
InconclusiveDimensionOperation reads `_help_msg`; a subclass's own attribute of that name is not
what the base's `__init__` reads."""


class HelpError(Exception):
    _help = "\nSee the docs."

    def __init__(self, message):
        super().__init__(f"{message}{HelpError._help}")


class SizeError(HelpError):
    _help = "\nNot this one."


class Elsewhere:
    _help = " (elsewhere)"


class OtherError(Exception):
    def __init__(self, message):
        super().__init__(f"{message}{Elsewhere._help}")


def bad_size(size=3):
    raise HelpError(f"bad size {size}")


def empty():
    raise HelpError("")


def sub(size=4):
    raise SizeError(f"size {size}")


def other(x=1):
    raise OtherError(f"other {x}")
