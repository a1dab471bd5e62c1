"""Which records a test assertion is evidence for: the fit rule, and matching at repository scale.

The rule, for a test's pattern P (a regex the test searches in the message) and a record:

0. The exception names agree: the last part of one of the test's exceptions equals the last part
   of the record's exception as written or of its qualname. P has MIN_LITERAL literal characters.
1. STRONG fit: P, run as `re` runs it, finds the template's example text (every placeholder
   empty). Every literal character P needs is then the template's own text. P comes from the
   repository, so it runs bounded in steps, never in seconds (`crawler.regexes.StepBudget`):
   a P whose shape bounds no number of steps (nested repeats, a repeated alternation, a back
   reference), or whose bounds over all the records it is tried on pass PATTERN_STEPS, is cut
   before it runs: evidence for none, counted (`EvidenceStats.cut`, the manifest's
   `test_patterns_cut`), and cut the same way on any machine under any load.
2. WEAK fit (only for an assertion with no STRONG fit anywhere): reading each placeholder and
   each non-literal part of P as "any text", some message the template can give is found by P,
   with at least half of P's literal characters (and MIN_LITERAL) on the template's literal text,
   in one run of at least MIN_RUN characters. This admits tests that name a value where the
   template has a placeholder ("No such option: 'bad_key'" for "No such option: '{key}'") and
   refuses the ones a placeholder alone would carry (`raise ValueError(msg)` fits no test).
   The search (`coverage`, quadratic, in Python) is tried on the MAX_WEAK_TRIES templates that
   share the most pattern text, a cost cap: a weak fit beyond them is missed, never invented.
   Templates tied with the last of them are tried too (up to MAX_WEAK_TIED in all).

An assertion with STRONG fits is listed on those records only; one with WEAK fits only, on those;
one that fits more than MAX_FITS records is too vague to list anywhere (it is counted).

What an assertion is evidence for follows from the facts alone: the test's pattern and exception
names, the records' templates and exceptions. Never from record ids, the order records come in,
or the folder's name: records are tried as templates (every record of one template fits or none
does), candidates are ranked by what they share with the pattern, then by their text. So an
assertion that fits several records equally is listed on each of them, and its `fits` says on
how many: a user reading one record sees that the test may be exercising another raise of the
same text (see docs/evidence.md).
"""

from __future__ import annotations

import heapq
import re
import time  # the stats' seconds only: no fit depends on time
import warnings
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial

from crawler.catalogue.globs import (
    WILD,
    Glob,
    coverage,
    fragments,
    pattern_globs,
    template_glob,
)
from crawler.records import REMOVED, ErrorRecord, Evidence, TestAssertion
from crawler.regexes import BoundedRegex, OverBound, StepBudget

try:  # the regex parser behind `re`; `sre_parse` before Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

MIN_LITERAL = 3  # a pattern with fewer literal characters is no evidence for any one message
MIN_RUN = 4  # a weak fit needs this many pattern characters in a row on the template's text
MAX_EVIDENCE = 20  # per record: the most specific assertions (fewest fits), then by place
MAX_FITS = 10  # an assertion that fits more records than this ('.*supported') is evidence for none
MAX_WEAK_TRIES = 8  # weak fits are searched on the templates sharing the most pattern text only
MAX_WEAK_TIED = 32  # ... and on those tied with the last of them, up to this many in all
PROGRESS_EVERY = 200  # assertions between two progress reports
PATTERN_STEPS = 10**10  # bound steps a pattern may take over its records: 10**9 ran in 20 ms at
# most on the slowest forms tried; the stdlib's costliest pattern is bounded at 4 * 10**7
SEPARATOR = "\x00"  # between two examples in a group's haystack (a needle holding it is not used)

STRONG, WEAK, NONE = 2, 1, 0


# ---------------------------------------------------------------- one pattern, one template


@dataclass(frozen=True)
class Target:
    """A record's template, ready to be fitted: example text, glob and literal runs."""

    example: str  # every placeholder empty
    glob: Glob
    runs: tuple[str, ...]  # its literal runs, between placeholders
    wilds: int  # how many placeholders (runs of them count once)

    @classmethod
    def of(cls, template: str, placeholders: Sequence[str]) -> Target:
        glob = template_glob(template, placeholders)
        runs = fragments(glob)
        return cls("".join(runs), glob, tuple(runs), sum(1 for s in glob if s is WILD))


