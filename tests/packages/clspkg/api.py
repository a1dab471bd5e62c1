import clspkg.errors as errs
from clspkg import BadThing, ReCoded

from . import errors
from .errors import Plain, Sub, Templated


def bad(name="n"):
    raise BadThing(name)


def bad_module_alias(name="n"):
    raise errs.BadThing(name, limit=5)


def sub(name="n"):
    raise Sub(name)


def templated():
    raise Templated()


def templated_bare():
    raise Templated


def templated_custom():
    raise Templated("custom text")


def coded(code=4):
    raise ReCoded(code)


def plain(m="given"):
    raise Plain(m)


def plain_literal():
    raise Plain("plain literal")


def legacy(w="w"):
    raise errors.Legacy(w)


def builtin_no_message():
    raise ValueError()


def missing_key(k="k"):
    raise errors.MissingKey(f"no key {k}")


def with_code(x="x"):
    raise errors.WithCode(f"bad {x}", 42)


def located(path="f.yaml"):
    raise errors.Located(f"empty file {path!r}; restore it", path=path)
