def single(x):
    raise ValueError('single quoted')


def double():
    raise TypeError("double quoted")


def triple():
    raise RuntimeError("""triple
quoted""")


def prefixed():
    raise ValueError(r"raw \d+ kept")


def escapes():
    raise ValueError("tab\there, newline\nthere")


def braces():
    raise KeyError("literal {braces} stay")


def implicit():
    raise ValueError(
        "first part, "
        'second part, '
        "third part"
    )


def unicode_text():
    raise ValueError("naïve café")
