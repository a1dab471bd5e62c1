"""Does an annotation fit its record? The code names it mentions, against the record's facts.

An annotation can be well written and still describe another error (a page for jax's
`RematTraced._check_differentiable` that explained `PyTreeDef.Tuple` and registries). Prose is
not judged, in any language: only the code names an annotation mentions are, those in its code
blocks (read with `ast` where they parse), in backticks, and prose tokens shaped like code
(dotted names, CamelCase, snake_case, `name()`).

Each mentioned name is, in order of precedence:

- neutral: a keyword, a builtin, a standard-library module or a public name of a common one, a
  method of a builtin type, a name the annotation's own example binds, or shorter than 3 letters;
- foreign: a dotted mention that names, as `module.name`, what another module defines at its top
  (`attrs.setters.frozen` on a record of `_make.py`) and the record's facts never write so
  dotted, or, on a record with entry points, a public spelling (`click.command`, the decorator
  of `decorators.py`) of another module's definition: both parts, weight `QUALIFIED_WEIGHT`
  (halved after the package's name);
- fitting: it is in the record's facts (template and placeholders, exception and its class's
  module and bases, function, class, path, snippet, condition, cause, related records, test
  evidence, entry points and call chains): weight 1, or `COMMON_WEIGHT` when it is in the facts
  of `COMMON_SHARE` of the repository's records or more (the package's name, `self.name`); a
  name the repository defines in two spellings (the `command` decorator, the `Command` class)
  fits only as written, in code (not in a docstring, comment or message);
- foreign: the repository defines it (a record's qualname, a def or class line of a snippet, an
  exception class, a module's name; looked up with its case first) and not in the record's
  facts: weight 1 when every definition is in another module, `SAME_MODULE_WEIGHT` when one is
  in the record's module, times `EXCEPTION_WEIGHT` for an exception class of the repository;
- unknown otherwise (a user's own names): neutral.

A rival: when a record of another module fits the judged names `RIVAL_RATIO` times better than
this record (each name weighed by its specificity), it is foreign too, as heavy as all that
counts for the annotation.

The record's own key names (its function, class, exception, the code words of its template and
the template's words its code writes as names) that the annotation never mentions count
`MISSING_WEIGHT` each against it, the function where it happens (a nested def's maker)
`FUNCTION_WEIGHT`. Names only a folder of examples, documentation or scripts defines are a
user's, not the library's definitions. The score is fitting / (fitting + against), 1 when nothing is
judged; an annotation is listed when its score is under `THRESHOLD` and the weight against it
is at least `MIN_AGAINST` (one foreign name far away, or several of its own names missing), and it
names something that fits or is foreign: one that names no such code (prose) is never listed on
its own names' absence alone.
docs/annotations.md gives the figures these were tuned on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from crawler.records import ErrorRecord, Manifest
from crawler.serve.review.fit_names import (
    annotation_text,
    code_mentions,
    exception_names,
    key,
    maker,
    neutral_names,
    own_key_names,
    stdlib_names,
)
from crawler.serve.review.fit_repo import Repository, repository

THRESHOLD = 0.55
MIN_AGAINST = 1.0
MISSING_WEIGHT = 0.25
FUNCTION_WEIGHT = 0.75
SAME_MODULE_WEIGHT = 0.5
COMMON_WEIGHT = 0.3
VOCABULARY_WEIGHT = 0.3
NEARBY_SHARE = 0.5
PUBLIC_SHARE = 0.5
EXCEPTION_WEIGHT = 2.0
RIVAL_RATIO = 1.5
QUALIFIED_WEIGHT = 1.0
RIVAL_MARGIN = 0.5


@dataclass(frozen=True)
class Foreign:
    """A name the annotation mentions that the repository defines away from this record."""

    mention: str  # as the annotation writes it: `PyTreeDef.Tuple`
    name: str  # the part judged: `PyTreeDef`
    defined_in: tuple[str, ...]  # the modules defining it
    weight: float


@dataclass(frozen=True)
class Fit:
    """How well a record's annotation fits it, with the evidence."""

    record: ErrorRecord
    score: float
    against: float
    fitting: tuple[str, ...]  # mentioned names found in the record's facts
    foreign: tuple[Foreign, ...]
    missing: tuple[str, ...]  # own key names the annotation never mentions

    @property
    def listed(self) -> bool:
        """Under `THRESHOLD` with `MIN_AGAINST` against it, and naming something the record is
        judged by (a fitting or a foreign name): never on its own names' absence alone."""
        return (self.score < THRESHOLD and self.against >= MIN_AGAINST
                and bool(self.fitting or self.foreign))


