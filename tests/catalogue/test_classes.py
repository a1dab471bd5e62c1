"""The repository-wide pass: class defaults, re-exports, the exception class list."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from crawler.catalogue import classes
from crawler.parse.names import module_name
from crawler.parse.visitor import find_raise_sites
from crawler.records import ClassDef, RaiseSite

PACKAGES = Path(__file__).resolve().parents[1] / "packages"


@dataclass
class Visited:
    path: str
    sites: list[RaiseSite]
    pending: list[RaiseSite]
    classes: list[ClassDef]
    exports: dict[str, str] = field(default_factory=dict)


def visit_package(root: Path) -> list[Visited]:
    visited = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).as_posix()
        found = find_raise_sites(relative, path.read_bytes(), module_name(relative))
        visited.append(Visited(relative, found.sites, found.pending, found.classes, found.exports))
    return visited


@pytest.fixture
def resolved() -> classes.Resolved:
    return classes.resolve(visit_package(PACKAGES / "clspkg"))


def by_function(resolved: classes.Resolved) -> dict[str, list[RaiseSite]]:
    sites: dict[str, list[RaiseSite]] = {}
    for site in resolved.sites:
        sites.setdefault(site.function or "", []).append(site)
    return sites


def test_class_defaults(resolved: classes.Resolved) -> None:
    sites = by_function(resolved)
    expected = {
        "bad": ("clspkg.errors.BadThing", "class_default",
                "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "bad_module_alias": ("clspkg.errors.BadThing", "class_default",
                             "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "sub": ("clspkg.errors.Sub", "class_default",
                "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "templated": ("clspkg.errors.Templated", "class_default", "templated failure",
                      "clspkg/errors.py:16"),
        "templated_bare": ("clspkg.errors.Templated", "class_default", "templated failure",
                           "clspkg/errors.py:16"),
        "templated_custom": ("clspkg.errors.Templated", "literal", "custom text", None),
        "coded": ("clspkg.errors.Coded", "class_default", "code {code} failed",
                  "clspkg/errors.py:25"),
        "plain": ("clspkg.errors.Plain", "dynamic", "{m}", None),
        "plain_literal": ("clspkg.errors.Plain", "literal", "plain literal", None),
        "legacy": ("clspkg.errors.Legacy", "class_default", "legacy: {w}",
                   "clspkg/errors.py:35"),
    }
    got = {name: (s[0].exception_qualname, s[0].message.kind, s[0].message.template,
                  s[0].message.defined_at) for name, s in sites.items() if name in expected}
    assert got == expected
    assert "builtin_no_message" not in sites
    assert resolved.from_pending == 2
    (missing,) = sites["missing_key"]
    assert (missing.message.display, missing.message.regex) == (
        "repr", "^['\"]no key (?P<k>[\\s\\S]*?)['\"]$")
    (located,) = sites["located"]
    assert (located.message.kind, located.message.template, located.message.defined_at) == (
        "class_default", "{where}: empty file {path}; restore it", "clspkg/errors.py:55")
    (with_code,) = sites["with_code"]
    assert (with_code.message.display, with_code.message.regex) == (
        "str", "^bad (?P<x>[\\s\\S]*?)$")


def test_exception_classes(resolved: classes.Resolved) -> None:
    listed = {entry["qualname"]: entry for entry in resolved.exception_classes}
    assert sorted(listed) == [f"clspkg.errors.{name}" for name in (
        "BadThing", "BaseError", "Coded", "Legacy", "Located", "MissingKey", "Plain", "Sub",
        "Templated", "WithCode")]
    assert listed["clspkg.errors.Sub"]["bases"] == ["clspkg.errors.BadThing"]
    assert listed["clspkg.errors.BaseError"]["bases"] == ["builtins.Exception"]
    assert listed["clspkg.errors.Legacy"]["line"] == 33
    assert listed["clspkg.errors.Sub"]["template_from"] == "init"


@pytest.fixture
def importable() -> Iterator[None]:
    sys.path.insert(0, str(PACKAGES))
    try:
        yield
    finally:
        sys.path.remove(str(PACKAGES))
        for name in [n for n in sys.modules if n == "clspkg" or n.startswith("clspkg.")]:
            del sys.modules[name]


def test_class_default_regexes_match_the_real_messages(resolved: classes.Resolved,
                                                       importable: None) -> None:
    api = importlib.import_module("clspkg.api")
    checked = 0
    for name, sites in by_function(resolved).items():
        function = getattr(api, name, None)
        if function is None:
            continue
        with pytest.raises(Exception) as caught:
            function()
        message = str(caught.value)
        assert any(re.fullmatch(s.message.regex, message) for s in sites), (name, message)
        checked += 1
    assert checked == 13
