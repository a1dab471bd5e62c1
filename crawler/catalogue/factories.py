"""What a raise of another module's callable raises: a class of the repository, or a factory.

A worker sees one file, so `raise errors.bad_thing(msg)` or `raise error(msg)` with `error`
imported is read there as an unknown callee: its argument's template is kept, `factory` is set
and the template's `reason` says why (`crawler.parse.calls`). Here, with every module's classes
and re-exports at hand (`ClassIndex`), such a site is settled before the class pass:

- the name is a class of the repository (`from ._constants import error`, a lower-case class):
  it is no factory; the class pass then composes its message like any other raise;
- the name is something else a repository module defines (a function): the template stays the
  argument's, and the reason says that the function is not followed across modules;
- the name is outside the repository: the site stays as the worker read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from crawler.catalogue.classes import ClassIndex, VisitedFile
from crawler.records import RaiseSite


def settle(index: ClassIndex, sites: Sequence[RaiseSite]) -> list[RaiseSite]:
    """The sites, with each unknown callee of the repository told apart: class or function."""
    return [_settled(index, site) for site in sites]


def settled_files(files: Sequence[VisitedFile]) -> list[VisitedFile]:
    """The files with their sites settled, for the class pass; a file with nothing to settle is
    passed on as it is."""
    if not any(_unknown_callee(site) for visited in files for site in visited.sites):
        return list(files)
    index = ClassIndex(files)
    result: list[VisitedFile] = []
    for visited in files:
        if any(_unknown_callee(site) for site in visited.sites):
            visited = replace(visited, sites=tuple(settle(index, visited.sites)))  # type: ignore[type-var]
        result.append(visited)
    return result


def _unknown_callee(site: RaiseSite) -> bool:
    return site.factory and site.exception_qualname is not None \
        and site.message.reason is not None and site.message.via is None


def _settled(index: ClassIndex, site: RaiseSite) -> RaiseSite:
    if not _unknown_callee(site):
        return site
    assert site.exception_qualname is not None
    qualname = index.canonical(site.exception_qualname)
    if qualname in index.classes:
        return replace(site, factory=False, message=replace(site.message, reason=None))
    module = qualname.rpartition(".")[0]
    if module in index.exports:
        reason = (f"built by `{qualname}`, a function of another module of the repository: not "
                  "followed across modules; the template is its argument's")
        return replace(site, message=replace(site.message, reason=reason))
    return site
