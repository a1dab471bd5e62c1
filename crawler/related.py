"""Related errors, and the derived parts of records (`related`, `evidence`) set after a merge.

Two records are related when

- `same_scope`: they raise the same exception (by qualname when known, else as written) in the
  same class, or, outside classes, at module level or in module-level functions of the same file;
- `same_shape`: their templates differ only in placeholders (identical templates included), and
  the shared literal text is long enough to mean something (MIN_SHAPE_TEXT characters).

Each record lists at most MAX_PER_REASON of each, `same_shape` first; the order depends on
nothing but the records: `same_scope` nearest line first (then id), `same_shape` by path,
qualname and id, so a record's list moves only when its own file or its shape's records do.
Removed records are neither given nor listed as related: their derived parts stay as they were
when they were last seen.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from crawler.fit import WILD, template_glob
from crawler.records import REMOVED, ErrorRecord, Evidence, Related

MAX_PER_REASON = 10
MIN_SHAPE_TEXT = 12  # non-space literal characters a shape needs to relate records


def shape(record: ErrorRecord) -> str | None:
    """The template with every placeholder made `{}`; None when too little text is left."""
    message = record.site.message
    glob = template_glob(message.template, message.placeholders)
    text = "".join("\0" if symbol is WILD else symbol for symbol in glob)
    if sum(1 for char in text if not char.isspace() and char != "\0") < MIN_SHAPE_TEXT:
        return None
    return text


def _exception_key(record: ErrorRecord) -> str:
    return record.site.exception_qualname or record.site.exception


def _scope_key(record: ErrorRecord) -> tuple[str, str, str]:
    return (record.site.path, record.site.class_name or "", _exception_key(record))


def related_records(records: Sequence[ErrorRecord]) -> dict[str, tuple[Related, ...]]:
    """Related records by id, for every record that is not removed."""
    live = [r for r in records if r.status != REMOVED]
    by_scope: dict[tuple[str, str, str], list[ErrorRecord]] = defaultdict(list)
    by_shape: dict[str, list[ErrorRecord]] = defaultdict(list)
    for record in live:
        by_scope[_scope_key(record)].append(record)
        key = shape(record)
        if key is not None:
            by_shape[key].append(record)
    for group in by_shape.values():
        group.sort(key=lambda r: (r.site.path, r.site.qualname, r.id))
    result: dict[str, tuple[Related, ...]] = {}
    for record in live:
        listed: list[Related] = []
        seen = {record.id}
        key = shape(record)
        same_shape = [r for r in by_shape.get(key, ()) if r.id not in seen] if key is not None else []
        for other in same_shape[:MAX_PER_REASON]:
            listed.append(Related(other.id, "same_shape"))
            seen.add(other.id)
        neighbours = sorted((r for r in by_scope[_scope_key(record)] if r.id not in seen),
                            key=lambda r: (abs(r.site.line - record.site.line), r.id))
        listed.extend(Related(other.id, "same_scope") for other in neighbours[:MAX_PER_REASON])
        result[record.id] = tuple(listed)
    return result


def with_derived(records: Sequence[ErrorRecord], related: Mapping[str, tuple[Related, ...]],
                 evidence: Mapping[str, tuple[Evidence, ...]] | None) -> list[ErrorRecord]:
    """Records with their `related` and (when tests were read, `evidence` not None) `evidence`
    set; removed records and records whose derived parts did not change are returned as they are.
    """
    out: list[ErrorRecord] = []
    for record in records:
        if record.status == REMOVED:
            out.append(record)
            continue
        new_related = related.get(record.id, ())
        new_evidence = record.evidence if evidence is None else evidence.get(record.id, ())
        if new_related == record.related and new_evidence == record.evidence:
            out.append(record)
        else:
            out.append(replace(record, related=new_related, evidence=new_evidence))
    return out
