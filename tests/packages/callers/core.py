"""Raises whose message is a parameter: the text is what their callers pass."""

from callers.errors import UsageError


class Context:
    def fail(self, message):
        raise UsageError(message, self)


def check(pred, msg):
    if not pred:
        raise ValueError(msg, pred)


def deprecated(name, *, message):
    raise AttributeError(message)


def relay(text):
    raise RuntimeError(text)


def never_called(text):
    raise KeyError(text)


def reassigned(text):
    text = text.strip()
    raise TypeError(text)


def bounded(n=3):
    check(n > 0, f"n must be positive, got {n}")
    check(n < 10, "n is too large")
