"""Two output folders compared record by record, with records matched by their sites, not their ids.

Two extracts of the same commit under different names give every record another id (an id is a
hash of the repository's name, the site's key and its ordinal) and another identity (`repo`,
`url`); everything else is facts of the code and its tests, and must be equal. Ids a record holds
(`related`) are compared through the sites they name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from crawler.records import REMOVED, ErrorRecord
from crawler.store import repo_output

SiteKey = tuple[str, int, int, int, str, str, str]
IDENTITY = ("id", "repo", "url")  # what differs between two names for one repository


def site_key(record: ErrorRecord) -> SiteKey:
    """Where and what a record's raise is: one live record per key in a folder."""
    s = record.site
    return (s.path, s.line, s.end_line, s.column, s.exception, s.exception_qualname or "",
            s.message.template)


def live_records(folder: Path) -> dict[SiteKey, ErrorRecord]:
    """A folder's live records by site; a folder that cannot be loaded whole fails."""
    loaded = repo_output.load_folder(folder)
    assert not loaded.broken, [b.problem for b in loaded.broken[:3]]
    return by_site(r for r in loaded.records)


def by_site(records: Iterable[ErrorRecord]) -> dict[SiteKey, ErrorRecord]:
    found: dict[SiteKey, ErrorRecord] = {}
    for record in records:
        if record.status == REMOVED:
            continue
        key = site_key(record)
        assert key not in found, f"two live records for one site: {key}"
        found[key] = record
    return found


def facts(record: ErrorRecord, sites: Mapping[str, SiteKey],
          fields: Iterable[str] | None = None) -> dict[str, Any]:
    """The record as data, identity left out and related ids read as the sites they name;
    `fields`: only those top-level fields."""
    data = dataclasses.asdict(record)
    for name in IDENTITY:
        data.pop(name)
    data["related"] = [(sites.get(item["id"], item["id"]), item["reason"])
                       for item in data["related"]]
    if fields is not None:
        data = {name: data[name] for name in fields}
    return data


def differing(a: Mapping[SiteKey, ErrorRecord], b: Mapping[SiteKey, ErrorRecord],
              fields: Iterable[str] | None = None) -> dict[SiteKey, list[str]]:
    """The sites whose records differ (the fields that do), and the sites one side lacks
    (`["missing in a"]` / `["missing in b"]`)."""
    wanted = tuple(fields) if fields is not None else None
    sites_a = {r.id: key for key, r in a.items()}
    sites_b = {r.id: key for key, r in b.items()}
    out: dict[SiteKey, list[str]] = {}
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            out[key] = ["missing in b"]
        elif key not in a:
            out[key] = ["missing in a"]
        else:
            left, right = facts(a[key], sites_a, wanted), facts(b[key], sites_b, wanted)
            changed = [name for name in left if left[name] != right[name]]
            if changed:
                out[key] = changed
    return out
