"""How lookup answers a paste: each record's wording tried on it, scored, ordered, trusted or not.

A `Wording` is one template of one record with what lookup shows of the record: the same type
whether it was read from record files, from the stored index (`lookup_index`) or from an SQLite
export, so the three rank alike and print the same keys. What the user pasted is read once
(`paste.read_paste`): every exception it reports, the last raised first, with its class and
the texts to try. `rank` asks a `Source` for candidates (the wordings whose longest literal run
is in a text, those sharing the most words with it, and the raises of the function the deepest
catalogued frame names) and fits each (`matching`):

- `exact`: the record's regex takes the whole text, or the template does loosely (line breaks
  and spaces left out, URLs alike); `exact prefix`: the paste stops inside the template (cut
  short, the class's `See ...` line missing); `closest`: only its literal words, in order;
- `explained`: the share of the paste's characters the template's literal text accounts for;
  `coverage`: the share of the template's literal text the paste shows; `score`: the two's
  harmonic mean, plus 0.1 when the record raises the pasted class (0.05 a subclass or a base of
  it), less 0.05 for each exception reported after the last one;
- a match is *confident* when it is exact or an exact prefix, finds at least 12 literal
  characters (or the whole template), and explains at least half of the paste
  (CONFIDENT_EXPLAINED) or fits the whole text at the function the paste's traceback names
  (`places`); the frames withdraw it when they show the raise was elsewhere (`_Places`);
- records whose message is only a variable are found by the traceback's place (`place`) or by
  the class the paste names, when the repository defines it (`class`); a class no raise names
  (or none that fits the text) by the raises of a class held in a variable (`_by_class`);
- order: confident first (the paste's last exception first, the record's own regex before a
  loose fit, what its frames say of the place, exact before exact prefix), then templates
  that fit the whole text but explain too little of it (still `exact`: every literal piece in
  place, at least 12 characters), then the score, the more specific template (more literal
  characters), a live record before a removed one. Equal in all of these: a tie (today's
  wording before a past one only orders it); a found answer whose first place is shared is
  that group (`Answer.group`), and so is a whole fit with the templates whose first sentences
  the paste is (`_head_tie`).

The answer's verdict: FOUND when the first match is confident (the command's exit 0); else
CLOSEST when the best scores at least NEAR_SCORE or a template fits the whole text; else NONE:
no raise site of the catalogued repositories prints this message. Every regex runs bounded
(`crawler.regexes`): the queries' backtracking patterns share LOOKUP_SECONDS, and one that runs
out is counted (`Answer.timed_out`), never waited for.

Lookup by the wordings records had in past releases (`history.templates`, `crawler history`).

A user pastes what their installed version printed, often several releases old. Each past
wording of a record becomes one more wording lookup tries (`ranking.wordings`): its template read
back into a regex as the crawler builds any (`releases.wording_template`), so it runs in linear
time. A removed record is found by every wording it had and marked with the
release it was last in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from crawler.regexes import BoundedRegex, Budget, RegexTimeout
from crawler.serve.lookup.literal_text import literal_runs
from crawler.serve.lookup.matching import (
    CLOSEST,
    EXACT,
    PREFIX,
    SAME,
    VARIABLE,
    Fit,
    PasteWords,
    kinship,
    loose_match,
    paste_matcher,
    plain,
    plain_regex,
    repeated_placeholders,
    repeats_agree,
    sentence_heads,
    squash,
    template_beginning,
    template_pieces,
    template_regex,
    word_overlap,
    words,
)
from crawler.serve.lookup.paste import Frame, Paste, Reported, read_paste
from crawler.serve.lookup.places import (
    FUNCTION,
    LINE,
    NOWHERE,
    STACK,
    Evidence,
    deepest_frame,
    evidence_of,
    file_name,
    function_name,
    in_file,
    moved_frame,
    moved_within_package,
    names_function,
)
from crawler.serve.lookup.rarity import Rarity

if TYPE_CHECKING:
    from crawler.records import ErrorRecord, TemplateSpan


_WORD = re.compile(r"\w+")


_PLACEHOLDER = re.compile(r"(?<!\{)\{(?!\{)[^{}]*\}")


REMOVED = "removed"  # `records.REMOVED`: lookup answers without importing the records
CLOSEST_CANDIDATES = 50  # per repository: the wordings sharing most words with a paste


MAX_REPORTS = 6  # exceptions of one paste tried (a chain, a group's members)


LOOKUP_SECONDS = 0.5  # the backtracking regexes of one query, together


# The longest text a backtracking regex is tried on (the loose fit decides beyond), and a
# candidate's literal run is looked for in (beyond: in its first and last halves of it)
WINDOW = 16_384




CONFIDENT_EXPLAINED = 0.5


MIN_LITERAL = 12


NEAR_SCORE = 0.3


REPORT_PENALTY = 0.05


_KIN_BONUS = {SAME: 0.1, "subclass": 0.05, "superclass": 0.05}


@dataclass(frozen=True)
class Wording:
    """One template of one record, with what lookup shows of the record."""

    record_id: str
    repo: str
    status: str
    removed_in: str | None  # the commit the site left in, while removed
    exception: str  # as written at the raise
    exception_qualname: str | None
    path: str
    line: int
    qualname: str
    kind: str
    template: str
    placeholders: tuple[str, ...]
    regex: str
    url: str | None
    # A wording the record had in past releases (`crawler history`), not the one it has now:
    past: bool = False
    first_release: str | None = None  # the first release that printed it
    last_release: str | None = None  # the last; None: still printed (never for a removed record)
    today: str | None = None  # what a live record's message reads now
    gone_after: str | None = None  # a removed record's last release, whichever wording matched

    # Worked out when first asked (a lookup asks a few hundred of thousands of wordings):
    @cached_property
    def exception_name(self) -> str:
        """The class's own name, which a traceback line shows (`KeyError`, `BadThing`)."""
        return (self.exception_qualname or self.exception).rpartition(".")[2]

    @cached_property
    def required(self) -> str:
        """The longest literal run of the regex: in every message it matches ("" if unknown)."""
        runs = literal_runs(self.regex)
        return plain(max(runs, key=len)) if runs else ""

    @cached_property
    def literal_text(self) -> str:
        """The template without its placeholders, for closeness."""
        return plain(_PLACEHOLDER.sub(" ", self.template).replace("{{", "{").replace("}}", "}"))


