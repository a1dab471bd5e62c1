"""Sites and records for the merge's tests: two pins, a site by its template and place, the records
a first merge gives."""

from __future__ import annotations

from dataclasses import replace

from crawler.catalogue.merge import merge
from crawler.records import (
    ErrorRecord,
    Pin,
    RaiseSite,
    Template,
)

OLD = Pin("x", "github.com", "o", "n", "HEAD", "a" * 40, "https://github.com/o/n")
NEW = replace(OLD, sha="b" * 40)


def site(template: str, *, path: str = "m.py", qualname: str = "f", line: int = 10,
         exception: str = "ValueError", condition: str | None = None, start: int = 1) -> RaiseSite:
    function = qualname.rsplit(".", 1)[-1]
    return RaiseSite(
        path=path, line=line, end_line=line, column=4, class_name=None, function=function,
        qualname=qualname, exception=exception, exception_qualname=f"builtins.{exception}",
        message=Template("literal", template, (), f"^{template}$"), cause=None,
        condition=condition, snippet=f"def {function}(): ...", snippet_line=start,
    )


def first(sites: list[RaiseSite], pin: Pin = OLD) -> list[ErrorRecord]:
    return merge(pin, [], sites).records
