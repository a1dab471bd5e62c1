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

The code names an annotation mentions, and the names of the language (annotation_fit's).

Only code names are judged: those in an annotation's fenced code blocks (read with `ast` where
they parse; `>>>` prompts dropped), in backticks, and prose tokens shaped like code (dotted
names, CamelCase, snake_case, `name()`). Prose in any language passes through. The names of the
language (keywords, builtins, builtin types' methods, stdlib modules) count for nothing.

What a repository folder tells about names (annotation_fit's): where each is defined, which
records' facts hold it, and each record's facts.

The record's facts are what the crawler knows of it: template and placeholders, the exception
and its class's module and bases, function, class and module path, the snippet, condition,
cause, test evidence, entry points with their call chains, and its related records' function,
exception and template.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import keyword
import math
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from crawler.callgraph.entry_points import NOT_LIBRARY
from crawler.parse.module_names import module_name
from crawler.parse.python_ast import parse_module
from crawler.records import ErrorRecord, Manifest

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


# The slots that hold what a person wrote; written_for, fits and related are bookkeeping.
JUDGED_SLOTS = ("what_it_means", "solutions", "example_fix", "defensive_patterns", "prevention",
                "when_it_happens")


# Stdlib modules whose public names examples use bare (`Path`, `dataclass`, `partial`).
COMMON_STDLIB = ("os", "os.path", "sys", "re", "typing", "collections", "collections.abc",
                 "functools", "itertools", "pathlib", "io", "json", "dataclasses", "enum",
                 "contextlib", "inspect", "warnings", "types", "operator", "string", "textwrap",
                 "shutil", "subprocess", "tempfile", "logging", "math", "datetime", "copy", "abc",
                 "unittest", "importlib", "importlib.metadata")


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)


_BACKTICK = re.compile(r"`([^`\n]+)`")


DOTTED_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"


_CALL = r"[A-Za-z_][A-Za-z0-9_.]*\(\)?"


_CAMEL = r"[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+[A-Za-z0-9]*"


_SNAKE = r"_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*|__[A-Za-z0-9]+__"


_CODE_LIKE = re.compile(rf"(?<![\w.])(?:{DOTTED_NAME}|{_CALL}|{_SNAKE}|{_CAMEL})(?![\w])")


_PROSE_DOTTED_WORDS = {"e.g", "i.e", "etc", "vs", "cf"}


DOTTED = re.compile(DOTTED_NAME)


DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def key(name: str) -> str:
    """How names are compared: `_check_differentiable`, `check_differentiable` alike."""
    return name.strip("_").lower()


@lru_cache(maxsize=1)
def neutral_names() -> frozenset[str]:
    """Names of the language: keywords, builtins, builtin types' methods, stdlib modules.
    They count for nothing, whatever else defines them."""
    names = set(keyword.kwlist) | set(dir(builtins)) | set(sys.stdlib_module_names)
    names |= {"self", "cls", "args", "kwargs", "true", "false", "none"}
    for kind in (str, bytes, list, dict, set, tuple, int, float, object, BaseException):
        names |= set(dir(kind))
    return frozenset(key(name) for name in names)


@lru_cache(maxsize=1)
def stdlib_names() -> frozenset[str]:
    """Public names of common stdlib modules (`Path`, `chain`, `fields`): neutral unless the
    repository defines the name or the record's facts hold it, which come first."""
    return frozenset(key(n) for module in COMMON_STDLIB
                     for n in dir(importlib.import_module(module)) if not n.startswith("_"))


@dataclass(frozen=True)
class Mentions:
    """The code names an annotation mentions, as written, and the names its examples bind."""

    names: tuple[str, ...]  # dotted where written dotted: `PyTreeDef.Tuple`, `registry`
    bound: frozenset[str]  # keys of the names the annotation's own code defines or assigns


def annotation_text(data: Mapping[str, Any]) -> str:
    """Every string a person wrote in the judged slots, one after the other."""
    return "\n".join(_strings([data.get(slot) for slot in JUDGED_SLOTS]))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def code_mentions(text: str) -> Mentions:
    """The code names of `text`: its fenced blocks, backticked spans and code-like prose."""
    names: list[str] = []
    bound: set[str] = set()
    for block in _FENCE.findall(text):
        names += _code_names(block, bound)
    prose = _FENCE.sub("\n", text)
    for span in _BACKTICK.findall(prose):  # `capture="fd"` names capture, binds nothing
        names += _code_names(span, set())
    prose = _BACKTICK.sub(" ", prose)
    for token in _CODE_LIKE.findall(prose):
        name = token.rstrip("()")
        if key(name) not in _PROSE_DOTTED_WORDS and "." not in name[-1:]:
            names.append(name)
    return Mentions(tuple(dict.fromkeys(names)), frozenset(bound))


def _code_names(code: str, bound: set[str]) -> list[str]:
    """Names a piece of code references (dotted chains whole), adding to `bound` those it binds;
    code that does not parse gives its identifiers."""
    tree = _parsed(code)
    if tree is None:
        return [m.group(0) for m in re.finditer(rf"{DOTTED_NAME}|[A-Za-z_][A-Za-z0-9_]*", code)
                if not m.group(0)[0].isdigit()]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(key(node.name))
        elif isinstance(node, ast.arg):
            bound.add(key(node.arg))
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(key(node.id))
            else:
                names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(_dotted(node))
        elif isinstance(node, ast.keyword) and node.arg:
            names.append(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [alias.name for alias in node.names if alias.name != "*"]
            bound.update(key(alias.asname) for alias in node.names if alias.asname)
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(key(node.name))
    return names


def _parsed(code: str) -> ast.Module | None:
    code = textwrap.dedent(code)
    for attempt in (code, re.sub(r"(?m)^(>>>|\.\.\.) ?", "", code)):
        try:
            return parse_module(attempt)
        except (SyntaxError, ValueError):
            continue
    return None


def _dotted(node: ast.Attribute) -> str:
    """`a.b.c` for an attribute chain on a name, else the attribute alone: `x().c` gives `c`."""
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name):
        parts.append(value.id)
    return ".".join(reversed(parts))


def identifiers(text: str | None) -> set[str]:
    """The keys of every identifier in `text`."""
    return {key(m) for m in _IDENTIFIER.findall(text or "")} - {""}


def module_parts(path: str) -> list[str]:
    """`src/click/core.py` gives src, click, core."""
    return [part.removesuffix(".py") for part in path.split("/") if part]


@lru_cache(maxsize=1)
def exception_names() -> frozenset[str]:
    """Builtin exception names: neutral in an annotation, but a record's own when it raises one."""
    return frozenset(key(n) for n, v in vars(builtins).items()
                     if isinstance(v, type) and issubclass(v, BaseException))


def own_key_names(record: ErrorRecord, code: Collection[str] = ()) -> list[str]:
    """What an annotation of this record is expected to name: function (and a nested def's
    maker), class, exception, the
    template's code words (backticked, snake_case, CamelCase), and the template's words that the
    site's `code` writes as names (`chain` in "A group in chain mode ..." raised by a `chain`
    parameter's check)."""
    site = record.site
    names = [site.function or "", maker(record), (site.class_name or "").split(".")[-1],
             site.exception.split(".")[-1]]
    template = re.sub(r"\{[^{}]*\}", " ", site.message.template)
    names += template_code_words(template)
    names += [word for word in _IDENTIFIER.findall(template) if word.strip("_") in code]
    own = []
    for name in names:
        for part in _IDENTIFIER.findall(name):
            if len(key(part)) >= 3 and part not in own and not part.startswith("<"):
                own.append(part)
    return own


def maker(record: ErrorRecord) -> str:
    """The function that makes a nested def (`command` of `command.<locals>.decorator`), by
    whose name users know it; "" for a function that is not nested."""
    qualname = record.site.qualname
    return qualname.split(".<locals>.")[0].split(".")[-1] if ".<locals>." in qualname else ""


def template_code_words(template: str) -> list[str]:
    """The code words of a message's template: backticked, dotted, snake_case, CamelCase."""
    template = re.sub(r"\{[^{}]*\}", " ", template)
    return [*_BACKTICK.findall(template),
            *(m.group(0) for m in _CODE_LIKE.finditer(_BACKTICK.sub(" ", template)))]


_STRING_OR_COMMENT = re.compile(  # triple-quoted, quoted (prefixed or not), or a comment
    r'[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""' r"|'''[\s\S]*?'''"
    r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*')|#[^\n]*")


def code_identifiers(code: str | None) -> set[str]:
    """The identifiers of a piece of code as written, underscores stripped, without its strings,
    docstrings and comments: `Command` and `command` stay apart, and prose does not count."""
    return {m.strip("_") for m in _IDENTIFIER.findall(_STRING_OR_COMMENT.sub(" ", code or ""))
            } - {""}


COMMON_SHARE = 0.25


MIN_COMMON_RECORDS = 8  # below this many records, no name is common


@dataclass(frozen=True)
class Repository:
    """What one repository folder tells about names: where each is defined, in how many
    records' facts each is, each record's facts, and the package names (the library itself)."""

    definitions: Mapping[str, frozenset[str]]  # name's key -> paths of the modules defining it
    # the same by the name as written (underscores stripped): `command` is not `Command`
    exact: Mapping[str, frozenset[str]]
    exceptions: frozenset[str]  # keys of the exception classes the repository defines
    sites: Mapping[str, tuple[str, str]]  # record id -> its qualname and module's path
    holders: Mapping[str, frozenset[str]]  # name's key -> ids of the records whose facts hold it
    facts: Mapping[str, frozenset[str]]  # record id -> keys of the names of its facts
    nearby: Mapping[str, frozenset[str]]  # record id -> keys its related records and chains add
    counts: Mapping[str, int]  # name's key -> how many records' facts hold it
    records: int
    packages: frozenset[str]
    # key of `Class.method` (the two last parts) -> the qualname and module of the method
    qualnames: Mapping[str, tuple[str, str]]
    # key of `module.name` (a module's stem, a name it defines at its top) -> paths of those
    modules: Mapping[str, frozenset[str]]
    pairs: Mapping[str, frozenset[str]]  # record id -> keys of the `a.b` its facts write dotted
    # keys the repository defines in two spellings (`command`, `Command`): judged as written,
    # against the names the record's code writes (site; related records and chains), as written
    spelled: frozenset[str]
    code: Mapping[str, frozenset[str]]
    code_nearby: Mapping[str, frozenset[str]]
    # `package.Name` as users import it, as written -> paths of the modules defining it
    public: Mapping[str, frozenset[str]]

    def is_common(self, name: str) -> bool:
        return self.records >= MIN_COMMON_RECORDS and self.counts.get(name, 0) >= (
            COMMON_SHARE * self.records)


def repository(records: Sequence[ErrorRecord], manifest: Manifest | None) -> Repository:
    """The names of a repository folder's records and manifest."""
    classes = {c.get("qualname"): c for c in (manifest.exception_classes if manifest else ())}
    by_id = {record.id: record for record in records}
    # the site's own names; its related records' and its entry points' chains are nearby
    facts = {record.id: frozenset(record_facts(record, classes, entry_points=False))
             for record in records}
    nearby = {record.id: frozenset(related_facts(record, by_id) | record_facts(record, classes))
              - facts[record.id] for record in records}
    pairs = {record.id: frozenset(dotted_pairs(
        [*fact_texts(record, classes), *related_texts(record, by_id)])) for record in records}
    code = {record.id: frozenset(set().union(*map(code_identifiers, fact_texts(
        record, classes, entry_points=False, prose=False)))) for record in records}
    code_nearby = {record.id: frozenset(set().union(*map(code_identifiers, [
        *fact_texts(record, classes, prose=False), *related_texts(record, by_id, prose=False)])))
        - code[record.id] for record in records}
    # how common a name is, by the sites alone: chains spread `main` and `invoke` everywhere
    counts = Counter(name for names in facts.values() for name in names)
    paths = [entry.path for entry in manifest.files] if manifest else []
    paths += [record.site.path for record in records]
    exact = _definitions(records, classes.values(), case=True)
    exceptions = frozenset(key(str(c.get("name") or "")) for c in classes.values()) - {""}
    holders: dict[str, set[str]] = {}
    for record_id, names in facts.items():
        for name in names:
            holders.setdefault(name, set()).add(record_id)
    return Repository(_definitions(records, classes.values()), exact, exceptions,
                      {record.id: (record.site.qualname, record.site.path) for record in records},
                      {name: frozenset(ids) for name, ids in holders.items()}, facts, nearby,
                      counts, len(records), _packages(paths), _qualnames(records),
                      _module_definitions(records, classes.values()), pairs,
                      _spelled_apart(exact), code, code_nearby,
                      _public_definitions(records, paths))


def _qualnames(records: Iterable[ErrorRecord]) -> dict[str, tuple[str, str]]:
    """Methods by `Class.method`, the way an annotation names where an error happens."""
    found = {}
    for record in records:
        parts = [p for p in record.site.qualname.split(".") if not p.startswith("<")]
        if len(parts) >= 2 and record.site.class_name:
            found[key(".".join(parts[-2:]))] = (record.site.qualname, record.site.path)
    return found


def _packages(paths: Iterable[str]) -> frozenset[str]:
    """The top-level packages of the library's paths: `src/attr/_make.py` gives attr."""
    found = set()
    for path in paths:
        parts = _library_parts(path)
        if len(parts) > 1:
            found.add(key(parts[0]))
    return frozenset(found)


def _library_parts(path: str) -> list[str]:
    """A module's parts under `src/` or `lib/`; none for a folder of examples, documentation or
    scripts, whose names are a user's (`def cli()` in `examples/`), not the library's."""
    parts = module_parts(path)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return [] if parts and parts[0] in NOT_LIBRARY else parts


def _definitions(records: Iterable[ErrorRecord], classes: Iterable[Mapping[str, Any]],
                 case: bool = False) -> dict[str, frozenset[str]]:
    """Where each name is defined, by its key, or by its case when `case`."""
    found: dict[str, set[str]] = {}

    def define(name: str, path: str) -> None:
        if name and not name.startswith("<") and _library_parts(path):
            found.setdefault(name.strip("_") if case else key(name), set()).add(path)

    for record in records:
        site = record.site
        for part in site.qualname.split("."):
            define(part, site.path)
        for name in DEFINITION.findall(site.snippet or ""):
            define(name, site.path)
        stem = module_parts(site.path)[-1]
        if stem != "__init__":
            define(stem, site.path)
    for item in classes:
        define(str(item.get("name") or ""), str(item.get("path") or ""))
    return {name: frozenset(paths) for name, paths in found.items()}


def _spelled_apart(exact: Iterable[str]) -> frozenset[str]:
    """The keys of the names defined in more than one spelling: `command` and `Command`."""
    spellings = Counter(key(name) for name in exact)
    return frozenset(name for name, count in spellings.items() if count > 1)


def _module_definitions(records: Iterable[ErrorRecord],
                        classes: Iterable[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """`module.name` for what a module defines at its top (a raise's function or class, an
    exception class): `setters.frozen`, `exceptions.FrozenAttributeError`, by key; and
    `package.name` for the public spelling users import of what a module defines
        (`click.command`, the decorator of `decorators.py`), read off the records' entry points."""
    found: dict[str, set[str]] = {}
    named = [(record.site.qualname.split(".")[0], record.site.path) for record in records]
    named += [(str(item.get("name") or ""), str(item.get("path") or "")) for item in classes]
    for name, path in named:
        stem = module_parts(path)[-1] if _library_parts(path) else ""
        if name and stem and stem != "__init__" and not name.startswith("<"):
            found.setdefault(f"{key(stem)}.{key(name)}", set()).add(path)
    return {pair: frozenset(paths) for pair, paths in found.items()}


def _public_definitions(records: Sequence[ErrorRecord],
                        paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """`package.Name` as users import it, as written (`click.command`, the decorator of
    `decorators.py`, is not `click.Command`), -> the paths of the modules defining it: read off
    the records' entry points, the first of whose chain is the definition."""
    modules = {module_name(path): path for path in paths if _library_parts(path)}  # as chains name it
    found: dict[str, set[str]] = {}
    for record in records:
        for entry in record.entry_points.items if record.entry_points else ():
            path = _module_path(entry.chain[0], modules) if entry.chain else None
            if entry.name.count(".") == 1 and path is not None:
                found.setdefault(entry.name, set()).add(path)
    return {name: frozenset(paths) for name, paths in found.items()}


def _module_path(qualified: str, modules: Mapping[str, str]) -> str | None:
    """The path of the module a qualified name is defined in: its longest module prefix."""
    parts = qualified.split(".")
    for end in range(len(parts) - 1, 0, -1):
        path = modules.get(".".join(parts[:end]))
        if path is not None:
            return path
    return None


def dotted_pairs(texts: Iterable[str | None]) -> set[str]:
    """The keys of each two names written one after the other in a dotted chain: `a.b.c` gives
    a.b and b.c; a module's path gives its package and stem, the stem and its top names."""
    found = set()
    for text in texts:
        for chain in DOTTED.findall(text or ""):
            parts = [key(part) for part in chain.split(".")]
            found |= {f"{a}.{b}" for a, b in zip(parts, parts[1:], strict=False)}
    return found


def fact_texts(record: ErrorRecord, classes: Mapping[Any, Mapping[str, Any]],
               entry_points: bool = True, prose: bool = True) -> list[str | None]:
    """Every text the crawler knows of the record itself: the site's, its exception class's,
    its test evidence's, and (with `entry_points`) its entry points' names and chains; without
    `prose`, of the template its code words only, and no test's message pattern."""
    site = record.site
    message = site.message
    template = message.template if prose else " ".join(template_code_words(message.template))
    texts = [site.qualname, site.exception, site.exception_qualname, template,
             *message.placeholders, message.composed_by, message.via, message.defined_at,
             site.condition, site.cause, site.snippet, *module_parts(site.path)]
    cls = classes.get(site.exception_qualname)
    if cls is not None:
        texts += [str(cls.get("path") or ""), *map(str, cls.get("bases") or ())]
    for evidence in record.evidence:
        texts += [evidence.test, evidence.pattern if prose else "", evidence.exception,
                  evidence.path]
    if entry_points and record.entry_points:  # what users call, and the calls to the raise
        for entry in record.entry_points.items:
            texts += [entry.name, *entry.chain]
    return [*texts, ".".join([*module_parts(site.path)[-2:], *site.qualname.split(".")[:1]])]


def record_facts(record: ErrorRecord, classes: Mapping[Any, Mapping[str, Any]],
                 entry_points: bool = True) -> set[str]:
    """The keys of every name the crawler knows of the record itself (without its entry points'
    chains: the names of the site alone)."""
    names: set[str] = set()
    for text in fact_texts(record, classes, entry_points):
        names |= identifiers(text)
    return names


def related_texts(record: ErrorRecord, by_id: Mapping[str, ErrorRecord],
                  prose: bool = True) -> list[str]:
    """The record's related records' function, exception and template (its code words only,
    without `prose`)."""
    return [text for related in record.related if (other := by_id.get(related.id)) is not None
            for text in (other.site.qualname, other.site.exception, other.site.message.template
                         if prose else " ".join(template_code_words(other.site.message.template)))]


def related_facts(record: ErrorRecord, by_id: Mapping[str, ErrorRecord]) -> set[str]:
    """The keys of the names of the record's related records: function, exception, template."""
    names: set[str] = set()
    for text in related_texts(record, by_id):
        names |= identifiers(text)
    return names
