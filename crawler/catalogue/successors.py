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

from crawler.catalogue.pairing import CONTAINED_MIN, FUZZY_THRESHOLD, similarity, tokens
from crawler.records import REMOVED, ErrorRecord, RaiseSite

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
        bounded = [(bound, new) for new in self._profiles
                   if (bound := old.upper_bound(new)) >= floor - 1e-9]
        bounded.sort(key=lambda item: (-item[0], item[1].record.id))
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
    """A record's parts that scoring reads, computed once: an orphan meets thousands of them."""

    def __init__(self, record: ErrorRecord) -> None:
        site = self.site = record.site
        self.record = record
        self.words = Counter(tokens(site.message.template))
        self.word_count = sum(self.words.values())
        self.context = _context(site)
        self.context_lines = Counter(self.context)
        self.qualname_last, self.path_last = _last(site.qualname, "."), _last(site.path, "/")

    def _fixed(self, new: _Profile) -> tuple[float, float, float]:
        """The parts that are equalities: qualname, exception, path."""
        old_site, new_site = self.site, new.site
        qualname = _same_or_last(old_site.qualname, new_site.qualname,
                                 self.qualname_last == new.qualname_last)
        exception = 1.0 if (old_site.exception == new_site.exception or (
            old_site.exception_qualname is not None
            and old_site.exception_qualname == new_site.exception_qualname)) else 0.0
        path = _same_or_last(old_site.path, new_site.path, self.path_last == new.path_last)
        return qualname, exception, path

    def resemblance(self, new: _Profile) -> Resemblance:
        qualname, exception, path = self._fixed(new)
        template = similarity(self.site.message.template, new.site.message.template)
        context = 0.0
        if self.context and new.context:
            context = difflib.SequenceMatcher(None, self.context, new.context, autojunk=False).ratio()
        return Resemblance(template, context, qualname, exception, path)

    def upper_bound(self, new: _Profile) -> float:
        """At least the score `resemblance` gives: difflib's ratio is at most the multisets'
        overlap (its `quick_ratio`), and `similarity` lifts a text to the fuzzy threshold only
        when every word of the shorter one is in the other."""
        qualname, exception, path = self._fixed(new)
        shared = _shared(self.words, new.words)
        total = self.word_count + new.word_count
        template = 2 * shared / total if total else 1.0
        shorter = min(self.word_count, new.word_count)
        if shorter >= CONTAINED_MIN and shared == shorter:
            template = max(template, FUZZY_THRESHOLD)
        context = 0.0
        if self.context and new.context:
            context = (2 * _shared(self.context_lines, new.context_lines)
                       / (len(self.context) + len(new.context)))
        return (WEIGHTS["template"] * template + WEIGHTS["context"] * context
                + WEIGHTS["qualname"] * qualname + WEIGHTS["exception"] * exception
                + WEIGHTS["path"] * path)


def _context(site: RaiseSite) -> list[str]:
    """The stripped lines around the raise statement within its snippet, the raise left out."""
    lines = site.snippet.splitlines()
    start, end = site.line - site.snippet_line, site.end_line - site.snippet_line + 1
    if not 0 <= start < end <= len(lines):
        return []  # a snippet that does not hold the raise: nothing around it to compare
    around = lines[max(0, start - CONTEXT_LINES):start] + lines[end:end + CONTEXT_LINES]
    return [line.strip() for line in around if line.strip()]


def _shared(a: Counter[str], b: Counter[str]) -> int:
    """How many items the two multisets share: |a ∩ b|, without building it."""
    if len(a) > len(b):
        a, b = b, a
    return sum(min(count, b[item]) for item, count in a.items() if item in b)


def _same_or_last(old: str, new: str, same_last: bool) -> float:
    """1 for the same name, 0.5 for the same last part (a function or file moved, or made
    private: `get_values` and `_get_values`), else 0."""
    if old == new:
        return 1.0
    return 0.5 if same_last else 0.0


def _last(name: str, separator: str) -> str:
    return name.rsplit(separator, 1)[-1].lstrip("_")
