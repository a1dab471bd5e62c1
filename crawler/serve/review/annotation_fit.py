"""Does an annotation fit its record? One rule, which a sentence explains:

    Every record of the repository is scored by the annotation's code names and words that are
    among its facts, each weighed by how rare it is among the repository's records (inverse
    document frequency) times how many kinds of the record's facts hold it; the annotation is
    listed when another record scores at least twice what its own record does.

The record's facts are what the crawler knows of it, in six kinds: its message (the template's
names, and its words for the annotation's prose), its condition (counted twice: it is the
raise's own, and it stands in the snippet too), its snippet's code (strings, docstrings and
comments left out), where it is (function, class, qualified name; its module path's parts as
modules, which only a dotted name from the library's package names), its exception
(name, qualified name, its class's bases), and its entry points (the public calls users make,
with their call chains: `Client.get` is the record's own when the raise is reached through it).
What the annotation mentions is read as code (`annotation_names`); a name no record's facts hold
tells nothing and weighs nothing, however it is spelled.

Why it holds for any library: a name that many records hold (the package's name, `self.name`,
`jit` in jax) weighs little wherever it is, so a page naming the public call users make does not
point at another record; a name or word only a few records hold (their function, their
message's words) decides. Siblings, the raises of one function, share their snippet, where they
are and their entry points, so they are scored on what is theirs alone: the names and words of
their message (less their function's name and its words, every sibling's), their
placeholders, condition and exception, each weighed by its rarity and by how few they are
(`zone_weights`: a long message holds some of any page's words by chance). Of two siblings,
only what one holds and the other lacks tells them apart: what both hold is no evidence for
either, and a raise that holds nothing its sibling lacks (its message a variable the sibling's
condition names, or the same words) cannot be told from it by a page at all. One name or word
another record holds and the own record lacks is chance; two are needed (`MIN_LEAD`), or one name
shaped like code (`truncate_strings`, `ConnectionError`), which no two records share by chance.

What says nothing is no evidence: the function words of English (`when`, `with`, `does`:
`FUNCTION_WORDS`); a word of the page that a name of the own record says (`read` and `timeout`
of its `ReadTimeout`, `date` of its code's `date`), which the page says because it was written
for it; and a message's prose read as a name (`format` of "Unknown output format", which a page
calling `sqlparse.format` does not mean): a message's word is a name only when it is shaped like
code or its function's code names it, as a name or a string key (`options.get('reindent')`).

How sure: the margin, 1 - own / best, the share of the best record's score that the own record
lacks. Listed from `LISTED_MARGIN` (the best holds twice what the own record holds), "sure" from
`SURE_MARGIN` (three times): `crawler check` exits 1 on a sure finding, and lists a listed one
under it as a suspect (exit 0).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Collection, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from crawler.callgraph.entry_points import NOT_LIBRARY
from crawler.records import ErrorRecord, Manifest
from crawler.serve.review.annotation_names import (
    IDENTIFIER,
    KEYWORD_OF,
    LANGUAGE,
    STDLIB,
    WORD,
    Mentions,
    annotation_text,
    code_mentions,
)
from crawler.serve.review.fact_cache import FactCache

# Listed when another record holds, weighed by rarity, at least twice what the own record holds
# of the annotation's names: the own record's share is then the smaller part of what the two
# hold, so most of what the annotation names that either holds is the other's.
LISTED_MARGIN = 0.5

# Sure when the other record holds three times as much: the own record holds at most a third of
# it, one name in three where the page would name all of them if it were written for it.
SURE_MARGIN = 2 / 3

# What another record scores, in times what the own record scores, from which it can be listed:
# the score a margin of `LISTED_MARGIN` needs, less what rounding the margin to three places
# may add (a thousandth, to spare). `judge(listed_only=True)` looks no lower.
LISTED_BAR = 1 / (1 - (LISTED_MARGIN - 0.001))

# Another record fits better only by two names or words at least that the own record lacks: one
# name or word in common with another message is chance (`when`, `value` in any two sentences
# about values); two are what a page written for it says of it.
MIN_LEAD = 2

# Records shown beside a finding: the few that fit better, best first (what a person reads).
SHOWN = 3

# A word of the annotation's prose is matched against the messages' words from this length:
# shorter ones are the articles, pronouns and prepositions of English, in which messages are
# written (`the`, `for`, `not`, `and`), which any two sentences share.
MIN_WORD = 4

# The function words of English from `MIN_WORD` letters: its determiners, pronouns,
# prepositions, conjunctions, auxiliaries and modals, and the adverbs that only link or hedge a
# sentence (`when`, `with`, `after`, `does`, `must`). Any two sentences about one library share
# some of them, so they tell no message from another: only the words that say something do.
FUNCTION_WORDS = frozenset("""
    about above across after again against along also although always among another anyone
    anything around because been before behind being below beneath beside besides between
    beyond both cannot could does doing done down during each either else elsewhere enough
    even ever every everything first from further have having hence here herself himself
    however instead into itself just last less like many might more most much must myself
    neither never next nobody none nonetheless nothing often once only onto other others
    otherwise over perhaps quite rather same several shall should since some somehow someone
    something sometimes somewhere still such than that their theirs them themselves then there
    therefore these they this those though through throughout thus together toward towards
    under unless unlike until upon usually very were what whatever when whenever where whereas
    wherever whether which while whoever whom whose will with within without would your yours
    yourself yourselves typically already