def confirmed(record: ErrorRecord) -> bool:
    """A person confirmed the annotation fits, for the record's current template:
    `annotation.fits: {confirmed: <template>}`."""
    fits = record.annotation.data.get("fits")
    return isinstance(fits, Mapping) and fits.get("confirmed") == record.site.message.template


def judge(record: ErrorRecord, repo: Repository) -> Fit | None:
    """The record's annotation against its facts; None when there is no text to judge."""
    text = annotation_text(record.annotation.data)
    if not text.strip():
        return None
    mentions = code_mentions(text)
    facts = repo.facts.get(record.id, frozenset())
    neutral = neutral_names() | repo.packages | mentions.bound
    fitting: dict[str, float] = {}
    foreign: dict[str, Foreign] = {}
    mentioned: set[str] = set()
    judged: set[str] = set()
    for mention in mentions.names:
        parts = mention.split(".")
        if key(parts[0]) in neutral_names() and len(parts) > 1:  # os.path.join, re.compile
            continue
        method = repo.qualnames.get(key(".".join(parts[-2:]))) if len(parts) > 1 else None
        elsewhere = method[1] if method and method[0] != record.site.qualname else ""
        qualified = _qualified(parts, record, repo)
        for index, part in enumerate(parts):
            name, slot = key(part), _slot(part, repo)
            mentioned.add(slot)
            if len(name) < 3 or name in neutral:
                continue
            judged.add(name)
            site, close = _where(part, record, repo)
            if index in qualified:  # `setters.frozen`: what another module defines, by its name
                weight = QUALIFIED_WEIGHT * (PUBLIC_SHARE if key(parts[0]) in repo.packages else 1)
                _keep(foreign, slot, Foreign(mention, part, qualified[index], weight))
            elif elsewhere and part in parts[-2:] and name not in facts:
                # `Option._validate`: where another raise happens, named as such
                _keep(foreign, slot, Foreign(mention, part, (elsewhere,), 1.0))
            elif site or close:
                weight = COMMON_WEIGHT if repo.is_common(name) else 1.0
                fitting[slot] = weight * (1.0 if site else NEARBY_SHARE)
            elif name in repo.definitions:
                # as written first: `command` (a decorator far away) is not `Command` (a class)
                paths = repo.exact.get(part.strip("_")) or repo.definitions[name]
                weight = SAME_MODULE_WEIGHT if record.site.path in paths else 1.0
                if key(parts[0]) in repo.packages:  # `attrs.evolve`: the public API, in passing
                    weight *= PUBLIC_SHARE
                if name in repo.exceptions:  # the error it describes is another one
                    weight *= EXCEPTION_WEIGHT
                _keep(foreign, slot, Foreign(mention, part, tuple(sorted(paths)), weight))
            elif name in repo.counts and name not in stdlib_names():
                _keep(foreign, slot, Foreign(mention, part, (), VOCABULARY_WEIGHT))
    for name in fitting.keys() & foreign.keys():
        del fitting[name]
    rival = _rival(record, repo, judged)
    if rival is not None:  # as much against as all that counts for: listed
        _keep(foreign, key(rival.name), replace(rival, weight=max(sum(fitting.values()),
                                                                  MIN_AGAINST)))
    own = own_key_names(record, repo.code.get(record.id, frozenset()))
    missing = tuple(n for n in own if _slot(n, repo) not in mentioned
                    and (key(n) not in neutral_names() or key(n) in exception_names()))
    against = sum(f.weight for f in foreign.values()) + sum(
        _missing_weight(name, record) for name in missing)
    support = sum(fitting.values())
    score = support / (support + against) if support + against else 1.0
    return Fit(record, round(score, 3), round(against, 3), tuple(fitting), tuple(foreign.values()),
               missing)


