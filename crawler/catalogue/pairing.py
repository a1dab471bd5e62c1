"""Pairing new sites with existing records, one-to-one: by equal keys, and by close templates.

The merge (`merge`) decides which keys to try in which order; here is how each try pairs: the
sites whose lines git's diff left untouched (`pair_by_diff`); equal keys by their ordinals or,
when the counts differ, closest first (`pair_by`); a key that is unique on both sides
(`pair_unique`). The last step scores candidate pairs (`score`, `PairScore`) for the best
assignment overall (`best_pairs`).
Every pairing is one-to-one and depends only on the sites and records, never on their order in
memory.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from crawler.catalogue.closest import closest_pairs
from crawler.git.diff import LineMap
from crawler.records import REMOVED, ErrorRecord, Pin, RaiseSite

K = TypeVar("K", bound=Hashable)

# Two templates at least this close (word-level difflib ratio over words and punctuation marks,
# the words inside placeholders included) read as one message reworded (`PairScore.signal`);
# below it, only the place (the same function and guard, or code that moved) can pair them.
# Words, not characters: "invalid shape"
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
    (their ordinals); otherwise the closest pairs go first (`closest.closest_pairs`), so that
    when one of two identical raises goes, the record of the one that stayed follows it.
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
            pairs.extend(closest_pairs(group, candidates))
    return pairs


def pair_by_diff(sites: Sequence[RaiseSite], records: Sequence[ErrorRecord], lines: LineMap,
                 pin: Pin) -> list[Pair]:
    """Step 0: each live record whose lines git's diff left untouched, with the site at their
    new place (the same column, the same number of lines).

    One raise may give several sites (a message chosen by a conditional expression): at one
    place, the site of the record's own exception and template goes first, then the closest.
    A record already at `pin` (written by a run stopped before its manifest) is not placed: its
    lines are not the old commit's.
    """
    at: dict[tuple[str, int, int], list[RaiseSite]] = defaultdict(list)
    for site in sites:
        at[(site.path, site.line, site.column)].append(site)
    pairs: list[Pair] = []
    for record in records:
        old = record.site
        if record.status == REMOVED or record.commit == pin.sha:
            continue
        place = lines.follow(old.path, old.line, old.end_line)
        there = at.get((place[0], place[1], old.column), []) if place is not None else []
        fits = [s for s in there if s.end_line - s.line == old.end_line - old.line]
        if fits:
            site = fits[0] if len(fits) == 1 else _likeliest_at_place(old, fits)
            there.remove(site)
            pairs.append((site, record))
    return pairs


def _likeliest_at_place(old: RaiseSite, fits: list[RaiseSite]) -> RaiseSite:
    """Among sites of one raise, the record's own exception and template first, else the closest
    wording (similarity is measured only here: most places hold one site)."""
    for site in fits:
        if site.exception == old.exception and site.message.template == old.message.template:
            return site
    return max(fits, key=lambda s: similarity(old.message.template, s.message.template))


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



# ---------------------------------------------------------------- scoring a candidate pair

# How much each part counts in `PairScore.total` (they sum to 1): the message first, then the
# code around the raise, which moves with it when the message is reworded.
WEIGHTS = {"template": 0.4, "context": 0.2, "qualname": 0.15, "condition": 0.1, "exception": 0.1,
           "snippet": 0.05}
CONTEXT_LINES = 3  # lines of code kept on each side of the raise (`context`)
CLOSE_CODE = 0.8  # code around the raise this similar is the same place, or the code moved
SAME_PLACE = 0.6  # `PairScore.place` from which a raise in the same function stands where it stood
SOME_PLACE = 0.3  # ... below which a close template needs `CLOSE_TEXT` to pair on its own
CLOSE_TEXT = 0.8
SAME_FUNCTION_TEXT = 0.9  # enclosing functions this similar are one function moved
# In its own function, with the same exception, a raise stands where the old one stood when its
# text and its place, each at least `SOME_PLACE`, add up to this: jax's `_get_lowering_rule`
# reworded "Unsupported transforms: {transforms} ({maybe_transpose})" into "Unsupported transpose
# permutation: {permutation}" under the guard that replaced the old one (text 0.44, place 0.52),
# where a deleted raise's nearer text (0.62) had nothing of the place (0.0).
REWORDED_TOGETHER = 0.85


@dataclass(frozen=True)
class PairScore:
    """How well a new site fits an old record's site, part by part (each 0 to 1), and why.

    `signal` names why the pair may be made at all (None: it may not): `similar_text` (a close
    template in the record's file, or in the file git says it went to, with some of the code
    around it or a very close text), `reworded_in_place` (the same function, and the same
    guard or code around, however the message changed; or the same exception, with text and
    place that are each some alike and enough together),
    `function_moved` (the same qualname in another module), `code_moved` (near-identical code
    around the raise, or function, in another file).
    """

    template: float  # word-level similarity of the templates (`similarity`)
    context: float  # similarity of the code lines around the raise, the raise left out
    qualname: float  # 1 the same qualname, 0.5 the same function name or both at module level
    condition: float  # 1 the same guard, 0.5 both unguarded, else the guards' word similarity
    exception: float  # 1 the same exception class, 0 another
    snippet: float  # similarity of the enclosing functions' lines
    same_file: bool  # in the record's file, or where git says that file went
    wording: float = 0.0  # similarity of the literal text alone: each placeholder one mark

    @property
    def total(self) -> float:
        """The weighted sum of the parts, the text (`text`) standing for the template: the one
        resemblance score, by which the merge pairs and `check` ranks an orphan's successors."""
        parts = {part: getattr(self, part) for part in WEIGHTS}
        parts["template"] = self.text
        return sum(weight * parts[part] for part, weight in WEIGHTS.items())

    @property
    def place(self) -> float:
        """How much the raise's surroundings agree: the code around it and its guard, evenly."""
        return (self.context + self.condition) / 2

    @property
    def text(self) -> float:
        """The closer of the template's and the literal wording's similarity: a placeholder
        renamed (`{tree_def}` to `{ps_ft.tree}`) leaves the wording as it was."""
        return max(self.template, self.wording)

    @property
    def signal(self) -> str | None:
        close_text = self.text >= FUZZY_THRESHOLD
        same_place = self.qualname == 1.0 and (self.condition == 1.0 or self.context >= CLOSE_CODE
                                               or self.place >= SAME_PLACE
                                               or self._reworded_under_its_guard())
        if self.same_file:
            if same_place:
                return "reworded_in_place"
            # A close text alone is not enough where nothing around it agrees: in jax,
            # "Unsupported transforms: {transforms}" (0.62) went to another guard's
            # "Unsupported transpose permutation: {permutation}" while its own raise was deleted.
            supported = self.text >= CLOSE_TEXT or self.place >= SOME_PLACE
            return "similar_text" if close_text and supported else None
        code_moved = self.context >= CLOSE_CODE or self.snippet >= SAME_FUNCTION_TEXT
        if self.qualname == 1.0 and (close_text or code_moved):
            return "function_moved"
        if code_moved and (close_text or self.context >= SAME_FUNCTION_TEXT):
            return "code_moved"
        return None

    def _reworded_under_its_guard(self) -> bool:
        """The same exception, some of the text and some of the place, enough together."""
        return (self.exception == 1.0 and min(self.text, self.place) >= SOME_PLACE
                and self.text + self.place >= REWORDED_TOGETHER)

    def why(self) -> str:
        """The parts a person reads to adopt: the template's and the code's similarity, and what
        is the same (`check`'s successors)."""
        same = [label for label, alike in (("function", self.qualname == 1.0),
                                           ("exception", self.exception == 1.0),
                                           ("file", self.same_file)) if alike]
        head = f"template {self.template:.2f}, context {self.context:.2f}"
        return head + ("; same " + ", ".join(same) if same else "")

    def describe(self) -> str:
        """One line: the signal, the score and its parts, as a record's `history.paired_by`."""
        parts = ", ".join(f"{part} {getattr(self, part):.2f}" for part in (*WEIGHTS, "wording"))
        return f"{self.signal}: score {self.total:.2f} ({parts})"


