def plus(name="n"):
    raise ValueError("unknown name " + name + ", sorry")


def with_str(n=3):
    raise ValueError("count " + str(n) + " is odd")


def with_repr(v="x"):
    raise ValueError("value " + repr(v))


def mixed(a="a", b="b"):
    raise ValueError(f"first {a}, " + "then " + "{b}".format(b=b))


def parenthesised(a="a"):
    raise ValueError(("left " + a) + " right")


def no_text(a="a", b="b"):
    raise ValueError(a + b)
