"""Messages built by the module's own helpers, factories and constants."""

MESSAGE = "a module constant"
TEMPLATE = "unknown option {}"
PERCENT = "bad value %r for %s"
CALLS = {"else_branch": [{"flag": False}], "factory_alternatives": [{"strict": False}]}


def _msg(name):
    return f"helper says {name} is wrong"


def _outer(name, count):
    return _inner(name) + f" ({count} times)"


def _inner(what):
    return f"inner: {what}"


def _shape_error(name, shape):
    return TypeError(f"{name} got shape {shape}")


def _built(kind, value):
    error = ValueError(f"{kind} value {value!r}")
    return error


def _two_ways(strict, value):
    if strict:
        return ValueError(f"strict: {value}")
    return TypeError("lenient")


def helper(x="v"):
    raise ValueError(_msg(x))


def chain(x="v", n=3):
    raise ValueError(_outer(x, n))


def factory(s=(2, 3)):
    raise _shape_error("reshape", s)


def factory_through_name(v=1):
    raise _built("int", v)


def factory_alternatives(strict=True, v=1):
    raise _two_ways(strict, v)


def constant():
    raise ValueError(MESSAGE)


def constant_format(option="o"):
    raise KeyError(TEMPLATE.format(option))


def constant_percent(value=1, name="n"):
    raise ValueError(PERCENT % (value, name))


def joined():
    raise ValueError("\n".join(["first line", "second line"]))


def parameter_class(exc_type=LookupError, message="given"):
    raise exc_type(message)


class Parser:
    def parse_error(self, detail):
        return SyntaxError(f"cannot parse: {detail}")

    def parse(self, token="t"):
        raise self.parse_error(f"token {token}")


def parse_token(token="t"):
    Parser().parse(token)


def else_branch(flag=True, x="v"):
    if flag:
        msg = f"set {x}"
    else:
        msg = "clear"
    raise ValueError(msg)
