"""Patterns from a repository's tests run bounded: per match, and over all the records."""

from __future__ import annotations

import time

import pytest

from crawler.catalogue import evidence
from crawler.catalogue.evidence import EvidenceStats, match_evidence
from crawler.records import ErrorRecord, RaiseSite, Template, TestAssertion


def record(number: int, text: str) -> ErrorRecord:
    site = RaiseSite(path="lib.py", line=number, end_line=number, column=4, class_name=None,
                     function="f", qualname="f", exception="ValueError",
                     exception_qualname="builtins.ValueError",
                     message=Template(kind="literal", template=text, placeholders=(), regex=""),
                     cause=None, condition=None, snippet="", snippet_line=number)
    return ErrorRecord(id=f"{number:016x}", status="active", repo="local/o/n", commit="0" * 40,
                       url=None, site=site)


def assertion(pattern: str) -> TestAssertion:
    return TestAssertion("tests/test_lib.py", 3, "test_f", "pytest.raises", "match",
                         ("ValueError",), pattern)


def test_a_backtracking_pattern_is_abandoned_and_counted_the_others_fit() -> None:
    records = [record(1, "bad value " + "a" * 60 + "b"), record(2, "no such key")]
    stats = EvidenceStats()
    started = time.monotonic()
    found = match_evidence(records, [assertion(r"bad value (a|aa)+$"), assertion("no such key")],
                           stats)
    assert time.monotonic() - started < 5
    assert stats.timed_out == 1 and stats.assertions == 1
    assert set(found) == {records[1].id}


def test_a_pattern_stops_when_its_time_over_all_records_is_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fast on each record, slow on thousands: its budget is for all of them together."""
    records = [record(i, f"value {i} is out of range") for i in range(1, 50)]
    monkeypatch.setattr(evidence, "PATTERN_SECONDS", 0.0)
    stats = EvidenceStats()
    assert match_evidence(records, [assertion("out of range")], stats) == {}
    assert stats.timed_out == 1
    monkeypatch.setattr(evidence, "PATTERN_SECONDS", 10.0)
    stats = EvidenceStats()
    assert len(match_evidence(records, [assertion("out of range")], stats)) == 0  # too vague
    assert stats.too_vague == 1 and stats.timed_out == 0


def test_the_same_check_in_several_tests_is_fitted_once_and_counted_for_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a pattern fits depends only on it and the exceptions named: tests repeating one
    check cost one fit (and one share of the pattern's time budget), and each is evidence."""
    records = [record(1, "numpy masked arrays are not supported"), record(2, "no such key")]
    tried: list[str] = []
    real = evidence.strong
    monkeypatch.setattr(evidence, "strong", lambda pattern, target, budget=None: (
        tried.append(target.example), real(pattern, target, budget))[1])
    repeated = [TestAssertion(f"tests/test_{n}.py", 3, f"test_{n}", "pytest.raises", "match",
                              ("ValueError",), "masked arrays are not supported") for n in range(5)]
    stats = EvidenceStats()
    found = match_evidence(records, repeated, stats)
    # one fit over the group, not one per test; and the search runs only on the record whose
    # example holds the pattern's literal text (`_Group.strong_candidates`)
    assert tried == ["numpy masked arrays are not supported"]
    assert stats.assertions == 5 and stats.fitted == 5
    assert [e.path for e in found[records[0].id]] == [f"tests/test_{n}.py" for n in range(5)]


def test_a_patterns_budget_is_the_time_its_own_searches_took() -> None:
    """Not the clock since it was first tried: a fit must not depend on the machine's load, nor
    on how long the other patterns ran before the same pattern came back with other exceptions."""
    budget = evidence.PatternBudget(0.2)
    compiled = evidence.Pattern.of("out of range")
    assert compiled is not None
    time.sleep(0.3)  # longer than the whole budget, spent elsewhere
    assert budget.search(compiled.compiled, "value 3 is out of range")
    assert 0 < budget.left < 0.2
    budget.left = 0.0
    with pytest.raises(evidence.RegexTimeout):
        budget.search(compiled.compiled, "value 3 is out of range")
