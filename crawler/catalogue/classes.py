"""The repository-wide pass, after every file is visited: class defaults and exception classes.

Each file's visit returns its sites, its message-less raises (`pending`), the classes it defines
and its module-level bindings (`exports`). This pass, linear in those, then

- follows re-exports to the class a name really is (`pkg.Error` imported in `pkg/__init__.py`
  from `pkg.errors` becomes `pkg.errors.Error`);
- gives a raise of a class that changes its message (an `__init__` chain that wraps it, a
  `__str__`, a class attribute handed on) the message as `str(exc)` shows it (`compose`), kind
  `class_default`, with the method that composed it, or marks the method it could not read;
- else, as before: a class whose `__init__` passes a template to `super().__init__` (or, when
  the raise has no text of its own, that sets a class-level `message`) gives that template,
  inherited through bases that do not define `__init__`;
- lists the classes that are exceptions, with their bases, for the manifest.

The order of a repository's exception classes (their MRO, by C3 over the classes the
repository defines) and a digest of all that composes one class's message, which the class pass
compares between runs (`linearize`, `digest`); `compose` follows a raise through that order.

How a repository's exception class turns the text a raise passes into `str(exc)`.

`compose` follows one raise through its class, as Python runs it:

1. the `__init__`s, from the nearest in the class's MRO: each binds what it was handed to its
   parameters and hands text on to the next (`super().__init__(...)` is the next class in the
   raised class's MRO that defines `__init__`; `Base.__init__(self, ...)` is Base's); a parameter
   shown as given (str(), no spec) takes the text bound to it, a local bound to `self.x` or
   `self.__class__.__name__` takes the class attribute's text or the class's name;
2. the text that reaches a builtin base becomes `args`; the nearest `__str__` of the repository
   (and the message methods it returns, `self.x` set in an `__init__`, class attributes) then
   makes the message, else BaseException's own str() of `args` does.

The result names the method whose text is outermost (`composed_by`). Where a step cannot be read
exactly (an argument that is not text, a `__str__` that returns what cannot be read, several
arguments reaching a builtin), the result says which method (`not_followed`), and the raise keeps
its own template. A class whose `__init__`s only hand the message on, with no `__str__`, is not
composed at all (None): its message is the raise's.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Protocol, TypeVar

from crawler.parse.message.guards import open_paths
from crawler.parse.message.known_names import SEVERAL
from crawler.parse.message.pieces import MAX_ALTERNATIVES, Piece, merge_text
from crawler.parse.message.templates import build_template, pieces_of, redisplay, substitute
from crawler.parse.module_names import BUILTIN_EXCEPTIONS, STAR, module_name
from crawler.records import CallArgument, ClassDef, RaiseSite, Skipped, Template, TextSlot

# a manifest's `skipped` reason: a class whose reading faulted, its raises kept as read
ANALYSIS_FAILED = "analysis_failed"


_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")


# A node of the search for the class a name is: (NAME, qualified name, ""), (STAR_NODE, module,
# name): the name in the module through its star imports; (FOUND, class, ""): the answer.
_Node = tuple[str, str, str]


NAME, STAR_NODE, FOUND = "name", "star", "found"


_Templates = tuple[tuple[Template, ...], str | None, ClassDef | None]


NO_TEMPLATE: _Templates = ((), None, None)


class VisitedFile(Protocol):
    """What the pass needs of one visited file."""

    @property
    def path(self) -> str: ...
    @property
    def sites(self) -> Sequence[RaiseSite]: ...
    @property
    def pending(self) -> Sequence[RaiseSite]: ...
    @property
    def classes(self) -> Sequence[ClassDef]: ...
    @property
    def exports(self) -> dict[str, str]: ...


@dataclass
class Resolved:
    """The sites after the pass, the manifest's exception classes, and what changed."""

    sites: list[RaiseSite]
    exception_classes: list[dict[str, Any]]
    class_default: int = 0  # sites that took their class's template
    from_pending: int = 0  # message-less raises that became sites that way
    from_pending_by_path: dict[str, int] = field(default_factory=dict)  # the same, by file
    renamed: int = 0  # exception qualnames moved to the defining module
    faults: list[Skipped] = field(default_factory=list)  # ANALYSIS_FAILED, one per class


