"""Records and manifests to plain data and back: the mappings the YAML files hold.

Each `*_data` function gives the mapping written for a record type, its keys in the order they
are written; each `*_from_data` builds the type again from a loaded, schema-valid mapping.
`as_read_back` gives the data a load of the dump would return, without the dump and the load.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from crawler.records import (
    SCHEMA_VERSION,
    Annotation,
    Counts,
    EntryPoint,
    EntryPoints,
    ErrorRecord,
    Evidence,
    ExtractOptions,
    FileEntry,
    History,
    Manifest,
    Pin,
    RaiseCounts,
    RaiseSite,
    Related,
    Release,
    Releases,
    Skipped,
    TagMove,
    Template,
    TemplateSpan,
    Versions,
)
from crawler.store.safe_yaml import FlowList, writable

# ---------------------------------------------------------------- records


def template_data(template: Template) -> dict[str, Any]:
    data = {
        "kind": template.kind,
        "template": template.template,
        "placeholders": list(template.placeholders),
        "regex": template.regex,
        "argument": template.argument,
        "defined_at": template.defined_at,
        "display": template.display,
        # written only when set, so that records without them keep their bytes
        **({"via": template.via} if template.via is not None else {}),
        **({"reason": template.reason} if template.reason is not None else {}),
    }
    # what the exception class did to the text: written only when there is something to say
    if template.composed_by is not None:
        data["composed_by"] = template.composed_by
    if template.not_followed is not None:
        data["not_followed"] = template.not_followed
    return data


def extracted_data(record: ErrorRecord) -> dict[str, Any]:
    """The crawler-owned facts of a record, in the order they are written."""
    return {**_pin_data(record), **site_data(record.site), **_derived_data(record)}


def _pin_data(record: ErrorRecord) -> dict[str, Any]:
    return {"repo": record.repo, "commit": record.commit, "url": record.url}


def site_data(site: RaiseSite) -> dict[str, Any]:
    """What one raise site says, read off its file."""
    return {
        "path": site.path,
        "line": site.line,
        "end_line": site.end_line,
        "column": site.column,
        "class": site.class_name,
        "function": site.function,
        "qualname": site.qualname,
        "exception": site.exception,
        "exception_qualname": site.exception_qualname,
        "factory": site.factory,
        "message": template_data(site.message),
        "cause": site.cause,
        "condition": site.condition,
        "snippet_line": site.snippet_line,
        "snippet": site.snippet,
    }


def _derived_data(record: ErrorRecord) -> dict[str, Any]:
    return {"related": [{"id": r.id, "reason": r.reason} for r in record.related],
            "evidence": [asdict(e) for e in record.evidence], **entry_points_data(record)}


def entry_points_data(record: ErrorRecord) -> dict[str, Any]:
    """`entry_points` and `entry_points_left_out`, written only once computed (older records
    keep their bytes); an item's `stops` and `caught_by` only when set."""
    found = record.entry_points
    if found is None:
        return {}
    items = [{"name": e.name, "chain": list(e.chain),
              **({"stops": e.stops} if e.stops is not None else {}),
              **({"caught_by": e.caught_by} if e.caught_by is not None else {})}
             for e in found.items]
    return {"entry_points": items, "entry_points_left_out": found.left_out}


def _entry_points_from(ex: dict[str, Any]) -> EntryPoints | None:
    if "entry_points" not in ex:
        return None
    return EntryPoints(tuple(EntryPoint(e["name"], tuple(e["chain"]), e.get("stops"),
                                        e.get("caught_by")) for e in ex["entry_points"]),
                       ex.get("entry_points_left_out", 0))


# History keys written only when set, so that every other record keeps its bytes: those
# `crawler adopt` sets, and those a pair that was not exact sets while it waits for review.
ADOPTION_KEYS = ("adopted_by", "adopted_from")
_HISTORY_WHEN_SET = (*ADOPTION_KEYS, "previous_exception", "previous_path", "previous_qualname",
                     "paired_by")


# History's fields but `templates`, in order: its values are strings or None, so reading them is
# what `asdict` gives, without its deep copy of every value (a tenth of priming a written record).
_HISTORY_FIELDS = tuple(f.name for f in fields(History) if f.name != "templates")