""".split())

# Folders whose records are no error of the library a user meets (a test's raise, an example's).
NOT_ERRORS = NOT_LIBRARY | {"tests", "test", "testing"}


@dataclass(frozen=True)
class Better:
    """A record that fits the annotation better than its own, with the names that decide."""

    id: str
    qualname: str
    path: str
    score: float
    margin: float  # 1 - own / this record's score, on the same facts (siblings: their own words)
    names: tuple[str, ...]  # the annotation's names and words this record holds and its own does not
    sibling: bool  # a raise of the same function, scored on its own words


@dataclass(frozen=True)
class Fit:
    """How well a record's annotation fits it, against every record of its repository."""

    record: ErrorRecord
    score: float  # the own record's
    names: tuple[str, ...]  # the annotation's names and words the own record holds
    better: tuple[Better, ...]  # the records scoring higher, by margin (`SHOWN` at most)
    rank: int  # how many records score higher than the own one
    # of the annotation's judged text and of the record's facts, when listed (dismissals)
    digests: tuple[str, str] | None = None

    @property
    def margin(self) -> float:
        """1 - own / best: 0 when the own record is best, 1 when it holds nothing named."""
        return self.better[0].margin if self.better else 0.0

    @property
    def listed(self) -> bool:
        """Another record holds at least twice what the own one holds of the annotation."""
        return self.margin >= LISTED_MARGIN

    @property
    def sure(self) -> bool:
        """Another record holds three times what the own one holds: `check` exits 1."""
        return self.margin >= SURE_MARGIN


def confirmed(record: ErrorRecord) -> bool:
    """A person confirmed the annotation fits, for the record's current template:
    `annotation.fits: {confirmed: <template>}`."""
    fits = record.annotation.data.get("fits")
    return isinstance(fits, Mapping) and fits.get("confirmed") == record.site.message.template


def judged_records(records: Iterable[ErrorRecord]) -> list[ErrorRecord]:
    """The live, annotated, unconfirmed records: those whose annotation is judged."""
    return [r for r in records if r.status != "removed" and not r.annotation.is_empty
            and not confirmed(r)]