def _missing_weight(name: str, record: ErrorRecord) -> float:
    """`FUNCTION_WEIGHT` for the name of the module function or method that raises, or of the
    function that makes the nested def that raises (where the error happens, which an annotation
    of it names); `MISSING_WEIGHT` for another own name, and for a dunder (named by its syntax)."""
    site = record.site
    where = maker(record) or (site.function or "")
    dunder = name.startswith("__") and name.endswith("__")
    return FUNCTION_WEIGHT if name == where and not dunder else MISSING_WEIGHT


def _qualified(parts: list[str], record: ErrorRecord,
               repo: Repository) -> dict[int, tuple[str, ...]]:
    """The parts of a dotted mention that name, as `module.name`, what another module defines
    (`attrs.setters.frozen` on a record of `_make.py`), unless the record's facts write the same
    two names dotted: by the part's index, the modules defining it."""
    found: dict[int, tuple[str, ...]] = {}
    pairs = repo.pairs.get(record.id, frozenset())
    # `click.command` as users import it, when the record's own public calls are all known
    known = record.entry_points is not None and bool(record.entry_points.items)
    for index in range(len(parts) - 1):
        pair = f"{key(parts[index])}.{key(parts[index + 1])}"
        paths = repo.modules.get(pair, frozenset()) or (
            repo.public.get(f"{parts[index]}.{parts[index + 1]}", frozenset()) if known
            else frozenset())
        if paths and record.site.path not in paths and pair not in pairs:
            found[index] = found[index + 1] = tuple(sorted(paths))
    return found


def specificity(name: str, repo: Repository) -> float:
    """1 for a name no record's facts hold, down to 0 for one all hold (log-scaled, as idf)."""
    total = math.log(repo.records + 1)
    return math.log((repo.records + 1) / (len(repo.holders.get(name, ())) + 1)) / total


def _rival(record: ErrorRecord, repo: Repository, names: set[str]) -> Foreign | None:
    """The record of another module whose facts fit the names `RIVAL_RATIO` times better than
    this record's (common names, held by many, are not looked up): it was written for that."""
    weights = {n: specificity(n, repo) for n in names if not repo.is_common(n)}
    facts, nearby = repo.facts.get(record.id, frozenset()), repo.nearby.get(record.id, frozenset())
    own = sum(w * (1.0 if n in facts else NEARBY_SHARE if n in nearby else 0.0)
              for n, w in weights.items())
    scores: dict[str, float] = {}
    for name, weight in weights.items():
        for other in repo.holders.get(name, ()):
            if repo.sites[other][1] != record.site.path:
                scores[other] = scores.get(other, 0.0) + weight
    if not scores:
        return None
    other, best = max(scores.items(), key=lambda item: item[1])
    if best < RIVAL_RATIO * own or best - own < RIVAL_MARGIN:
        return None
    told = sorted(n for n in weights if n in repo.facts[other] and n not in facts)
    return Foreign(repo.sites[other][0], ", ".join(told), (repo.sites[other][1],), 0.0)


def _keep(foreign: dict[str, Foreign], slot: str, found: Foreign) -> None:
    """Each name once, at the heaviest weight any of its mentions gives it."""
    if slot not in foreign or foreign[slot].weight < found.weight:
        foreign[slot] = found


def _slot(name: str, repo: Repository) -> str:
    """How a name is told apart from others: by its key, or as written when the repository
    defines it in two spellings (the `command` decorator, the `Command` class)."""
    return name.strip("_") if key(name) in repo.spelled else key(name)


def _where(name: str, record: ErrorRecord, repo: Repository) -> tuple[bool, bool]:
    """Whether the record's site holds the name, and whether its related records or chains do;
    a name of two spellings as written, in code (not in a docstring, comment or message)."""
    if key(name) in repo.spelled:
        written = name.strip("_")
        return (written in repo.code.get(record.id, frozenset()),
                written in repo.code_nearby.get(record.id, frozenset()))
    return (key(name) in repo.facts.get(record.id, frozenset()),
            key(name) in repo.nearby.get(record.id, frozenset()))



def folder_fits(records: Sequence[ErrorRecord], manifest: Manifest | None) -> list[Fit]:
    """Every live, annotated, unconfirmed record of one repository folder, judged."""
    judged = [r for r in records if r.status != "removed" and not r.annotation.is_empty
              and not confirmed(r)]
    if not judged:
        return []
    repo = repository(records, manifest)
    return [fit for fit in (judge(record, repo) for record in judged) if fit is not None]
