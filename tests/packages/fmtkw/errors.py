"""Two real shapes of a class attribute formatted with keywords, and one that is not read."""


class CoreError(Exception):
    """botocore's `BotoCoreError`: the subclass's `fmt`, formatted in the base's `__init__`."""

    fmt = "An unspecified error occurred"

    def __init__(self, **kwargs):
        msg = self.fmt.format(**kwargs)
        Exception.__init__(self, msg)
        self.kwargs = kwargs


class NoCredentialsError(CoreError):
    fmt = "Unable to locate credentials"


class ProfileNotFound(CoreError):
    fmt = "The config profile ({profile}) could not be found"


class ErrorMixin:
    """pydantic v1's `PydanticErrorMixin`: the subclass's `msg_template`, formatted in `__str__`."""

    msg_template = "error"

    def __init__(self, **ctx):
        self.__dict__ = ctx

    def __str__(self):
        return self.msg_template.format(**self.__dict__)


class ValueTypeError(ErrorMixin, TypeError):
    pass


class BoolError(ValueTypeError):
    msg_template = "value could not be parsed to a boolean"


class LimitError(ValueTypeError):
    msg_template = "ensure this value is less than {limit_value}"


class PositionalError(CoreError):
    """A field filled by position: `format(**kwargs)` raises on it; not read as a template."""

    fmt = "bad value {0}"