def wordings(record: ErrorRecord) -> list[Wording]:
    """The wordings lookup tries for a record: its current template, then each wording it had
    in past releases (`history.templates`, written by `crawler history`), read back into a
    regex of the crawler's own linear shape."""
    site = record.site
    removed_in = record.history.removed_in if record.history else None
    now = Wording(record.id, record.repo, record.status, removed_in, site.exception,
                  site.exception_qualname, site.path, site.line, site.qualname,
                  site.message.kind, site.message.template, site.message.placeholders,
                  site.message.regex, record.url)
    return with_past_wordings(now, past_wordings(record))


@dataclass(frozen=True)
class Match:
    """One record's wording for a paste: how it fits, how much it explains, its place."""

    wording: Wording
    kind: str  # matching.EXACT, PREFIX or CLOSEST
    explained: float  # the share of the paste the template's literal text accounts for
    coverage: float  # the share of the template's literal text the paste shows
    score: float  # what the order reads: explained and coverage together, the class's kinship
    kinship: str | None  # how the record's class stands to the pasted one (None: none pasted)
    confident: bool  # the template's own words explain the paste: it may be the answer
    text: str  # the pasted text it was matched on
    captures: dict[str, str] = field(default_factory=dict)
    loose: bool = False  # fitted with whitespace and URLs left out, not by the record's regex
    report: int = 0  # which exception of the paste: 0 the last raised, 1 the one before...
    cut_prefix: bool = False  # the paste, cut short (`...`), is the template's beginning
    # the paste is the template's first sentences or lines, whole (a title, a first line): the
    # literal characters of those (`_head_tie`); 0 otherwise
    head: int = 0
    rank: int = 0  # 1 for the best; equal for ties
    tie: bool = False  # another match has the same place
    # the record's other wordings the paste fits too (a release printed either): their spans
    # are as true of the paste as the one shown
    also: tuple[Wording, ...] = ()
    # what the paste's traceback says of the record's place (`places`): LINE, FUNCTION, STACK
    where: Evidence = NOWHERE
    # a removed record's likeliest successor among the live records the paste brought up: the
    # same class raised by a function of the same name, or the same words
    successor: Wording | None = None
    # trusted only for a rare phrase it fits whole (`rarity`), not for the share it explains
    by_rarity: bool = False

    @property
    def exact(self) -> bool:
        """The template fits the paste (whole or as its beginning) and explains it."""
        return self.kind != CLOSEST

    @property
    def same_exception(self) -> bool:
        return self.kinship == SAME


@dataclass(frozen=True)
class Answer:
    """The records for a paste, what the paste was read as, and whether one is the answer:
    `verdict` is FOUND (a confident match first), CLOSEST (only close ones) or NONE."""

    matches: tuple[Match, ...]
    timed_out: tuple[str, ...] = ()
    paste: Paste | None = None
    verdict: str = "none"
    # how many records share the first place when nothing in the paste tells them apart (they
    # print the same words): the answer is that group, not one of them; 1 otherwise
    group: int = 1

    @property
    def found(self) -> bool:
        """A template explains the paste: the lookup's exit 0."""
        return self.verdict == FOUND


FOUND, NEAR, NONE = "found", "closest", "none"


NO_SITE = ("no raise site of the catalogued repositories prints this message (it may come from "
           "compiled code or another library)")


class Source(Protocol):
    """Where the wordings come from: record files, the stored index, an SQLite export."""

    def exception_names(self) -> frozenset[str]: ...

    def containing(self, texts: Sequence[str]) -> Iterable[Wording]:
        """Every wording whose required literal run is in one of `texts` (a superset is fine)."""
        ...

    def sharing_words(self, words: frozenset[str], limit: int) -> list[Wording]:
        """The `limit` wordings whose literal text shares the most of `words` (lowercase)."""
        ...

    def in_files(self, names: frozenset[str]) -> Iterable[Wording]:
        """The current wording of every record whose file is named one of `names` (its last
        path component, as a traceback's frame shows it; lower case matches too)."""
        ...

    def raising(self, names: frozenset[str]) -> Iterable[Wording]:
        """The current wording of every record that raises a class of one of these names."""
        ...

    def holding(self, words: frozenset[str]) -> int:
        """How many records hold all these words (lowercase) in their literal text, any of
        their wordings counted: how rare a phrase of them is (`rarity`)."""
        ...