def folder_fits(records: Sequence[ErrorRecord], manifest: Manifest | None,
                only: Iterable[str] | None = None, facts: FactCache | None = None,
                listed_only: bool = False) -> list[Fit]:
    """Every live, annotated, unconfirmed record of one repository folder (or of the ids
    `only`), judged; `facts`: the records' facts kept by an earlier run (`fact_cache`);
    `listed_only`: the listed fits alone (`Index.judge`), what `crawler check` shows."""
    judged = judged_records(records)
    if only is not None:
        wanted = set(only)
        judged = [r for r in judged if r.id in wanted]
    if not judged:
        return []
    index = Index(records, manifest, facts)
    fits = [fit for fit in (index.judge(record, listed_only=listed_only) for record in judged)
            if fit is not None]
    if facts is not None:
        facts.close()  # what this run read is kept for the next
    return fits


class Index:
    """One repository folder's records by their facts: what the rule reads, built once."""

    def __init__(self, records: Sequence[ErrorRecord], manifest: Manifest | None,
                 kept: FactCache | None = None) -> None:
        classes = {c.get("qualname"): c for c in (manifest.exception_classes if manifest else ())}
        live = [r for r in records if r.status != "removed"]
        self.records = {r.id: r for r in live}
        paths = [entry.path for entry in manifest.files] if manifest else []
        self.modules = frozenset(part for path in [*paths, *(r.site.path for r in live)]
                                 for part in _module_parts(path))
        names: dict[str, set[str]] = {}  # each qualified name and snippet read once
        self.own: dict[str, frozenset[str]] = {}
        self.facts: dict[str, dict[str, int]] = {}
        if kept is not None:
            kept.open(self.modules, classes)
        for r in live:
            key = kept.key(r) if kept is not None else None
            found = kept.get(key) if kept is not None else None
            if found is None:
                own = own_words(r, names)
                found = record_facts(r, classes, own, self.modules, names), own
                if kept is not None:
                    kept.put(key, found)
            self.facts[r.id], self.own[r.id] = found
        self.kept = kept  # the annotations' mentions too; its owner closes it
        self.siblings: dict[tuple[str, str], list[str]] = {}
        for r in live:
            self.siblings.setdefault((r.site.path, r.site.qualname), []).append(r.id)
        postings: dict[str, dict[str, int]] = {}
        for record_id, facts in self.facts.items():
            for term, count in facts.items():
                postings.setdefault(term, {})[record_id] = count
        # each word the names of the facts and zones say, with the names that say it: whether
        # a record's names say a word is then a question of two sets (`_Said`), not a reading
        # of all its names at each judge
        spoken: dict[str, set[str]] = {}
        for name in set(postings).union(*self.own.values()):
            if not name.startswith("w:"):
                for word in _words_of_name(name):
                    spoken.setdefault(word, set()).add(name)
        self.word_names = {word: frozenset(said) for word, said in spoken.items()}
        total = len(live)
        self.idf = {term: math.log(total / len(held)) for term, held in postings.items()}
        # what a word or name of a raise's own zone weighs, by the zone's length (BM25)
        self.zone_weight = zone_weights(self.own)
        self.counts = postings  # each term: the records holding it, by how many kinds of facts
        # the records a user's error can be: not a test's, an example's or a document's raise
        self.library = frozenset(r.id for r in live if is_library(r))
        self._weighed: dict[str, tuple[dict[str, float], float]] = {}  # `weights`, `_most`

    def terms(self, mentions: Mentions) -> set[str]:
        """The annotation's names as facts are keyed (a user's variable and the language's
        names left out), and its words: those some records hold and others do not."""
        return {term for term in self.named(mentions) if self._known(term)}

    def named(self, mentions: Mentions) -> set[str]:
        """`terms` before the records are asked: what the mentions and the folder's module
        names make of them, which `FactCache.named` keeps."""
        found = {f"w:{word}" for word in mentions.words
                 if len(word) >= MIN_WORD and word not in FUNCTION_WORDS}
        passed = set()  # a keyword with the call it is passed to (`k:algorithms@decode`)
        for mention in mentions.names:
            keyword, of, callee = mention.partition(KEYWORD_OF)
            if of:
                called, keyword = self._called(callee, mentions), keyword.strip("_")
                if called is not None and keyword not in LANGUAGE:
                    passed.add((keyword, called))
                continue
            parts = [part.strip("_") for part in mention.split(".")]
            first = parts[0]
            if len(parts) > 1 and first in self.modules and first not in mentions.user_names:
                # `jinja2.filters.do_map`: the library's modules, named as modules
                modules = list(itertools.takewhile(self.modules.__contains__, parts[:-1]))
                found.update(f"m:{p}" for p in modules)
                parts = parts[len(modules):]
            elif len(parts) > 1 and (first in mentions.user_names or first.islower()
                                     or first in STDLIB):
                # `env.filters`, `x.shape`, `os.path.join`: a user's variable or another
                # library, not this library's module; what follows it is an attribute's name
                parts = parts[1:] if first not in STDLIB else []
            found.update(p for p in parts if p and p not in LANGUAGE
                         and not (len(parts) == 1 and p in mentions.user_names))
        # a keyword the page also names by itself is a name like any other
        return found | {f"{KEYWORD}{keyword}{KEYWORD_OF}{called}" for keyword, called in passed
                        if keyword not in found}

    def _called(self, callee: str, mentions: Mentions) -> str | None:
        """The name of the library's callable a call is made by, as facts are keyed: the last
        part of `jwt.decode`, `URL.build`, `client.get`; None for a function the example
        defines itself or the standard library's (its keyword is no parameter of the library)."""
        parts = [part.strip("_") for part in callee.split(".")]
        if parts[0] in STDLIB or (len(parts) == 1 and parts[0] in mentions.user_names):
            return None
        return parts[-1] or None

    def judge(self, record: ErrorRecord, text: str | None = None,
              listed_only: bool = False) -> Fit | None:
        """The record's annotation (or `text`) against every record; None when there is no
        text to judge. `listed_only`: None too when the fit is not listed, which the records
        scoring `LISTED_BAR` times the own record's tell (on jax, 81 of 5,482 annotations are
        listed, and a bar twice as high leaves a bounded walk few records to add to)."""
        named = self._named(record, text)
        if named is None:
            return None
        idf = self.idf
        every = sorted((t for t in named if self._known(t)), key=lambda t: (-idf[t], t))
        siblings = [i for i in self.siblings.get((record.site.path, record.site.qualname), ())
                    if i != record.id]
        # a word of the page that the own record's names say (`date` of its code's `date`,
        # `read` of its `ReadTimeout`) is explained where the page was written: no evidence
        facts = self.facts.get(record.id, {})
        own_facts = _Held(facts)
        own_zone = self.own.get(record.id, frozenset())
        terms = unexplained(every, own_facts, _Said(self.word_names, facts))
        own = sum(self.idf[t] * own_facts.get(t, 0) for t in terms)
        # (score, id, own score on the same facts, a sibling)
        apart = {*siblings, record.id}
        lacking = [t for t in terms if t not in own_facts]  # what another record may lead by
        # a listed record scores twice the own score, past `LISTED_BAR` times it by more than
        # `EPSILON` when the own score is over 1e-6 (a thousandth of it); under, the own score
        bar = own * LISTED_BAR if listed_only and own > 1e-6 else own
        found = [(s, i, own, False) for i, s in self._scores(terms, bar).items()
                 if i not in apart and lead(lacking, _Held(self.facts[i])) >= MIN_LEAD]
        # the raises of its own function hold the same code and are reached by the same calls:
        # told apart by their own words, a keyword passed to a call by its name
        plain = list(dict.fromkeys(keyword_of(t) for t in every))
        close = unexplained(plain, own_zone, _Said(self.word_names, own_zone))
        mine = self.zone_weight.get(record.id, 1.0)
        lacking = [t for t in close if t not in own_zone]
        for other in siblings:
            # what the two share says nothing of which of them the page was written for: only
            # what one holds and the other lacks tells them apart
            zone, theirs = self.own[other], self.zone_weight[other]
            if own_zone <= zone:
                continue
            near = sum(self.idf[t] * mine for t in close if t in own_zone and t not in zone)
            score = sum(self.idf[t] * theirs for t in close if t in zone and t not in own_zone)
            if score > near + EPSILON and lead(lacking, zone) >= MIN_LEAD:
                found.append((score, other, near, True))
        if listed_only:  # listed when the best margin is: then judged in full (its rank)
            if all(round(1 - mine / score, 3) < LISTED_MARGIN for score, _, mine, _ in found):
                return None
            return self.judge(record, text)
        found.sort(key=lambda f: (f[2] / f[0], -f[0], f[1]))  # by margin, then score
        better = tuple(Better(i, self.records[i].site.qualname, self.records[i].site.path,
                              round(score, 3), round(1 - mine / score, 3),
                              tuple(shown(t) for t in (close if sibling else terms)
                                    if t in (self.own[i] if sibling
                                             else _Held(self.facts[i]))
                                    and t not in (own_zone if sibling else own_facts)), sibling)
                       for score, i, mine, sibling in found[:SHOWN])
        fit = Fit(record, round(own, 3), tuple(shown(t) for t in every if t in own_facts
                                               or keyword_of(t) in own_zone), better, len(found))
        return replace(fit, digests=self.digests(record)) if fit.listed else fit

    def _known(self, term: str) -> float:
        """The term's rarity (0: no record holds it, or all do); a keyword passed to a call,
        the rarity of the records holding the call (`KEYWORD`), weighed when first asked."""
        found = self.idf.get(term)
        if found is None and term.startswith(KEYWORD):
            held = len(self._holding(term))
            found = self.idf[term] = math.log(len(self.records) / held) if held else 0.0
        return found or 0.0

    def _named(self, record: ErrorRecord, text: str | None) -> Collection[str] | None:
        """What the record's annotation (or `text`) names (`named`); None without text. Of the
        record's own annotation, kept by its file's key where the load gave one (`FactCache.
        named`): its text is not gathered, hashed and read again."""
        kept = self.kept if text is None else None
        key = kept.file_key(record) if kept is not None else None
        if kept is not None and key is not None:
            found, kept_named = kept.named(key)
            if found:
                return kept_named
        text = annotation_text(record.annotation.data) if text is None else text
        named = self.named(self.kept.mentions(text) if self.kept is not None
                           else code_mentions(text)) if text.strip() else None
        if kept is not None and key is not None:
            kept.put_named(key, named)
        return named

    def digests(self, record: ErrorRecord) -> tuple[str, str]:
        """The digests a dismissal keeps: of the annotation's judged text, and of the record's
        facts the rule reads (message, condition, snippet, where, exception, entry points)."""
        facts = json.dumps([sorted(self.facts.get(record.id, {}).items()),
                            sorted(self.own.get(record.id, ()))])
        text = annotation_text(record.annotation.data).encode("utf-8", "surrogatepass")
        return hashlib.sha256(text).hexdigest(), hashlib.sha256(facts.encode()).hexdigest()

    def weights(self, term: str) -> dict[str, float]:
        """The library's records holding `term`, each with its weight there: idf times the
        kinds of facts holding it."""
        return self._weighed_term(term)[0]

    def _weighed_term(self, term: str) -> tuple[dict[str, float], float]:
        """`weights` of `term`, and the most kinds of facts of any record holding it; weighed
        when a judge first asks: an annotation names few of a repository's terms (jax's 5,482
        annotations, 2,755 of its 19,918 terms, a fifth of their postings)."""
        found = self._weighed.get(term)
        if found is None:
            held, idf, library = self._holding(term), self.idf[term], self.library
            found = self._weighed[term] = ({i: n * idf for i, n in held.items() if i in library},
                                           max(held.values(), default=0))
        return found

    def _holding(self, term: str) -> dict[str, int]:
        """The records holding `term`, by how many kinds of facts: a keyword passed to a call,
        those holding the call, once (`KEYWORD`)."""
        if not term.startswith(KEYWORD):
            return self.counts[term]
        return dict.fromkeys(self.counts.get(called_of(term), {}), 1)

    def _scores(self, names: list[str], own: float) -> dict[str, float]:
        """The library's records scoring higher than `own` on `names` (rarest first), scored."""
        # records first met at a name can reach at most what it and the rest give: once that
        # is no more than the own score, no record not met yet can pass it, and a record met
        # that cannot pass it with all the rest is left
        reach = [0.0] * (len(names) + 1)
        for k in range(len(names) - 1, -1, -1):
            reach[k] = reach[k + 1] + self.idf[names[k]] * self._weighed_term(names[k])[1]
        scores: dict[str, float] = {}
        get = scores.get
        limit = own + EPSILON
        for k, term in enumerate(names):
            held = self._weighed[term][0]  # weighed above, for the reach
            if reach[k] > limit:
                for other, weight in held.items():
                    scores[other] = get(other, 0.0) + weight
                continue
            rest = reach[k]
            scores = {i: s for i, s in scores.items() if s + rest > limit}
            if not scores:
                return scores
            for other in held.keys() & scores.keys():  # the two's common records, found in C
                scores[other] += held[other]
        return {i: s for i, s in scores.items() if s > own + EPSILON}


