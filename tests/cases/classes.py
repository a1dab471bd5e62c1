"""Exception classes that do something to the message a raise hands them."""


class _DocsMixin:
    _error_page = "https://docs.example.org/errors.html"
    _module_name = "example.errors"

    def __init__(self, message: str):
        error_page = self._error_page
        module_name = self._module_name
        class_name = self.__class__.__name__
        error_msg = f"{message}\nSee {error_page}#{module_name}.{class_name}"
        super().__init__(error_msg)


class DocsTypeError(_DocsMixin, TypeError):
    """Appends a link to its documentation, through the mixin."""


class ConcretizationError(DocsTypeError):
    def __init__(self, tracer, context: str = ""):
        super().__init__(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{tracer!r}\n{context}\n")


class LeakedError(DocsTypeError):
    def __init__(self, msg: str):
        super().__init__(msg)


class ConfigError(ValueError):
    def __init__(self, message, path="config.toml"):
        super().__init__("configuration: " + message)
        self.path = path


class WhereError(RuntimeError):
    def __init__(self, where, message):
        Exception.__init__(self, "in {}: {}".format(where, message))


class ShownError(Exception):
    exit_code = 2

    def __init__(self, message, hint=None):
        super().__init__(message, hint)
        self.message = message

    def __str__(self):
        return self.message


class UsageError(ShownError):
    def __init__(self, message, ctx=None):
        super().__init__(message)
        self.ctx = ctx


class FormattedError(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def format_message(self):
        return f"Error: {self.message}"

    def __str__(self):
        return self.format_message()


class NotLinkedError(Exception):
    error_msg = "the library is not linked; build it with --link"

    def __init__(self):
        super().__init__(self.error_msg)


class MissingValue(Exception):
    def __init__(self):
        super().__init__("a value is missing")


class LookupFailed(KeyError):
    def __str__(self):
        return f"no entry {self.args[0]}"


class PlainKeyError(KeyError):
    pass


class Joined(Exception):
    def __init__(self, lines):
        super().__init__(lines)
        self.lines = lines

    def __str__(self):
        return "\n".join(self.lines)


def concrete(x=3):
    raise ConcretizationError(x, f"The axis argument {x} must be static.")


def leaked(name="f"):
    raise LeakedError(f"Encountered an unexpected tracer in {name}.")


def docs_type_error(n=2):
    raise DocsTypeError(f"expected {n} arguments")


def config(key="k"):
    raise ConfigError(f"unknown key {key}")


def where(line=4):
    raise WhereError(f"line {line}", "unexpected indent")


def usage(option="--x"):
    raise UsageError(f"No such option: {option}", None)


def shown(option="--x"):
    raise ShownError(f"Option {option} requires a value", "try --help")


def formatted(what="w"):
    raise FormattedError(f"cannot open {what}")


def not_linked():
    raise NotLinkedError()


def missing():
    raise MissingValue


def lookup_failed(key="k"):
    raise LookupFailed(f"key {key}")


def plain_key(key="k"):
    raise PlainKeyError(f"no key {key}")


def joined(lines=("a", "b")):
    raise Joined(lines)


def joined_text(text="a"):
    raise Joined(f"lines {text}")
