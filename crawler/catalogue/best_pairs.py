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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crawler.catalogue.assignment import best_assignment
from crawler.catalogue.pairing import PairScore, context, score
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
    index = _SiteIndex(sites)
    scored: dict[tuple[int, int], PairScore] = {}
    weights: dict[tuple[int, int], int] = {}
    for row, record in enumerate(live):
        paths = moved_to(record.site.path)
        for col in index.candidates(record, paths):
            site = sites[col]
            found = score(record, site, paths)
            if found.signal is None:
                continue
            scored[(row, col)] = found
            weights[(row, col)] = round(found.total * _SCALE) * _TIE_RANGE + _tie_break(record, site)
    return [ScoredPair(sites[col], live[row], scored[(row, col)])
            for row, col in best_assignment(weights)]


def _tie_break(record: ErrorRecord, site: RaiseSite) -> int:
    """Between equal scores, the nearer place in the function, then the nearer line."""
    old = record.site
    offset = abs((site.line - site.snippet_line) - (old.line - old.snippet_line))
    return max(1, _TIE_RANGE - 1 - min(offset * 10 + min(abs(site.line - old.line), 9), _TIE_RANGE - 2))


class _SiteIndex:
    """The new sites by path, by qualname, and by the lines of code around each raise."""

    def __init__(self, sites: Sequence[RaiseSite]) -> None:
        self.by_path: dict[str, list[int]] = defaultdict(list)
        self.by_qualname: dict[str, list[int]] = defaultdict(list)
        self.by_line: dict[str, list[int]] = defaultdict(list)
        for col, site in enumerate(sites):
            self.by_path[site.path].append(col)
            if site.qualname != "<module>":
                self.by_qualname[site.qualname].append(col)
            for line in set(_telling_lines(site)):
                self.by_line[line].append(col)

    def candidates(self, record: ErrorRecord, paths: tuple[str, ...]) -> list[int]:
        old = record.site
        found = {col for path in (old.path, *paths) for col in self.by_path.get(path, ())}
        found.update(self.by_qualname.get(old.qualname, ()))
        lines = set(_telling_lines(old))
        shared: dict[int, int] = defaultdict(int)
        for line in lines:
            places = self.by_line.get(line, ())
            if len(places) <= SHARED_LINE_MAX_SITES:
                for col in places:
                    shared[col] += 1
        needed = min(2, len(lines))
        found.update(col for col, count in shared.items() if count >= needed)
        return sorted(found)


def _telling_lines(site: RaiseSite) -> list[str]:
    return [line for line in context(site) if len(line) >= SHARED_LINE_MIN_CHARS]
