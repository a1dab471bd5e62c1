"""Helpers that return text."""


def too_many(n):
    return f"too many values: {n}"


def expected(what, got):
    return "expected " + what + ", got " + repr(got)


def mentions(name):
    return f"unknown name {name!r}"


def lines(first, second):
    return "\n".join([first, second])
