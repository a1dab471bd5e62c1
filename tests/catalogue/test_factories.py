"""Unknown callees told apart across modules: a class of the repository, or one of its functions."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from crawler.catalogue import classes, factories
from crawler.records import RaiseSite
from tests.helpers.classes import visit_package

CONSTANTS = '''\
class error(Exception):
    """A lower-case class, as `re` and `socket` name theirs."""


def make_error(msg):
    return ValueError(msg)
'''

PARSER = '''\
import os.path

from ._constants import error, make_error


def by_class(x="v"):
    raise error(f"bad token {x}")


def by_function():
    raise make_error("worse")


def by_outsider():
    raise os.path.thing("elsewhere")
'''


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "fpkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "_constants.py").write_text(CONSTANTS)
    (root / "parser.py").write_text(PARSER)
    return root


def sites_by_function(package: Path) -> dict[str, RaiseSite]:
    files = factories.settled_files(visit_package(package))
    return {site.function or "": site for site in classes.resolve(files).sites}


def test_a_repository_class_is_no_factory(package: Path) -> None:
    site = sites_by_function(package)["by_class"]
    assert (site.factory, site.message.reason) == (False, None)
    assert site.exception_qualname == "fpkg._constants.error"
    assert site.message.template == "bad token {x}"
    sys.path.insert(0, str(package.parent))
    try:
        from fpkg import parser  # type: ignore[import-not-found]

        with pytest.raises(Exception) as caught:
            parser.by_class()
        assert re.fullmatch(site.message.regex, str(caught.value))
    finally:
        sys.path.remove(str(package.parent))
        for name in [m for m in sys.modules if m == "fpkg" or m.startswith("fpkg.")]:
            del sys.modules[name]


def test_a_repository_function_says_it_is_not_followed(package: Path) -> None:
    site = sites_by_function(package)["by_function"]
    assert site.factory
    assert site.message.reason is not None
    assert "fpkg._constants.make_error" in site.message.reason
    assert "function of another module" in site.message.reason


def test_an_outside_callee_stays_as_read(package: Path) -> None:
    before = {s.function: s for f in visit_package(package) for s in f.sites}["by_outsider"]
    site = sites_by_function(package)["by_outsider"]
    assert site == before
    assert site.factory and site.message.template == "elsewhere"
    assert site.message.reason is not None and "no function of this module" in site.message.reason