def score(record: ErrorRecord, site: RaiseSite, moved_to: Iterable[str] = (),
          memo: Memo | None = None, code_bound: bool = False) -> PairScore:
    """How well `site` fits as the successor of `record`'s site; `moved_to` are the paths git
    says the record's file went to (renamed or copied), which count as its own file. `memo`
    keeps the texts' and the functions' similarities for the next pair of the same ones.
    `code_bound`: the functions' lines by a bound at least their similarity, far cheaper
    (`Memo.code_bound`), so a score at least the real one part by part."""
    old = record.site
    memo = memo or Memo()
    template, words = memo.texts(old.message.template, site.message.template)
    return PairScore(
        template=template,
        context=memo.contexts(old, site),
        qualname=_qualname_score(old.qualname, site.qualname),
        condition=_condition_score(old.condition, site.condition),
        exception=1.0 if _exception(old) == _exception(site) else 0.0,
        snippet=(memo.code_bound if code_bound else memo.code)(old.snippet, site.snippet),
        same_file=site.path == old.path or site.path in set(moved_to),
        wording=words,
    )


class Memo:
    """Similarities already measured in one pairing, by the texts compared: many pairs share a
    template and a function (a reworded message in 2,000 places, 2,000 raises in one function
    of 4,000 lines), and the functions' lines are the costly part of a score."""

    KEEP = 100_000  # pairs kept at most: past them, a pair is measured again (memory stays bounded)

    def __init__(self) -> None:
        self._texts: dict[tuple[str, str], tuple[float, float]] = {}
        self._code: dict[tuple[str, str], float] = {}
        self._code_bounds: dict[tuple[str, str], float] = {}
        self._lines: dict[str, tuple[str, ...]] = {}
        self._split: dict[str, list[str]] = {}
        self._context: dict[tuple[str, int, int, int], tuple[str, ...]] = {}
        self._contexts: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}

    def texts(self, old: str, new: str) -> tuple[float, float]:
        """The templates' `similarity` and their wordings'."""
        found = self._texts.get((old, new))
        if found is None:
            found = (similarity(old, new), _wording_similarity(old, new))
            if len(self._texts) < self.KEEP:
                self._texts[(old, new)] = found
        return found

    def code(self, old: str, new: str) -> float:
        """The similarity of two functions' lines."""
        found = self._code.get((old, new))
        if found is None:
            found = _lines_similarity(self.lines(old), self.lines(new))
            if len(self._code) < self.KEEP:
                self._code[(old, new)] = found
        return found

    def contexts(self, old: RaiseSite, new: RaiseSite) -> float:
        """The similarity of the code around two raises (copies of a raise share theirs)."""
        key = (self.context(old), self.context(new))
        found = self._contexts.get(key)
        if found is None:
            found = _lines_similarity(*key)
            if len(self._contexts) < self.KEEP:
                self._contexts[key] = found
        return found

    def code_bound(self, old: str, new: str) -> float:
        """At least `code(old, new)`: difflib's bound by the lines the two have in common,
        whatever their order (linear, where the similarity of long, repetitive functions
        costs milliseconds a pair)."""
        found = self._code_bounds.get((old, new))
        if found is None:
            a, b = self.lines(old), self.lines(new)
            found = (difflib.SequenceMatcher(None, a, b, autojunk=False).quick_ratio()
                     if a and b else 0.0)
            if len(self._code_bounds) < self.KEEP:
                self._code_bounds[(old, new)] = found
        return found

    def context(self, site: RaiseSite) -> tuple[str, ...]:
        """`context(site)`, each function's lines split once."""
        key = (site.snippet, site.line, site.end_line, site.snippet_line)
        found = self._context.get(key)
        if found is None:
            split = self._split.get(site.snippet)
            if split is None:
                split = site.snippet.splitlines()
                if len(self._split) < self.KEEP:
                    self._split[site.snippet] = split
            found = context(site, split)
            if len(self._context) < self.KEEP:
                self._context[key] = found
        return found

    def lines(self, snippet: str) -> tuple[str, ...]:
        found = self._lines.get(snippet)
        if found is None:
            found = _lines(snippet)
            if len(self._lines) < self.KEEP:
                self._lines[snippet] = found
        return found