def rank(pasted: str, source: Source, limit: int = 10,
         bases: Mapping[str, Sequence[str]] | None = None, left_out: int = 0) -> Answer:
    """The records for what a user pasted, best first, at most `limit`, each exception the
    paste reports tried (the last raised first). `bases`: the repositories' classes to their
    bases, for kinship; `left_out`: characters of the paste its reader did not keep (its
    beginning, `paste.cut_paste`). See the module's docstring for the order and the thresholds.

    What it costs is bounded whatever the paste: it is read to MAX_PASTE characters; the
    candidates come from the source's index (a wording's literal run, its words), never from
    every record tried on the paste; a template without literal text is not tried (it explains
    nothing); a record's regex of the crawler's linear shape runs in time linear in the text and
    what it explains is counted on its literal runs alone, and any other regex runs on a text
    of WINDOW characters at most, within LOOKUP_SECONDS; literal runs are looked for in a
    window of each text (`_windows`); words are compared on the paste's first
    `matching.MAX_WORDS`."""
    paste = read_paste(pasted, left_out)
    best: dict[str, Match] = {}
    stops: dict[str, Match] = {}  # records of the function the deepest catalogued frame is in
    fits: dict[str, dict[str, Wording]] = {}  # each record's wordings the paste fits exactly
    timed_out: dict[str, None] = {}
    budget = Budget(LOOKUP_SECONDS)
    rarity = Rarity(source.holding)
    for order_of_report, reported in enumerate(paste.reported[:MAX_REPORTS]):
        # each text read once (squashed, its words), each class's kinship found once
        readings = [_Reading(text, squash(text), found, paste_matcher(found), "://" in text)
                    for text, found in ((text, words(text)) for text in reported.texts)]
        kin = _Kinship(reported.exception, bases or {})
        placed = _Places(reported.frames, source, reported.whole, reported.raised_last,
                         reported.filtered)
        found, placed_only = _candidates(reported, source, readings,
                                         placed.in_raising_function())
        for wording in found:
            if _explains_nothing(wording):
                continue
            where = placed.evidence(wording)
            for reading in readings:
                try:
                    match = _fit(wording, reported, reading, budget, kin.of(wording),
                                 order_of_report, where, rarity)
                except RegexTimeout:
                    timed_out[wording.record_id] = None
                    continue
                # a raise found by its place alone is kept where the text is its beginning
                # or all of it, not for words it shares (the place would rank them first)
                if match is not None and not (match.kind == CLOSEST and _key(wording) in placed_only):
                    if match.confident and not placed.may_have_raised(where, wording):
                        match = replace(match, confident=False)
                    _keep(match, best, fits)
        for wording, where in placed.raised_here():
            # a raise of another class at that place did not raise what was pasted, nor did
            # one whose function called what raised it (werkzeug's `_get_current_object`
            # calling flask's `_lookup_req_object`, the last frame)
            if wording.record_id not in best and kin.of(wording) in (SAME, VARIABLE, None) \
                    and placed.may_have_raised(where, wording):
                _keep(_placed_match(wording, reported, kin.of(wording), order_of_report, where),
                      best, fits)
        for match in _by_class(reported, source, bases or {}, kin, placed, order_of_report,
                               best):
            if match.wording.record_id not in best:
                _keep(match, best, fits)
        for wording, where in placed.in_deepest_function():
            stops.setdefault(wording.record_id, Match(
                wording, CLOSEST, 0.0, 0.0, 0.0, kin.of(wording), False, reported.text,
                report=order_of_report, where=where))
    ranked = _head_tie(_placed(sorted((_with_also(m, fits.get(k, {})) for k, m in best.items()),
                                      key=order)))
    ranked = _with_successors(ranked, [m.wording for m in best.values()])
    group = 1
    if ranked and ranked[0].confident:
        verdict = FOUND
        # what fits the paste, not the closest after it: an exact answer is followed only by
        # what fits too and by close templates of the class the paste names
        ranked = [match for match in ranked if match.exact or match.same_exception]
        group = sum(1 for match in ranked if match.rank == 1)
    elif any(match.score >= NEAR_SCORE or match.exact for match in ranked):
        # a template the text fits whole (every literal piece in place, MIN_LITERAL characters
        # at least) is listed however long the run-time part around its words: never "no
        # raise site prints this", though not trusted
        verdict = NEAR
    elif stops:
        # nothing fits, but the traceback goes through the catalogued code: never "not from
        # here"; the raises of the function it was last in are the closest there is
        verdict, ranked = NEAR, _placed(sorted(stops.values(), key=order))
    else:
        verdict, ranked = NONE, []
    return Answer(tuple(ranked[:limit]), tuple(timed_out), paste, verdict, group)


def _head_tie(ranked: list[Match]) -> list[Match]:
    """A paste a template fits whole that is also other templates' first sentences, shown
    alike (the same literal characters of the paste, the same place; live as the whole fit
    is, or removed): a title or a first line reads as any of them, and nothing in the paste
    tells them apart. They share the first place."""
    if not ranked or not ranked[0].confident or ranked[0].kind != EXACT:
        return ranked
    top = ranked[0]
    heads = {number for number, match in enumerate(ranked) if match.rank > 1
             and match.confident and match.head and match.report == top.report
             and match.where == top.where and match.explained == top.explained
             and match.loose == top.loose and match.kinship == top.kinship
             and (match.wording.status == REMOVED) == (top.wording.status == REMOVED)}
    if not heads:
        return ranked
    first = [replace(match, tie=True) for match in ranked if match.rank == 1]
    tied = [replace(ranked[number], rank=1, tie=True) for number in sorted(heads)]
    rest = [match for number, match in enumerate(ranked) if match.rank > 1 and number not in heads]
    return [*first, *tied, *rest]


