def _(text):
    return text


def auto(name="n", count=3):
    raise ValueError("{} has {} items".format(name, count))


def indexed(a="x", b="y"):
    raise ValueError("{1} before {0}, {0} again".format(a, b))


def named(path="data.txt", mode="r"):
    raise ValueError("cannot open {path} in mode {mode!r}".format(path=path, mode=mode))


def mapping(info={"user": "u", "id": 7}):
    raise LookupError("no user {user} with id {id:>4}".format(**info))


def attributes(obj=complex(1, 2)):
    raise TypeError("real {0.real} imag {0.imag} of {0!r}".format(obj))


def nested_spec(value=3.14159, width=8):
    raise ValueError("value {:{}} is {}".format(value, width, "wide"))


def literal_argument():
    raise ValueError("mode {} is unknown".format("rw"))


def braces(x=1):
    raise ValueError("{{literal}} and {}".format(x))


def translated(n=2):
    raise ValueError(_("{} is too many").format(n))


def key_error(key="k"):
    raise KeyError("no key {!r}".format(key))