class ClassIndex:
    """Every class of the repository by qualified name, and every module's bindings."""

    def __init__(self, files: Iterable[VisitedFile]) -> None:
        self.classes: dict[str, ClassDef] = {}
        self.exports: dict[str, dict[str, str]] = {}
        for visited in files:
            for cls in visited.classes:
                self.classes.setdefault(cls.qualname, cls)
            self.exports[module_name(visited.path)] = visited.exports
        self._canonical: dict[str, str] = {}
        self._starred: dict[tuple[str, str], str | None] = {}
        self._templates: dict[str, _Templates] = {}
        self._is_exception: dict[str, bool] = {}
        # nodes one search may read: each binding and each module's star imports once, which a
        # search whose names do not grow never exceeds
        self._budget = sum(len(b) for b in self.exports.values()) + len(self.exports) + 1

    def canonical(self, qualname: str) -> str:
        """The qualified name of the class a name stands for, following re-exports; where no
        class is reached, the last name its explicit bindings lead to."""
        if qualname not in self._canonical:
            found = self._search((NAME, qualname, ""))
            self._canonical[qualname] = found if found is not None else self._bound(qualname)
        return self._canonical[qualname]

    def star_class(self, module: str, name: str) -> str | None:
        """The repository class that `name`, bound by no import of `module`, is through the
        module's `from M import *`: the last such import that has it wins, as in Python. None
        where none does; never a guess."""
        key = (module, name)
        if key not in self._starred:
            self._starred[key] = self._search((STAR_NODE, module, name))
        return self._starred[key]

    def _search(self, start: _Node) -> str | None:
        """The first repository class reached from `start`, depth first in the order Python
        binds names, each node once: a chain of imports that comes back to a node it is
        reading (`pkg` star-imports `pkg.sub`, which imports a name from `pkg`) reads as not
        having the name there, and the search goes on to the next import. Iterative (a chain
        is as long as the repository makes it); at most `_budget` nodes, since a binding
        under itself (`a = pkg.a.b` in `pkg`) grows a new name at each step."""
        seen = {start}
        stack = [self._alternatives(start)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
            elif node[0] == FOUND:
                return node[1]
            elif node not in seen and len(seen) < self._budget:
                seen.add(node)
                stack.append(self._alternatives(node))
        return None

    def _alternatives(self, node: _Node) -> Iterator[_Node]:
        """What a node may be, in the order Python would have bound it."""
        kind, first, name = node
        if kind == STAR_NODE:  # `name` in module `first`, through its star imports, last first
            for star in reversed(self.exports.get(first, {}).get(STAR, "").split()):
                found = f"{star}.{name}"
                if name in self.exports.get(star, {}):
                    yield (NAME, found, "")
                elif found in self.classes:
                    yield (FOUND, found, "")
                yield (STAR_NODE, star, name)
            return
        if first in self.classes:
            yield (FOUND, first, "")
            return
        if first.startswith("builtins."):
            return
        parts = first.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            bindings = self.exports.get(".".join(parts[:cut]))
            if bindings is None:
                continue
            if parts[cut] in bindings:  # an explicit binding is the name: nothing else is tried
                yield (NAME, ".".join([bindings[parts[cut]], *parts[cut + 1:]]), "")
                return
            if cut == len(parts) - 1:  # the module may have the class through `from M import *`
                yield (STAR_NODE, ".".join(parts[:cut]), parts[cut])

    def _bound(self, qualname: str) -> str:
        """The last name a name's explicit bindings lead to, each followed once (a cycle, or a
        name that grows under its own binding, ends where it repeats or at `_budget`)."""
        current, followed = qualname, {qualname}
        while len(followed) < self._budget and not (current in self.classes
                                                    or current.startswith("builtins.")):
            parts = current.split(".")
            target = next((".".join([bindings[parts[cut]], *parts[cut + 1:]])
                           for cut in range(len(parts) - 1, 0, -1)
                           for bindings in [self.exports.get(".".join(parts[:cut])) or {}]
                           if parts[cut] in bindings), None)
            if target is None or target in followed:
                break
            followed.add(target)
            current = target
        return current

    def templates(self, qualname: str) -> tuple[tuple[Template, ...], str | None, ClassDef | None]:
        """A class's default templates, where from, and the class that defines them; inherited
        through bases that do not define __init__ (the first base that has them)."""
        def own(name: str) -> _Templates | None:
            cls = self.classes.get(name)
            if cls is not None and cls.templates:
                return (cls.templates, cls.template_from, cls)
            return NO_TEMPLATE if cls is None or cls.has_init else None

        return first_of_bases(qualname, self._templates, own, self._bases, NO_TEMPLATE,
                              lambda found: bool(found[0]))

    def base_classes(self, cls: ClassDef) -> list[str]:
        """The class's bases, each as `canonical` gives it; a bare name its module binds only
        through `from M import *` (pyyaml's `class ConstructorError(MarkedYAMLError)` under
        `from .error import *`) as the raises' own exceptions are found (`star_class`)."""
        found = []
        for base in cls.bases:
            qualname = self.canonical(base)
            if qualname not in self.classes and "." not in base:
                qualname = self.star_class(module_name(cls.path), base) or qualname
            found.append(qualname)
        return found

    def _bases(self, qualname: str) -> list[str]:
        cls = self.classes.get(qualname)
        return self.base_classes(cls) if cls is not None else []

    def _mro(self, qualname: str) -> list[str]:
        """The class and its repository bases, depth first, each once (cycles cut)."""
        order: list[str] = []
        stack = [qualname]
        while stack and len(order) < 64:
            current = stack.pop()
            if current in order:
                continue
            order.append(current)
            cls = self.classes.get(current)
            if cls is not None:
                stack.extend(reversed(self.base_classes(cls)))
        return order

    def passes(self, qualname: str) -> int | None:
        """Which positional argument the nearest __init__ hands on alone, if it does."""
        for current in self._mro(qualname):
            cls = self.classes.get(current)
            if cls is not None and cls.has_init:
                return cls.passes
        return None

    def derives_from(self, qualname: str, base: str) -> bool:
        return base in self._mro(qualname)

    def is_exception(self, qualname: str) -> bool:
        """Derives from a builtin exception, or from a class whose name says it is one."""
        def own(name: str) -> bool | None:
            if name in self.classes:
                return None  # its bases say
            last = name.rpartition(".")[2]
            return last in BUILTIN_EXCEPTIONS if name.startswith("builtins.") \
                else last.endswith(_EXCEPTION_SUFFIXES)

        return qualname in self.classes and first_of_bases(
            qualname, self._is_exception, own, self._bases, False, bool)


V = TypeVar("V")


def first_of_bases(start: str, memo: dict[str, V], own: Callable[[str], V | None],
                   bases: Callable[[str], Iterable[str]], nothing: V,
                   found: Callable[[V], bool]) -> V:
    """What a class has of its own (`own`: None where its bases decide), else the first of its
    bases' answers that is `found`, depth first in the order of the bases; `nothing` where none
    is. `memo` keeps each class whose bases were read; a class met again while its bases are
    read (a cycle) reads as `nothing`. Iterative: a chain of bases is as long as the repository
    makes it."""
    if start in memo:
        return memo[start]
    first = own(start)
    if first is not None:
        return first
    memo[start] = nothing
    stack = [(start, iter(bases(start)))]
    while stack:
        base = next(stack[-1][1], None)
        if base is None:
            stack.pop()  # none of its bases has it: it stays `nothing`
            continue
        value = memo[base] if base in memo else own(base)
        if value is None:
            memo[base] = nothing
            stack.append((base, iter(bases(base))))
        elif found(value):  # each class on the stack takes the first base that has it
            for name, _ in stack:
                memo[name] = value
            break
    return memo[start]


def resolve(files: Sequence[VisitedFile]) -> Resolved:
    """Sites with class defaults applied and canonical exception names; the exception classes.

    A fault in one raise's or one class's reading (a bug no test has met yet) costs that reading
    only: the raise keeps the text its own reading gives (a message-less one stays without a
    record), the class stays out of the list, and the fault is in `faults`, once per class."""
    index = ClassIndex(files)
    resolved = Resolved(sites=[], exception_classes=[])
    for visited in files:
        for site in visited.sites:
            resolved.sites.extend(_contained(index, site, resolved, pending=False))
        for site in visited.pending:
            resolved.sites.extend(_contained(index, site, resolved, pending=True))
    resolved.sites = list(dict.fromkeys(resolved.sites))  # two readings its class made one
    digests: dict[str, str] = {}  # each class's part of `digest`, made once
    for qualname in sorted(index.classes):
        cls = index.classes[qualname]
        try:
            if index.is_exception(qualname):
                resolved.exception_classes.append(_class_entry(index, cls, digests))
        except Exception as error:  # noqa: BLE001 - one class's fault costs that class
            _fault(resolved, cls.path, f"class {qualname}", error)
    resolved.faults.sort(key=lambda s: (s.path, s.detail or ""))
    return resolved


def _contained(index: ClassIndex, site: RaiseSite, resolved: Resolved,
               pending: bool) -> list[RaiseSite]:
    """`_apply`, or where it faults the site as its own reading gives it, counted as before."""
    counts = (resolved.class_default, resolved.from_pending, resolved.renamed,
              dict(resolved.from_pending_by_path))
    try:
        return _apply(index, site, resolved, pending)
    except Exception as error:  # noqa: BLE001 - one class's fault costs that class's readings
        (resolved.class_default, resolved.from_pending, resolved.renamed,
         resolved.from_pending_by_path) = counts
        name = site.exception_qualname or site.exception
        cls = index.classes.get(name)
        _fault(resolved, cls.path if cls is not None else site.path, f"class {name}", error)
        return [] if pending else [site]


def _fault(resolved: Resolved, path: str, what: str, error: Exception) -> None:
    """A fault of the pass, in one line, once per class."""
    detail = f"{what}: the class pass failed ({type(error).__name__}: {error})"
    detail = " ".join(detail.split())[:300]
    if not any(f.path == path and f.detail == detail for f in resolved.faults):
        resolved.faults.append(Skipped(path, ANALYSIS_FAILED, detail))


def _apply(index: ClassIndex, site: RaiseSite, resolved: Resolved, pending: bool) -> list[RaiseSite]:
    if site.exception_qualname is None and not site.factory and "." not in site.exception:
        starred = index.star_class(module_name(site.path), site.exception)
        if starred is not None:  # a name its module has only through `from M import *`
            site = replace(site, exception_qualname=starred)
    if site.exception_qualname is None:
        return [] if pending else [site]
    qualname = index.canonical(site.exception_qualname)
    if site.factory and not (qualname in index.classes or qualname.startswith("builtins.")):
        return [] if pending else [site]  # a factory not followed: its qualname is a function's
    if qualname != site.exception_qualname and qualname in index.classes:
        site = replace(site, exception_qualname=qualname)
        resolved.renamed += 1
    composed = compose(index, qualname, None if pending else site.message,
                                 site.arguments)
    if composed is not None:
        return _composed(site, composed, resolved, pending)
    templates, origin, owner = index.templates(qualname)
    if not templates or (origin == "attribute" and not pending and site.message.kind != "dynamic"):
        return [] if pending else [_shown(index, qualname, site)]
    resolved.class_default += len(templates)
    if pending:
        _took_template(resolved, site)
    given = None if pending or site.message.kind == "dynamic" else _parameter(owner, site)
    made = []
    for template in templates:
        filled = substitute(template, given, site.message) if given else None
        made.append(replace(site, message=replace(filled or template, kind="class_default")))
    return made


def _took_template(resolved: Resolved, site: RaiseSite) -> None:
    """A message-less raise became a record: its file counts it as a raise without a message
    no more, like the manifest's totals."""
    resolved.from_pending += 1
    resolved.from_pending_by_path[site.path] = resolved.from_pending_by_path.get(site.path, 0) + 1


def _composed(site: RaiseSite, composed: Composed, resolved: Resolved,
              pending: bool) -> list[RaiseSite]:
    """The site as its class shows it; or its own template, marked, where that cannot be read."""
    if composed.not_followed is not None:
        if pending:
            return []  # no text of its own to keep
        return [replace(site, message=replace(site.message, not_followed=composed.not_followed))]
    resolved.class_default += len(composed.templates)
    if pending:
        _took_template(resolved, site)
    made = []
    for template in composed.templates:
        shown = redisplay(template, composed.display)
        made.append(replace(site, message=replace(shown, composed_by=composed.composed_by)))
    return made


def _parameter(owner: ClassDef | None, site: RaiseSite) -> str | None:
    """The __init__ parameter the raise's message argument binds, if the template shows it as is."""
    argument = site.message.argument
    if owner is None or argument is None:
        return None
    if argument.isdigit():
        index = int(argument)
        name = owner.params[index] if index < len(owner.params) else None
    else:
        name = argument if argument in owner.params or argument in owner.keywords else None
    return name if name in owner.verbatim else None


def _shown(index: ClassIndex, qualname: str, site: RaiseSite) -> RaiseSite:
    """A site's regex as the repository's class really shows its message."""
    message = site.message
    passes = index.passes(qualname)
    if message.display == "args" and passes is not None and message.argument == str(passes):
        return replace(site, message=redisplay(message, "str"))
    if message.display == "str" and index.derives_from(qualname, "builtins.KeyError"):
        return replace(site, message=redisplay(message, "repr"))
    return site


def _class_entry(index: ClassIndex, cls: ClassDef, digests: dict[str, str]) -> dict[str, Any]:
    templates, origin, _ = index.templates(cls.qualname)
    if not templates:
        templates, origin = _composed_default(index, cls.qualname)
    return {
        "qualname": cls.qualname,
        "name": cls.name,
        "bases": index.base_classes(cls),
        "path": cls.path,
        "line": cls.line,
        "template": templates[0].template if templates else None,
        "template_from": origin,
        "defined_at": templates[0].defined_at if templates else None,
        "composes": digest(index, cls.qualname, digests),
    }


def _composed_default(index: ClassIndex, qualname: str) -> tuple[tuple[Template, ...], str | None]:
    """What `raise Cls()` shows when its `__init__`s compose the text (`self.error_msg` handed to
    `super().__init__`): the template its message-less raises' records have."""
    composed = compose(index, qualname, None, ())
    if composed is None or not composed.templates or composed.composed_by is None \
            or not composed.composed_by.endswith(".__init__"):
        return (), None  # a __str__'s text is not the manifest's `init` or `attribute`
    return composed.templates, "init"


def linearize(index: ClassIndex, qualname: str) -> list[str]:
    """The class's MRO over the repository's classes (C3); a class not ours ends its line."""
    memo: dict[str, list[str]] = {}

    def mro(name: str, depth: int) -> list[str]:
        if name in memo:
            return memo[name]
        cls = index.classes.get(name)
        if cls is None or depth > 32:
            return [name]
        memo[name] = [name]  # a cycle reads as a class without bases
        bases = index.base_classes(cls)
        merged = _merge([mro(base, depth + 1) for base in bases] + [bases])
        memo[name] = [name, *merged]
        return memo[name]

    return mro(qualname, 0)


def _merge(sequences: list[list[str]]) -> list[str]:
    """C3's merge; where it has no answer, the depth-first order, each name once."""
    pending = [list(s) for s in sequences if s]
    result: list[str] = []
    while pending:
        for sequence in pending:
            head = sequence[0]
            if not any(head in other[1:] for other in pending):
                break
        else:
            rest = [name for s in pending for name in s]
            return result + [n for i, n in enumerate(rest) if n not in rest[:i]]
        result.append(head)
        pending = [[n for n in s if n != head] for s in pending]
        pending = [s for s in pending if s]
    return result


def digest(index: ClassIndex, qualname: str, memo: dict[str, str] | None = None) -> str:
    """16 hex of all that `compose` reads of a class and its repository bases, in MRO order: the
    manifest keeps it, so that a change to a base reaches the files that raise a subclass.

    `memo`: each class's JSON by name, kept across the calls of one pass (a base is in the MRO
    of each of its subclasses); the list's JSON is its items' joined, as `json.dumps` writes it.
    """
    memo = {} if memo is None else memo
    texts = []
    for name in linearize(index, qualname):
        text = memo.get(name)
        if text is None:
            text = memo[name] = _json(_digest_part(index, name))
        texts.append(text)
    text = "[" + ",".join(texts) + "]"
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _digest_part(index: ClassIndex, name: str) -> object:
    """What `digest` reads of one class of the MRO (a class not ours: its name)."""
    cls = index.classes.get(name)
    if cls is None:
        return name
    return [cls.qualname, cls.name, cls.has_init, cls.params, cls.keywords, cls.init_target,
            place(cls), *(_slot_data(slot) for slot in (*cls.init_args, *cls.self_attributes,
                                                         *cls.class_attributes, *cls.methods))]


def _slot_data(slot: TextSlot) -> object:
    """A slot's fields; `if_given` and `guards` (added later) only where set, so that a class
    that does not use them keeps the digest the manifests already hold."""
    data = _data(slot)
    assert isinstance(data, dict)
    if data["if_given"] is None:
        del data["if_given"]
    if not data["guards"]:
        del data["guards"]
    return data


def _data(value: object) -> object:
    """What JSON makes of `asdict(value)`, without `asdict`'s deep copy of every leaf (the
    digest only writes it): a record as a dict of its fields, tuples as lists, at every depth."""
    if isinstance(value, (tuple, list)):
        return [_data(item) for item in value]
    if isinstance(value, dict):
        return {key: _data(item) for key, item in value.items()}
    names = _FIELDS_OF.get(type(value))
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            return value
        names = _FIELDS_OF[type(value)] = tuple(f.name for f in fields(value))
    return {name: _data(getattr(value, name)) for name in names}


_FIELDS_OF: dict[type, tuple[str, ...]] = {}  # a record type -> its field names, in order


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def place(cls: ClassDef) -> str:
    return cls.templates[0].defined_at if cls.templates and cls.templates[0].defined_at \
        else f"{cls.path}:{cls.line}"


MAX_CALLS = 4  # message methods a __str__ may go through


@dataclass(frozen=True)
class Composed:
    """What str(exc) shows for one raise: its templates, or the method that could not be read."""

    templates: tuple[Template, ...]
    composed_by: str | None
    not_followed: str | None = None
    display: str = "str"  # "repr": a KeyError's own __str__ shows the one argument's repr


class _NotFollowed(Exception):
    """A step of the class's transform cannot be read exactly; carries the method's name."""


class _Unknown(Exception):
    """A step this pass does not model (`*args` handed on): the raise is read as before."""


@dataclass
class _Run:
    """One raise followed through its class: the bindings met on the way."""

    index: ClassIndex
    raised: ClassDef
    mro: list[str]
    attributes: dict[str, list[list[Piece]] | None] = field(default_factory=dict)
    composed_by: str | None = None
    defined_at: str | None = None
    calls: int = 0
    args_set_by: str | None = None  # an __init__ that assigns self.args: what args hold is unknown
    # `self.x` is None (True) or not (False) where the raise's call says: an `__init__`'s
    # `self.x = P` and what the call gives P, or literal text; absent: not known
    is_none: dict[str, bool] = field(default_factory=dict)


def compose(index: ClassIndex, raised: str, given: Template | None,
            arguments: tuple[CallArgument, ...] | None = None) -> Composed | None:
    """`str(exc)` of `raised(...)` whose message argument reads as `given` (None: no text).

    `arguments`, the call's as written, pick the branch of an `if P is None: P = ...` that runs.
    None when the class leaves the message as the raise reads it (no __init__ that changes it,
    no __str__), or hands on `*args`.
    """
    cls = index.classes.get(raised)
    if cls is None:
        return None
    run = _Run(index, cls, linearize(index, raised))
    try:
        args = _through_inits(run, given, arguments)
        shown = _through_str(run, args, given)
    except _NotFollowed as error:
        return Composed((), None, not_followed=str(error))
    except _Unknown:
        return None
    display = "str"
    if shown is None and run.args_set_by is not None:
        return Composed((), None, not_followed=run.args_set_by)
    if shown is None:  # BaseException.__str__ of the args
        if run.composed_by is None:
            return None  # the raise's own args, as the raise reads them
        if len(args) != 1 or args[0][0] != "0":
            return Composed((), None, not_followed=run.composed_by)
        shown = args[0][1]
        if "builtins.KeyError" in run.mro:
            display = "repr"
    if given is None and not any(p.text for pieces in shown for p in pieces
                                 if not p.is_placeholder):
        return Composed((), None, not_followed=run.composed_by)  # no text at all to show
    templates = tuple(build_template("class_default", pieces, defined_at=run.defined_at)
                      for pieces in _unique(shown))
    return Composed(templates, run.composed_by, display=display)


Args = list[tuple[str, list[list[Piece]]]]  # what a call hands on: (position or keyword, texts)


def _through_inits(run: _Run, given: Template | None,
                   arguments: tuple[CallArgument, ...] | None) -> Args:
    """The args that reach BaseException: the raise's own, or what the last __init__ hands on."""
    handed: Args = []
    raised_text = pieces_of(given) if given is not None else None
    if given is not None and given.argument is not None and raised_text is not None:
        handed = [(given.argument, [raised_text])]
    cls = _next_init(run, 0)
    states = _given_by_call(cls, arguments) if cls is not None else None
    first = cls
    for _ in range(len(run.mro) + 1):
        if cls is None:
            return handed
        env = _bind(cls, handed)
        if cls is first:
            env = {**_call_texts(cls, arguments, given), **env}
        if any(s.name == "args" for s in cls.self_attributes):
            run.args_set_by = f"{cls.qualname}.__init__"  # `self.args = ...`: not modelled
        if cls.init_target is None:
            run.attributes.update(_instance_attributes(run, cls, env, states))
            return handed  # no base __init__ called: args stay the raise's
        method = f"{cls.qualname}.__init__"
        if cls.init_target == SEVERAL:
            raise _NotFollowed(method)  # two base __init__s run: not modelled
        if any(slot.name == "*" for slot in cls.init_args):
            raise _Unknown
        init_args = [_branch(slot, states) for slot in cls.init_args]
        slots = [(slot.name, _fill_slot(run, slot, env, method)) for slot in init_args]
        if not all(_passes_on(slot, env) for slot in init_args) \
                or len(init_args) != len(handed):
            run.composed_by = method
            run.defined_at = run.defined_at or place(cls)
        run.attributes.update(_instance_attributes(run, cls, env, states))
        cls, handed = _following(run, cls), slots
        states = _given_by_slots(cls, slots) if cls is not None else None
    raise _NotFollowed(f"{run.raised.qualname}.__init__")


def _bind(cls: ClassDef, handed: Args) -> dict[str, list[list[Piece]]]:
    """The texts handed to an __init__, by its parameter names."""
    env = {}
    for key, texts in handed:
        if key.isdigit():
            if int(key) < len(cls.params):
                env[cls.params[int(key)]] = texts
        elif key in cls.params or key in cls.keywords:
            env[key] = texts
    return env


def _given_by_call(cls: ClassDef, arguments: tuple[CallArgument, ...] | None
                   ) -> dict[str, bool] | None:
    """Which of an __init__'s parameters the raise gives a value other than None (True) and
    which it leaves None, omitted or a literal None (False); None where that is not known."""
    if arguments is None or any(a.keyword in ("*", "**") for a in arguments):
        return None
    states = dict.fromkeys((*cls.params, *cls.keywords), False)
    positional = [a for a in arguments if a.keyword is None]
    for name, argument in zip(cls.params, positional):
        states[name] = not (argument.literal and argument.source == "None")
    for argument in arguments:
        if argument.keyword in states:
            states[argument.keyword] = not (argument.literal and argument.source == "None")
    return states


def _call_texts(cls: ClassDef, arguments: tuple[CallArgument, ...] | None,
                given: Template | None) -> dict[str, list[list[Piece]]]:
    """The raise's other arguments that are text to the class: literal text, as it is, and
    the expression given for a parameter an `if P is None:` fills, by its source."""
    guarded = {slot.if_none for slot in (*cls.init_args, *cls.self_attributes)} - {None}
    found: dict[str, list[list[Piece]]] = {}
    positional = [a for a in (arguments or ()) if a.keyword is None]
    keyed = [(a.keyword, a) for a in (arguments or ()) if a.keyword not in (None, "*", "**")]
    for name, argument in [*zip(cls.params, positional), *keyed]:
        assert name is not None
        text = _literal_text(argument)
        if text is not None:
            found[name] = [[Piece(text)]]
        elif name in guarded and not argument.literal:
            found[name] = [[Piece(argument.source, True)]]
    return found


def _literal_text(argument: CallArgument) -> str | None:
    if not argument.literal:
        return None
    try:
        value = ast.literal_eval(argument.source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _given_by_slots(cls: ClassDef, handed: Args) -> dict[str, bool]:
    """The same for an __init__ that a class's own __init__ calls, from what it hands on."""
    states = dict.fromkeys((*cls.params, *cls.keywords), False)
    for name, texts in _bind(cls, handed).items():
        states[name] = texts != [[Piece("None", True)]]
    return states


def _branch(slot: TextSlot, states: dict[str, bool] | None) -> TextSlot:
    """A slot read through `if P is None: P = ...`, cut to the branch the call runs."""
    if slot.if_none is None or states is None or slot.if_none not in states:
        return slot
    own = "{" + slot.if_none + "}"
    kept = tuple(t for t in slot.templates if (t.template == own) == states[slot.if_none])
    return replace(slot, templates=kept) if kept else slot


def _passes_on(slot: TextSlot, env: dict[str, list[list[Piece]]]) -> bool:
    """The slot is one bound parameter, handed on as it came."""
    return (len(slot.templates) == 1 and len(slot.templates[0].placeholders) == 1
            and slot.templates[0].template == "{" + slot.templates[0].placeholders[0] + "}"
            and slot.templates[0].placeholders[0] in env)


def _following(run: _Run, cls: ClassDef) -> ClassDef | None:
    """The repository __init__ that `cls`'s own calls; None: a builtin's or another package's."""
    if cls.init_target == "super":
        if cls.qualname not in run.mro:
            raise _NotFollowed(f"{cls.qualname}.__init__")
        return _next_init(run, run.mro.index(cls.qualname) + 1)
    assert cls.init_target is not None
    target = run.index.canonical(cls.init_target)
    if target not in run.index.classes:
        return None
    order = linearize(run.index, target)
    found = _first_init(run.index, order, 0)
    return found


def _next_init(run: _Run, start: int) -> ClassDef | None:
    return _first_init(run.index, run.mro, start)


def _first_init(index: ClassIndex, order: list[str], start: int) -> ClassDef | None:
    """The first class from `start` on that defines __init__; None at a class not ours."""
    for qualname in order[start:]:
        cls = index.classes.get(qualname)
        if cls is None:
            return None
        if cls.has_init:
            return cls
    return None


def _instance_attributes(run: _Run, cls: ClassDef, env: dict[str, list[list[Piece]]],
                         states: dict[str, bool] | None) -> dict[str, list[list[Piece]] | None]:
    """`self.x = ...` of one __init__, filled in; an attribute set twice is not known."""
    found: dict[str, list[list[Piece]] | None] = {}
    for slot in (_branch(s, states) for s in cls.self_attributes):
        if slot.if_given is not None and states is not None and states.get(slot.if_given) is False:
            continue  # `if P is not None: self.x = ...` where the call leaves P None: not set
        if slot.name in found or slot.name in run.attributes:
            found[slot.name] = None
            run.is_none.pop(slot.name, None)
            continue
        if _default_not_read(slot, states):
            found[slot.name] = None  # `if P is None: P = <not text>` ran: what it holds is not known
            continue
        none = _none_state(slot, states)
        if none is not None and slot.if_given is None:
            run.is_none[slot.name] = none
        try:
            found[slot.name] = _fill_slot(run, slot, env, f"{cls.qualname}.__init__")
        except _NotFollowed:
            found[slot.name] = None
    return found


def _default_not_read(slot: TextSlot, states: dict[str, bool] | None) -> bool:
    """`self.x = P` after an `if P is None: P = ...` whose value was not read as text (the slot
    is `{P}` alone), where the call leaves P None: the branch ran, and `{P}` is not what x holds
    (jinja's TemplateNotFound, `message = name`)."""
    own = "{" + slot.if_none + "}" if slot.if_none is not None else None
    return own is not None and states is not None and states.get(slot.if_none or "") is False \
        and all(t.template == own for t in slot.templates)


def _none_state(slot: TextSlot, states: dict[str, bool] | None) -> bool | None:
    """Whether `self.x = <slot>` sets None (True) or not (False) at this raise: a parameter
    as it came, the call giving it or not, or literal text; None: not known."""
    if all(t.kind == "literal" for t in slot.templates):
        return False
    if len(slot.templates) == 1 and len(slot.templates[0].placeholders) == 1 and states:
        name = slot.templates[0].placeholders[0]
        if slot.templates[0].template == "{" + name + "}" and name in states:
            return not states[name]
    return None


def _open_paths(run: _Run, slot: TextSlot) -> list[Template]:
    """The slot's templates whose `if` tests the raise does not decide against them."""
    return open_paths(slot, run.is_none.get, lambda name: _literal_text_only(run, name))


def _literal_text_only(run: _Run, name: str) -> bool:
    """`self.name` holds literal text at this raise, none of it empty."""
    texts = run.attributes.get(name)
    return bool(texts) and all(pieces and not any(p.is_placeholder or p.group for p in pieces)
                               for pieces in texts or ())


def _through_str(run: _Run, args: Args | None, given: Template | None
                 ) -> list[list[Piece]] | None:
    """The message as the nearest repository `__str__` makes it; None: BaseException's."""
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        slot = _method(cls, "__str__()")
        if slot is not None:
            method = f"{cls.qualname}.__str__"
            texts = _fill_slot(run, slot, {}, method, args, strict=True)
            if given is not None and not _shows(texts, given):
                raise _NotFollowed(method)  # the raise's text went where this pass lost it
            run.composed_by = method
            run.defined_at = run.defined_at or place(cls)
            return texts
    return None


def _shows(texts: list[list[Piece]], given: Template) -> bool:
    """Some alternative holds the raise's own template, when the raise has literal text."""
    pieces = pieces_of(given) or []
    if not any(p.text for p in pieces if not p.is_placeholder):
        return True  # no literal text of its own to keep
    return any(given.template in build_template("literal", option).template for option in texts)


def _method(cls: ClassDef, name: str) -> TextSlot | None:
    return next((slot for slot in cls.methods if slot.name == name), None)


def _fill_slot(run: _Run, slot: TextSlot, env: dict[str, list[list[Piece]]], method: str,
               args: Args | None = None, strict: bool = False) -> list[list[Piece]]:
    """Every alternative of a slot with its placeholders filled; raises _NotFollowed.

    A placeholder nothing fills stays as it is, named by its expression: exact, if vague. But
    an expression that cannot be read and takes the raise's text (`format_error(message)`), or
    any that cannot be read in a `__str__` (`strict`), would hide the message: not followed.
    """
    aliases = dict(slot.aliases)
    filled: list[list[Piece]] = []
    templates = _open_paths(run, slot)
    if not templates or slot.guards and len(templates) > MAX_ALTERNATIVES:
        raise _NotFollowed(method)  # no path, or more than a message's alternatives, left
    for template in templates:
        pieces = pieces_of(template)
        if pieces is None:
            raise _NotFollowed(method)
        options: list[list[Piece]] = [[]]
        for piece in pieces:
            choices = [[piece]]
            if piece.is_placeholder:
                value = _value(run, piece.text, env, aliases, args) \
                    if piece.text in slot.verbatim else None
                if value is not None:
                    choices = value
                elif template.kind == "dynamic" and (strict or _takes(piece.text, env)):
                    raise _NotFollowed(method)
            options = [done + more for done in options for more in choices]
            if len(options) > MAX_ALTERNATIVES:
                raise _NotFollowed(method)
        filled += [merge_text(option) for option in options]
    return filled


def _takes(expression: str, env: dict[str, list[list[Piece]]]) -> bool:
    """The expression reads one of the parameters bound to text."""
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", expression) for name in env)


def _value(run: _Run, name: str, env: dict[str, list[list[Piece]]], aliases: dict[str, str],
           args: Args | None) -> list[list[Piece]] | None:
    """The texts a placeholder stands for, when the class says; None: it stays a placeholder."""
    if name in env:
        return env[name]
    expression = aliases.get(name, name)
    if expression in ("self.__class__.__name__", "type(self).__name__"):
        return [[Piece(run.raised.name)]]
    if expression in ("super().__str__()", "str(self.args[0])", "self.args[0]") \
            or expression.endswith(".__str__(self)"):
        if run.args_set_by is not None:
            raise _NotFollowed(run.args_set_by)
        if args is not None and len(args) == 1 and args[0][0] == "0":
            return args[0][1]
        return None
    formatted = _KEYWORD_FORMAT.fullmatch(expression)
    if formatted is not None:  # `self.fmt.format(**kwargs)`: each class's own `fmt`
        texts = _attribute(run, formatted["name"], args)
        return None if texts is None else _format_fields(texts)
    if expression.startswith("self.") and expression.endswith("()"):
        return _call(run, expression[5:], args)
    if expression.startswith("self.") and expression[5:].isidentifier():
        return _attribute(run, expression[5:], args)
    if expression.startswith("str(self.") and expression.endswith(")") \
            and expression[9:-1].isidentifier():
        return _attribute(run, expression[9:-1], args)  # str() of text is the text
    owner, dot, name = expression.partition(".")
    if dot and owner.isidentifier() and name.isidentifier():
        return _named_class_attribute(run, owner, name)
    return None


# `self.name.format(**mapping)`: a class attribute's text used as a format string, its fields
# filled from keywords: botocore's `BotoCoreError.__init__` (`msg = self.fmt.format(**kwargs)`),
# pydantic v1's `PydanticErrorMixin.__str__` (`self.msg_template.format(**self.__dict__)`);
# not `self.fmt.format(value)` (positional fields) nor `self.fmt % kwargs`.
_KEYWORD_FORMAT = re.compile(r"self\.(?P<name>[A-Za-z_]\w*)\.format\(\*\*[^()]*\)")


def _format_fields(texts: list[list[Piece]]) -> list[list[Piece]] | None:
    """Texts of a class attribute read as format strings: `{field}` a placeholder named by its
    field, `{{` a brace; None when one is no format string a mapping fills (a positional or
    empty field, unbalanced braces) or holds a placeholder of its own."""
    found: list[list[Piece]] = []
    for pieces in texts:
        if any(piece.is_placeholder for piece in pieces):
            return None
        try:
            parsed = list(string.Formatter().parse("".join(piece.text for piece in pieces)))
        except ValueError:
            return None
        text: list[Piece] = []
        for literal, field_name, spec, conversion in parsed:
            if literal:
                text.append(Piece(literal))
            if field_name is None:
                continue
            if not field_name or field_name[0].isdigit():
                return None  # filled by position: `format(**mapping)` raises
            text.append(Piece(field_name, True, plain=not (spec or conversion)))
        found.append(merge_text(text))
    return found


def _named_class_attribute(run: _Run, owner: str, name: str) -> list[list[Piece]] | None:
    """`Owner.name` where `Owner` is a class of the raised class's MRO, by its own name: the
    class attribute as `Owner` has it, its own or a base's (never a subclass's, nor `self`'s)."""
    names = [getattr(run.index.classes.get(q), "name", None) for q in run.mro]
    if owner not in names:
        return None
    for qualname in run.mro[names.index(owner):]:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        text = _class_attribute(cls, name)
        if text is not None:
            return text
    return None


def _attribute(run: _Run, name: str, args: Args | None) -> list[list[Piece]] | None:
    """`self.name`: set by an __init__ on the way, else a class attribute, else a property."""
    if name in run.attributes:
        return run.attributes[name]
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        text = _class_attribute(cls, name)
        if text is not None:
            return text
        if _method(cls, name) is not None:  # a property
            return _call(run, name, args)
    return None


def _class_attribute(cls: ClassDef, name: str) -> list[list[Piece]] | None:
    """The texts of the class's own text attribute `name` (a class-body assignment)."""
    attribute = next((s for s in cls.class_attributes if s.name == name), None)
    return None if attribute is None else [pieces_of(t) or [Piece(t.template)]
                                           for t in attribute.templates]


def _call(run: _Run, name: str, args: Args | None) -> list[list[Piece]] | None:
    """`self.name()` (`name` ends in "()") or a property: the returns of the nearest message
    method of that name."""
    if run.calls >= MAX_CALLS:
        return None
    run.calls += 1
    for qualname in run.mro:
        cls = run.index.classes.get(qualname)
        if cls is None:
            return None
        slot = _method(cls, name)
        if slot is not None:
            try:
                method = f"{cls.qualname}.{name.removesuffix('()')}"
                return _fill_slot(run, slot, {}, method, args, strict=True)
            except _NotFollowed:
                return None
    return None


def _unique(alternatives: list[list[Piece]]) -> list[list[Piece]]:
    seen: list[list[Piece]] = []
    for pieces in alternatives:
        if pieces not in seen:
            seen.append(pieces)
    return seen
