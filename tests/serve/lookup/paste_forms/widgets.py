"""A small library whose raises the paste-form samples come from (copied into the test's repository)."""


class WidgetError(ValueError):
    """A widget that cannot be built."""


class FrameError(WidgetError):
    """A frame that cannot hold its widgets."""


def fit(name, count, limit):
    if count > limit:
        raise FrameError(f"widget {name!r} has {count} parts, but a frame holds at most {limit}; "
                         "split it with Widget.split() before fitting it into the frame")
    return count


def paint(colour):
    if colour not in ("red", "blue"):
        raise WidgetError(f"unknown colour {colour!r}: choose red or blue")
    return colour


def assemble(parts):
    try:
        return fit("gear", parts, 3)
    except FrameError as error:
        raise RuntimeError(f"could not assemble the frame of {parts} parts") from error


def check_all(colours):
    errors = []
    for colour in colours:
        try:
            paint(colour)
        except WidgetError as error:
            errors.append(error)
    if errors:
        raise ExceptionGroup("some colours are wrong", errors)  # noqa: F821 (builtin since 3.11)
