"""A local name that stands for an exception class, or a choice of classes, raised with a message."""


class Unsupported(Exception):
    def __init__(self, message):
        super().__init__(f"{message} (see the docs)")


def chosen(rounding="down", hw=True):
    err_type = ValueError if hw else NotImplementedError
    raise err_type(f"rounding {rounding} is not supported")


def aliased(name="x"):
    error = KeyError
    raise error(f"no key {name}")


def by_branch(strict=True, value=3):
    if strict:
        kind = TypeError
    else:
        kind = Unsupported
    raise kind("bad value %r" % value)


def made(value=1):
    make = lambda text: ValueError(text)  # noqa: E731 - a local function, not a class
    raise make(f"made {value}")
