"""The best assignment (`assignment`), the pair score (`pairing.score`) and git's diff step."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue import assignment
from crawler.catalogue.assignment import best_assignment, greedy, hungarian
from crawler.catalogue.merge import merge
from crawler.catalogue.pairing import score, wording
from crawler.git.diff import FileLines, LineMap
from tests.helpers.merge_sites import NEW, OLD, first, site

edges_strategy = st.dictionaries(st.tuples(st.integers(0, 5), st.integers(0, 5)),
                                 st.integers(1, 30), min_size=1, max_size=20)


def best_by_search(edges: dict[tuple[int, int], int]) -> int:
    """The greatest total weight of a one-to-one subset, by trying them all."""
    rows = sorted({r for r, _ in edges})

    def search(i: int, used: frozenset[int]) -> int:
        if i == len(rows):
            return 0
        best = search(i + 1, used)
        for (row, col), weight in edges.items():
            if row == rows[i] and col not in used:
                best = max(best, weight + search(i + 1, used | {col}))
        return best

    return search(0, frozenset())


@settings(max_examples=60, deadline=None)
@given(edges_strategy)
def test_the_assignment_is_one_to_one_and_of_greatest_total(edges: dict[tuple[int, int], int]) -> None:
    pairs = best_assignment(edges)
    assert len({r for r, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
    assert all(pair in edges for pair in pairs)
    assert sum(edges[p] for p in pairs) == best_by_search(edges)
    assert best_assignment(dict(reversed(list(edges.items())))) == pairs  # not the order given


def test_greedy_takes_the_first_pair_the_assignment_takes_the_best_total() -> None:
    edges = {(0, 0): 10, (0, 1): 9, (1, 0): 8}  # greedy: 10 alone; best: 9 + 8
    assert sum(edges[p] for p in greedy(edges)) == 10
    assert sorted(hungarian(edges)) == [(0, 1), (1, 0)]


def test_a_block_too_large_to_solve_exactly_keeps_each_rows_best_edges(monkeypatch) -> None:
    monkeypatch.setattr(assignment, "EXACT_LIMIT", 2)
    edges = {(r, c): 1 + (r == c) * 10 + c for r in range(5) for c in range(5)}
    pairs = best_assignment(edges)
    assert len(pairs) == 5 and len({c for _, c in pairs}) == 5


def test_the_score_has_its_parts_and_a_signal() -> None:
    [record] = first([site("x must be positive, got {x}", condition="x < 0")])
    same_place = score(record, site("x has to be > 0: {x}", condition="x < 0"))
    assert same_place.signal == "reworded_in_place" and same_place.qualname == 1.0
    assert same_place.condition == 1.0 and same_place.template < 0.6 and 0 < same_place.total < 1
    elsewhere = score(record, site("x has to be > 0: {x}", path="b.py", qualname="g", condition="y"))
    assert elsewhere.signal is None and not elsewhere.same_file
    moved = score(record, site("x must be positive, got {x}", path="b.py", condition="x < 0"),
                  moved_to=["b.py"])
    assert moved.same_file and moved.signal == "reworded_in_place"
    assert moved.describe().startswith("reworded_in_place: score ")


def test_the_diff_step_tells_apart_the_sites_of_one_raise() -> None:
    # one raise whose message is chosen by a conditional gives two sites at one place
    a, b = site("of type {t}", line=10), site("of shape {s}", line=10)
    old = first([a, b])
    lines = LineMap(OLD.sha, NEW.sha, {"m.py": FileLines("m.py", ((1, 0, 2, 3),))})
    result = merge(NEW, old, [replace(b, line=13, end_line=13), replace(a, line=13, end_line=13)],
                   lines=lines)
    by_template = {r.site.message.template: r.id for r in result.records}
    assert by_template == {r.site.message.template: r.id for r in old}
    assert set(result.matched_by.values()) == {0} and not result.changed


def test_a_close_text_with_nothing_around_it_in_common_is_no_pair() -> None:
    # jax: the record of "Unsupported transforms: {transforms}" (its raise deleted) went to
    # another guard's "Unsupported transpose permutation: {permutation}" on the text alone
    [record] = first([site("Unsupported transforms: {transforms}", condition="transposed")])
    other = score(record, site("Unsupported transpose permutation: {permutation}",
                               condition="permutation != (1, 0)"))
    assert other.template > 0.6 and other.place < 0.3 and other.signal is None
    # a placeholder renamed keeps the wording: close enough on its own
    [renamed] = first([site("TMEM layout {tmem_layout} is not supported", qualname="a")])
    moved = score(renamed, site("TMEM layout {self.layout} is not supported", qualname="b"))
    assert moved.wording == 1.0 and moved.signal == "similar_text"
    assert wording("a {x} b {{lit}} {f(y)}") == "a {} b {{lit}} {}"


def test_a_short_wording_does_not_pair_on_its_own() -> None:
    # jax: "Unsupported transforms: {transforms}" (its raise deleted) went to another function's
    # "Unsupported mesh: {mesh}": two words each, one of them the same
    [record] = first([site("Unsupported transforms: {transforms}", qualname="a")])
    other = score(record, site("Unsupported mesh: {mesh}", qualname="b"))
    assert other.wording == 0.0 and other.signal is None
