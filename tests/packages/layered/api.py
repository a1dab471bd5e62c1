from layered import ParseFailed, ShowsHint
from layered.base import Documented
from layered.errors import Unlinked


def parse(line=3):
    raise ParseFailed(line, "unexpected indent")


def documented(name="n"):
    raise Documented(f"{name} is read-only")


def hinted(path="p.txt"):
    raise ShowsHint(f"cannot read {path}")


def unlinked():
    raise Unlinked()
