"""An update gives the evidence a fresh extract gives, and rewrites a record only when its facts
changed (issue 44: over jax's weekly updates, records gained and lost a test with nothing else
changed, and the updated folder's evidence differed from a fresh extract's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.catalogue.evidence import MAX_FITS, MAX_WEAK_TRIES
from crawler.pipeline import extract, update
from tests.helpers.folder_diff import SiteKey, differing, live_records, site_key
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import record_texts

FACTS = ("status", "site", "evidence", "related", "entry_points")  # not the commit read at

TEST = '''\
import pytest
from mod00 import check


def test_check():
    with pytest.raises(TypeError, match="not 'dict'"):
        check({})
'''


def module(number: int, above: int = 0) -> str:
    """One of several raises of one wording, which the test's "not 'dict'" fits alike."""
    return ("# a line above\n" * above + "def check(kind):\n"
            f"    raise TypeError(f\"the date parameter must be a date, not '{{kind}}' ({number})\")\n"
            if number % 2 else
            "# a line above\n" * above + "def check(kind):\n"
            "    raise TypeError(f\"the date parameter must be a date, not '{kind}'\")\n")



def test_each_update_gives_a_fresh_extracts_evidence_and_rewrites_only_changed_records(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    count = MAX_WEAK_TRIES + 1  # more records than the weak search once tried, at most MAX_FITS
    assert count <= MAX_FITS
    for n in range(count):
        repo.write(f"mod{n:02d}.py", module(n))
    repo.write("other.py", "def g():\n    raise KeyError('no such key')\n")
    repo.write("tests/test_check.py", TEST)
    steps = [repo.commit("first")]
    for n in range(1, count):  # an update holds the records it reads again first
        repo.write(f"mod{n:02d}.py", module(n, above=2))
    steps.append(repo.commit("all records but one move"))
    repo.write("other.py", "def g():\n    raise KeyError('no such key at all')\n")
    steps.append(repo.commit("a record no test names is reworded"))
    repo.write("tests/test_check.py", TEST + "\n\ndef test_more():\n    assert True\n")
    steps.append(repo.commit("the test file moves on, its assertion the same"))
    repo.write(f"mod{count:02d}.py", module(count))
    steps.append(repo.commit("one more record of the wording"))

    cache = tmp_path / "cache"
    updated = extract(str(repo.path), ref=steps[0], output_root=tmp_path / "updated",
                      cache_dir=cache, jobs=1).folder
    fresh_before = live_records(extract(str(repo.path), ref=steps[0], output_root=tmp_path / "f0",
                                        cache_dir=cache, jobs=1).folder)
    assert sum(bool(r.evidence) for r in fresh_before.values()) == count
    for step, sha in enumerate(steps[1:], start=1):
        before = record_texts(updated)
        update(str(repo.path), ref=sha, output_root=tmp_path / "updated", cache_dir=cache, jobs=1)
        fresh = live_records(extract(str(repo.path), ref=sha, output_root=tmp_path / f"f{step}",
                                     cache_dir=cache, jobs=1).folder)
        now = live_records(updated)
        assert differing(now, fresh, ["evidence"]) == {}, step
        changed_facts: set[SiteKey] = set(differing(fresh_before, fresh, FACTS))
        after = record_texts(updated)
        rewritten = {site_key(r) for r in now.values()
                     if after.get(f"{r.id}.yaml") != before.get(f"{r.id}.yaml")}
        assert rewritten <= changed_facts, (step, sorted(rewritten - changed_facts))
        fresh_before = fresh
    carried = [r.evidence for r in fresh_before.values() if r.evidence]
    assert len(carried) == count + 1 and {e.fits for items in carried for e in items} == {count + 1}
