"""An update follows a class default into files that did not change themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.pipeline import extract, update
from crawler.store import record_files
from tests.helpers.classes import templates
from tests.helpers.gitrepo import GitRepo

ERRORS = '''\
class BadThing(Exception):
    def __init__(self, name):
        super().__init__(f"TEXT: {name}")
'''
USER = '''\
from pkg.errors import BadThing


def use(name):
    raise BadThing(name)
'''


def test_a_changed_class_default_reaches_unchanged_files(make_repo: Callable[[str], GitRepo],
                                                         tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/errors.py", ERRORS.replace("TEXT", "bad thing"))
    repo.write("pkg/use.py", USER)
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = extract(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert templates(first.folder)["pkg/use.py"] == "bad thing: {name}"
    (record,) = [r for r in first.merged.records if r.site.path == "pkg/use.py"]

    repo.write("pkg/errors.py", ERRORS.replace("TEXT", "a bad thing happened"))
    repo.commit("reword the class default")
    second = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert second.parsed == 2  # the changed file, and the unchanged one that raises its class
    assert templates(second.folder)["pkg/use.py"] == "a bad thing happened: {name}"
    moved = record_files.load_record(second.folder / "errors" / f"{record.id}.yaml")
    assert moved.site.message.kind == "class_default"
    assert moved.status == "needs_review" or moved.annotation.is_empty

    third = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert third.files_written == 0