# BM25's usual constants (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
# and Beyond", 2009), not fitted here: `K1` bounds what a term's repetition adds, `B` how much
# a text's length, against the average, lowers what each of its terms weighs.
K1, B = 1.2, 0.75


def zone_weights(zones: Mapping[str, Collection[str]]) -> dict[str, float]:
    """What a term of each raise's own zone weighs, times its rarity: BM25's weight of a term
    found once in a text of the zone's length. The raises of one function are told apart by
    their own words, and a long message holds some of any page's words by chance, so a word of
    a short zone weighs more than a word of a long one (httpx's `raise_for_status` and
    `iter_raw`, networkx's `from_numpy_array`, jinja2's `select_template` siblings)."""
    mean = sum(len(zone) for zone in zones.values()) / max(len(zones), 1) or 1.0
    return {i: (K1 + 1) / (1 + K1 * (1 - B + B * len(zone) / mean)) for i, zone in zones.items()}


EPSILON = 1e-9  # scores are sums of floats: equal sums are equal within this


def lead(lacking: Iterable[str], held: Container[str]) -> int:
    """What another record holds of the terms the own record lacks: a name shaped like code
    (`truncate_strings`, `ReadTimeout`) two, no chance match; a word or a plain name one."""
    return sum(1 + (not t.startswith(("w:", "m:")) and bool(_CODE_SHAPED.search(keyword_of(t))))
               for t in lacking if t in held)