@dataclass(frozen=True)
class Pattern:
    """A test's pattern, ready to be fitted."""

    compiled: BoundedRegex
    globs: tuple[Glob, ...]
    ignore_case: bool
    literal: int  # the fewest literal characters over its alternatives
    # per alternative, its longest literal run: text any match of it holds as written (None:
    # the pattern ignores case somewhere, or a run holds SEPARATOR; every record is tried)
    needles: tuple[str, ...] | None

    @classmethod
    def of(cls, pattern: str) -> Pattern | None:
        compiled = BoundedRegex.compile(pattern)  # None where `re` refuses it
        if compiled is None:
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = _sre.parse(pattern)
                globs, ignore_case = pattern_globs(pattern, parsed)
                case_sensitive = not ignore_case and not _ignores_case_inside(parsed)
        except (re.error, RecursionError, OverflowError):
            return None
        literal = min(sum(1 for s in g if s is not WILD) for g in globs)
        needles = tuple(max(fragments(g), key=len, default="") for g in globs)
        usable = case_sensitive and all(needle and SEPARATOR not in needle for needle in needles)
        return cls(compiled, tuple(globs), ignore_case, literal, needles if usable else None)


def _ignores_case_inside(items: Iterable[tuple[object, object]]) -> bool:
    """Whether a group of the parsed pattern turns IGNORECASE on (`(?i:...)`) at any depth."""
    for op, arg in items:
        if op == _sre.SUBPATTERN:
            if arg[1] & re.IGNORECASE or _ignores_case_inside(arg[-1]):  # type: ignore[index]
                return True
        elif isinstance(arg, (list, tuple)) and any(_ignores_case_inside(part) for part in
                                                    _nested_items(arg)):
            return True
    return False


def _nested_items(arg: Sequence[object]) -> Iterable[Iterable[tuple[object, object]]]:
    """The item lists nested in an argument of the parser's tree (repeats, branches, asserts)."""
    for part in arg:
        if isinstance(part, _sre.SubPattern):
            yield part
        elif isinstance(part, (list, tuple)):
            yield from _nested_items(part)


def strong(pattern: Pattern, target: Target, budget: StepBudget | None = None) -> bool:
    """Rule 1; `OverBound` when the pattern's steps are not bounded within `budget` (what the
    pattern may still take over all the records it is tried on; alone: PATTERN_STEPS)."""
    if pattern.literal < MIN_LITERAL:
        return False
    return (budget or StepBudget(PATTERN_STEPS)).search(pattern.compiled, target.example)


