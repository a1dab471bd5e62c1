def single(x="v"):
    raise ValueError("bad value %s" % x)


def several(a="a", b=2):
    raise ValueError("%s and %r and %d%%" % (a, b, b))


def named(name="n", size=3):
    raise ValueError("%(name)s has size %(size)05d" % {"name": name, "size": size})


def star_width(w=5, v=1.5):
    raise ValueError("value %*.2f" % (w, v))


def literal_in_tuple(x=1):
    raise ValueError("%s: %s" % ("prefix", x))


def from_locals(a="q"):
    raise ValueError("missing %(a)s" % locals())


def one_value_many_slots(pair=("p", "q")):
    raise ValueError("%s then %s" % pair)
