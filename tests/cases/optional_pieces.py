"""Text that many `if`s each add to (more paths than alternatives are kept): the pieces only
some paths add are optional; a literal repeated a literal number of times is literal text."""

CALLS = {}


class Leaked(Exception):
    pass


def leaked(tracer="x", debug=None, line=None, frames=0, detail=None):
    msg = ("Encountered an unexpected tracer. A value "
           f"of type {type(tracer).__name__} escaped the scope of the transformation.")
    if debug is not None:
        msg += f"\nThe function being traced when the value leaked was {debug}."
    if line is not None:
        divider = "\n" + "-" * 30 + "\n"
        msg += divider
        msg += f"The leaked value was created on line {line}. "
        msg += divider
        if frames > 0:
            msg += f"When the value was created, the final {frames} frames were:"
            msg += divider + "frames here" + divider
    msg += "\nTo catch the leak earlier, set JAX_CHECK_TRACER_LEAKS."
    if detail:
        msg += f"Detail: {detail}"
    return Leaked(msg)


def check(value, debug=None, line=None, frames=0, detail=None):
    raise leaked(value, debug, line, frames, detail)


def ruled(width=3):
    raise ValueError("a rule:\n" + "=" * 12 + f"\nwidth {width}")
