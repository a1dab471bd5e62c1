"""A file's `FileOutcome` to JSON and back, for the result cache.

A function's snippet is stored once for all of its raises, as a number into `snippets`.
"""

from __future__ import annotations

from typing import Any

from crawler.parse.call_edges import Call, CallFacts, ClassFacts, Function
from crawler.parse.outcomes import FileOutcome
from crawler.parse.registrations import Registration
from crawler.parse.skeleton import Region
from crawler.records import (
    ArgumentText,
    BuiltException,
    CallArgument,
    ClassDef,
    CrossCall,
    ExposedFunction,
    RaiseCounts,
    RaiseSite,
    Skipped,
    Template,
    TextCall,
    TextReading,
    TextRun,
    TextSlot,
)
from crawler.store.cache import ENCODER, record_fields

# a record type -> its field names, in order, and the getter of their values


def outcome_data(outcome: FileOutcome) -> dict[str, Any]:
    """The entry of a file read in full (nothing `stubbed`), for `ENCODER`: records stay
    records, which it writes as their fields."""
    snippets: dict[str, int] = {}  # a function's snippet, once for all of its raises
    return {
        "path": outcome.path, "blob": outcome.blob,
        "sites": [_site_data(site, snippets) for site in outcome.sites],
        "counts": outcome.counts,
        "failure": outcome.failure,
        "pending": [_site_data(site, snippets) for site in outcome.pending],
        "classes": outcome.classes,
        "exports": outcome.exports,
        "regions": [record_fields(region) | {"counts": region.counts.as_list()}
                    for region in outcome.regions],
        "context": outcome.context,
        "snippets": list(snippets),
        "exposed": outcome.exposed,
        "calls": outcome.calls,
        "text_calls": outcome.text_calls,
    }


def outcome_json(outcome: FileOutcome) -> str:
    """`outcome_data` as the result cache writes it."""
    return ENCODER.encode(outcome_data(outcome))


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
        regions=tuple(_region(item) for item in data["regions"]), context=context,
        exposed=tuple(_exposed(item) for item in data["exposed"]),
        calls=facts_from_data(data["calls"]) if data.get("calls") is not None else None,
        text_calls=tuple(TextCall(c["line"], c["name"], c["receiver"],
                                  tuple(_argument(a) for a in c["args"]))
                         for c in data.get("text_calls", ())))


def _site_data(site: RaiseSite, snippets: dict[str, int]) -> dict[str, Any]:
    """A site's fields, with its snippet as a number in `snippets`."""
    data = record_fields(site)
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
    return RaiseSite(**{**item, "message": _template(item["message"]), "snippet": snippet,
                        "cross_calls": tuple(_cross_call(c) for c in item["cross_calls"]),
                        "deferred": tuple(_template(t) for t in item["deferred"]),
                        "arguments": _arguments(item["arguments"])})


def _arguments(items: list[dict[str, Any]] | None) -> tuple[CallArgument, ...] | None:
    return None if items is None else tuple(CallArgument(**item) for item in items)


def _class(item: dict[str, Any]) -> ClassDef:
    slots = {name: tuple(_slot(slot) for slot in item[name])
             for name in ("init_args", "self_attributes", "class_attributes", "methods")}
    names = {name: tuple(item[name]) for name in ("bases", "params", "keywords", "verbatim")}
    return ClassDef(**{**item, **names, **slots,
                       "templates": tuple(_template(t) for t in item["templates"])})


def _slot(item: dict[str, Any]) -> TextSlot:
    return TextSlot(item["name"], tuple(_template(t) for t in item["templates"]),
                    tuple(item["verbatim"]), tuple((a, b) for a, b in item["aliases"]),
                    item["if_none"], item["if_given"],
                    tuple(tuple((test, outcome) for test, outcome in guard)
                          for guard in item["guards"]))


def _region(item: dict[str, Any]) -> Region:
    lookups = tuple((tuple(parts), answer) for parts, answer in item["lookups"])
    return Region(**{**item, "classes": tuple(item["classes"]),
                     "counts": RaiseCounts.from_list(item["counts"]), "lookups": lookups})


# ---------------------------------------------------------------- calls across modules


def _reading(item: dict[str, Any]) -> TextReading:
    return TextReading(item["kind"], tuple(TextRun(**run) for run in item["runs"]))


def _argument(item: dict[str, Any]) -> ArgumentText:
    readings = item["readings"]
    return ArgumentText(item["keyword"], item["source"],
                        None if readings is None else tuple(_reading(r) for r in readings))


def _cross_call(item: dict[str, Any]) -> CrossCall:
    return CrossCall(item["source"], item["callee"], tuple(_argument(a) for a in item["args"]))


def _exposed(item: dict[str, Any]) -> ExposedFunction:
    return ExposedFunction(
        item["qualname"], item["defined_at"], tuple(item["params"]), tuple(item["keywords"]),
        tuple((name, _argument(default)) for name, default in item["defaults"]),
        tuple(_reading(r) for r in item["texts"]),
        tuple(BuiltException(b["exception_qualname"], tuple(_reading(r) for r in b["readings"]),
                             b["argument"]) for b in item["built"]),
        tuple(item["via"]), item["reason"], tuple(item.get("builds", ())))


def facts_from_data(data: dict[str, Any]) -> CallFacts:
    """`CallFacts` from the JSON the result cache holds (its fields, lists for tuples)."""
    return CallFacts(
        module=data["module"], bindings=tuple(tuple(b) for b in data["bindings"]),  # type: ignore[misc]
        functions=tuple(Function(
            f["qualname"], f["line"], f["end_line"], tuple(Call(**c) for c in f["calls"]),
            f["returns"], tuple(f["decorators"]), f["is_property"],
            tuple((a, b, tuple(n)) for a, b, n in f["catches"]),
            tuple((t, p, n) for t, p, n in f["keeps"]), f["gives"]) for f in data["functions"]),
        classes=tuple(ClassFacts(c["qualname"], tuple(c["bases"]),
                                 tuple((a, t) for a, t in c["attributes"])) for c in data["classes"]),
        all_names=tuple(data["all_names"]) if data["all_names"] is not None else None,
        star=tuple(data["star"]), exported=tuple(data["exported"]), objects=tuple(data["objects"]),
        registrations=tuple(Registration(**{**r, "keys": tuple(r["keys"])}) for r in data["registrations"]),
        foreign=tuple(data["foreign"]))