def history_data(history: History | None) -> dict[str, Any]:
    history = history or History(first_seen="")
    data = {name: getattr(history, name) for name in _HISTORY_FIELDS}
    for key in _HISTORY_WHEN_SET:
        if data[key] is None:
            del data[key]
    # `templates` is written only by `crawler history`, so other records keep their bytes
    if history.templates:
        data["templates"] = [span_data(span) for span in history.templates]
    return data


def span_data(span: TemplateSpan) -> dict[str, Any]:
    """One wording of `history.templates`, in the order its keys are written."""
    return {"template": span.template, "first": span.first, "last": span.last,
            "exception": span.exception, "path": span.path}


def versions_data(versions: Versions | None) -> dict[str, Any]:
    """The record's top-level `versions` mapping; empty (no key at all) when not walked."""
    if versions is None:
        return {}
    return {"versions": {"first": versions.first, "last": versions.last}}


def _versions_from_data(data: Any) -> Versions | None:
    return Versions(first=data["first"], last=data["last"]) if data else None


def record_from_data(data: dict[str, Any], annotation_text: str | None) -> ErrorRecord:
    """An `ErrorRecord` from a loaded, schema-valid mapping."""
    ex = data["extracted"]
    message = ex["message"]
    site = RaiseSite(
        path=ex["path"],
        line=ex["line"],
        end_line=ex["end_line"],
        column=ex["column"],
        class_name=ex["class"],
        function=ex["function"],
        qualname=ex["qualname"],
        exception=ex["exception"],
        exception_qualname=ex["exception_qualname"],
        message=Template(
            kind=message["kind"],
            template=message["template"],
            placeholders=tuple(message["placeholders"]),
            regex=message["regex"],
            argument=message.get("argument"),
            defined_at=message.get("defined_at"),
            display=message.get("display", "str"),
            composed_by=message.get("composed_by"),
            not_followed=message.get("not_followed"),
            via=message.get("via"),
            reason=message.get("reason"),
        ),
        cause=ex["cause"],
        condition=ex["condition"],
        snippet=ex["snippet"],
        snippet_line=ex["snippet_line"],
        factory=ex.get("factory", False),
    )
    history = data.get("history") or {}
    # `related` and `evidence` came after schema version 1's first records: absent means none.
    related = tuple(Related(id=r["id"], reason=r["reason"]) for r in ex.get("related") or ())
    evidence = tuple(Evidence(**e) for e in ex.get("evidence") or ())
    return ErrorRecord(
        id=data["id"],
        status=data["status"],
        repo=ex["repo"],
        commit=ex["commit"],
        url=ex["url"],
        site=site,
        annotation=Annotation(data=data.get("annotation") or {}, text=annotation_text),
        history=History(
            first_seen=history.get("first_seen") or "",
            removed_in=history.get("removed_in"),
            previous_template=history.get("previous_template"),
            **{key: history.get(key) for key in _HISTORY_WHEN_SET},
            templates=tuple(TemplateSpan(**span) for span in history.get("templates") or ()),
        ),
        evidence=evidence,
        related=related,
        versions=_versions_from_data(data.get("versions")),
        entry_points=_entry_points_from(ex),
    )


# ---------------------------------------------------------------- manifests


def manifest_data(manifest: Manifest) -> dict[str, Any]:
    pin = manifest.pin
    return {
        "schema_version": SCHEMA_VERSION,
        "crawler_version": manifest.crawler_version,
        "source": pin.public_source,  # never a path of the extracting machine
        "repo": pin.repo,
        "host": pin.host,
        "owner": pin.owner,
        "name": pin.name,
        "ref": pin.ref,
        "commit": pin.sha,
        "reachable": pin.reachable,
        "root": pin.root,
        "forge": pin.forge,
        "options": {
            "include": list(manifest.options.include),
            "exclude": list(manifest.options.exclude),
            "include_tests": manifest.options.include_tests,
            "max_file_bytes": manifest.options.max_file_bytes,
        },
        "counts": _counts_data(manifest.counts),
        "exception_classes": list(manifest.exception_classes),
        "skipped": [asdict(s) for s in manifest.skipped],
        "files": {f.path: {"blob": f.blob, "records": list(f.records), "raises": FlowList(f.raises.as_list())}
                  for f in manifest.files},
        "removed": {path: list(ids) for path, ids in sorted(manifest.removed.items()) if ids},
        "needs_review": sorted(manifest.needs_review),
        # absent until a run reads the tests: older manifests and --no-evidence folders
        **({"evidence_digest": manifest.evidence_digest} if manifest.evidence_digest else {}),
        **_releases_data(manifest.releases),
    }


