"""A file's `FileOutcome` to JSON's plain data and back, for the result cache.

A function's snippet is stored once for all of its raises, as a number into `snippets`.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from crawler.parse.skeleton import Region
from crawler.parse.workers import FileOutcome
from crawler.records import ClassDef, RaiseCounts, RaiseSite, Skipped, Template, TextSlot

_SITE_FIELDS = tuple(f.name for f in fields(RaiseSite))
_TEMPLATE_FIELDS = tuple(f.name for f in fields(Template))
_REGION_FIELDS = tuple(f.name for f in fields(Region))


def outcome_data(outcome: FileOutcome) -> dict[str, Any]:
    """The outcome of a file read in full (nothing `stubbed`), as plain data."""
    snippets: dict[str, int] = {}  # a function's snippet, once for all of its raises
    return {
        "path": outcome.path, "blob": outcome.blob,
        "sites": [_site_data(site, snippets) for site in outcome.sites],
        "counts": asdict(outcome.counts),
        "failure": asdict(outcome.failure) if outcome.failure is not None else None,
        "pending": [_site_data(site, snippets) for site in outcome.pending],
        "classes": [asdict(cls) for cls in outcome.classes],
        "exports": outcome.exports,
        "regions": [{name: getattr(region, name) for name in _REGION_FIELDS}
                    | {"counts": region.counts.as_list()} for region in outcome.regions],
        "context": outcome.context,
        "snippets": list(snippets),
    }


def outcome_from_data(data: dict[str, Any]) -> FileOutcome:
    failure = Skipped(**data["failure"]) if data["failure"] is not None else None
    exports = data["exports"]
    if not isinstance(exports, dict):
        raise ValueError("exports is not a mapping")
    context = data["context"]
    if not isinstance(context, str):
        raise ValueError("context is not a string")
    snippets = data["snippets"]
    return FileOutcome(
        path=data["path"], blob=data["blob"],
        sites=tuple(_site(item, snippets) for item in data["sites"]),
        counts=RaiseCounts(**data["counts"]), failure=failure,
        pending=tuple(_site(item, snippets) for item in data["pending"]),
        classes=tuple(_class(item) for item in data["classes"]), exports=exports,
        regions=tuple(_region(item) for item in data["regions"]), context=context)


def _site_data(site: RaiseSite, snippets: dict[str, int]) -> dict[str, Any]:
    """`asdict(site)`, without its deep copies, and its snippet as a number in `snippets`."""
    data = {name: getattr(site, name) for name in _SITE_FIELDS}
    data["message"] = {name: getattr(site.message, name) for name in _TEMPLATE_FIELDS}
    data["snippet"] = snippets.setdefault(site.snippet, len(snippets))
    return data


def _template(item: dict[str, Any]) -> Template:
    return Template(**{**item, "placeholders": tuple(item["placeholders"])})


def _site(item: dict[str, Any], snippets: list[str]) -> RaiseSite:
    index = item["snippet"]
    if type(index) is not int or not 0 <= index < len(snippets):
        raise ValueError("a snippet number out of range")
    snippet = snippets[index]
    if not isinstance(snippet, str):
        raise TypeError("a snippet that is not text")
    return RaiseSite(**{**item, "message": _template(item["message"]), "snippet": snippet})


def _class(item: dict[str, Any]) -> ClassDef:
    slots = {name: tuple(_slot(slot) for slot in item[name])
             for name in ("init_args", "self_attributes", "class_attributes", "methods")}
    return ClassDef(**{**item, "bases": tuple(item["bases"]),
                       "templates": tuple(_template(t) for t in item["templates"]), **slots})


def _slot(item: dict[str, Any]) -> TextSlot:
    return TextSlot(item["name"], tuple(_template(t) for t in item["templates"]),
                    tuple(item["verbatim"]), tuple((a, b) for a, b in item["aliases"]))


def _region(item: dict[str, Any]) -> Region:
    lookups = tuple((tuple(parts), answer) for parts, answer in item["lookups"])
    return Region(**{**item, "classes": tuple(item["classes"]),
                     "counts": RaiseCounts.from_list(item["counts"]), "lookups": lookups})
