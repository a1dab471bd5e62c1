"""Packages visited as a run visits them, and their class defaults resolved."""

from __future__ import annotations

from pathlib import Path

from crawler.catalogue import classes
from crawler.parse.module_names import module_name
from crawler.parse.visitor import find_raise_sites
from crawler.records import RaiseSite, Template
from crawler.store import record_files
from tests.helpers.runtime_harness import Visited


def visit_package(root: Path) -> list[Visited]:
    visited = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).as_posix()
        found = find_raise_sites(relative, path.read_bytes(), module_name(relative))
        visited.append(Visited(relative, found.sites, found.pending, found.classes, found.exports))
    return visited


def by_function(resolved: classes.Resolved) -> dict[str, list[RaiseSite]]:
    sites: dict[str, list[RaiseSite]] = {}
    for site in resolved.sites:
        sites.setdefault(site.function or "", []).append(site)
    return sites


def resolve_sources(files: dict[str, str]) -> classes.Resolved:
    """The class pass over in-memory files: path to source."""
    visited = []
    for path, text in files.items():
        found = find_raise_sites(path, text.encode(), module_name(path))
        visited.append(Visited(path, found.sites, found.pending, found.classes, found.exports))
    return classes.resolve(visited)


def messages(resolved: classes.Resolved) -> dict[str, list[Template]]:
    return {name: [s.message for s in sites] for name, sites in by_function(resolved).items()}


def templates(folder: Path) -> dict[str, str]:
    records = [record_files.load_record(p) for p in record_files.iter_record_paths(folder)]
    return {r.site.path: r.site.message.template for r in records if r.status != "removed"}
