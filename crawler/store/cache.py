"""A content-addressed cache of per-file visit results, shared across commits and repositories.

A file's sites depend only on its bytes, its path (records and module names carry it) and the
crawler that read it, so an entry is keyed by `sha256(crawler version, path, blob sha)`. The
same blob at the same path in a fork, a later commit or another clone is read once. Entries are
JSON (never pickle: a cache folder must not be able to run code), written atomically; an entry
that cannot be read or does not hold what its name says is ignored and written again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from crawler import __version__
from crawler.parse.skeleton import Region
from crawler.records import ClassDef, RaiseCounts, RaiseSite, Skipped, Template

FORMAT = 5  # bump when the layout of an entry changes

# sites, counts, failure, pending (message-less raises), classes defined, module-level bindings,
# functions and context (for reading the file's next version as a skeleton)
Entry = tuple[tuple[RaiseSite, ...], RaiseCounts, Skipped | None, tuple[RaiseSite, ...],
              tuple[ClassDef, ...], dict[str, str], tuple[Region, ...], str]


class ResultCache:
    """Visit results by (path, blob), under `root/results/`; `None` as root disables it."""

    def __init__(self, root: Path | None, version: str = __version__) -> None:
        self.folder = root / "results" if root is not None else None
        self.version = version
        self.hits = 0
        self.misses = 0
        self.corrupt = 0

    def key(self, path: str, blob: str) -> str:
        text = f"{FORMAT}\0{self.version}\0{path}\0{blob}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _file(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / key[:2] / f"{key}.json"

    def get(self, path: str, blob: str) -> Entry | None:
        """The cached result of visiting `path` at `blob`, or None."""
        key = self.key(path, blob)
        file = self._file(key)
        if file is None:
            return None
        try:
            data = json.loads(file.read_bytes())
            if data["key"] != key or data["path"] != path or data["blob"] != blob:
                raise ValueError("entry does not match its name")
            entry = _entry_from_data(data)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.corrupt += 1  # a broken entry is rebuilt, never trusted
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def put(self, path: str, blob: str, entry: Entry) -> None:
        """Store a result; a cache that cannot be written never fails the run."""
        key = self.key(path, blob)
        file = self._file(key)
        if file is None:
            return
        sites, counts, failure, pending, classes, exports, regions, context = entry
        snippets: dict[str, int] = {}  # a function's snippet, once for all of its raises
        data = {
            "key": key, "path": path, "blob": blob, "version": self.version,
            "sites": [_site_data(site, snippets) for site in sites],
            "counts": asdict(counts),
            "failure": asdict(failure) if failure is not None else None,
            "pending": [_site_data(site, snippets) for site in pending],
            "classes": [asdict(cls) for cls in classes],
            "exports": exports,
            "regions": [{name: getattr(region, name) for name in _REGION_FIELDS}
                        | {"counts": region.counts.as_list()} for region in regions],
            "context": context,
            "snippets": list(snippets),
        }
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, file)  # atomic: a reader sees the old entry, the new one, or none
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass


_SITE_FIELDS = tuple(f.name for f in fields(RaiseSite))
_TEMPLATE_FIELDS = tuple(f.name for f in fields(Template))
_REGION_FIELDS = tuple(f.name for f in fields(Region))


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
    return ClassDef(**{**item, "bases": tuple(item["bases"]),
                       "templates": tuple(_template(t) for t in item["templates"])})


def _entry_from_data(data: dict[str, Any]) -> Entry:
    failure = Skipped(**data["failure"]) if data["failure"] is not None else None
    exports = data["exports"]
    if not isinstance(exports, dict):
        raise ValueError("exports is not a mapping")
    context = data["context"]
    if not isinstance(context, str):
        raise ValueError("context is not a string")
    snippets = data["snippets"]
    return (tuple(_site(item, snippets) for item in data["sites"]), RaiseCounts(**data["counts"]),
            failure, tuple(_site(item, snippets) for item in data["pending"]),
            tuple(_class(item) for item in data["classes"]), exports,
            tuple(_region(item) for item in data["regions"]), context)


def _region(item: dict[str, Any]) -> Region:
    lookups = tuple((tuple(parts), answer) for parts, answer in item["lookups"])
    return Region(**{**item, "classes": tuple(item["classes"]),
                     "counts": RaiseCounts.from_list(item["counts"]), "lookups": lookups})