# A keyword passed to a call, with the call's name (`k:algorithms@decode` of `jwt.decode(token,
# key, algorithms=[...])`): the argument the user gives the call, which every raise the call
# reaches may turn on, so a record holds it when it holds the call (the call's own function,
# or a raise whose entry points name it), once, weighed by how rare those records are; a
# parameter of that name in a function the call does not reach is another's. A page
# names the arguments of the call its error comes through: `URL.build(scheme=..., host=...)`
# on the pages of raises under `URL.build` (yarl), `jwt.decode(..., algorithms=...)` (pyjwt),
# `Request(headers=...)` (h11), `span_range(tz=...)` (arrow).
KEYWORD = "k:"


def keyword_of(term: str) -> str:
    """The keyword's name of a term of a keyword passed to a call; any other term as it is."""
    return term.removeprefix(KEYWORD).partition(KEYWORD_OF)[0] if term.startswith(KEYWORD) \
        else term


def called_of(term: str) -> str:
    """The call's name of a term of a keyword passed to a call."""
    return term.partition(KEYWORD_OF)[2]


def shown(term: str) -> str:
    """A term as a person reads it: a keyword passed to a call as `decode(algorithms=)`."""
    return f"{called_of(term)}({keyword_of(term)}=)" if term.startswith(KEYWORD) else term


