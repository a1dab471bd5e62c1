"""A site's identity across runs: its key and its ordinal among the sites of equal key.

The key is `(path, qualname, exception, template)`, never the line (`RaiseSite.key`). Sites of
equal key (the same message raised twice in one function) are told apart by their ordinal: how
many of them stand before it in source order. A new record's id is the hash of both
(`record_id`); merging and holding back broken records both ask for it here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from crawler.records import RaiseSite, record_id

Key = tuple[str, str, str, str]  # (path, qualname, exception, template)
Place = tuple[Key, int, int]  # a site's key, line and column: no two raises start at one place


def site_order(site: RaiseSite) -> tuple[str, int, int]:
    """Source order: by file, then where the raise starts."""
    return (site.path, site.line, site.column)


def _place(site: RaiseSite) -> Place:
    return (site.key(), site.line, site.column)


@dataclass(frozen=True)
class Ordinals:
    """Each site's ordinal among the sites of its key, counted in source order.

    Looked up by the site's key and start, so any equal site value finds it: the numbering is a
    fact about the sites, not about the objects that carry them.
    """

    by_place: Mapping[Place, int]

    @classmethod
    def of(cls, sites: Iterable[RaiseSite]) -> Ordinals:
        seen: dict[Key, int] = defaultdict(int)
        by_place: dict[Place, int] = {}
        for site in sorted(sites, key=site_order):
            key = site.key()
            by_place.setdefault(_place(site), seen[key])
            seen[key] += 1
        return cls(by_place)

    def __getitem__(self, site: RaiseSite) -> int:
        return self.by_place[_place(site)]

    def natural_id(self, repo: str, site: RaiseSite) -> str:
        """The id a new record for `site` gets when no record has taken it before."""
        return record_id(repo, site.key(), self[site])
