"""Facts of a raise read through what builds or re-raises its exception, and inside `match`.

A module factory and a method factory the crawler follows (`factory: true`, the class they
build as `exception_qualname`); `raise exc.with_traceback(tb)` is `raise exc`, whose message is
not `tb`; a multi-line `if` test inside a `case` block keeps its lines' indentation.
"""

CALLS = {
    "lower": [{"name": "add"}],
    "Parser.parse": [{"text": "x"}],
    "rethrow": [{}],
    "in_case": [{"value": 1, "first": 1, "second": 2}],
}


def _unsupported_lowering_error(name):
    return NotImplementedError(f"Unimplemented primitive in lowering: {name}")


def lower(name):
    raise _unsupported_lowering_error(name)


class Parser:
    def parse_err(self, text):
        return SyntaxError(f"cannot parse {text!r}")

    def parse(self, text):
        raise self.parse_err(text)


def rethrow():
    try:
        return 1 / 0
    except ZeroDivisionError as error:
        traceback = error.__traceback__
    exc = ValueError("division failed")
    raise exc.with_traceback(traceback)


def in_case(value, first=None, second=0):
    match value:
        case 1:
            if (
                first is not None
                and second > first
            ):
                raise ValueError("second after first")
    return value
