"""Pairing new sites with existing records, one-to-one: by equal keys, and by close templates.

The merge (`merge`) decides which keys to try in which order; here is how each try pairs: equal
keys by their ordinals or, when the counts differ, closest first (`pair_by`); a key that is
unique on both sides (`pair_unique`); close templates by word-level similarity (`pair_fuzzy`).
Every pairing is one-to-one and depends only on the sites and records, never on their order in
memory.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from crawler.records import REMOVED, ErrorRecord, RaiseSite

K = TypeVar("K", bound=Hashable)

# Step 4 pairs a vanished record with a new site of the same exception in the same file when the
# word-level similarity of their templates (difflib ratio over words and punctuation marks, the
# words inside placeholders included) is at least this. Words, not characters: "invalid shape"
# and "invalid dtype" share most of their letters (0.77) but half their words (0.5), and are
# different errors; "x must be positive, got {x}" and "x must be strictly positive, got {x}"
# score 0.95. A short message loses more with each word: "bad magic" to "bad magic number
# found" scores 0.67, "bad magic" to "bad header" 0.5 (no match).
FUZZY_THRESHOLD = 0.6
CONTAINED_MIN = 4
_TOKEN = re.compile(r"\w+|[^\w\s]")

Pair = tuple[RaiseSite, ErrorRecord]


def record_order(record: ErrorRecord) -> tuple[int, str, int, int, str]:
    # Removed records come after live ones, so a site pairs with its live record first.
    site = record.site
    return (1 if record.status == REMOVED else 0, site.path, site.line, site.column, record.id)


def pair_by(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord],
            site_key: Callable[[RaiseSite], K], record_key: Callable[[ErrorRecord], K | None]
            ) -> list[Pair]:
    """Pair sites and records of equal keys, one-to-one.

    Both come in source order. A group with as many sites as records pairs them in that order
    (their ordinals); otherwise the closest pairs go first (`_closeness`), so that when one of
    two identical raises goes, the record of the one that stayed follows it.
    """
    by_key: dict[K, list[ErrorRecord]] = defaultdict(list)
    for record in records:
        key = record_key(record)
        if key is not None:
            by_key[key].append(record)
    site_groups: dict[K, list[RaiseSite]] = defaultdict(list)
    for site in sites:
        site_groups[site_key(site)].append(site)
    pairs: list[Pair] = []
    for key, group in site_groups.items():
        candidates = by_key.get(key)
        if not candidates:
            continue
        live = [r for r in candidates if r.status != REMOVED]
        if len(live) == len(group):
            pairs.extend(zip(group, live))
        elif len(candidates) == len(group):  # all of them back: in their old source order
            pairs.extend(zip(group, sorted(candidates, key=lambda r: record_order(r)[1:])))
        else:
            pairs.extend(_closest_pairs(group, candidates))
    return pairs


def pair_unique(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord]) -> list[Pair]:
    """Pair a site and a record when each is the only one left with its (exception, template)."""
    site_groups: dict[tuple[str, str], list[RaiseSite]] = defaultdict(list)
    for site in sites:
        site_groups[(site.exception, site.message.template)].append(site)
    record_groups: dict[tuple[str, str], list[ErrorRecord]] = defaultdict(list)
    for record in records:
        record_groups[(record.site.exception, record.site.message.template)].append(record)
    return [(group[0], record_groups[key][0]) for key, group in site_groups.items()
            if len(group) == 1 and len(record_groups.get(key, ())) == 1]


def _closest_pairs(sites: list[RaiseSite], records: list[ErrorRecord]) -> list[Pair]:
    scored = [
        (_closeness(site, record), i, j)
        for j, record in enumerate(records)
        for i, site in enumerate(sites)
    ]
    scored.sort()
    return _greedy([(sites[i], records[j]) for _, i, j in scored])


def _closeness(site: RaiseSite, record: ErrorRecord) -> tuple[int, int, int, int, int]:
    """Smaller is closer: live first, same guard, same cause, same place in its function."""
    old = record.site
    return (
        1 if record.status == REMOVED else 0,
        0 if site.condition == old.condition else 1,
        0 if site.cause == old.cause else 1,
        abs((site.line - site.snippet_line) - (old.line - old.snippet_line)),
        abs(site.line - old.line),
    )


def _greedy(ordered: Iterable[Pair]) -> list[Pair]:
    """Take pairs best first, skipping any whose site or record is already taken."""
    pairs: list[Pair] = []
    used_sites: set[int] = set()
    used_records: set[int] = set()
    for site, record in ordered:
        if id(site) in used_sites or id(record) in used_records:
            continue
        used_sites.add(id(site))
        used_records.add(id(record))
        pairs.append((site, record))
    return pairs


def tokens(template: str) -> list[str]:
    """Words and punctuation marks of a template, placeholders' own words included."""
    return _TOKEN.findall(template)


def similarity(old: str, new: str) -> float:
    """Word-level difflib ratio of two templates, 0 to 1.

    A message extended or cut by a clause ("get not supported yet" and "get not supported yet
    for block shape {b}") keeps every word of the shorter one: that counts as close (exactly
    the threshold, so any closer candidate goes first) when the shorter has `CONTAINED_MIN`
    words or more; shorter ones ("{msg}", "not supported") are in too many messages.
    """
    a, b = tokens(old), tokens(new)
    if not a and not b:
        return 1.0 if old == new else 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ratio = matcher.ratio()
    shorter = min(len(a), len(b))
    if shorter >= CONTAINED_MIN and sum(m.size for m in matcher.get_matching_blocks()) == shorter:
        return max(ratio, FUZZY_THRESHOLD)
    return ratio


def pair_fuzzy(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord],
               new_path: Callable[[str], str]) -> list[Pair]:
    """Step 4: close templates, same exception, same file (`new_path`: where an old file went);
    best pairs first, one-to-one.

    Ties go to the same qualname, then the nearer place in the function, then source order.
    """
    by_place: dict[tuple[str, str], list[RaiseSite]] = defaultdict(list)
    for site in sites:
        by_place[(site.path, site.exception)].append(site)
    scored: list[tuple[tuple[float, int, int, int, int], RaiseSite, ErrorRecord]] = []
    for j, record in enumerate(records):
        old = record.site
        for i, site in enumerate(by_place.get((new_path(old.path), old.exception), ())):
            score = similarity(old.message.template, site.message.template)
            if score < FUZZY_THRESHOLD:
                continue
            offset = abs((site.line - site.snippet_line) - (old.line - old.snippet_line))
            rank = (-score, 0 if site.qualname == old.qualname else 1, offset, j, i)
            scored.append((rank, site, record))
    scored.sort(key=lambda item: item[0])
    return _greedy((site, record) for _, site, record in scored)
