"""Where a removed record's annotation most likely belongs now: its likeliest successors.

An annotated record that an update left `removed` may have a successor the merge could not
pair: a message reworded beyond the fuzzy threshold, moved to another file and reworded at
once, or raised by another exception class. `crawler check` lists each such orphan with the
live records that most resemble it, best first, for a person to `crawler adopt` one.

The resemblance of two records is one score (`pair_score`), from 0 to 1, weighing the
template's word-level similarity (`pairing.similarity`), the lines around the raise (its
guarding condition among them), the function, the exception and the file. It is one function
so that it can follow the merge's own pair score where that one grows to weigh the same things.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from crawler.catalogue.pairing import FUZZY_THRESHOLD, similarity, tokens
from crawler.records import REMOVED, ErrorRecord

# How much each resemblance counts; they sum to 1. The template weighs most, but not all: a
# message reworded past recognition at the same place, under the same condition, in the same
# function, is still its old error, and a near-identical text in an unrelated function is not.
WEIGHTS = {"template": 0.4, "context": 0.25, "qualname": 0.15, "exception": 0.1, "path": 0.1}
CONTEXT_LINES = 3  # lines kept on each side of the raise statement (the `if` above among them)

# Below this no candidate is shown. Measured on 14 weekly updates of jax-ml/jax (docs/
# guarantees.md, "Nothing orphaned in silence"): of 145 removed records, 28 had a successor
# (read by hand), 24 of them ranked first, all scoring 0.26 or more; 80 of the 117 without one
# scored below 0.25. A person rejects a wrong suggestion at a glance, while a successor hidden
# under "no candidate" is lost in silence: at 0.3 one more is hidden and ten fewer wrong shown.
SUCCESSOR_FLOOR = 0.25


@dataclass(frozen=True)
class Resemblance:
    """How much a live record resembles a removed one, part by part, each from 0 to 1."""

    template: float
    context: float
    qualname: float  # 1 the same qualname, 0.5 the same function name in another scope
    exception: float
    path: float  # 1 the same file, 0.5 the same file name in another folder

    @property
    def score(self) -> float:
        return sum(getattr(self, part) * weight for part, weight in WEIGHTS.items())

    def why(self) -> str:
        """The resemblance in a few words, for a person deciding to adopt."""
        parts = [f"template {self.template:.2f}", f"context {self.context:.2f}"]
        parts += [label for part, label in (("qualname", "function"), ("exception", "exception"),
                                            ("path", "file"))
                  if getattr(self, part) == 1.0]
        return ", ".join(parts[:2]) + ("; same " + ", ".join(parts[2:]) if parts[2:] else "")


@dataclass(frozen=True)
class Successor:
    """A live record without an annotation that may be where a removed record's error went."""

    record: ErrorRecord
    resemblance: Resemblance

    @property
    def score(self) -> float:
        return round(self.resemblance.score, 3)


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


def pair_score(old: ErrorRecord, new: ErrorRecord) -> Resemblance:
    """How much `new` looks like where `old`'s error went: the one score of a successor."""
    return _Profile(old).resemblance(_Profile(new))


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
        bounded = sorted(((old.upper_bound(new), new) for new in self._profiles),
                         key=lambda item: (-item[0], item[1].record.id))
        found: list[tuple[tuple[float, int, str], Successor]] = []
        for bound, new in bounded:
            needed = floor if len(found) < limit else -found[limit - 1][0][0]
            if bound < needed - 1e-9:
                break  # sorted by bound: no later candidate can do better
            resemblance = old.resemblance(new)
            score = resemblance.score
            if score < floor - 1e-9:
                continue
            rank = (-score, 0 if new.record.site.path == orphan.site.path else 1, new.record.id)
            found.append((rank, Successor(new.record, resemblance)))
            found.sort(key=lambda item: item[0])
        return tuple(successor for _, successor in found[:limit])


class _Profile:
    """A record's parts that scoring reads, each computed once."""

    def __init__(self, record: ErrorRecord) -> None:
        self.record = record

    @cached_property
    def words(self) -> Counter[str]:
        return Counter(tokens(self.record.site.message.template))

    @cached_property
    def context(self) -> list[str]:
        """The stripped lines around the raise statement within its snippet, the raise left out."""
        site = self.record.site
        lines = site.snippet.splitlines()
        start, end = site.line - site.snippet_line, site.end_line - site.snippet_line + 1
        if not 0 <= start < end <= len(lines):
            return []  # a snippet that does not hold the raise: nothing around it to compare
        around = lines[max(0, start - CONTEXT_LINES):start] + lines[end:end + CONTEXT_LINES]
        return [line.strip() for line in around if line.strip()]

    @cached_property
    def context_lines(self) -> Counter[str]:
        return Counter(self.context)

    def _fixed(self, new: _Profile) -> tuple[float, float, float]:
        """The parts that are equalities: qualname, exception, path."""
        old_site, new_site = self.record.site, new.record.site
        qualname = _same_or_last(old_site.qualname, new_site.qualname, ".")
        exception = 1.0 if (old_site.exception == new_site.exception or (
            old_site.exception_qualname is not None
            and old_site.exception_qualname == new_site.exception_qualname)) else 0.0
        return qualname, exception, _same_or_last(old_site.path, new_site.path, "/")

    def resemblance(self, new: _Profile) -> Resemblance:
        qualname, exception, path = self._fixed(new)
        template = similarity(self.record.site.message.template, new.record.site.message.template)
        context = 0.0
        if self.context and new.context:
            context = difflib.SequenceMatcher(None, self.context, new.context, autojunk=False).ratio()
        return Resemblance(template, context, qualname, exception, path)

    def upper_bound(self, new: _Profile) -> float:
        """At least the score `resemblance` gives: difflib's ratio is at most the multisets' overlap."""
        qualname, exception, path = self._fixed(new)
        # `similarity` lifts a text that holds the other whole up to the fuzzy threshold
        template = max(_overlap(self.words, new.words), FUZZY_THRESHOLD)
        context = _overlap(self.context_lines, new.context_lines)
        return Resemblance(template, context, qualname, exception, path).score


def _overlap(a: Counter[str], b: Counter[str]) -> float:
    """2·|a ∩ b| / (|a| + |b|): difflib's `quick_ratio`, an upper bound of its `ratio`."""
    total = sum(a.values()) + sum(b.values())
    if not total:
        return 1.0
    return 2 * sum((a & b).values()) / total


def _same_or_last(old: str, new: str, separator: str) -> float:
    """1 for the same name, 0.5 for the same last part (a function or file moved, or made
    private: `get_values` and `_get_values`), else 0."""
    if old == new:
        return 1.0
    return 0.5 if _last(old, separator) == _last(new, separator) else 0.0


def _last(name: str, separator: str) -> str:
    return name.rsplit(separator, 1)[-1].lstrip("_")
