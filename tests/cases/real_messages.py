import errno


def blocked(written):
    raise BlockingIOError(errno.EAGAIN, "write could not complete without blocking", written)


def missing(name):
    raise FileNotFoundError(errno.ENOENT, "no such file", name)
