from layered import base
from layered.base import Documented


class ParseFailed(Documented):
    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")


class ShowsHint(Documented):
    hint = "check the input file"

    def __str__(self):
        return f"{self.args[0]} (hint: {self.hint})"


class Unlinked(base.LibError):
    error_msg = "the native module is not linked"

    def __init__(self):
        super().__init__(self.error_msg, code=3)