def weak(pattern: Pattern, target: Target) -> bool:
    """The glob search of rule 2 (callers have checked that no STRONG fit exists)."""
    if pattern.literal < MIN_LITERAL or not target.wilds:
        return False
    glob = target.glob
    if pattern.ignore_case:
        glob = tuple(s.lower() if s is not WILD else s for s in glob)
    runs = [r.lower() for r in target.runs] if pattern.ignore_case else list(target.runs)
    for branch in pattern.globs:
        if not _has_run(branch, runs):
            continue
        needed = sum(1 for s in branch if s is not WILD)
        if coverage(glob, branch) >= max(MIN_LITERAL, (needed + 1) // 2):
            return True
    return False


def _has_run(branch: Glob, runs: Sequence[str]) -> bool:
    for fragment in fragments(branch):
        for start in range(len(fragment) - MIN_RUN + 1):
            gram = fragment[start:start + MIN_RUN]
            if any(gram in run for run in runs):
                return True
    return False


def fits(pattern: str, template: str, placeholders: Sequence[str]) -> bool:
    """The rule for one pattern and one template, exception names aside: STRONG or WEAK."""
    compiled = Pattern.of(pattern)
    if compiled is None:
        return False
    target = Target.of(template, placeholders)
    try:
        return strong(compiled, target) or weak(compiled, target)
    except OverBound:
        return False


# ---------------------------------------------------------------- many assertions, many records


@dataclass
class EvidenceStats:
    """How a matching went, for the run's summary and the report."""

    assertions: int = 0
    fitted: int = 0  # assertions that fit at least one record
    weak: int = 0  # of those, the ones that fit through placeholder values only
    too_vague: int = 0  # of those, the ones that fit more than MAX_FITS records: not listed
    cut: int = 0  # patterns whose steps are not bounded within PATTERN_STEPS: evidence for none
    records: int = 0  # records that gained evidence
    seconds: float = 0.0


@dataclass
class _Group:
    """The records answering to one exception name, by template: the records of one template fit
    a pattern alike, so a pattern is tried on each template once. Templates are held in the
    order of their text (`_target_order`), with an index of their literal text; a position is a
    template's place in that order, whatever order the records came in."""

    members: dict[Target, list[ErrorRecord]] = field(default_factory=dict)
    _targets: list[Target] | None = None
    _grams: dict[str, set[int]] | None = None
    _haystack: tuple[str, list[int]] | None = None  # examples joined by SEPARATOR; their starts

    def add(self, record: ErrorRecord, target: Target) -> None:
        self.members.setdefault(target, []).append(record)

    @property
    def targets(self) -> list[Target]:
        if self._targets is None:
            self._targets = sorted(self.members, key=_target_order)
        return self._targets

    def strong_candidates(self, pattern: Pattern) -> Sequence[int]:
        """The templates whose example holds one of the pattern's needles, in order: the only
        ones it can find (a match holds every literal run of the alternative it takes)."""
        if pattern.needles is None:
            return range(len(self.targets))
        if self._haystack is None:
            examples = [target.example for target in self.targets]
            starts, at = [], 0
            for example in examples:
                starts.append(at)
                at += len(example) + 1
            self._haystack = SEPARATOR.join(examples), starts
        haystack, starts = self._haystack
        found: set[int] = set()
        for needle in pattern.needles:
            at = haystack.find(needle)
            while at >= 0:
                position = bisect_right(starts, at) - 1
                found.add(position)
                after = position + 1
                at = haystack.find(needle, starts[after]) if after < len(starts) else -1
        return sorted(found)

    def grams(self) -> dict[str, set[int]]:
        """MIN_RUN-grams of every template's literal runs -> positions in `targets`."""
        if self._grams is None:
            self._grams = defaultdict(set)
            for position, target in enumerate(self.targets):
                for run in target.runs:
                    for start in range(len(run) - MIN_RUN + 1):
                        self._grams[run[start:start + MIN_RUN]].add(position)
        return self._grams

    def weak_candidates(self, pattern: Pattern) -> list[int]:
        """The templates a weak fit can reach, best first: MAX_WEAK_TRIES of them, and those
        tied with the last (up to MAX_WEAK_TIED in all).

        A template must share a MIN_RUN-gram with the pattern. Templates are ranked by how many
        of the pattern's literal characters fall in such shared grams (then by their text), a
        bound on what the glob search can find; the search is tried on the best few only.
        """
        grams = self.grams()
        covered: dict[int, int] = defaultdict(int)  # template position -> bitmask of pattern chars
        for branch in pattern.globs:
            offset = 0
            for fragment in fragments(branch):
                text = fragment.lower() if pattern.ignore_case else fragment
                for start in range(len(text) - MIN_RUN + 1):
                    bits = ((1 << MIN_RUN) - 1) << (offset + start)
                    for position in grams.get(text[start:start + MIN_RUN], ()):
                        covered[position] |= bits
                offset += len(fragment) + 1
        needed = max(MIN_LITERAL, (pattern.literal + 1) // 2)
        least = min(needed, MIN_RUN)
        counted = ((mask.bit_count(), position) for position, mask in covered.items())
        ranked = heapq.nsmallest(MAX_WEAK_TIED, ((-count, position) for count, position in counted
                                                 if count >= least))
        if len(ranked) > MAX_WEAK_TRIES:  # the first few, and the ones tied with the last of them
            last = ranked[MAX_WEAK_TRIES - 1][0]
            ranked = [item for at, item in enumerate(ranked) if at < MAX_WEAK_TRIES or item[0] == last]
        return [position for _, position in ranked]


def _target_order(target: Target) -> tuple[str, tuple[tuple[bool, str], ...]]:
    """A total order of templates by their text (placeholders as wilds)."""
    return target.example, tuple((symbol is WILD, symbol or "") for symbol in target.glob)


def _names(record: ErrorRecord) -> set[str]:
    site = record.site
    names = {site.exception.rsplit(".", 1)[-1]}
    if site.exception_qualname:
        names.add(site.exception_qualname.rsplit(".", 1)[-1])
    return names


def match_evidence(records: Sequence[ErrorRecord], assertions: Sequence[TestAssertion],
                   stats: EvidenceStats | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> dict[str, tuple[Evidence, ...]]:
    """Evidence by record id for the records (not removed) that assertions fit, by the rule above.

    Each record keeps at most MAX_EVIDENCE items, the most specific (fewest fits) first, then
    listed by path and line.
    """
    started = time.perf_counter()
    groups: dict[str, _Group] = defaultdict(_Group)
    targets: dict[tuple[str, tuple[str, ...]], Target] = {}
    for record in records:
        if record.status == REMOVED:
            continue
        key = (record.site.message.template, record.site.message.placeholders)
        if key not in targets:
            targets[key] = Target.of(*key)
        for name in sorted(_names(record)):
            groups[name].add(record, targets[key])
    patterns: dict[str, Pattern | None] = {}
    budgets: dict[str, StepBudget] = {}  # each pattern's steps over its assertions and records
    found: dict[str, list[Evidence]] = defaultdict(list)
    # what a pattern fits depends only on it and the exceptions the test names: the same check
    # asserted by several tests is fitted once (on jax, most of an update's matching)
    fitted: dict[tuple[str, tuple[str, ...]], tuple[dict[str, str], bool]] = {}
    ordered = sorted(set(assertions), key=_assertion_order)
    for done, assertion in enumerate(ordered):
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(done, len(ordered))
        if assertion.pattern not in patterns:
            patterns[assertion.pattern] = Pattern.of(assertion.pattern)
        pattern = patterns[assertion.pattern]
        if pattern is None or pattern.literal < MIN_LITERAL:
            continue
        key = (assertion.pattern, tuple(assertion.exceptions))
        if key not in fitted:
            budget = budgets.setdefault(assertion.pattern, StepBudget(PATTERN_STEPS))
            try:
                fitted[key] = _fit(pattern, assertion, groups, budget)
            except OverBound:  # cut once: the pattern's other assertions skip it at once
                patterns[assertion.pattern] = None
                if stats is not None:
                    stats.cut += 1
                continue
        hits, is_weak = fitted[key]
        if stats is not None:
            stats.assertions += 1
            stats.fitted += bool(hits)
            stats.weak += bool(hits) and is_weak
            stats.too_vague += len(hits) > MAX_FITS
        if len(hits) > MAX_FITS:
            continue
        for record_id, written in hits.items():
            found[record_id].append(Evidence(
                path=assertion.path, line=assertion.line, test=assertion.test, form=assertion.form,
                check=assertion.check, exception=written, pattern=assertion.pattern, fits=len(hits)))
    if progress is not None and ordered:
        progress(len(ordered), len(ordered))
    result: dict[str, tuple[Evidence, ...]] = {}
    cut = {text for text, pattern in patterns.items() if pattern is None}
    for record_id, items in found.items():
        items = [e for e in items if e.pattern not in cut]  # fitted with other exceptions first
        kept = sorted(items, key=lambda e: (e.fits, e.path, e.line, e.pattern))[:MAX_EVIDENCE]
        if kept:
            result[record_id] = tuple(sorted(kept, key=lambda e: (e.path, e.line, e.pattern, e.check)))
    if stats is not None:
        stats.records = len(result)
        stats.seconds = time.perf_counter() - started
    return result


def _fit(pattern: Pattern, assertion: TestAssertion, groups: dict[str, _Group],
         budget: StepBudget) -> tuple[dict[str, str], bool]:
    """The records an assertion fits (id -> the exception as written), and whether only weakly:
    by rule 1 where any record fits so, else by rule 2 among the likeliest candidates."""
    hits = _hits(pattern, assertion, groups, partial(strong, budget=budget))
    if hits:
        return hits, False
    return _hits(pattern, assertion, groups, weak, candidates=True), True


def _hits(pattern: Pattern, assertion: TestAssertion, groups: dict[str, _Group], test: object,
          candidates: bool = False) -> dict[str, str]:
    """Record id -> the exception as the test wrote it, for the records `test` accepts: every
    record of a template it accepts (the first of the test's exceptions that names it)."""
    hits: dict[str, str] = {}
    for written in assertion.exceptions:
        group = groups.get(written.rsplit(".", 1)[-1])
        if group is None:
            continue
        positions = group.weak_candidates(pattern) if candidates else \
            group.strong_candidates(pattern)
        for position in positions:
            target = group.targets[position]
            members = group.members[target]
            if all(record.id in hits for record in members):
                continue
            if test(pattern, target):  # type: ignore[operator]
                for record in members:
                    hits.setdefault(record.id, written)
    return hits


def _assertion_order(a: TestAssertion) -> tuple[str, int, str, str, str]:
    return (a.path, a.line, a.pattern, a.check, a.form)
