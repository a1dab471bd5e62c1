"""Evidence and related errors end to end: a real git repository, extracted twice and changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue.merge import MergeResult
from crawler.catalogue.related import MAX_PER_REASON, _nearest, _site_order, related_records
from crawler.pipeline import extract
from crawler.records import TestAssertion
from crawler.store import record_files, render, safe_yaml, schemas
from tests.helpers.gitrepo import GitRepo
from tests.helpers.records import a_record

LIB = '''\
class Codec:
    def encode(self, value):
        if value is None:
            raise ValueError("cannot encode None")
        raise ValueError(f"cannot encode {value} as {self.kind}")

    def decode(self, data):
        raise ValueError(f"cannot decode {data} as {self.kind}")


def lookup(name):
    raise KeyError(f"no codec named {name}")
'''

TESTS = '''\
import unittest

import pytest

from lib.codec import Codec, lookup


def test_none():
    with pytest.raises(ValueError, match="cannot encode None"):
        Codec().encode(None)


class LookupTest(unittest.TestCase):
    def test_unknown(self):
        with self.assertRaises(KeyError) as cm:
            lookup("zip")
        self.assertIn("no codec named 'zip'", str(cm.exception))
'''


def records_by_template(folder: Path) -> dict[str, dict[str, object]]:
    out = {}
    for path in record_files.iter_record_paths(folder):
        data, _ = safe_yaml.load_yaml_file(path)
        assert schemas.schema_problems(data, "record") == []
        out[data["extracted"]["message"]["template"]] = data
    return out


def test_evidence_and_related_written_and_kept(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("lib/codec.py", LIB)
    repo.write("tests/test_codec.py", TESTS)
    repo.commit("first")
    output = tmp_path / "out"
    result = extract(str(repo.path), output_root=output, jobs=1)
    assert result.evidence is not None and result.evidence.records == 2
    records = records_by_template(result.folder)
    none = records["cannot encode None"]["extracted"]
    assert none["evidence"] == [{  # type: ignore[index]
        "path": "tests/test_codec.py", "line": 9, "test": "test_none", "form": "pytest.raises",
        "check": "match", "exception": "ValueError", "pattern": "cannot encode None", "fits": 1}]
    codec = records["no codec named {name}"]["extracted"]
    assert [(e["test"], e["check"]) for e in codec["evidence"]] == [  # type: ignore[index]
        ("LookupTest.test_unknown", "contains")]
    assert records["cannot encode {value} as {self.kind}"]["extracted"]["evidence"] == []  # type: ignore[index]
    ids = {t: r["id"] for t, r in records.items()}
    related = records["cannot encode {value} as {self.kind}"]["extracted"]["related"]  # type: ignore[index]
    assert related == [{"id": ids["cannot encode None"], "reason": "same_scope"},
                       {"id": ids["cannot decode {data} as {self.kind}"], "reason": "same_scope"}]

    # The same commit again: nothing is rewritten.
    again = extract(str(repo.path), output_root=output, jobs=1)
    assert again.files_written == 0

    # Only a test changes: the records whose evidence moved are rewritten, nothing else.
    before = {p.name: p.read_bytes() for p in record_files.iter_record_paths(result.folder)}
    repo.write("tests/test_codec.py", "# a comment moves every line down\n" + TESTS)
    repo.commit("a test moves")
    moved = extract(str(repo.path), output_root=output, jobs=1)
    after = {p.name: p.read_bytes() for p in record_files.iter_record_paths(result.folder)}
    changed = sorted(name for name in after if after[name] != before[name])
    assert changed == sorted([f"{ids['cannot encode None']}.yaml", f"{ids['no codec named {name}']}.yaml"])
    assert moved.files_written == len(changed) + 1  # and the manifest
    records = records_by_template(result.folder)
    assert records["cannot encode None"]["extracted"]["evidence"][0]["line"] == 10  # type: ignore[index]


def test_related_by_shape_across_files() -> None:
    from crawler.catalogue.merge import merge
    from crawler.parse.visitor import find_raise_sites
    from crawler.records import Pin

    pin = Pin("x", "local", "o", "n", "HEAD", "0" * 40)
    sources = {"a.py": b"def f(n):\n    raise ValueError(f'index {n} is out of range')\n",
               "b.py": b"def g(i):\n    raise IndexError(f'index {i} is out of range')\n",
               "c.py": b"def h(m):\n    raise ValueError(f'{m}')\n"}
    sites = [site for path, source in sources.items() for site in find_raise_sites(path, source).sites]
    records = merge(pin, [], sites).records
    related = related_records(records)
    by_path = {r.site.path: r.id for r in records}
    assert [x.id for x in related[by_path["a.py"]]] == [by_path["b.py"]]
    assert [x.id for x in related[by_path["b.py"]]] == [by_path["a.py"]]
    assert related[by_path["c.py"]] == ()  # too little text to relate anything


def test_record_with_evidence_and_a_snippet_ending_in_blank_lines_reads_back(tmp_path: Path) -> None:
    from dataclasses import replace

    from crawler.catalogue.merge import merge
    from crawler.parse.visitor import find_raise_sites
    from crawler.records import Evidence, Pin, Related

    pin = Pin("x", "local", "o", "n", "HEAD", "0" * 40)
    (site,) = find_raise_sites("a.py", b"def f():\n    raise ValueError('no')\n").sites
    record = merge(pin, [], [replace(site, snippet="def f():\n    raise ValueError('no')\n\n\n")]).records[0]
    record = replace(record, related=(Related("1" * 16, "same_scope"),), evidence=(Evidence(
        "tests/test_a.py", 3, "test_f", "pytest.raises", "match", "ValueError", "^no$", 1),))
    record_files.write_record(tmp_path, record)
    back = record_files.load_record(tmp_path / record_files.ERRORS_DIR / f"{record.id}.yaml")
    assert back.site == record.site and back.evidence == record.evidence and back.related == record.related
    assert render.record_text(back) == render.record_text(record)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(1, 8), min_size=1, max_size=30), data=st.data())
def test_nearest_is_the_head_of_all_sorted_by_distance(lines: list[int], data: st.DataObject
                                                        ) -> None:
    """Looking near a record only finds what sorting its whole scope would (ties on lines too)."""
    group = sorted((a_record(id=f"{i:016x}", site=replace(a_record().site, line=line))
                    for i, line in enumerate(lines)), key=_site_order)
    at = data.draw(st.integers(0, len(group) - 1))
    most = data.draw(st.sampled_from([1, 2, 3, MAX_PER_REASON]))
    seen = {group[at].id} | set(data.draw(st.lists(st.sampled_from([r.id for r in group]),
                                                   max_size=most)))
    line = group[at].site.line
    expected = sorted((r for r in group if r.id not in seen),
                      key=lambda r: (abs(r.site.line - line), _site_order(r)))[:most]
    assert _nearest(group, at, seen, most) == expected


def test_regenerate_derives_only_on_a_full_run() -> None:
    from crawler.catalogue.holdback import Plan
    from crawler.catalogue.merge import PathMoves, SetAside
    from crawler.catalogue.regenerate import regenerate
    from crawler.parse.visitor import find_raise_sites
    from crawler.records import Pin

    pin = Pin("x", "local", "o", "n", "HEAD", "0" * 40)
    source = (b"def f(n):\n    raise ValueError(f'index {n} is out of range')\n"
              b"def g(i):\n    raise ValueError(f'index {i} is out of range, again')\n")
    sites = find_raise_sites("a.py", source).sites
    plan = Plan((), tuple(sites), (), frozenset(), False, frozenset())

    def run(full: bool, assertions: tuple[TestAssertion, ...] | None) -> MergeResult:
        return regenerate(pin, plan, moves=PathMoves(), taken_ids=(), aside=SetAside(), full=full,
                          assertions=assertions)

    update = run(False, ())
    assert all(r.related == () for r in update.records) and update.evidence is None
    without_tests = run(True, None)
    assert all(len(r.related) == 1 for r in without_tests.records) and without_tests.evidence is None
    with_tests = run(True, ())
    assert with_tests.evidence is not None and with_tests.evidence.assertions == 0
    assert [r.id for r in with_tests.records] == [r.id for r in update.records]


def test_related_lists_name_the_same_sites_whatever_the_ids() -> None:
    """Issue 44: ties (one shape, equal distance) went to the lower id, so two folders of one
    repository under different names listed other records past the first MAX_PER_REASON."""
    base = a_record().site
    sites = [replace(base, line=20 + step, column=4 + side)
             for step in range(-8, 9, 2) for side in (0, 4)]

    def listed(ids: list[str]) -> dict[tuple[int, int], list[tuple[int, int, str]]]:
        records = [a_record(id=i, site=s) for i, s in zip(ids, sites, strict=True)]
        where = {r.id: (r.site.line, r.site.column) for r in records}
        found = related_records(records)
        return {where[r.id]: [(*where[item.id], item.reason) for item in found[r.id]]
                for r in records}

    ids = [f"{n:016x}" for n in range(1, len(sites) + 1)]
    first = listed(ids)
    for items in first.values():  # MAX_PER_REASON of one shape, then the scope's nearest others
        assert [reason for *_, reason in items].count("same_shape") == MAX_PER_REASON
        assert len(items) == len(sites) - 1
    assert listed(ids[::-1]) == first
