class BaseError(Exception):
    """Root of the package's errors."""


class BadThing(BaseError):
    def __init__(self, name, limit=3):
        super().__init__(f"thing {name!r} is over the limit of {limit}")
        self.name = name


class Sub(BadThing):
    pass


class Templated(BaseError):
    message = "templated failure"

    def __init__(self, *args):
        super().__init__(*(args or (self.message,)))


class Coded(BaseError):
    def __init__(self, code):
        msg = "code %d failed" % code
        super().__init__(msg)


class Plain(BaseError):
    def __init__(self, message):
        super().__init__(message)


class Legacy(ValueError):
    def __init__(self, what):
        ValueError.__init__(self, "legacy: " + what)


class NotAnError:
    pass


class MissingKey(KeyError):
    pass


class WithCode(BaseError):
    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code


class Located(BaseError):
    def __init__(self, message, *, path, line=None):
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