def _wording_similarity(old: str, new: str) -> float:
    """`similarity` of the literal wordings; 0 where either has fewer than `CONTAINED_MIN` words
    of its own ("Unsupported transforms: {}" and "Unsupported mesh: {}" are not one message)."""
    a, b = wording(old), wording(new)
    if min(len(_WORD.findall(a)), len(_WORD.findall(b))) < CONTAINED_MIN:
        return 0.0
    return similarity(a, b)


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"\w+")


def wording(template: str) -> str:
    """The template's literal text, each placeholder one `{}` (literal braces kept as they are)."""
    return "{{".join("}}".join(_PLACEHOLDER.sub("{}", part) for part in piece.split("}}"))
                     for piece in template.split("{{"))


def context(site: RaiseSite, lines: Sequence[str] | None = None) -> tuple[str, ...]:
    """Up to `CONTEXT_LINES` lines of the function on each side of the raise, stripped, each with
    a word: a line of brackets alone (`):`, `]`) closes code in any function, and two unrelated
    raises in jax shared one (`):`) that made their code look a fifth alike. `lines`: the
    snippet's lines, when they are at hand."""
    lines = site.snippet.splitlines() if lines is None else lines
    start, end = site.line - site.snippet_line, site.end_line - site.snippet_line + 1
    before = [line.strip() for line in lines[max(0, start - 2 * CONTEXT_LINES):max(0, start)]]
    after = [line.strip() for line in lines[end:end + 2 * CONTEXT_LINES]]
    before = [line for line in before if _WORD.search(line)][-CONTEXT_LINES:]
    after = [line for line in after if _WORD.search(line)][:CONTEXT_LINES]
    return (*before, *after)


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _lines_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    if not a or not b:
        return 0.0  # no code to compare is no evidence
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio() if matcher.real_quick_ratio() > 0 else 0.0


def _qualname_score(old: str, new: str) -> float:
    if old == new:
        return 0.5 if old == "<module>" else 1.0
    return 0.5 if old.rsplit(".", 1)[-1] == new.rsplit(".", 1)[-1] else 0.0


def _condition_score(old: str | None, new: str | None) -> float:
    if old is None or new is None:
        return 0.5 if old == new else 0.0
    return 1.0 if old == new else similarity(old, new)


def _exception(site: RaiseSite) -> str:
    return site.exception_qualname or site.exception
