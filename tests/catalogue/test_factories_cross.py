"""Factories and helpers of another module: followed by the repository-wide pass, and by updates."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from crawler.catalogue import factories
from crawler.parse.file_tasks import visit_file
from crawler.parse.visitor import find_raise_sites
from crawler.pipeline import extract, update
from crawler.store._outcome_json import outcome_from_data, outcome_json
from tests.helpers.classes import templates
from tests.helpers.gitrepo import GitRepo
from tests.helpers.runtime_harness import Visited

MESSAGES = '''\
def too_many(n):
    return f"TEXT: {n}"
'''
USER = '''\
from pkg.messages import too_many


def use(n):
    raise ValueError(too_many(n))
'''


def test_a_changed_helper_reaches_the_unchanged_caller(make_repo: Callable[[str], GitRepo],
                                                       tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/messages.py", MESSAGES.replace("TEXT", "too many values"))
    repo.write("pkg/use.py", USER)
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = extract(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert templates(first.folder)["pkg/use.py"] == "too many values: {n}"

    repo.write("pkg/messages.py", MESSAGES.replace("TEXT", "more values than allowed"))
    repo.commit("reword the helper only")
    second = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert second.parsed == 2  # the helper's module, and the caller merged again
    assert templates(second.folder)["pkg/use.py"] == "more values than allowed: {n}"

    third = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert third.files_written == 0

    # Another function of the helper's module changes: the helper is read as a stub now, and
    # what it exposes is carried from the previous version.
    repo.write("pkg/messages.py", "def other():\n    return 1\n\n\n"
               + MESSAGES.replace("TEXT", "more values than allowed"))
    repo.commit("a function above the helper")
    fourth = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert templates(fourth.folder)["pkg/use.py"] == "more values than allowed: {n}"


def _visit(files: dict[str, str]) -> list[Visited]:
    visited = []
    for path, text in files.items():
        found = find_raise_sites(path, text.encode(), path.removesuffix(".py")
                                 .removesuffix("/__init__").replace("/", "."))
        visited.append(Visited(path, found.sites, found.pending, found.classes, found.exports,
                               found.exposed))
    return visited


def _sites(files: dict[str, str]) -> list[tuple[str | None, str, str | None, str | None]]:
    settled = factories.settled_files(_visit(files))
    return [(s.exception_qualname, s.message.template, s.message.via, s.message.reason)
            for v in settled for s in v.sites]


def test_a_factory_re_exported_by_a_package_is_followed() -> None:
    found = _sites({
        "pkg/__init__.py": "from pkg._errors import make_error\n",
        "pkg/_errors.py": "def make_error(name, shape):\n"
                          "    return TypeError(f'{name} got shape {shape}')\n",
        "pkg/use.py": "import pkg as p\n\n\ndef f(s):\n    raise p.make_error('reshape', s)\n",
    })
    assert found == [("builtins.TypeError", "reshape got shape {s}", "pkg._errors.make_error",
                      None)]


def test_a_helper_that_calls_a_third_module_is_not_followed_and_says_why() -> None:
    found = _sites({
        "a.py": "from b import outer\n\n\ndef f(n):\n    raise ValueError(outer(n))\n",
        "b.py": "from c import inner\n\n\ndef outer(n):\n    return inner(n)\n",
        "c.py": "def inner(n):\n    return f'{n} is too many'\n",
    })
    ((qualname, template, via, reason),) = found
    assert (qualname, template, via) == ("builtins.ValueError", "{outer(n)}", None)
    assert reason is not None and "`b.outer`" in reason


def test_a_cycle_of_helpers_stays_dynamic() -> None:
    found = _sites({
        "a.py": "from b import ping\n\n\ndef pong(n):\n    return ping(n)\n\n\n"
                "def f(n):\n    raise ValueError(ping(n))\n",
        "b.py": "from a import pong\n\n\ndef ping(n):\n    return pong(n)\n",
    })
    ((qualname, template, via, reason),) = found
    assert (template, via) == ("{ping(n)}", None) and reason is not None


def test_a_name_outside_the_repository_keeps_the_workers_reading() -> None:
    visited = _visit({"a.py": "from textwrap import dedent\n\n\n"
                              "def f(s):\n    raise ValueError(dedent(s))\n"})
    (site,) = visited[0].sites
    (after,) = factories.settled_files(visited)[0].sites
    assert after == site and after.message.kind == "dynamic"
    assert after.message.reason == "`dedent(s)` is a call whose text is not read off the source"


def test_calls_and_exposed_functions_survive_the_result_cache() -> None:
    outcome = visit_file("pkg/use.py", "0" * 40,
                         b"from pkg.m import helper, make\n\n\ndef f(n):\n"
                         b"    raise ValueError(helper('x', n))\n\n\n"
                         b"def g(n):\n    raise make(n)\n\n\n"
                         b"def h(n):\n    return f'{n}!'\n")
    assert outcome.exposed and all(s.cross_calls for s in outcome.sites)
    assert outcome_from_data(json.loads(outcome_json(outcome))) == outcome
