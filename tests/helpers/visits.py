"""One file visited whole and as a skeleton, compared; sites by line."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crawler.parse import skeleton
from crawler.parse.file_tasks import visit_file
from crawler.parse.outcomes import FileOutcome
from crawler.parse.skeleton import Known, Previous
from crawler.parse.visitor import find_raise_sites
from crawler.pipeline import collecting
from crawler.records import RaiseSite
from crawler.store.documents import template_data


def visit(text: str | bytes, known: Known | None = None, path: str = "pkg/mod.py") -> FileOutcome:
    data = text.encode() if isinstance(text, str) else text
    return visit_file(path, "0" * 40, data, known)


def known_of(outcome: FileOutcome) -> Known:
    return Known(outcome.context, outcome.regions)


def previous_of(outcome: FileOutcome) -> Previous:
    return Previous(outcome.sites, outcome.pending, outcome.classes, outcome.regions,
                    outcome.context, exposed=outcome.exposed)


def both(old: str | bytes, new: str | bytes, path: str = "pkg/mod.py"
         ) -> tuple[FileOutcome, FileOutcome, int]:
    """(whole read of `new`, skeleton read of it filled in, functions stubbed)."""
    before = visit(old, path=path)
    whole = visit(new, path=path)
    part = visit(new, known_of(before), path=path)
    stubbed = sum(region.kind == skeleton.FUNCTION for region in part.stubbed)
    if part.stubbed:
        part = collecting._filled(part, previous_of(before))
    return whole, part, stubbed


def assert_same(whole: FileOutcome, part: FileOutcome) -> None:
    assert whole.failure is None and part.failure is None
    assert replace(part, stubbed=()) == whole


def sites(source: str) -> dict[str, list[RaiseSite]]:
    found = find_raise_sites("pkg/mod.py", source.encode(), "pkg.mod")
    by_function: dict[str, list[RaiseSite]] = {}
    for site in found.sites:
        by_function.setdefault(site.function or "", []).append(site)
    return by_function


def only(source: str, function: str = "f") -> RaiseSite:
    (site,) = sites(source)[function]
    return site


def site_fields(site: RaiseSite) -> dict[str, Any]:
    """A site as the flat mapping the case files spell out."""
    return {
        "line": site.line, "end_line": site.end_line, "column": site.column,
        "class": site.class_name, "function": site.function, "qualname": site.qualname,
        "exception": site.exception, "exception_qualname": site.exception_qualname,
        "factory": site.factory, "cause": site.cause, "condition": site.condition,
        **template_data(site.message), "via": site.message.via, "reason": site.message.reason,
    }
