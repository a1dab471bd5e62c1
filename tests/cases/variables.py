import contextlib

CALLS = {"alternatives": [{"flag": False}], "fall_through": [{"strict": True}],
         "conditional_expression": [{"n": 2}]}


def simple(x="v"):
    msg = f"bad {x}"
    raise ValueError(msg)


def augmented(x="v", y="w"):
    msg = "first " + x
    msg += f", then {y}"
    msg += "."
    raise ValueError(msg)


def several_lines(items=("a", "b")):
    message = (
        "many "
        "lines: "
    )
    message += ", ".join(items)
    raise ValueError(message)


def alternatives(flag=True, x="v"):
    if flag:
        msg = "flag set for %s" % x
    else:
        msg = "flag clear"
    raise ValueError(msg)


def fall_through(x="v", strict=False):
    msg = "default message"
    if strict:
        msg = f"strict: {x}"
    raise ValueError(msg)


def in_loop(items=("a",)):
    msg = "none"
    for item in items:
        msg = item
    raise ValueError(msg)


def parameter(msg="given"):
    raise ValueError(msg)


def same_line(x="v"):
    text = "on one line"; raise ValueError(text)


def conditional_expression(n=1):
    raise ValueError("one item" if n == 1 else "many items")


def closure(x="v"):
    msg = "outer"

    def inner():
        raise ValueError(msg)

    inner()


def format_base(name="n"):
    template = "unknown name {}"
    raise ValueError(template.format(name))


def with_block(x="v"):
    with contextlib.nullcontext():
        msg = f"inside with {x}"
    raise ValueError(msg)


def in_handler(x="v"):
    try:
        msg = "tried"
        int(x)
    except ValueError:
        raise ValueError(msg)


CALLS["message_and_star_args"] = [{"rest": (1, 2)}]


def message_and_star_args(rest=()):
    raise ValueError("with star and args", *rest)


CALLS["elif_chain"] = [{"kind": "b"}, {"kind": "c"}]
GLOBAL_MESSAGE = "a module global"


def elif_chain(kind="a"):
    if kind == "a":
        msg = "kind a"
    elif kind == "b":
        msg = "kind b"
    else:
        msg = f"other kind {kind}"
    raise ValueError(msg)


def reassigned_from_itself(x="v"):
    msg = "start"
    msg = msg + f" then {x}"
    raise ValueError(msg)


def global_name():
    global GLOBAL_MESSAGE
    raise ValueError(GLOBAL_MESSAGE)
