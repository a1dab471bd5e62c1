"""The repository-wide pass, after every file is visited: class defaults and exception classes.

Each file's visit returns its sites, its message-less raises (`pending`), the classes it defines
and its module-level bindings (`exports`). This pass, linear in those, then

- follows re-exports to the class a name really is (`pkg.Error` imported in `pkg/__init__.py`
  from `pkg.errors` becomes `pkg.errors.Error`);
- gives a raise of a class that changes its message (an `__init__` chain that wraps it, a
  `__str__`, a class attribute handed on) the message as `str(exc)` shows it (`composing`), kind
  `class_default`, with the method that composed it, or marks the method it could not read;
- else, as before: a class whose `__init__` passes a template to `super().__init__` (or, when
  the raise has no text of its own, that sets a class-level `message`) gives that template,
  inherited through bases that do not define `__init__`;
- lists the classes that are exceptions, with their bases, for the manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from crawler.catalogue import class_order, composing
from crawler.parse.message.templates import redisplay, substitute
from crawler.parse.names import BUILTIN_EXCEPTIONS, STAR, module_name
from crawler.records import ClassDef, RaiseSite, Skipped, Template

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

    def _bases(self, qualname: str) -> list[str]:
        cls = self.classes.get(qualname)
        return [self.canonical(base) for base in cls.bases] if cls is not None else []

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
                stack.extend(reversed([self.canonical(b) for b in cls.bases]))
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
    digests: dict[str, str] = {}  # each class's part of `class_order.digest`, made once
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
    composed = composing.compose(index, qualname, None if pending else site.message,
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


def _composed(site: RaiseSite, composed: composing.Composed, resolved: Resolved,
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
        "bases": [index.canonical(base) for base in cls.bases],
        "path": cls.path,
        "line": cls.line,
        "template": templates[0].template if templates else None,
        "template_from": origin,
        "defined_at": templates[0].defined_at if templates else None,
        "composes": class_order.digest(index, cls.qualname, digests),
    }


def _composed_default(index: ClassIndex, qualname: str) -> tuple[tuple[Template, ...], str | None]:
    """What `raise Cls()` shows when its `__init__`s compose the text (`self.error_msg` handed to
    `super().__init__`): the template its message-less raises' records have."""
    composed = composing.compose(index, qualname, None, ())
    if composed is None or not composed.templates or composed.composed_by is None \
            or not composed.composed_by.endswith(".__init__"):
        return (), None  # a __str__'s text is not the manifest's `init` or `attribute`
    return composed.templates, "init"
