"""A test assertion with its match, as the evidence tests build them."""

from __future__ import annotations

from crawler.records import ErrorRecord, RaiseSite, Template


def record(number: int, text: str) -> ErrorRecord:
    site = RaiseSite(path="lib.py", line=number, end_line=number, column=4, class_name=None,
                     function="f", qualname="f", exception="ValueError",
                     exception_qualname="builtins.ValueError",
                     message=Template(kind="literal", template=text, placeholders=(), regex=""),
                     cause=None, condition=None, snippet="", snippet_line=number)
    return ErrorRecord(id=f"{number:016x}", status="active", repo="local/o/n", commit="0" * 40,
                       url=None, site=site)
