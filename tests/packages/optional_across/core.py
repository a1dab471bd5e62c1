"""A factory whose text many `if`s add to: read with optional pieces, composed by its class."""

from optional_across.errors import Leaked


def leaked(tracer, debug=None, line=None, frames=0, detail=None):
    msg = f"Encountered an unexpected tracer of type {type(tracer).__name__}."
    if debug is not None:
        msg += f"\nThe function being traced was {debug}."
    if line is not None:
        msg += f"\nThe value was created on line {line}."
        if frames > 0:
            msg += f"\nThe final {frames} frames were shown."
    msg += "\nTo catch the leak earlier, set JAX_CHECK_TRACER_LEAKS."
    if detail:
        msg += f" Detail: {detail}"
    return Leaked(msg)


def check(value, debug=None, line=None, frames=0):
    raise leaked(value, debug, line, frames)


def renamed(a=0, b=0, c=0, d=0):
    msg = "start"
    if a:
        msg += " and a"
    if b:
        msg = "restart"
    if c:
        msg += " and c"
    if d:
        msg += " and d"
    raise ValueError(msg)
