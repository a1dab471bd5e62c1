"""The last step of a merge: the best one-to-one assignment between the records and sites left.

What is left after git's diff and the exact keys are sites the diff touched and records whose
site it touched. Each record's candidates are few: the sites in its own file (or where git says
the file went), the sites of the same qualname in other modules, and the sites whose code around
the raise shares lines with its own (a check moved into another module). Each candidate pair is
scored (`pairing.score`); those with a signal (`PairScore.signal`) are weighed, and the
assignment of greatest total weight is taken (`assignment.best_assignment`), never the first
pair above a threshold.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from crawler.catalogue.assignment import best_assignment
from crawler.catalogue.pair_bounds import prove_best
from crawler.catalogue.pairing import Memo, PairScore, score
from crawler.records import REMOVED, ErrorRecord, RaiseSite

SHARED_LINE_MIN_CHARS = 12  # shorter lines (`else:`, `return x`) are in too many functions
SHARED_LINE_MAX_SITES = 40  # a line in more places than this says nothing about where code went
_SCALE = 1_000_000  # weights are integers: the score in millionths, then a tie-break below it
_TIE_RANGE = 1000


@dataclass(frozen=True)
class ScoredPair:
    """A pair of the best assignment, with its score."""

    site: RaiseSite
    record: ErrorRecord
    score: PairScore


def pair_best(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord],
              moved_to: Callable[[str], tuple[str, ...]]) -> list[ScoredPair]:
    """The assignment of greatest total score among the candidate pairs that have a signal.

    `moved_to(path)`: the paths git says a record's file went to (renamed, copied or the same
    blob), counted as its own file. Removed records take no part: they come back only exactly.
    """
    live = [r for r in records if r.status != REMOVED]
    if not live or not sites:
        return []  # nothing to pair (a first extract): the sites' index is not built
    memo = Memo()
    index = _SiteIndex(sites, memo)
    proved = prove_best(sites, live, moved_to, index.elsewhere, _weight, _ceiling, memo)
    if proved is not None:
        pairs = sorted(proved.edges) if proved.best else best_assignment(
            {pair: weight for pair, (weight, _) in proved.edges.items()})
        return [ScoredPair(sites[col], live[row], proved.edges[(row, col)][1])
                for row, col in pairs]
    return _weigh_every_pair(sites, live, moved_to, index, memo)


def _weigh_every_pair(sites: Sequence[RaiseSite], live: Sequence[ErrorRecord],
                      moved_to: Callable[[str], tuple[str, ...]], index: _SiteIndex,
                      memo: Memo) -> list[ScoredPair]:
    """Every candidate pair scored and weighed, and `best_assignment` over them all."""
    scored: dict[tuple[int, int], PairScore] = {}
    weights: dict[tuple[int, int], int] = {}
    for row, record in enumerate(live):
        paths = moved_to(record.site.path)
        for col in index.candidates(record, paths):
            site = sites[col]
            found = score(record, site, paths, memo)
            if found.signal is None:
                continue
            scored[(row, col)] = found
            weights[(row, col)] = _weight(record, site, found)
    return [ScoredPair(sites[col], live[row], scored[(row, col)])
            for row, col in best_assignment(weights)]


def _weight(record: ErrorRecord, site: RaiseSite, found: PairScore) -> int:
    """The pair's weight: its score in millionths, then the tie-break below it."""
    return round(found.total * _SCALE) * _TIE_RANGE + _tie_break(record, site)


def _ceiling(found: PairScore) -> int:
    """At least the weight of any pair that scores at most `found`, whatever its tie-break."""
    return round(found.total * _SCALE) * _TIE_RANGE + _TIE_RANGE - 1


def _tie_break(record: ErrorRecord, site: RaiseSite) -> int:
    """Between equal scores, the nearer place in the function, then the nearer line."""
    old = record.site
    offset = abs((site.line - site.snippet_line) - (old.line - old.snippet_line))
    return max(1, _TIE_RANGE - 1 - min(offset * 10 + min(abs(site.line - old.line), 9), _TIE_RANGE - 2))


class _SiteIndex:
    """The new sites by path, by qualname, and by the lines of code around each raise."""

    def __init__(self, sites: Sequence[RaiseSite], memo: Memo | None = None) -> None:
        self.memo = memo or Memo()
        self.by_path: dict[str, list[int]] = defaultdict(list)
        self.by_qualname: dict[str, list[int]] = defaultdict(list)
        self.by_line: dict[str, list[int]] = defaultdict(list)
        self.by_qualname_path: dict[str, dict[str, list[int]]] = defaultdict(dict)
        self.paths = [site.path for site in sites]
        for col, site in enumerate(sites):
            self.by_path[site.path].append(col)
            if site.qualname != "<module>":
                self.by_qualname[site.qualname].append(col)
                self.by_qualname_path[site.qualname].setdefault(site.path, []).append(col)
            for line in set(_telling_lines(site, self.memo)):
                self.by_line[line].append(col)

    def candidates(self, record: ErrorRecord, paths: tuple[str, ...]) -> list[int]:
        old = record.site
        found = {col for path in (old.path, *paths) for col in self.by_path.get(path, ())}
        found.update(self.by_qualname.get(old.qualname, ()))
        found.update(self._sharing_code(old))
        return sorted(found)

    def elsewhere(self, record: ErrorRecord, own: Collection[str]) -> list[int]:
        """The record's candidates outside its own files (`own`), without a look at the sites
        of those files: the same qualname in another module, or code around the raise shared."""
        old = record.site
        found = {col for path, cols in self.by_qualname_path.get(old.qualname, {}).items()
                 if path not in own for col in cols}
        found.update(col for col in self._sharing_code(old) if self.paths[col] not in own)
        return sorted(found)

    def _sharing_code(self, old: RaiseSite) -> list[int]:
        """The sites whose code around the raise shares two telling lines with `old`'s (or its
        one), each line in at most `SHARED_LINE_MAX_SITES` places."""
        lines = set(_telling_lines(old, self.memo))
        shared: dict[int, int] = defaultdict(int)
        for line in lines:
            places = self.by_line.get(line, ())
            if len(places) <= SHARED_LINE_MAX_SITES:
                for col in places:
                    shared[col] += 1
        needed = min(2, len(lines))
        return [col for col, count in shared.items() if count >= needed]


def _telling_lines(site: RaiseSite, memo: Memo) -> list[str]:
    return [line for line in memo.context(site) if len(line) >= SHARED_LINE_MIN_CHARS]