def _with_successors(ranked: list[Match], found: Sequence[Wording]) -> list[Match]:
    """Each removed record's match with its likeliest successor among the live records the
    paste brought up (`Match.successor`), shown with it: the raise moved, was reworded, or both
    between two releases, and the walk could not pair the two."""
    live = [w for w in found if w.status != REMOVED and not w.past]
    out = []
    for match in ranked:
        gone = match.wording
        if gone.status == REMOVED:
            heir = next((w for w in live if _succeeds(gone, w)), None)
            if heir is not None:
                match = replace(match, successor=heir)
        out.append(match)
    return out


def _succeeds(gone: Wording, live: Wording) -> bool:
    """Whether a live record reads as a removed one's successor: the same class, and the same
    function's name (the file moved) or the same literal words (the function was renamed)."""
    if live.exception_name != gone.exception_name:
        return False
    return function_name(live.qualname) == function_name(gone.qualname) or \
        live.literal_text.split() == gone.literal_text.split()


def _keep(match: Match, best: dict[str, Match], fits: dict[str, dict[str, Wording]]) -> None:
    """A record's match kept if it is its best yet; its wording noted if it fits exactly."""
    key = match.wording.record_id
    if match.exact:
        fits.setdefault(key, {}).setdefault(match.wording.template, match.wording)
    if key not in best or order(match) < order(best[key]):
        best[key] = match


class _Kinship:
    """How each class a record raises stands to the class a report names, found once."""

    def __init__(self, pasted: str | None, bases: Mapping[str, Sequence[str]]) -> None:
        self.pasted = pasted
        self.bases = bases
        self.found: dict[str, str | None] = {}

    def of(self, wording: Wording) -> str | None:
        raised = wording.exception_qualname or wording.exception
        if raised not in self.found:
            self.found[raised] = kinship(self.pasted, raised, self.bases)
        return self.found[raised]


class _Places:
    """A report's frames read against the catalogue's files, once per report: the last frame in
    a catalogued file (`places.deepest_frame`), and what the frames say of each record."""

    def __init__(self, frames: Sequence[Frame], source: Source, whole: bool = False,
                 raised_last: bool = False, filtered: bool = False) -> None:
        self.frames = tuple(frames)
        self.here: list[Wording] = []
        self.deepest: Frame | None = None
        self.outside = False  # a whole traceback without a catalogued frame
        self.raised_inside = False
        self.raised_elsewhere = False
        if not self.frames:
            return
        names = frozenset(file_name(frame.path) for frame in self.frames) - {""}
        self.here = list(source.in_files(names))
        self.deepest = deepest_frame(self.frames, (w.path for w in self.here)) or \
            moved_frame(self.frames, self.here)
        self.outside = whole and self.deepest is None
        # the paste's last frame, where the exception was raised, is in a catalogued file (not
        # known where frames were left out: the last one shown may be a caller's)
        self.raised_inside = raised_last and not filtered and self.deepest is not None and \
            self.deepest is self.frames[-1]
        # ... or in a Python file of no catalogued repository (docker-pycreds' `store.py`
        # printing docker-py's words, Python's `ssl.py` urllib3's): what a record raises did not
        # raise it, though the catalogued code may have called what did. A frame that is no
        # Python file (jinja's `File "<unknown>", line 8, in template`, a template's own
        # frame put last) says nothing of where Python raised it.
        self.raised_elsewhere = raised_last and not filtered and \
            self.deepest is not self.frames[-1] and \
            _PYTHON_FILE.search(self.frames[-1].path) is not None

    def evidence(self, wording: Wording) -> Evidence:
        if self.deepest is None:
            return NOWHERE
        return evidence_of(wording.path, wording.qualname, wording.line, self.frames, self.deepest)

    def may_have_raised(self, where: Evidence, wording: Wording | None = None) -> bool:
        """Whether the frames leave a record with this evidence as the raise: not when a whole
        traceback has no catalogued frame (Python, a C extension or another library raised
        it), nor when the last frame, where it was raised, is a catalogued function that is
        not the record's, unless that frame's source line shows the record's raise (its
        class or a piece of its words: the function was renamed or moved since the user's
        release)."""
        if self.raised_elsewhere:  # unless the last frame reads as the record's file moved
            return wording is not None and _last_frame_is(self.frames[-1], wording)
        if self.outside:
            return False
        if not self.raised_inside or where >= FUNCTION:
            return True
        return wording is not None and _shows_raise(self.frames[-1].source, wording)

    def in_raising_function(self) -> list[Wording]:
        """The records (current wordings) of the function the deepest catalogued frame is in."""
        return [w for w in self.here if self.evidence(w) >= FUNCTION]

    def in_deepest_function(self) -> list[tuple[Wording, Evidence]]:
        """The records of the function the deepest catalogued frame is in; if it raises
        nothing, of the next catalogued frame's up the stack that does (the error went
        through it: a frame of the repository is never "not from here")."""
        found = [(w, where) for w in self.here if (where := self.evidence(w)) >= FUNCTION]
        if found or self.deepest is None:
            return found
        below = max(n for n, frame in enumerate(self.frames) if frame is self.deepest)
        for frame in reversed(self.frames[:below]):
            found = [(w, STACK) for w in self.here
                     if in_file(w.path, frame.path) and names_function(w.qualname, frame)]
            if found:
                return found
        return []

    def raised_here(self) -> list[tuple[Wording, Evidence]]:
        """The records whose message is only a variable (no words to find it by) that the
        deepest catalogued frame names: the one at its line, or else every such record of its
        function (the line is another release's), which share the first place when there are
        several (pymongo's `_resolve_uri` in its `synchronous/` and `asynchronous/` files, for
        a frame of `pymongo/srv_resolver.py` before they were split)."""
        variable = [w for w in self.here if _explains_nothing(w)]
        found = [(w, where) for w in variable if (where := self.evidence(w)) >= FUNCTION]
        at_line = [pair for pair in found if pair[1] == LINE]
        return at_line or found


