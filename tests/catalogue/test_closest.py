"""Equal keys paired closest first by classes give the very pairs of every pair sorted.

Issue 44: `pair_by` sorted every (site, record) pair of a key whose counts differ, so 1,000
copies of one raise in a function against 999 records took 14.6 s and 830 MB. `closest_pairs`
takes the same pairs, in the same order, class by class; `every_pair_sorted` is the rule as it
was written before, kept here as the reference: small random shapes (copies of one raise at
lines that collide, in functions that start at different lines, guards, causes, removed
records) and hand-made ones must give exactly its pairs, and the large case must be cheap.
"""

from __future__ import annotations

import time
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue.closest import closeness, closest_pairs
from crawler.catalogue.merge import merge
from crawler.catalogue.pairing import pair_by
from crawler.records import ACTIVE, REMOVED, ErrorRecord, RaiseSite
from tests.helpers.merge_sites import NEW, OLD, site


def every_pair_sorted(sites: list[RaiseSite], records: list[ErrorRecord]
                      ) -> list[tuple[RaiseSite, ErrorRecord]]:
    """The rule as it was: every pair sorted by closeness then order, taken greedily."""
    scored = sorted((closeness(s, r), i, j) for j, r in enumerate(records)
                    for i, s in enumerate(sites))
    pairs = []
    used_sites: set[int] = set()
    used_records: set[int] = set()
    for _, i, j in scored:
        if i in used_sites or j in used_records:
            continue
        used_sites.add(i)
        used_records.add(j)
        pairs.append((sites[i], records[j]))
    return pairs


GUARDS = [None, "x", "not x"]
CAUSES = [None, "error"]

placed = st.tuples(st.integers(1, 12), st.sampled_from([1, 5, 12]), st.integers(0, 2),
                   st.integers(0, 1), st.integers(0, 1))


def build(shapes: list[tuple[int, int, int, int, int]], records: bool) -> list:
    """Sites (or records) of one key: (line, function start, guard, cause, removed) each."""
    made = []
    for line, start, guard, cause, _removed in shapes:
        one = replace(site("same words", line=start + line, start=start),
                      condition=GUARDS[guard], cause=CAUSES[cause])
        made.append(one)
    if not records:
        return made
    found = list(merge(OLD, [], made).records)
    by_site = {id(r.site): r for r in found}
    return [replace(by_site[id(s)], status=REMOVED if shape[4] else ACTIVE)
            for s, shape in zip(made, shapes)]


def same_pairs(got: list, expected: list) -> bool:
    return [(id(s), id(r)) for s, r in got] == [(id(s), id(r)) for s, r in expected]


@settings(max_examples=200, deadline=None)
@given(st.lists(placed, max_size=12), st.lists(placed, max_size=12))
def test_the_classes_give_the_pairs_of_every_pair_sorted(new: list, old: list) -> None:
    sites = build(new, records=False)
    records = build(old, records=True)
    assert same_pairs(closest_pairs(sites, records), every_pair_sorted(sites, records))


def test_hand_made_shapes() -> None:
    shapes = [
        ([(10, 1, 0, 0, 0), (20, 1, 0, 0, 0), (30, 1, 0, 0, 0)], [(11, 1, 0, 0, 0), (21, 1, 0, 0, 0)]),
        ([(0, 1, 0, 0, 0), (10, 1, 0, 0, 0), (100, 1, 0, 0, 0)], [(6, 1, 0, 0, 0), (20, 1, 0, 0, 0)]),
        ([(5, 1, 0, 0, 0), (5, 5, 0, 0, 0), (9, 12, 1, 0, 0)], [(5, 1, 0, 0, 1), (5, 5, 1, 0, 0)]),
        ([(7, 1, 0, 0, 0)] * 3, [(7, 1, 0, 0, 0)] * 2),  # one place, several sites: order decides
        ([(3, 1, 0, 1, 0), (4, 1, 0, 0, 0)], [(4, 1, 0, 1, 0), (3, 1, 2, 0, 1), (9, 5, 0, 0, 0)]),
    ]
    for new, old in shapes:
        sites, records = build(new, records=False), build(old, records=True)
        assert same_pairs(closest_pairs(sites, records), every_pair_sorted(sites, records))


def test_a_thousand_copies_against_nine_hundred_and_ninety_nine_is_cheap() -> None:
    """1,000 copies of one raise in one function, one of them deleted: 14.6 s and 830 MB before
    for the sorting of every pair; each record stays with the raise at its line."""
    sites = [site("same words", line=2 + 2 * k) for k in range(1000)]
    records = list(merge(OLD, [], sites).records)
    kept = [s for k, s in enumerate(sites) if k != 500]
    started = time.process_time()
    pairs = pair_by(kept, records, RaiseSite.key, lambda r: r.site.key())
    assert time.process_time() - started < 1.0
    assert len(pairs) == 999 and all(s.line == r.site.line for s, r in pairs)
    result = merge(NEW, records, kept)
    [gone] = result.removed
    assert {r.id: r for r in records}[gone].site.line == 2 + 2 * 500 and not result.added
