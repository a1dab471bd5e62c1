"""Sites and records of one key whose counts differ, paired closest first, class by class.

`pairing.pair_by` pairs the sites and records of an equal key by their ordinals when their
counts agree; when they do not (a copy of a raise added or deleted), the closest pairs go first.
The rule: each candidate pair has a closeness (`closeness`: the record removed, another guard,
another cause, the distance of their places in their functions, the distance of their lines),
ties broken by the site's order then the record's; pairs are taken in that order, each site and
each record once. Sorting every pair costs the product of the counts: 1,000 copies of one raise
in a function against 999 records took 14.6 s and 830 MB.

Here the same pairs come at a cost in the classes of exact duplicates: sites of the same guard
and cause (records of the same status, guard and cause) differ only by their place, and the
first three parts of closeness are fixed for a pair of classes. So the pairs are taken level by
level (a level: those three parts, in order), and inside a level by a heap that holds each free
site's nearest free record (by the place in the function, then the line, then the orders), found
in the records of each class sorted by their place, taken ones skipped. A site whose record was
taken by another looks again. The pairs, and the order they are taken in, are the rule's.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence

from crawler.records import REMOVED, ErrorRecord, RaiseSite

Pair = tuple[RaiseSite, ErrorRecord]
Level = tuple[int, int, int]  # the record removed, another guard, another cause (0 or 1 each)


def closeness(site: RaiseSite, record: ErrorRecord) -> tuple[int, int, int, int, int]:
    """Smaller is closer: live first, same guard, same cause, same place in its function."""
    old = record.site
    return (
        1 if record.status == REMOVED else 0,
        0 if site.condition == old.condition else 1,
        0 if site.cause == old.cause else 1,
        abs((site.line - site.snippet_line) - (old.line - old.snippet_line)),
        abs(site.line - old.line),
    )


def closest_pairs(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord]) -> list[Pair]:
    """One-to-one pairs, closest first (`closeness`, then the site's and the record's order),
    in the order they are taken: those that taking every pair sorted gives."""
    site_classes: dict[tuple[str | None, str | None], list[int]] = defaultdict(list)
    for i, site in enumerate(sites):
        site_classes[(site.condition, site.cause)].append(i)
    record_classes: dict[tuple[int, str | None, str | None], list[int]] = defaultdict(list)
    for j, record in enumerate(records):
        old = record.site
        record_classes[(1 if record.status == REMOVED else 0, old.condition, old.cause)].append(j)
    free = {facts: _Free(records, rows) for facts, rows in record_classes.items()}
    home = {j: found for found in free.values() for j in found.rows}  # each record's class
    by_level: dict[Level, list[tuple[list[int], list[_Free]]]] = defaultdict(list)
    for (condition, cause), rows in site_classes.items():
        eligible: dict[Level, list[_Free]] = defaultdict(list)
        for facts, found in free.items():
            removed, old_condition, old_cause = facts
            eligible[(removed, int(condition != old_condition), int(cause != old_cause))].append(found)
        for level, classes in eligible.items():
            by_level[level].append((rows, classes))
    pairs: list[Pair] = []
    site_taken = [False] * len(sites)
    for level in sorted(by_level):
        for i, j in _take_level(sites, by_level[level], home, site_taken):
            pairs.append((sites[i], records[j]))
    return pairs


def _take_level(sites: Sequence[RaiseSite], groups: list[tuple[list[int], list[_Free]]],
                home: dict[int, _Free], site_taken: list[bool]) -> list[tuple[int, int]]:
    """The pairs of one level, nearest first: each free site with its nearest free record of
    the classes it may pair with at this level (`groups`: site indices, those classes)."""
    heap: list[tuple[int, int, int, int]] = []
    classes_of: dict[int, list[_Free]] = {}
    for rows, classes in groups:
        for i in rows:
            if not site_taken[i]:
                classes_of[i] = classes
                found = _nearest(sites[i], classes)
                if found is not None:
                    heap.append((found[0], found[1], i, found[2]))
    heapq.heapify(heap)
    taken: list[tuple[int, int]] = []
    while heap:
        distance, lines, i, j = heapq.heappop(heap)
        if home[j].is_free(j):
            home[j].take(j)
            site_taken[i] = True
            taken.append((i, j))
            continue
        found = _nearest(sites[i], classes_of[i])  # its record went to a closer site: look again
        if found is not None:
            heapq.heappush(heap, (found[0], found[1], i, found[2]))
    return taken


def _nearest(site: RaiseSite, classes: list[_Free]) -> tuple[int, int, int] | None:
    """(place distance, line distance, record index) of the site's nearest free record."""
    best: tuple[int, int, int] | None = None
    offset = site.line - site.snippet_line
    for found in classes:
        if found.free_count:
            near = found.nearest(offset, site.line)
            if near is not None and (best is None or near < best):
                best = near
    return best


class _Free:
    """The records of one class sorted by their place in their function (then their order),
    with the taken ones skipped: two union-find arrays point past them, to each side."""

    def __init__(self, records: Sequence[ErrorRecord], rows: list[int]) -> None:
        placed = sorted((records[j].site.line - records[j].site.snippet_line, j) for j in rows)
        self.offsets = [offset for offset, _ in placed]
        self.rows = [j for _, j in placed]
        self.lines = [records[j].site.line for j in self.rows]
        self.position = {j: p for p, j in enumerate(self.rows)}
        count = len(placed)
        self._right = list(range(count + 1))  # the first free position at or after p; count: none
        self._left = list(range(count + 1))  # shifted by one: the last free before p, plus one
        self.free_count = count

    def is_free(self, j: int) -> bool:
        p = self.position[j]
        return _find(self._right, p) == p

    def take(self, j: int) -> None:
        p = self.position[j]
        self._right[p] = p + 1
        self._left[p + 1] = p
        self.free_count -= 1

    def nearest(self, offset: int, line: int) -> tuple[int, int, int] | None:
        """The free record nearest `offset`, then `line`, then first in order."""
        at = bisect_left(self.offsets, offset)
        right = _find(self._right, at)
        left = _find(self._left, at) - 1
        far = 1 << 62
        to_right = self.offsets[right] - offset if right < len(self.rows) else far
        to_left = offset - self.offsets[left] if left >= 0 else far
        distance = min(to_right, to_left)
        if distance == far:
            return None
        best: tuple[int, int, int] | None = None
        if to_right == distance:
            p = right
            while p < len(self.rows) and self.offsets[p] == self.offsets[right]:
                near = (distance, abs(line - self.lines[p]), self.rows[p])
                best = near if best is None or near < best else best
                p = _find(self._right, p + 1)
        if to_left == distance:
            p = left
            while p >= 0 and self.offsets[p] == self.offsets[left]:
                near = (distance, abs(line - self.lines[p]), self.rows[p])
                best = near if best is None or near < best else best
                p = _find(self._left, p) - 1
        return best


def _find(parent: list[int], x: int) -> int:
    """The root of `x`, halving the path on the way."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x
