def nested(a="a", b="b"):
    raise ValueError(f"outer {f'inner {a}'} and {b!r:>5}")


def equal_spec(value=3):
    raise ValueError(f"{value = }, {value=!r:>4}")


def quotes(d={"k": 1}):
    raise ValueError(f"key {d['k']} and {'literal'}")


def escapes(x="v"):
    raise ValueError(f"line\n{x}\ttab {{braces}}")
