class LibError(Exception):
    """Every error of the library starts with its name."""

    def __init__(self, message, *, code=None):
        super().__init__(f"[layered] {message}")
        self.code = code


class Documented(LibError):
    docs = "https://layered.example/errors"

    def __init__(self, message):
        LibError.__init__(self, message + "\nSee " + self.docs)
