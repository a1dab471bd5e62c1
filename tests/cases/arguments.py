class CustomError(Exception):
    def __init__(self, message=None, msg=None, detail=None):
        super().__init__(message or msg or detail)


def keyword():
    raise CustomError(message="keyword message")


def msg_keyword(x="v"):
    raise CustomError(msg=f"short {x}")


def detail_keyword():
    raise CustomError(detail="detail text")


def key_first(key="k"):
    raise KeyError(key, "was not found")


def message_second(code=3):
    raise ValueError(code, f"code {code} is bad")


def several_strings():
    raise ValueError("first", "second")


def key_error_single(k="k"):
    raise KeyError(f"missing {k}")


def key_error_quote():
    raise KeyError("it's missing")


def key_error_quote_placeholder(k="k"):
    raise KeyError(f"it's {k}")


def os_error(path="/nope"):
    raise FileNotFoundError(2, "No such file", path)


def os_error_two():
    raise OSError(13, "Permission denied")


def star_args(args=("a",)):
    raise ValueError(*args)


def bytes_message():
    raise ValueError(b"bytes")


def unicode_escape():
    raise ValueError("tab\tand é", "x")


def message_and_star(rest=()):
    raise ValueError("with star", *rest)


def group(errors=(ValueError("x"),)):
    raise ExceptionGroup("several failures", list(errors))


def syntax(filename="f.py"):
    raise SyntaxError(f"bad token in {filename}", (filename, 3, 1, "x = $"))


def codec(data=b"\xff"):
    raise UnicodeDecodeError("utf-8", data, 0, 1, "invalid start byte")
