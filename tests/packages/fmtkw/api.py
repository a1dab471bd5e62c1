from fmtkw.errors import BoolError, LimitError, NoCredentialsError, PositionalError, ProfileNotFound


def credentials(found):
    if not found:
        raise NoCredentialsError()
    return found


def profile(name, profiles):
    if name not in profiles:
        raise ProfileNotFound(profile=name)
    return profiles[name]


def boolean(value):
    if value not in (True, False):
        raise BoolError()
    return value


def limited(value, limit):
    if value >= limit:
        raise LimitError(limit_value=limit)
    return value


def positional():
    raise PositionalError(value=1)
