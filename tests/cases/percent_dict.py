"""A `__str__` that formats with `%` and `dict(key=value)`, as argparse's ArgumentError does."""


def _action_name(argument):
    if argument is None:
        return None
    return argument


class ArgumentError(Exception):
    def __init__(self, argument, message):
        self.argument_name = _action_name(argument)
        self.message = message

    def __str__(self):
        if self.argument_name is None:
            format = '%(message)s'
        else:
            format = 'argument %(argument_name)s: %(message)s'
        return format % dict(message=self.message,
                             argument_name=self.argument_name)


def conflicting(name):
    raise ArgumentError(name, 'conflicting subparser: %s' % name)


def without_argument(value):
    raise ArgumentError(None, 'invalid choice: %r' % value)


def shadowed(value):
    dict = lambda **kwargs: kwargs  # noqa: E731 - a local `dict` is not the builtin
    raise ValueError('bad %(v)s' % dict(v=value))