_PYTHON_FILE = re.compile(r"\.pyw?$", re.IGNORECASE)


def _last_frame_is(frame: Frame, wording: Wording) -> bool:
    """Whether a frame in no catalogued file reads as the record's function in its file moved
    within its package since the user's release (`places.moved_within_package`)."""
    return moved_within_package(wording.path, frame.path) and names_function(wording.qualname, frame)


def _shows_raise(source: str | None, wording: Wording) -> bool:
    """Whether a frame's source line is the record's raise: `raise` of its class, or a string
    literal of it (up to its format fields) that is in the record's template (a raise written
    over several lines shows its last line)."""
    if not source:
        return False
    if re.search(rf"\braise\s+(?:[\w.]+\.)?{re.escape(wording.exception_name)}\b", source):
        return True
    pieces = [piece for piece in _pieces(wording.template) if piece is not None]
    shown = (squash(part) for literal in _STRING.findall(source)
             for part in _FORMAT_FIELD.split(literal[1:-1]))
    return any(len(part) >= _MIN_SHOWN and any(part in piece for piece in pieces)
               for part in shown)


_STRING = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a string literal of a source line, roughly
_FORMAT_FIELD = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|\{[^{}]*\}")
_MIN_SHOWN = 8  # a shorter piece of text is in too many source lines to say which raise


PLACE = "place"  # found by the traceback's line alone: the record's message is only a variable
CLASS = "class"  # found by the pasted class alone: the record's message is only a variable
_NAMED = re.compile(r"\b([A-Z]\w*[a-z]\w*)(?=: )")  # a class's name before its message


def _by_class(reported: Reported, source: Source, bases: Mapping[str, Sequence[str]],
              kin: _Kinship, placed: _Places, order_of_report: int,
              best: Mapping[str, Match]) -> list[Match]:
    """The records whose message is only a variable that may have raised the class the paste
    names, when the class is one the catalogued repositories define (Python's own classes are
    raised everywhere): the class is all there is to find them by.

    - No raise of it has words (those the text would have found): the raises of it. The answer
      when one record raises that class; else they are listed together, none picked.
    - No raise names it, or none of those that do fits the text: the raises of a class held in
      a variable (`raise mapped_exc(message) from exc`, a factory of that class), listed with
      the closest (kinship `variable`); the answer only where the traceback names the
      function of the one such raise."""
    if reported.exception is not None:
        names = {reported.exception.rpartition(".")[2]}
    else:  # a class named inside a title's prose: `celery 3.0.19 - NotRegistered: 'x'`
        names = set(_NAMED.findall(reported.text[:WINDOW]))
    names = {name for name in names if name in bases}
    if not names:
        return []
    raising = list(source.raising(frozenset(names)))
    found = [w for w in raising if _explains_nothing(w)]
    if raising and len(found) == len(raising):
        named = []
        for wording in found:
            where = placed.evidence(wording)
            confident = len(raising) == 1 and placed.may_have_raised(where)
            named.append(Match(wording, CLASS, 0.0, 1.0, 0.4, kin.of(wording), confident,
                               reported.text, report=order_of_report, where=where))
        return named
    if any(w.record_id in best and best[w.record_id].exact for w in raising):
        return []  # a raise that names the class fits the text
    pasted = min(names)
    variable = [w for w in _raising_variables(source)
                if kinship(pasted, w.exception_qualname or w.exception, bases) == VARIABLE
                and _explains_nothing(w) and _factory_of(w) in (None, *names)]
    matches = []
    for wording in variable:
        where = placed.evidence(wording)
        confident = len(variable) == 1 and where >= FUNCTION and placed.may_have_raised(where)
        matches.append(Match(wording, CLASS, 0.0, 1.0, 0.4, VARIABLE, confident, reported.text,
                             report=order_of_report, where=where))
    return matches


def _raising_variables(source: Source) -> list[Wording]:
    """The current wording of every record that raises a class held in a variable (`raise
    mapped_exc(message)`, `raise cls(...)`) or made by a factory (`raise
    Undefined.from_name_error(e)`): a lowercase name, as `matching.kinship` reads it."""
    names = frozenset(name for name in source.exception_names() if name[:1].islower())
    return list(source.raising(names)) if names else []


def _factory_of(wording: Wording) -> str | None:
    """The class whose factory a raise calls (`Undefined` of `Undefined.from_name_error(e)`;
    None for a plain variable): what it raises is that class."""
    owner = (wording.exception_qualname or wording.exception).rpartition(".")[0]
    owner = owner.rpartition(".")[2]
    return owner if owner[:1].isupper() else None


def _placed_match(wording: Wording, reported: Reported, kin: str | None,
                  order_of_report: int, where: Evidence) -> Match:
    """A record whose message is only a variable, where the paste's last catalogued frame is:
    confident when it raises the pasted class, or a class held in a variable (nothing else of
    it can be checked)."""
    confident = kin in (SAME, VARIABLE)
    score = 0.5 + (_KIN_BONUS.get(kin, 0.0) if kin else 0.0) - REPORT_PENALTY * order_of_report
    return Match(wording, PLACE, 0.0, 1.0, round(score, 3), kin, confident, reported.text,
                 report=order_of_report, where=where)


