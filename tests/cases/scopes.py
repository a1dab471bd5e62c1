import errors
from errors import Custom as Aliased


class Outer:
    class Inner:
        def method(self, x):
            if x > 1:
                raise ValueError("in a nested class")
            elif x < 0:
                raise ValueError("in an elif")
            else:
                raise ValueError("in an else")

    async def coroutine(self):
        def helper():
            raise RuntimeError("in a local function")
        return helper


def factory():
    class Local(Exception):
        pass

    raise Local("a local class")


class Own(Exception):
    pass


def resolution(err):
    raise Own("defined in this module")
    raise errors.Thing("through a module")
    raise Aliased("through an import")
    raise make_error("a factory") from err
    raise self._error("a factory method")


def not_records(e):
    try:
        pass
    except OSError:
        raise
    raise e
    raise ValueError
    raise ValueError()


def other_messages(msg, args):
    raise ValueError(msg)
    raise ValueError(*args)
    raise ValueError(message="keyword")
    raise ValueError(b"bytes")


raise SystemExit("module level")
