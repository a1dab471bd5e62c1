"""A class that fills its message only when the raise leaves it None (click's NoSuchOption)."""
from gettext import ngettext


class UsageError(Exception):
    def __init__(self, message, ctx=None):
        super().__init__(message)
        self.ctx = ctx
        self.message = message

    def __str__(self):
        return self.message


class NoSuchOption(UsageError):
    def __init__(self, option_name, message=None, possibilities=None, ctx=None):
        if message is None:
            message = "No such option {name!r}.".format(name=option_name)
        super().__init__(message, ctx)
        self.option_name = option_name


class NoSuchName(NoSuchOption):
    def __init__(self, name):
        super().__init__(name, None)


class Either(UsageError):
    def __init__(self, name, message=None):
        if message is None:
            message = f"bad {name}"
        else:
            message = f"{name}: {message}"
        super().__init__(message)


class BadParameter(UsageError):
    pass


def omitted(opt):
    raise NoSuchOption(opt, ctx=None)


def none_by_position(opt):
    raise NoSuchOption(opt, None, ["--all"])


def none_by_keyword(opt):
    raise NoSuchOption(opt, message=None)


def given_by_position(opt):
    raise NoSuchOption(opt, f"Option {opt} is not allowed here.")


def given_by_keyword(opt):
    raise NoSuchOption(opt, message="Use --help to see the options.")


def given_by_name(opt, text):
    raise NoSuchOption(opt, message=text)


def through_a_subclass(name):
    raise NoSuchName(name)


def both_branches_assign(name, message):
    raise Either(name, message)


def plural(nargs, value):
    raise BadParameter(
        ngettext(
            "Takes {nargs} values but 1 was given.",
            "Takes {nargs} values but {len} were given.",
            len(value),
        ).format(nargs=nargs, len=len(value))
    )
