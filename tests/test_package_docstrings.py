"""Each package of the crawler opens with what it owns and a worked example of its contract.

The examples that are doctests run here, so a change of behaviour that makes one untrue fails
the suite (as Babel's `Catalog.update` doctest does); the others are plain example blocks.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "crawler"
PACKAGES = sorted(
    ".".join(("crawler", *init.parent.relative_to(ROOT).parts))
    for init in ROOT.rglob("__init__.py")
    if init.parent != ROOT
)


def test_every_package_is_found() -> None:
    """The list is the folders', not a copy: a new package is checked without a word here."""
    assert {"crawler.catalogue", "crawler.parse.message", "crawler.serve.lookup"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_the_docstring_says_what_the_package_owns_and_shows_an_example(name: str) -> None:
    doc = importlib.import_module(name).__doc__ or ""
    first = doc.split("\n\n", 1)[0]
    assert "TODO" not in doc, f"{name}: the docstring is a placeholder"
    assert len(first.split()) >= 8, f"{name}: the docstring opens with no paragraph: {first!r}"
    has_doctest = ">>> " in doc
    has_block = any(line.startswith("    ") and line.strip() for line in doc.splitlines())
    assert has_doctest or has_block, f"{name}: no worked example (a doctest or an indented block)"


@pytest.mark.parametrize("name", PACKAGES)
def test_the_docstring_examples_run(name: str) -> None:
    """Only the package's own docstring: recurse=False leaves the functions it imports alone."""
    module = importlib.import_module(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder(recurse=False).find(module, name)
    for test in tests:
        runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
