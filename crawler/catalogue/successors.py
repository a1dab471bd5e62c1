"""Where a removed record's annotation most likely belongs now: its likeliest successors.

An annotated record that an update left `removed` may have a successor the merge could not
pair: a message reworded beyond the fuzzy threshold, moved to another file and reworded at
once, or raised by another exception class. `crawler check` lists each such orphan with the
live records that most resemble it, best first, for a person to `crawler adopt` one.

The resemblance is the merge's own pair score (`pairing.score`, its `PairScore.total`): one
function and one set of weights, so that `check` ranks successors the way the merge pairs
records with sites. Here it is only ranked, whatever its signal: what is left to a person is
what the merge found no signal for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from crawler.catalogue.pairing import (
    _WORD,
    CONTAINED_MIN,
    FUZZY_THRESHOLD,
    WEIGHTS,
    PairScore,
    _condition_score,
    _exception,
    _lines,
    _qualname_score,
    context,
    score,
    tokens,
    wording,
)
from crawler.records import REMOVED, ErrorRecord

# Below this no candidate is shown. Set on 14 weekly updates of jax-ml/jax with the score
# `check` used before it was the merge's (docs/guarantees.md, "Nothing orphaned in silence"):
# of 145 removed records, 28 had a successor (read by hand), all scoring 0.26 or more; 80 of
# the 117 without one scored below 0.25. Re-read on the 10-week replay with this score: every
# successor found scores 0.25 or more (the compute_on move, the lowest, 0.29). A person rejects
# a wrong suggestion at a glance, while a successor hidden under "no candidate" is lost in silence.
SUCCESSOR_FLOOR = 0.25


@dataclass(frozen=True)
class Successor:
    """A live record without an annotation that may be where a removed record's error went."""

    record: ErrorRecord
    resemblance: PairScore

    @property
    def score(self) -> float:
        return round(self.resemblance.total, 3)


def has_annotation(record: ErrorRecord) -> bool:
    """Somebody wrote something in a slot of the record's annotation block."""
    return not record.annotation.is_empty


def orphans(records: Iterable[ErrorRecord]) -> list[ErrorRecord]:
    """Removed records that carry an annotation, in id order."""
    return sorted((r for r in records if r.status == REMOVED and has_annotation(r)),
                  key=lambda r: r.id)


def candidates(records: Iterable[ErrorRecord]) -> list[ErrorRecord]:
    """Live records whose annotation is empty: where an orphan's annotation could go."""
    return [r for r in records if r.status != REMOVED and not has_annotation(r)]


def pair_score(old: ErrorRecord, new: ErrorRecord) -> PairScore:
    """How much `new` looks like where `old`'s error went: the merge's score of the pair."""
    return score(old, new.site)


def likeliest_successors(orphan: ErrorRecord, live: Sequence[ErrorRecord], *, limit: int = 3,
                         floor: float = SUCCESSOR_FLOOR) -> tuple[Successor, ...]:
    """The `limit` records of `live` most like `orphan`, best first, each scoring `floor` or more.

    Ties go to the same file, then to the lower id, so the answer does not depend on the order
    of `live`. Each candidate's cheap upper bound is checked first, so the exact (difflib) score
    is computed only for those that could still make the list.
    """
    return SuccessorIndex(live).likeliest(orphan, limit=limit, floor=floor)


class SuccessorIndex:
    """Live records prepared once, for ranking many orphans against them."""

    def __init__(self, live: Sequence[ErrorRecord]) -> None:
        self._profiles = [_Profile(record) for record in live]

    def likeliest(self, orphan: ErrorRecord, *, limit: int = 3,
                  floor: float = SUCCESSOR_FLOOR) -> tuple[Successor, ...]:
        old = _Profile(orphan)
        bounded = [(bound, new) for new in self._profiles
                   if (bound := old.upper_bound(new)) >= floor - 1e-9]
        bounded.sort(key=lambda item: (-item[0], item[1].record.id))
        found: list[tuple[tuple[float, int, str], Successor]] = []
        for bound, new in bounded:
            needed = floor if len(found) < limit else -found[limit - 1][0][0]
            if bound < needed - 1e-9:
                break  # sorted by bound: no later candidate can do better
            resemblance = score(orphan, new.record.site)
            total = resemblance.total
            if total < floor - 1e-9:
                continue
            rank = (-total, 0 if new.record.site.path == orphan.site.path else 1, new.record.id)
            found.append((rank, Successor(new.record, resemblance)))
            found.sort(key=lambda item: item[0])
        return tuple(successor for _, successor in found[:limit])


class _Profile:
    """A record's parts that bounding its score reads, computed once: an orphan meets thousands
    of them. Each part's bound is its multisets' overlap, which difflib's ratio never exceeds
    (its `quick_ratio`)."""

    def __init__(self, record: ErrorRecord) -> None:
        site = self.site = record.site
        self.record = record
        self.words = Counter(tokens(site.message.template))
        text = wording(site.message.template)
        self.wording = Counter(tokens(text)) if len(_WORD.findall(text)) >= CONTAINED_MIN else None
        self.context = Counter(context(site))
        self.guard = Counter(tokens(site.condition)) if site.condition is not None else None
        self.snippet = Counter(_lines(site.snippet))

    def upper_bound(self, new: _Profile) -> float:
        """At least the score `pairing.score` gives the pair (`PairScore.total`)."""
        old_site, new_site = self.site, new.site
        text = _text_bound(self.words, new.words, empty=1.0)
        if self.wording is not None and new.wording is not None:
            text = max(text, _text_bound(self.wording, new.wording, empty=1.0))
        if self.guard is None or new.guard is None or old_site.condition == new_site.condition:
            condition = _condition_score(old_site.condition, new_site.condition)  # no difflib
        else:
            condition = _text_bound(self.guard, new.guard, empty=1.0)
        parts = {
            "template": text,
            "context": _overlap(self.context, new.context),
            "qualname": _qualname_score(old_site.qualname, new_site.qualname),
            "condition": condition,
            "exception": 1.0 if _exception(old_site) == _exception(new_site) else 0.0,
            "snippet": _overlap(self.snippet, new.snippet),
        }
        return sum(weight * parts[part] for part, weight in WEIGHTS.items())


def _text_bound(a: Counter[str], b: Counter[str], empty: float) -> float:
    """At least `pairing.similarity` of two token multisets: their overlap, lifted to the fuzzy
    threshold where every token of the shorter one is in the other."""
    total = sum(a.values()) + sum(b.values())
    if not total:
        return empty
    shared = _shared(a, b)
    shorter = min(sum(a.values()), sum(b.values()))
    bound = 2 * shared / total
    if shorter >= CONTAINED_MIN and shared == shorter:
        bound = max(bound, FUZZY_THRESHOLD)
    return bound


def _overlap(a: Counter[str], b: Counter[str]) -> float:
    """At least difflib's ratio of two line sequences (0 where either is empty)."""
    if not a or not b:
        return 0.0
    return 2 * _shared(a, b) / (sum(a.values()) + sum(b.values()))


def _shared(a: Counter[str], b: Counter[str]) -> int:
    """How many items the two multisets share: |a ∩ b|, without building it."""
    if len(a) > len(b):
        a, b = b, a
    return sum(min(count, b[item]) for item, count in a.items() if item in b)
