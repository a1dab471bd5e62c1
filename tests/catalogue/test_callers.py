"""A raise whose message is a parameter: its record takes the texts its callers pass, across
modules, as the crawler writes them; an update that changes a caller rewrites the raise's record."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from crawler.catalogue.callers import MAX_CALLERS
from crawler.parse.file_tasks import visit_file
from crawler.pipeline import extract, update
from crawler.store import record_files
from crawler.store._outcome_json import outcome_from_data, outcome_json
from tests.helpers.gitrepo import GitRepo

CHECKS = '''\
def check(pred, message):
    if not pred:
        raise ValueError(message)
'''
USER = '''\
from pkg.checks import check


def use(n):
    check(n > 0, "TEXT")
'''


def _messages(folder: Path) -> list[tuple[str, str, str | None]]:
    records = [record_files.load_record(p) for p in record_files.iter_record_paths(folder)]
    return sorted((r.site.message.template, r.site.message.kind, r.site.message.reason)
                  for r in records if r.status != "removed" and r.site.path == "pkg/checks.py")


def test_an_update_of_the_caller_rewrites_the_unchanged_raise(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/checks.py", CHECKS)
    repo.write("pkg/use.py", USER.replace("TEXT", "n must be positive"))
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = extract(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert _messages(first.folder) == [("n must be positive", "literal", None)]

    repo.write("pkg/use.py", USER.replace("TEXT", "n must be greater than zero"))
    repo.commit("reword the caller only")
    second = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert _messages(second.folder) == [("n must be greater than zero", "literal", None)]

    repo.write("pkg/use.py", USER.replace('"TEXT"', "str(n)"))
    repo.commit("the caller passes no text")
    third = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    [(template, kind, reason)] = _messages(third.folder)
    assert (template, kind) == ("{message}", "dynamic")
    assert reason is not None and "its callers pass no text" in reason and "pkg/use.py:5" in reason


def test_callers_past_the_bound_are_named_in_the_reason(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """As a user runs it: `crawler extract` writes MAX_CALLERS records, and says how many more."""
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/checks.py", CHECKS)
    calls = "".join(f'    check(n > {i}, "value number {i} is wrong")\n'
                    for i in range(MAX_CALLERS + 2))
    repo.write("pkg/use.py", "from pkg.checks import check\n\n\ndef use(n):\n" + calls)
    repo.commit("first")
    out = tmp_path / "out"
    subprocess.run(["crawler", "extract", str(repo.path), "-o", str(out), "--name", "lib",
                    "--no-evidence", "-q", "--cache-dir", str(tmp_path / "cache")], check=True)
    found = _messages(next(out.rglob("manifest.yaml")).parent)
    assert len(found) == MAX_CALLERS
    assert {kind for _, kind, _ in found} == {"literal"}
    assert all(reason is not None and "2 other calls" in reason for _, _, reason in found)
    assert ("value number 0 is wrong", "literal") == found[0][:2]


def test_a_files_text_calls_survive_the_result_cache() -> None:
    data = USER.replace("TEXT", "n must be positive").encode()
    outcome = visit_file("pkg/use.py", "0" * 40, data)
    [call] = outcome.text_calls
    assert (call.line, call.name, call.receiver) == (5, "check", None)
    assert [a.source for a in call.args] == ["n > 0", '"n must be positive"']
    assert call.args[0].readings is None and call.args[1].readings is not None
    again = outcome_from_data(json.loads(outcome_json(outcome)))
    assert again.text_calls == outcome.text_calls