def _with_also(match: Match, fitting: Mapping[str, Wording]) -> Match:
    """The match, with the record's other wordings that fit the paste exactly."""
    others = tuple(w for template, w in fitting.items() if template != match.wording.template)
    return replace(match, also=others) if others else match


@dataclass(frozen=True)
class _Reading:
    """A pasted text as every wording is fitted to it, worked out once."""

    text: str
    squashed: str  # `matching.squash`
    words: list[str]
    matcher: PasteWords  # `matching.paste_matcher`
    has_url: bool  # `squash` reads a URL as one token, so it is not additive over its parts


def _candidates(reported: Reported, source: Source, readings: Sequence[_Reading],
                placed: Iterable[Wording] = ()
                ) -> tuple[list[Wording], frozenset[tuple[str, str, str]]]:
    """The wordings whose longest literal run the paste holds (any line break read as a space
    or as nothing), those sharing the most words with it, and `placed`: the raises of the
    function the traceback names (a message cut short holds no whole run of them); with the
    keys (`_key`) of those only `placed` brought."""
    texts = [variant for text in reported.texts for part in _windows(text)
             for variant in (part, part.replace("\n", " "), part.replace("\n", ""))]
    found = {_key(w): w for w in source.containing(list(dict.fromkeys(texts)))}
    shared = frozenset(w for reading in readings for w in reading.words)
    for wording in source.sharing_words(shared, CLOSEST_CANDIDATES):
        found.setdefault(_key(wording), wording)
    placed_only = frozenset(_key(w) for w in placed) - found.keys()
    for wording in placed:
        found.setdefault(_key(wording), wording)
    return list(found.values()), placed_only


