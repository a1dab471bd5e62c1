"""What an assertion is evidence for follows from the tests' and the records' facts alone: never
from the records' ids or the order they come in (issue 44: on the standard library, a test
matched one of several equal records picked by the id order, so two folders disagreed)."""

from __future__ import annotations

import random
from dataclasses import replace

from crawler.catalogue.evidence import MAX_FITS, MAX_WEAK_TRIES, EvidenceStats, match_evidence
from crawler.records import ErrorRecord, Evidence, RaiseSite, Template, TestAssertion

# `nntplib` raises this one twice; the test says "not 'dict'" where the template has a value
TYPE_WORDING = "the date parameter must be a date or datetime object, not '{kind}'"


def record(number: int, template: str, path: str = "lib.py") -> ErrorRecord:
    placeholders = ("kind",) if "{kind}" in template else ()
    site = RaiseSite(path=path, line=number, end_line=number, column=4, class_name=None,
                     function="f", qualname="f", exception="TypeError",
                     exception_qualname="builtins.TypeError",
                     message=Template(kind="fstring" if placeholders else "literal",
                                      template=template, placeholders=placeholders, regex=""),
                     cause=None, condition=None, snippet="", snippet_line=number)
    return ErrorRecord(id=f"{number:016x}", status="active", repo="local/o/n", commit="0" * 40,
                       url=None, site=site)


TEST = TestAssertion("tests/test_float.py", 55, "test_float", "assertRaisesRegex", "match",
                     ("TypeError",), "not 'dict'")


def by_site(records: list[ErrorRecord], found: dict[str, tuple[Evidence, ...]]
            ) -> dict[tuple[str, int], tuple[Evidence, ...]]:
    return {(r.site.path, r.site.line): found[r.id] for r in records if r.id in found}


def renamed(records: list[ErrorRecord], seed: int) -> list[ErrorRecord]:
    """The same records with other ids (another folder's name), in another order."""
    rng = random.Random(seed)
    out = [replace(r, id=f"{rng.getrandbits(64):016x}") for r in records]
    rng.shuffle(out)
    return out


def test_records_of_one_template_all_carry_an_assertion_that_fits_them_weakly() -> None:
    """More records of one wording than the weak search tries: every one of them fits."""
    records = [record(n, TYPE_WORDING, path=f"mod{n:02d}.py") for n in range(1, MAX_WEAK_TRIES + 3)]
    stats = EvidenceStats()
    found = match_evidence(records, [TEST], stats)
    assert sorted(found) == sorted(r.id for r in records)
    assert {item.fits for items in found.values() for item in items} == {len(records)}
    assert stats.weak == 1


def test_templates_tied_for_the_weak_search_are_all_tried_whatever_the_ids_and_order() -> None:
    """Nine wordings that share the pattern's text alike: the search tries each, not the first
    eight by id; the evidence by site is the same for any ids and any order."""
    records = [record(n, f"{word} must be a number, not '{{kind}}'")
               for n, word in enumerate(["alpha", "beta", "gamma", "delta", "epsilon", "zeta",
                                         "eta", "theta", "iota"], start=1)]
    records.append(record(20, "nothing alike here at all"))
    expected = by_site(records, match_evidence(records, [TEST]))
    assert sorted(expected) == [("lib.py", n) for n in range(1, 10)]
    assert {item.fits for items in expected.values() for item in items} == {9}
    for seed in range(8):
        other = renamed(records, seed)
        assert by_site(other, match_evidence(other, [TEST])) == expected, seed


def test_an_assertion_fitting_more_records_than_max_fits_is_on_none_in_any_order() -> None:
    records = [record(n, TYPE_WORDING, path=f"mod{n:02d}.py") for n in range(1, MAX_FITS + 2)]
    for seed in range(3):
        stats = EvidenceStats()
        assert match_evidence(renamed(records, seed), [TEST], stats) == {}
        assert stats.too_vague == 1