def _releases_data(releases: Releases | None) -> dict[str, Any]:
    """The manifest's `releases` (written by `crawler history` only), as a mapping to merge."""
    if releases is None:
        return {}
    moved = [{"tag": m.tag, "walked": m.walked, "now": m.now} for m in releases.moved]
    return {"releases": {"walked": [{"tag": r.tag, "commit": r.commit} for r in releases.walked],
                         "unreleased": sorted(releases.unreleased),
                         **({"moved": moved} if moved else {})}}


def _releases_from_data(data: Any) -> Releases | None:
    if not data:
        return None
    return Releases(walked=tuple(Release(r["tag"], r["commit"]) for r in data["walked"]),
                    unreleased=tuple(data.get("unreleased") or ()),
                    moved=tuple(TagMove(m["tag"], m["walked"], m["now"])
                                for m in data.get("moved") or ()))


# The manifest's `counts` is one flat mapping: the raise counts sit among the others, in this order.
_COUNTS_ORDER = ("files", "parsed", "skipped", "raise_statements", "records", "removed",
                 "bare_raise", "reraise", "without_message", "test_patterns_cut")
_RAISE_COUNTS = frozenset(f.name for f in fields(RaiseCounts))


def _counts_data(counts: Counts) -> dict[str, int]:
    """`counts` as a manifest writes it: `raises` flattened among the others."""
    flat = {**asdict(counts), **asdict(counts.raises)}
    return {name: flat[name] for name in _COUNTS_ORDER}


def _counts_from_data(data: dict[str, int]) -> Counts:
    """The counts `_counts_data` wrote; a count an older manifest lacks is 0."""
    raises = RaiseCounts(**{k: v for k, v in data.items() if k in _RAISE_COUNTS})
    return Counts(**{k: v for k, v in data.items() if k not in _RAISE_COUNTS}, raises=raises)


def manifest_from_data(data: dict[str, Any]) -> Manifest:
    options = data["options"]
    return Manifest(
        pin=Pin(source=data["source"], host=data["host"], owner=data["owner"], name=data["name"],
                ref=data["ref"], sha=data["commit"],
                web_url=data["repo"] if data["repo"].startswith("http") else None,
                reachable=data["reachable"], root=data.get("root"),  # None: unknown, or older
                forge=data.get("forge")),
        crawler_version=data["crawler_version"],
        options=ExtractOptions(include=tuple(options["include"]), exclude=tuple(options["exclude"]),
                               include_tests=options["include_tests"],
                               max_file_bytes=options["max_file_bytes"]),
        counts=_counts_from_data(data["counts"]),
        files=tuple(FileEntry(path, entry["blob"], tuple(entry["records"]),
                              RaiseCounts.from_list(entry.get("raises") or ()))
                    for path, entry in data["files"].items()),
        skipped=tuple(Skipped(**entry) for entry in data["skipped"]),
        exception_classes=tuple(data.get("exception_classes") or ()),
        removed={path: tuple(ids) for path, ids in (data.get("removed") or {}).items()},
        needs_review=tuple(data.get("needs_review") or ()),
        evidence_digest=data.get("evidence_digest"),
        releases=_releases_from_data(data.get("releases")),
    )


# ---------------------------------------------------------------- as YAML reads it back


class Unsure(Exception):
    """A value whose trip through YAML `checked_of_written` cannot vouch for."""


def as_read_back(value: Any) -> Any:
    """A record's data as a YAML load of its dump gives it back."""
    kind = type(value)
    if kind is str:
        return writable(value)
    if kind in (bool, int, type(None)):
        return value
    if kind in (list, tuple, FlowList):
        return [as_read_back(item) for item in value]
    if kind is dict:
        back = {}
        for key, item in value.items():  # the common scalars inline: a record has a hundred
            if type(key) is not str or writable(key) is not key:
                raise Unsure("key")
            kind = type(item)
            if kind is str:
                back[key] = item if item.isascii() else writable(item)
            elif kind is int or kind is bool or item is None:
                back[key] = item
            else:
                back[key] = as_read_back(item)
        return back
    raise Unsure(kind.__name__)  # a float, a date: read back, it may not be the same value

