"""What a repository folder tells about names (annotation_fit's): where each is defined, which
records' facts hold it, and each record's facts.

The record's facts are what the crawler knows of it: template and placeholders, the exception
and its class's module and bases, function, class and module path, the snippet, condition,
cause, test evidence, entry points with their call chains, and its related records' function,
exception and template.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crawler.callgraph.entry_points import NOT_LIBRARY
from crawler.parse.names import module_name
from crawler.records import ErrorRecord, Manifest
from crawler.serve.review.fit_names import (
    DEFINITION,
    DOTTED,
    code_identifiers,
    identifiers,
    key,
    module_parts,
    template_code_words,
)

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

