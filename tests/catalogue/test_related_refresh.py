"""An update's related lists (`related.refresh`): the lists a full run makes, with only the kept
files that share a shape with a change loaded, and only the records whose lists changed
returned (issue 44: an update carried every list over, so lists aged until the next extract)."""

from __future__ import annotations

from dataclasses import replace

from crawler.catalogue import related
from crawler.catalogue.merge import merge
from crawler.catalogue.related import related_records, with_derived
from crawler.parse.visitor import find_raise_sites
from crawler.records import ErrorRecord, Pin

PIN = Pin("x", "local", "o", "n", "HEAD", "0" * 40)
CHANGED = {
    "before": b"class C:\n    def f(self, n):\n        raise ValueError(f'index {n} is out of range')\n"
              b"\n    def g(self):\n        raise ValueError('no value was given for this one')\n",
    "after": b"class C:\n    def f(self, n):\n        raise ValueError(f'index {n} is out of range')\n"
             b"\n    def e(self, m):\n        raise ValueError(f'index {m} is out of range')\n"
             b"\n    def g(self):\n        raise ValueError('no value was given for this one')\n",
}
KEPT = {
    "b.py": b"def g(i):\n    raise IndexError(f'index {i} is out of range')\n"
            b"\n\ndef h():\n    raise IndexError('a message of its own, unshared')\n",
    "c.py": b"def k():\n    raise KeyError('nothing like the changed file in here')\n",
}


def _records(changed: bytes, existing: list[ErrorRecord]) -> list[ErrorRecord]:
    sources = {"a.py": changed, **KEPT}
    sites = [s for path, text in sources.items() for s in find_raise_sites(path, text).sites]
    records = list(merge(PIN, existing, sites).records)
    return with_derived(records, related_records(records), None)


def test_an_update_makes_the_lists_a_full_run_makes_and_loads_only_the_files_they_read() -> None:
    before = _records(CHANGED["before"], [])
    full = {r.id: r for r in _records(CHANGED["after"], before)}  # a full run: ids kept
    merged = [replace(r, related=next((b.related for b in before if b.id == r.id), ()))
              for r in full.values() if r.site.path == "a.py"]  # the lists as an update had them
    kept = [b for b in before if b.site.path != "a.py"]
    sites = {path: list(find_raise_sites(path, text).sites) for path, text in KEPT.items()}
    ids = {path: [r.id for r in kept if r.site.path == path] for path in KEPT}
    asked: list[set[str]] = []

    def load(wanted: set[str]) -> list[ErrorRecord]:
        asked.append(set(wanted))
        return [r for r in kept if r.id in wanted]

    records, others = related.refresh(merged, [b for b in before if b.site.path == "a.py"], (),
                                      sites, ids, load)
    assert asked == [set(ids["b.py"])]  # c.py shares no shape with a.py: not loaded
    assert {r.id: r.related for r in records} == {r.id: full[r.id].related for r in merged}
    assert [r.site.line for r in others] == [2]  # b.py's first record lists e
    now = {r.id: r.related for r in (*kept, *records, *others)}
    assert now == {i: r.related for i, r in full.items()}
    assert related.refresh(records, records, (), sites, ids, load) == (records, ())  # nothing new
    assert len(asked) == 1
