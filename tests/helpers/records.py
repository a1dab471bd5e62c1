"""A whole record to write and read back, every field set."""

from __future__ import annotations

from crawler.records import ErrorRecord, History, RaiseSite, Template

SHA = "a" * 40


def a_record(**changes: object) -> ErrorRecord:
    site = RaiseSite(
        path="pkg/mod.py", line=10, end_line=12, column=8, class_name="C", function="f",
        qualname="C.f", exception="ValueError", exception_qualname="builtins.ValueError",
        message=Template("fstring", "bad {x}: {{literal}}", ("x",), "^bad (?P<x>[\\s\\S]*?): \\{literal\\}$",
                         "0"),
        cause=None, condition="x < 0", snippet="def f(x):\n    raise ValueError(f'bad {x}')\n",
        snippet_line=9)
    record = ErrorRecord(id="0123456789abcdef", status="active", repo="https://github.com/o/n",
                         commit=SHA, url=f"https://github.com/o/n/blob/{SHA}/pkg/mod.py#L10-L12",
                         site=site, history=History(first_seen=SHA))
    return ErrorRecord(**{**record.__dict__, **changes})  # type: ignore[arg-type]
