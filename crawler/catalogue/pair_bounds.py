"""Step 4 without scoring every pair: each record's best site, proved by bounds.

`best_pairs.pair_best` weighs candidate pairs for `assignment.best_assignment`. In a file where
many raises were reworded alike (2,000 copies of one message, each in its own function or all in
one), every record is a candidate for every site of its file: N² scores, each comparing the code
around the raise and the enclosing functions, and N² weights held at once.

Here a record is scored exactly only against the sites that share a rarely seen line of code
around the raise with it, the sites of small groups, and the sites in other files its candidates
name (`Bounds.exact`); every other site of its file is bounded a group at a time (the sites of
one exception class and one template) by a `PairScore` whose parts are each at least the real
one's (`Bounds.ceiling_score`): its signal is None only if every site's is, and its total is at
least every site's (both only grow with each part).

Copies of one raise in one function (the same guard, the same code around it: 2,000 identical
raises in one function, all reworded) share every line of code around them with hundreds of
sites, so no line is rare and the ceiling of their group is no lower than the score they share.
Such copies (`Copies`: the sites of one group alike in all a score reads but their place) are
weighed through one of them: with the record's function's copies, the record scores the one
nearest its own place exactly, and the next nearest bounds the others (their weights differ only
by the tie-break of places, which falls as the place goes away); the few other sites of its
function in that group are scored one by one.

When every record that can pair at all has one site that weighs strictly more than any other it
could take, scored or bounded, and no two records have the same best site, those pairs are the
one assignment of greatest total weight (any other gives some record less than its best, and
nothing more to another), and it is what `best_assignment` returns however it solves a block:
exactly (the unique optimum) or trimmed to each row's heaviest edges and taken heaviest first
(each row's heaviest edge comes before its others and finds its column free). So the answer is
the one that weighing every pair gives. When the proof fails (a tie, two records wanting one
site, a bound too loose), `prove_best` returns None and the caller weighs every pair.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from crawler.catalogue.pairing import (
    Memo,
    PairScore,
    _condition_score,
    _exception,
    _qualname_score,
    score,
)
from crawler.records import ErrorRecord, RaiseSite

RARE_LINE_SITES = 8  # a line of code around a raise in at most this many sites pairs them exactly
SMALL_GROUP = 8  # a group with at most this many sites is scored site by site
FEW_VALUES = 8  # a group with at most this many guards (functions) is bounded by each of them
COPIES_MIN = 2  # sites alike in all a score reads but their place, weighed through one of them
FEW_OTHERS = 128  # beside its copies, a function's other sites in a group scored one by one

Weigh = Callable[[ErrorRecord, RaiseSite, PairScore], int]
Ceiling = Callable[[PairScore], int]  # at least the weight of any pair whose score is at most this


@dataclass
class _Group:
    """The sites of one file, exception class and template."""

    cols: list[int] = field(default_factory=list)
    qualnames: Counter[str] = field(default_factory=Counter)
    last_names: Counter[str] = field(default_factory=Counter)
    conditions: set[str | None] | None = field(default_factory=set)  # None: more than FEW_VALUES
    snippets: set[str] | None = field(default_factory=set)

    def add(self, col: int, site: RaiseSite) -> None:
        self.cols.append(col)
        self.qualnames[site.qualname] += 1
        self.last_names[_last(site.qualname)] += 1
        if self.conditions is not None:
            self.conditions.add(site.condition)
            if len(self.conditions) > FEW_VALUES:
                self.conditions = None
        if self.snippets is not None:
            self.snippets.add(site.snippet)
            if len(self.snippets) > FEW_VALUES:
                self.snippets = None


class Copies:
    """Sites of one group alike in all a score reads but their place (function, guard, code
    around the raise, the function's lines as the snippet shows them), by their place: in
    buckets of one line in the function, each sorted by the line in the file."""

    def __init__(self, sites: Sequence[RaiseSite], cols: list[int]) -> None:
        buckets: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for col in cols:
            site = sites[col]
            buckets[site.line - site.snippet_line].append((site.line, col))
        self.cols = sorted(cols)
        self.offsets = sorted(buckets)
        self.buckets = [sorted(buckets[offset]) for offset in self.offsets]

    def near(self, record: ErrorRecord) -> list[int]:
        """The copies the record weighs most and next most on, among a few others: their
        weights differ only by the tie-break of places (`best_pairs._tie_break`: the distance
        of the places in the function first, then of the lines up to 9), which falls on each
        side of the record's place in the function as a copy's goes away, and in one place on
        each side of its line. So the two nearest places each side, and in each of those the
        two nearest lines each side (with every copy at those lines), hold both."""
        old = record.site
        at = bisect_left(self.offsets, old.line - old.snippet_line)
        found: list[int] = []
        for bucket in self.buckets[max(0, at - 2):at + 2]:
            lines = [line for line, _ in bucket]
            where = bisect_left(lines, old.line)
            low = bisect_left(lines, lines[max(0, where - 2)])
            high = bisect_right(lines, lines[min(len(lines) - 1, where + 1)])
            found += [col for _, col in bucket[low:high]]
        return found


def _last(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


class Bounds:
    """The new sites grouped by file, exception class and template, and by the lines of code
    around each raise; the text similarities measured, once per pair of texts."""

    def __init__(self, sites: Sequence[RaiseSite], memo: Memo) -> None:
        self.sites = sites
        self.memo = memo
        self.groups: dict[str, dict[tuple[str, str], _Group]] = defaultdict(dict)
        self.by_line: dict[str, list[int]] = defaultdict(list)
        alike: dict[tuple[str, tuple[str, str], str], dict[tuple[object, ...], list[int]]]
        alike = defaultdict(lambda: defaultdict(list))
        for col, site in enumerate(sites):
            groups = self.groups[site.path]
            key = (_exception(site), site.message.template)
            groups.setdefault(key, _Group()).add(col, site)
            lines = memo.context(site)
            for line in set(lines):
                self.by_line[line].append(col)
            alike[(site.path, key, site.qualname)][(site.condition, lines, site.snippet)].append(col)
        # (path, group key, qualname) -> the copies of that function, and its other sites
        self.functions: dict[tuple[str, tuple[str, str], str], tuple[list[Copies], list[int]]] = {}
        for where, classes in alike.items():
            copies, others = [], []
            for cols in classes.values():
                if len(cols) < COPIES_MIN:
                    others += cols
                    continue
                copies.append(Copies(sites, cols))
            self.functions[where] = (copies, sorted(others))

    def exact(self, record: ErrorRecord, own: Collection[str]) -> set[int]:
        """The sites of the record's own files to score one by one: those that share a rare
        line of code around the raise with it, and those of small groups."""
        found: set[int] = set()
        for line in set(self.memo.context(record.site)):
            places = self.by_line.get(line, ())
            if len(places) <= RARE_LINE_SITES:
                found.update(col for col in places if self.sites[col].path in own)
        for path in own:
            for group in self.groups.get(path, {}).values():
                if len(group.cols) <= SMALL_GROUP:
                    found.update(group.cols)
        return found

    def own_function(self, record: ErrorRecord, own: Collection[str], exact: Collection[int]
                     ) -> tuple[list[Copies], set[int]]:
        """In the large groups of the record's own files, the copies in its function (none of
        them scored one by one already), and its function's other sites there when they are
        few (to bound, and score where the bound reaches the best)."""
        copies: list[Copies] = []
        few: set[int] = set()
        for path in own:
            for key, group in self.groups.get(path, {}).items():
                if len(group.cols) <= SMALL_GROUP:
                    continue  # scored one by one (`exact`)
                found, others = self.functions.get((path, key, record.site.qualname), ([], []))
                copies += [c for c in found if c.cols[0] not in exact]
                if len(others) <= FEW_OTHERS:
                    few.update(others)
        return copies, few

    def rest(self, own: Collection[str], exact: Collection[int]
             ) -> list[tuple[tuple[str, str], _Group, list[RaiseSite]]]:
        """The groups of the record's own files that keep sites not scored one by one, each with
        its sites that were (to take out of its counts)."""
        scored: dict[tuple[str, tuple[str, str]], list[RaiseSite]] = defaultdict(list)
        for col in exact:
            site = self.sites[col]
            scored[(site.path, (_exception(site), site.message.template))].append(site)
        found = []
        for path in own:
            for key, group in self.groups.get(path, {}).items():
                taken = scored.get((path, key), [])
                if len(taken) < len(group.cols):
                    found.append((key, group, taken))
        return found

    def ceiling_score(self, record: ErrorRecord, key: tuple[str, str], group: _Group,
                      scored: Sequence[RaiseSite]) -> PairScore:
        """A score at least as high, part by part, as that of the record with any site of the
        group not in `scored` (all of them in the record's own files)."""
        old = record.site
        exception, template = key
        text, words = self.memo.texts(old.message.template, template)
        return PairScore(
            template=text,
            context=self._context_ceiling(old),
            qualname=self._qualname_ceiling(old.qualname, group, scored),
            condition=(1.0 if group.conditions is None else
                       max(_condition_score(old.condition, c) for c in group.conditions)),
            exception=1.0 if _exception(old) == exception else 0.0,
            snippet=(1.0 if group.snippets is None else
                     max(self.memo.code(old.snippet, other) for other in group.snippets)),
            same_file=True,
            wording=words,
        )

    def _context_ceiling(self, old: RaiseSite) -> float:
        """The most the code around the raise can share with a site that has none of its rare
        lines: its frequent lines (with their repeats), all of them, in the best proportion."""
        lines = self.memo.context(old)
        frequent = sum(1 for line in lines if len(self.by_line.get(line, ())) > RARE_LINE_SITES)
        return 2.0 * frequent / (len(lines) + frequent) if frequent else 0.0

    @staticmethod
    def _qualname_ceiling(qualname: str, group: _Group, scored: Sequence[RaiseSite]) -> float:
        same = group.qualnames[qualname] - sum(1 for s in scored if s.qualname == qualname)
        namesakes = (group.last_names[_last(qualname)]
                     - sum(1 for s in scored if _last(s.qualname) == _last(qualname)))
        best = _qualname_score(qualname, qualname) if same > 0 else 0.0
        return max(best, 0.5) if namesakes > same else best


def prove_best(sites: Sequence[RaiseSite], live: Sequence[ErrorRecord],
               moved_to: Callable[[str], tuple[str, ...]],
               elsewhere: Callable[[ErrorRecord, Collection[str]], Collection[int]],
               weigh: Weigh, ceiling: Ceiling, memo: Memo) -> Proved | None:
    """The edges that decide the assignment of greatest total weight, when they are proved;
    None when they are not (the caller then weighs every pair).

    Either each record that can pair has one site it weighs strictly more on than on any
    other, no two the same (`Proved.best`: those pairs are the assignment), or every record's
    pairs are all known (`Proved.edges`: the very weights that weighing every pair gives).
    `elsewhere(record, own)`: the record's candidates outside its own files; `memo` measures.
    """
    bounds = Bounds(sites, memo)
    edges: dict[tuple[int, int], tuple[int, PairScore]] = {}
    best: dict[int, tuple[int, int]] = {}  # row -> its strictly heaviest column and weight
    complete = True  # every row's edges known
    for row, record in enumerate(live):
        paths = moved_to(record.site.path)
        own = {record.site.path, *paths}
        exact = bounds.exact(record, own)
        copies, few = bounds.own_function(record, own, exact)
        weights: dict[int, int] = {}
        for col in sorted(exact | set(elsewhere(record, own))):
            found = score(record, sites[col], paths, bounds.memo)
            if found.signal is not None:
                weights[col] = weigh(record, sites[col], found)
                edges[(row, col)] = (weights[col], found)
        handled = set(exact)
        ceilings: list[int] = []
        for alike in copies:  # every copy scores alike: weighed through the nearest one
            handled.update(alike.cols)
            found = score(record, sites[alike.cols[0]], paths, bounds.memo)
            if found.signal is None:
                continue
            weighed = sorted((-weigh(record, sites[col], found), col) for col in alike.near(record))
            (top, col), (runner_up, _) = weighed[0], weighed[1]
            weights[col] = -top
            edges[(row, col)] = (weights[col], found)
            ceilings.append(-runner_up)  # the weight of every other copy is at most this
        # The function's other sites: bounded (their lines' similarity by a cheap bound), and
        # scored only where the bound reaches the heaviest weight found.
        pending = []
        for col in sorted(few - exact):
            handled.add(col)
            bound = score(record, sites[col], paths, bounds.memo, code_bound=True)
            if bound.signal is not None:
                pending.append((-ceiling(bound), col))
        for top_bound, col in sorted(pending):
            if weights and -top_bound < max(weights.values()):
                ceilings.append(-top_bound)
                continue
            found = score(record, sites[col], paths, bounds.memo)
            if found.signal is not None:
                weights[col] = weigh(record, sites[col], found)
                edges[(row, col)] = (weights[col], found)
        heaviest = max(weights.values(), default=None)
        tops = [col for col, weight in weights.items() if weight == heaviest]
        if len(tops) == 1 and heaviest is not None:
            best[row] = (tops[0], heaviest)
        ceilings += [ceiling(bound) for bound in (
            bounds.ceiling_score(record, key, group, scored)
            for key, group, scored in bounds.rest(sorted(own), handled)) if bound.signal is not None]
        if ceilings:
            complete = False  # some of its pairs are only bounded: its best must be proved
            if row not in best or max(ceilings) >= best[row][1]:
                return None
    if complete:
        return Proved(edges=edges)
    rows_with_edges = {row for row, _ in edges}
    columns = [col for col, _ in best.values()]
    if rows_with_edges <= set(best) and len(set(columns)) == len(columns):
        return Proved(edges={(row, col): edges[(row, col)] for row, (col, _) in best.items()},
                      best=True)
    return None


@dataclass(frozen=True)
class Proved:
    """What `prove_best` proved: the edges (row, column) -> (weight, score) to assign over, and
    whether they are each row's best alone (then they are the assignment)."""

    edges: Mapping[tuple[int, int], tuple[int, PairScore]]
    best: bool = False