class _Held:
    """A record's facts, asked also for a keyword passed to a call (`KEYWORD`)."""

    __slots__ = ("facts",)

    def __init__(self, facts: Mapping[str, int]) -> None:
        self.facts = facts

    def get(self, term: str, default: int = 0) -> int:
        if not term.startswith(KEYWORD):
            return self.facts.get(term, default)
        return 1 if called_of(term) in self.facts else default

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) > 0


_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def name_words(names: Iterable[str]) -> frozenset[str]:
    """The words of names (`w:read`, `w:timeout` of `ReadTimeout`; `w:date` of `date`), as an
    annotation's prose words are keyed, from `MIN_WORD` letters."""
    return frozenset(word for name in names if not name.startswith("w:")
                     for word in _words_of_name(name))


@lru_cache(maxsize=1 << 16)
def _words_of_name(name: str) -> tuple[str, ...]:
    """One name's words: each judge asks for every name of two records, and a repository's
    records share most of their names (a third of `check`'s CPU on jax when read each time)."""
    return tuple(f"w:{part.lower()}" for part in _NAME_PART.findall(name.removeprefix("m:"))
                 if len(part) >= MIN_WORD)


class _Said:
    """The words a record's names say (`name_words(held)`), asked one word at a time of the
    index's words: a word is said where a name that says it is one of the record's."""

    __slots__ = ("names", "held")

    def __init__(self, names: dict[str, frozenset[str]], held: Collection[str]) -> None:
        self.names = names
        # a set: `isdisjoint` then looks each of the word's few names up in it, where it read
        # every name of a record's facts (a dict) for each word asked
        self.held = held if isinstance(held, (set, frozenset)) else frozenset(held)

    def __contains__(self, word: object) -> bool:
        said = self.names.get(word) if isinstance(word, str) else None
        return said is not None and not said.isdisjoint(self.held)