def _windows(text: str) -> tuple[str, ...]:
    """Where candidates' literal runs are looked for in a text: all of it up to WINDOW
    characters; in a longer one (a message is not that long: a placeholder's value is), its
    beginning and its end, where a template's literal text is around such a value."""
    if len(text) <= WINDOW:
        return (text,)
    return text[:WINDOW // 2], text[-(WINDOW // 2):]


def _key(wording: Wording) -> tuple[str, str, str]:
    return (wording.repo, wording.record_id, wording.template)


def _fit(wording: Wording, reported: Reported, reading: _Reading, budget: Budget,
         kin: str | None, order_of_report: int, where: Evidence = NOWHERE,
         rarity: Rarity | None = None) -> Match | None:
    """The wording against one pasted text: its regex, else loosely, else by its words.
    `kin`: how the record's class stands to the pasted one (`matching.kinship`); `where`: what
    the paste's frames say of its place (`places`): a template that fits the whole text at the
    function the traceback names is the answer however little of the text it explains; so is
    one that fits it whole with a rare phrase (`rarity`), while a share of the text explained
    by phrases every library prints is not trusted."""
    text, squashed, text_words, matcher = (reading.text, reading.squashed, reading.words,
                                           reading.matcher)
    captures: dict[str, str] = {}
    fit = _regex_fit(wording, reading, budget, captures)
    loose = fit is None
    if fit is None:
        fit = loose_match(_pieces(wording.template), squashed, _repeats(wording.template))
    if fit is not None and reported.cut and fit.kind == EXACT and fit.coverage < 1:
        fit = Fit(PREFIX, fit.literal, fit.paste, fit.template)
    head = 0
    if fit is not None and fit.kind == PREFIX and not reported.cut:
        head, loose_head = _head_fitted(wording.template, reading, budget)
        loose = loose_head if head else loose
    # a template that fits the whole text but explains too little of it is scored by its words,
    # yet stays `exact`: `_place` puts it before templates that only share words
    whole = fit is not None and fit.kind == EXACT and fit.literal >= MIN_LITERAL
    if fit is None or fit.explained < CONFIDENT_EXPLAINED:
        by_words = word_overlap(_template_words(wording.template), text_words, matcher)
        fit = replace(by_words, kind=EXACT) if whole else by_words
        captures = {}
    if fit.literal == 0:
        return None
    trust = _trust(wording, fit, whole, where, rarity) \
        if fit.kind != CLOSEST and fit.literal >= min(MIN_LITERAL, fit.template) else None
    confident = trust is not None
    both = 2 * fit.explained * fit.coverage / (fit.explained + fit.coverage)
    cut_prefix = fit.kind == PREFIX and reported.cut
    if cut_prefix:  # the tool cut the paste there: what the template goes on is unseen, not
        both = fit.explained  # missing (how much it shows orders templates alike: `_place`)
    score = both + (_KIN_BONUS.get(kin, 0.0) if kin else 0.0) - REPORT_PENALTY * order_of_report
    return Match(wording, fit.kind, round(fit.explained, 3), round(fit.coverage, 3),
                 round(score, 3), kin, confident, text, captures, loose, order_of_report,
                 cut_prefix=cut_prefix, where=where, head=head, by_rarity=trust == _RARE)


_PLACED, _SHARE, _RARE = "place", "share", "rare"


def _trust(wording: Wording, fit: Fit, whole: bool, where: Evidence,
           rarity: Rarity | None) -> str | None:
    """What earns a fit trust, if anything: the traceback names the function of a template
    that fits the whole text (_PLACED); the template explains at least half of the text with a
    phrase that not every library prints (_SHARE; without `rarity`, the share alone); it fits
    the text whole and holds a rare phrase, however long the run-time part around it (_RARE:
    weaker than a share, see `_place`)."""
    if whole and where >= FUNCTION:
        return _PLACED
    # a paste that is the template's beginning earns it by the words it shows, not by those
    # the template goes on with (urllib3's `Failed to parse`, the beginning of seven templates)
    shown = template_beginning(wording.template, fit.literal) if fit.kind == PREFIX \
        else wording.template
    if fit.explained >= CONFIDENT_EXPLAINED and (rarity is None or rarity.has_uncommon(shown)):
        return _SHARE
    if whole and rarity is not None and rarity.has_rare(wording.template):
        return _RARE
    return None


def _regex_fit(wording: Wording, reading: _Reading, budget: Budget,
               captures: dict[str, str]) -> Fit | None:
    """The record's own regex on the whole text: exact, its captures kept. A regex of the
    crawler's linear shape on any text; another on WINDOW characters at most."""
    text, squashed = reading.text, reading.squashed
    if wording.template.endswith("\n") and not text.endswith("\n"):
        text += "\n"  # str(exc) ends in a line break that a paste, read line by line, drops
    pattern = _compiled(wording.regex)
    if pattern is None or (pattern.shape is None and len(text) > WINDOW):
        return None
    if len(text) <= WINDOW and wording.required not in text:  # a quick no; beyond, the linear
        return None  # shape's own test is quicker: the text's two ends against the runs
    found = pattern.fullmatch(text, budget.left())
    if found is None or (pattern.shape is not None
                         and not _repeats_held(wording.template, text, found.spans)):
        return None
    template = sum(len(p) for p in _pieces(wording.template) if p is not None)
    if pattern.shape is not None and (not reading.has_url or len(text) > WINDOW):
        # the text outside the groups is the regex's literal runs: squashing (whitespace left
        # out) is additive where no URL is, so they alone count what the template explains
        # (beyond WINDOW, a URL across a group's edge may count its characters apart)
        ends = [0, *(edge for span in found.spans for edge in span), len(text)]
        literal = sum(len(squash(text[ends[n]:ends[n + 1]])) for n in range(0, len(ends), 2))
    else:
        captured = "".join(text[start:end] for start, end in found.spans if start >= 0)
        literal = len(squashed) - len(squash(captured))
        if pattern.shape is None:
            # a group the regex repeats (a part the template repeats, `(?: ([\s\S]*?))*` of a
            # join) reports its last round only, so what the other rounds took would count as
            # literal: no more than the template's own literal text is explained (gunicorn's
            # header folding `{value.strip(" \t")} {curr.strip("\t ")}`, one space of literal
            # text, took any log line as a whole fit)
            literal = min(literal, template)
    captures.update(found.captures)
    return Fit(EXACT, max(literal, 0), len(squashed), max(template, literal, 1))


def _repeats_held(template: str, text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether the texts a regex's groups took at a placeholder the template writes more than
    once agree (`matching.repeats_agree`); a regex of the crawler's linear shape whose groups
    are not the template's placeholders one to one is not held to it."""
    repeats = _repeats(template)
    if not repeats or len(spans) != _placeholder_count(template):
        return True
    for places in repeats:
        shown = [text[spans[place][0]:spans[place][1]] for place in places
                 if place < len(spans) and spans[place][0] >= 0]
        if len(shown) > 1 and not repeats_agree(shown):
            return False
    return True


_REPEATS: dict[str, tuple[tuple[int, ...], ...]] = {}


def _repeats(template: str) -> tuple[tuple[int, ...], ...]:
    if template not in _REPEATS:
        _REPEATS[template] = repeated_placeholders(template)
    return _REPEATS[template]


def _placeholder_count(template: str) -> int:
    return sum(1 for piece in _pieces(template) if piece is None)


_HEADS: dict[str, list[tuple[list[str | None], str, tuple[tuple[int, ...], ...]]]] = {}


def _head_fitted(template: str, reading: _Reading, budget: Budget) -> tuple[int, bool]:
    """The literal characters of the template's first sentences or lines (`sentence_heads`)
    that a paste stopping inside the template fits whole, and whether it fits them only
    loosely (not by their regex, `template_regex`); 0 when it stops elsewhere."""
    if template not in _HEADS:
        _HEADS[template] = [(_pieces(head), template_regex(head), repeated_placeholders(head))
                            for head in sentence_heads(template)]
    for pieces, regex, repeats in _HEADS[template]:
        fit = loose_match(pieces, reading.squashed, repeats)
        if fit is not None and fit.kind == EXACT:
            pattern = _compiled(regex)
            exact = pattern is not None and pattern.shape is not None and \
                pattern.fullmatch(reading.text, budget.left()) is not None
            return fit.template, not exact
    return 0, True


_NOTHING: dict[tuple[str, str], bool] = {}


def _explains_nothing(wording: Wording) -> bool:
    """A template with no literal text (`{message}`) whose regex has none either: every fit
    of it finds no literal character, and `_fit` gives None for each paste; not tried."""
    key = (wording.template, wording.regex)
    if key not in _NOTHING:
        pattern = _compiled(wording.regex)
        _NOTHING[key] = (pattern is not None and pattern.shape is not None
                         and not any(squash(run) for run in pattern.shape.runs)
                         and not any(piece for piece in _pieces(wording.template))
                         and not _template_words(wording.template))
    return _NOTHING[key]


_PIECES: dict[str, list[str | None]] = {}


_WORDS: dict[str, list[str]] = {}


def _pieces(template: str) -> list[str | None]:
    if template not in _PIECES:
        _PIECES[template] = template_pieces(plain(template))
    return _PIECES[template]


def _template_words(template: str) -> list[str]:
    if template not in _WORDS:
        _WORDS[template] = words(plain(_PLACEHOLDER.sub(" ", template)))
    return _WORDS[template]


_COMPILED: dict[str, BoundedRegex | None] = {}


def _compiled(regex: str) -> BoundedRegex | None:
    """Compiled once per process, only when a message gets past the literal prefilter."""
    if regex not in _COMPILED:
        _COMPILED[regex] = BoundedRegex.compile(plain_regex(regex))
    return _COMPILED[regex]


_KIND_ORDER = {EXACT: 0, PREFIX: 1, PLACE: 2, CLASS: 2, CLOSEST: 3}


def _place(match: Match) -> tuple[object, ...]:
    """What makes two matches a tie: confidence, the exception of the paste (the last raised
    first), when confident the record's own regex before a loose fit (a loose fit reads the
    paste's spaces or a URL otherwise: the text itself tells the two apart, and the place
    decides only between records the text fits alike), what its traceback says of the record's
    place (its raise's line, its function, a frame above), the kind, the score, then how
    specific the template is: the more literal text the better; but for a cut paste that is a
    template's beginning, the more of the template it shows the better (a message cut at any
    point is likelier cut where this one was the shorter it is); then a live record before a
    removed one. Equal in all of these: a tie, which only the paste could
    decide (a site that prints the words today and one that printed them in an older release
    are both what a user of that release sees)."""
    wording = match.wording
    specific = -match.coverage if match.cut_prefix else \
        -sum(len(p) for p in _pieces(wording.template) if p is not None)
    # a frame above the raise's function (STACK) says the error went through it: no more
    # a reason to rank it than none
    where = -match.where if match.where >= FUNCTION else 0
    if match.confident:
        # a template trusted for a rare phrase alone comes after one that explains most of the
        # text: its placeholders may hold the words of the other (a first sentence's template
        # fits a paste of two sentences whole)
        return (False, match.report, match.loose, where, match.by_rarity,
                _KIND_ORDER[match.kind], -match.score, specific, wording.status == REMOVED)
    # the paste fits the template whole, or is its beginning, before templates that only share
    # words with it: every character of it in place is more than words met anywhere; a raise
    # of a class held in a variable may raise any class: it ranks by its score among the
    # closest, not before them
    kind = _KIND_ORDER[CLOSEST if match.kinship == VARIABLE and match.kind == CLASS
                       else match.kind]
    return (True, 0, where, False, kind, False, -match.score, specific,
            wording.status == REMOVED)


def order(match: Match) -> tuple[object, ...]:
    """`_place`, then within a tie today's wording before a past one, and where the record is,
    so the output is the same every time."""
    wording = match.wording
    return (*_place(match), wording.past, wording.repo, wording.path, wording.line)


def _placed(matches: list[Match]) -> list[Match]:
    """Each match with its rank; matches in the same place share it and are marked ties."""
    placed: list[Match] = []
    places = [_place(match) for match in matches]
    for match, place in zip(matches, places, strict=True):
        placed.append(replace(match, rank=places.index(place) + 1, tie=places.count(place) > 1))
    return placed


def shared_words(text: str) -> frozenset[str]:
    """The lowercase words closeness counts in a template's literal text."""
    return frozenset(word.lower() for word in _WORD.findall(text))


@dataclass(frozen=True)
class PastWording:
    """A wording a record had, and the releases that printed it."""

    template: str
    first: str | None  # the first release that printed it
    last: str | None  # the last one; None: the site still has it (a removed one: never)
    removed: bool  # the record is removed: `last` is the last release it was in


def past_wordings(record: ErrorRecord) -> list[PastWording]:
    """A record's wordings, each with the releases that printed it (spans of one template
    joined: the first release of the first, the last of the last); a live record's own one is
    still printed (no last release)."""
    spans: Sequence[TemplateSpan] = record.history.templates if record.history else ()
    return past_wordings_of(spans, record.status == REMOVED, record.site.message.template)


def past_wordings_of(spans: Sequence[TemplateSpan], removed: bool, current: str
                     ) -> list[PastWording]:
    """`past_wordings` of a record's spans, its status and its template, wherever they are
    read from (a record file, the SQLite export's `wordings` table)."""
    joined: dict[str, PastWording] = {}
    for span in spans:
        if not removed and span.template == current:
            # today's wording: the release it was first printed in (`with_past_wordings`)
            span = replace(span, last=None)
        if span.first is None and span.last is None and not removed:
            continue  # a wording no release printed
        held = joined.get(span.template)
        first = held.first if held is not None and held.first is not None else span.first
        joined[span.template] = PastWording(span.template, first, span.last, removed)
    return list(joined.values())


def with_past_wordings(now: Wording, past: Sequence[PastWording]) -> list[Wording]:
    """The wordings lookup tries for a record: `now`, its current template, then each past
    wording read back into a regex of the crawler's own linear shape. A removed record's last
    wording is its current one: `now` gains the releases that printed it."""
    from crawler.catalogue.releases import wording_template

    removed = [old for old in past if old.removed]
    if removed:  # the record's last release: its last wording's (spans are in release order)
        last = next((old.last for old in removed if old.template == now.template),
                    removed[-1].last)
        now = replace(now, gone_after=last)
    found = [now]
    for old in past:
        if old.template == now.template:
            found[0] = replace(now, first_release=old.first, last_release=old.last)
            continue
        read = wording_template(old.template)
        if read is None:
            continue  # braces that do not pair: a hand-edited record
        found.append(replace(now, template=old.template, placeholders=read.placeholders,
                             regex=read.regex, past=True, first_release=old.first,
                             last_release=old.last, today=None if old.removed else now.template))
    return found