def unexplained(terms: list[str], held: Container[str], said: Container[str]) -> list[str]:
    """`terms` less the words a record's names say (`said`) that it does not hold as words."""
    return [t for t in terms if t in held or t not in said]


def is_library(record: ErrorRecord) -> bool:
    """The record's module is the library's: not under a folder of tests, examples,
    documentation or scripts, nor under a hidden folder, where a repository keeps its own
    tooling (`.github/`, `.ci/`, `.evergreen/`: fastapi, pillow, pydantic, pymongo, pyyaml, sympy
    and xarray catalogue scripts there, no error a user of the library meets)."""
    return not any(part in NOT_ERRORS or part.startswith(".")
                   for part in _module_parts(record.site.path)[:-1])


_STRING_OR_COMMENT = re.compile(  # triple-quoted, quoted (prefixed or not), or a comment
    r'[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""' r"|'''[\s\S]*?'''"
    r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*')|#[^\n]*")


_PROSE_OR_COMMENT = re.compile(r'[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""' r"|'''[\s\S]*?''')|#[^\n]*")
_KEY = re.compile(r"""['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")


def keyed_names(code: str | None) -> set[str]:
    """The names of a piece of code and the names it keys by a string (`options.get('reindent')`,
    `ofrmt not in ['sql', ...]`); its docstrings and comments, which are prose, left out."""
    code = _PROSE_OR_COMMENT.sub(" ", code or "")
    return code_names(code) | {m.strip("_") for m in _KEY.findall(code)}


def names_of(text: str | None) -> set[str]:
    """The names of a text as written, underscores stripped, the language's own left out."""
    return {m.strip("_") for m in IDENTIFIER.findall(text or "")} - LANGUAGE - {""}


def code_names(code: str | None) -> set[str]:
    """The names of a piece of code, without its strings, docstrings and comments."""
    return names_of(_STRING_OR_COMMENT.sub(" ", code or ""))


_CODE_SHAPED = re.compile(r"_|\d|[a-z][A-Z]|[A-Z]{2}")


def message_names(template: str, code: Collection[str]) -> set[str]:
    """The names a message's text says: those shaped like code (`strip_comments`, `ReadTimeout`,
    `JSON`) or that its function's code names (`{ofrmt}`'s `ofrmt`); its other words are prose
    (`format` of "Unknown output format"), read as words, not as a call a page names."""
    return {n for n in names_of(template) if n in code or _CODE_SHAPED.search(n)}


def _keyed(snippet: str | None, seen: dict[str, set[str]] | None) -> set[str]:
    """`keyed_names` of a function's snippet, read once for all its raises (`seen`)."""
    key = f"keys\0{snippet}"
    found = seen.get(key) if seen is not None else None
    if found is None:
        found = keyed_names(snippet)
        if seen is not None:
            seen[key] = found
    return found


def _module_parts(path: str) -> list[str]:
    """`src/click/core.py` gives src, click, core."""
    return [part.removesuffix(".py") for part in path.split("/") if part]


def own_words(record: ErrorRecord, seen: dict[str, set[str]] | None = None) -> frozenset[str]:
    """What sets a raise apart from the others of its function: its message's names and words
    (`w:word`, lower-cased; not the words of its function's name, which every sibling's message
    may say), its placeholders', condition's and exception's names."""
    site = record.site
    template = re.sub(r"\{[^{}]*\}", " ", site.message.template)
    where = {f"w:{w.lower()}" for w in WORD.findall(site.qualname.replace("_", " "))}
    words = {f"w:{w.lower()}" for w in WORD.findall(template) if len(w) >= MIN_WORD} - where
    names = message_names(template, _keyed(site.snippet, seen)) | keyed_names(site.condition)
    names |= keyed_names(site.cause) | names_of(site.exception)
    for placeholder in site.message.placeholders:
        names |= names_of(placeholder)
    return frozenset((names - names_of(site.qualname)) | words)


def qualified(name: str | None, modules: Collection[str]) -> set[str]:
    """The names of a qualified name, its leading parts that are the library's modules as
    modules: `pkg.filters.do_title` gives m:pkg, m:filters and do_title."""
    parts = (name or "").split(".")
    found = set()
    for index, part in enumerate(parts):
        module = index < len(parts) - 1 and part in modules and all(
            p in modules for p in parts[:index])
        found |= {f"m:{part}"} if module else names_of(part)
    return found


def record_facts(record: ErrorRecord, classes: Mapping[Any, Mapping[str, Any]],
                 own: frozenset[str], modules: Collection[str],
                 seen: dict[str, set[str]] | None = None) -> dict[str, int]:
    """Each name of the record's facts, and each word of its message (of `own`), with how many
    of its six kinds of facts hold it; the condition's names once more (see the module's
    docstring). In a qualified name (`pkg.filters.do_title`), the library's `modules` are
    modules (`m:filters`)."""
    site = record.site
    template = re.sub(r"\{[^{}]*\}", " ", site.message.template)
    seen = {} if seen is None else seen
    key = f"snippet\0{site.snippet}"  # the raises of one function share it: read once
    code = seen.get(key)
    if code is None:
        code = seen[key] = code_names(site.snippet)
    message = message_names(template, _keyed(site.snippet, seen)) | {w for w in own if w.startswith("w:")}
    for placeholder in site.message.placeholders:
        message |= names_of(placeholder)
    condition = keyed_names(site.condition) | keyed_names(site.cause)
    # its module's path as modules (`m:filters`): what a dotted name from the package names
    where = names_of(site.qualname) | {f"m:{part}" for part in _module_parts(site.path)}
    exception = names_of(site.exception) | qualified(site.exception_qualname, modules)
    cls = classes.get(site.exception_qualname)
    if cls is not None:
        for base in cls.get("bases") or ():
            exception |= qualified(str(base), modules)
    entry: set[str] = set()
    for item in record.entry_points.items if record.entry_points else ():
        for name in (item.name, *item.chain):
            found = seen.get(name)
            if found is None:
                found = seen[name] = qualified(name, modules)
            entry |= found
    counts: dict[str, int] = {}
    for kind in (message, condition, code, where, exception, entry, condition):
        for name in kind:
            counts[name] = counts.get(name, 0) + 1
    return counts
