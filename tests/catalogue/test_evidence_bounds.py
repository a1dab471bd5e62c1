"""Patterns from a repository's tests run bounded in steps, never in seconds: a pattern whose
shape bounds nothing, or whose bounds over all its records pass PATTERN_STEPS, is cut before it
runs, the same way on any machine under any load."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from crawler.catalogue import evidence
from crawler.catalogue.evidence import EvidenceStats, match_evidence
from crawler.records import ErrorRecord, Evidence, RaiseSite, TestAssertion
from crawler.regexes import BoundedRegex, OverBound, StepBudget
from tests.helpers.evidence import record


def assertion(pattern: str) -> TestAssertion:
    return TestAssertion("tests/test_lib.py", 3, "test_f", "pytest.raises", "match",
                         ("ValueError",), pattern)


CATASTROPHIC = [r"(a+)+$", r"(a*)*b", r"(a|aa)+$", r"(x+x+)+y", r"(\w+\s?)+$", r"(.*?,)+x",
                r"^(a|a?)+$", r"(a)\1+b", r"((ab)*)+c"]
ORDINARY = [r"out of range", r"bad .* value [a-z]{2}", r"value \d+ must be (positive|negative)",
            r"contain control.*\\r.*(found at least . .)", r"^x must be positive, got -?\d+$",
            r"(?i)no such (key|option)", r"[Aa]ttach.*non-multipart", r"(?:ab){3}c+"]


def test_the_shape_check_refuses_catastrophic_forms_and_accepts_ordinary_ones() -> None:
    """Read off the pattern's parse alone: a text of 60 characters or of 6, a first run or a
    hundredth, the same answer."""
    for text in ("a" * 60 + "!", "aaa!"):
        for pattern in CATASTROPHIC:
            compiled = BoundedRegex.compile(pattern)
            assert compiled is not None and compiled.search_steps(text) is None, pattern
        for pattern in ORDINARY:
            compiled = BoundedRegex.compile(pattern)
            assert compiled is not None, pattern
            bound = compiled.search_steps(text)
            assert bound is not None and bound == compiled.search_steps(text), pattern


def test_a_step_budget_runs_what_re_finds_and_refuses_before_running() -> None:
    for pattern in ORDINARY:
        compiled = BoundedRegex.compile(pattern)
        assert compiled is not None
        for text in ("value 3 is out of range", "x must be positive, got -12", "No Such Key",
                     "contain control \\r found at least 3 x", "Attach to non-multipart",
                     "abababccc"):
            assert StepBudget(evidence.PATTERN_STEPS).search(compiled, text) == \
                (re.search(pattern, text) is not None), (pattern, text)
    catastrophic = BoundedRegex.compile(r"(a+)+$")
    assert catastrophic is not None
    started = time.monotonic()
    with pytest.raises(OverBound):  # `re` would run for years on this text
        StepBudget(10**30).search(catastrophic, "a" * 60 + "!")
    assert time.monotonic() - started < 1
    ordinary = BoundedRegex.compile(r"a.*a.*b")
    assert ordinary is not None
    bound = ordinary.search_steps("a" * 40)
    assert bound is not None
    budget = StepBudget(bound)
    assert budget.search(ordinary, "a" * 39 + "b") and budget.left == 0
    with pytest.raises(OverBound):  # what is left is counted, whatever the time taken
        budget.search(ordinary, "ab")


def test_a_catastrophic_pattern_is_cut_and_counted_the_others_fit() -> None:
    records = [record(1, "bad value " + "a" * 60 + "b"), record(2, "no such key")]
    stats = EvidenceStats()
    started = time.monotonic()
    found = match_evidence(records, [assertion(r"bad value (a|aa)+$"), assertion("no such key")],
                           stats)
    assert time.monotonic() - started < 5
    assert stats.cut == 1 and stats.assertions == 1
    assert set(found) == {records[1].id}


def test_a_pattern_stops_when_its_steps_over_all_records_are_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fast on each record, costly on thousands: its step budget is for all of them together."""
    records = [record(i, f"value {i} is out of range") for i in range(1, 50)]
    monkeypatch.setattr(evidence, "PATTERN_STEPS", 100)
    stats = EvidenceStats()
    assert match_evidence(records, [assertion("out of range")], stats) == {}
    assert stats.cut == 1
    monkeypatch.setattr(evidence, "PATTERN_STEPS", 10**10)
    stats = EvidenceStats()
    assert len(match_evidence(records, [assertion("out of range")], stats)) == 0  # too vague
    assert stats.too_vague == 1 and stats.cut == 0


def test_a_pattern_cut_on_one_exception_is_evidence_for_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fitted first with ValueError, then cut with KeyError: no evidence from it at all."""
    text = "value " + "a" * 30 + " is out of range"
    records = [record(1, text)]
    compiled = BoundedRegex.compile(r"value .*a.* is out of range")
    assert compiled is not None
    one = compiled.search_steps(text)
    assert one is not None
    monkeypatch.setattr(evidence, "PATTERN_STEPS", one)  # enough for one record, not for two
    other = record(2, text)
    keyed = ErrorRecord(id=other.id, status="active", repo=other.repo, commit=other.commit,
                        url=None, site=RaiseSite(**{**other.site.__dict__, "exception": "KeyError",
                                                    "exception_qualname": "builtins.KeyError"}))
    both = [assertion(r"value .*a.* is out of range"),
            TestAssertion("tests/test_lib.py", 9, "test_g", "pytest.raises", "match",
                          ("KeyError",), r"value .*a.* is out of range")]
    stats = EvidenceStats()
    assert match_evidence([*records, keyed], both, stats) == {}
    assert stats.cut == 1


def test_the_same_check_in_several_tests_is_fitted_once_and_counted_for_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a pattern fits depends only on it and the exceptions named: tests repeating one
    check cost one fit (and one share of the pattern's step budget), and each is evidence."""
    records = [record(1, "numpy masked arrays are not supported"), record(2, "no such key")]
    tried: list[str] = []
    real = evidence.strong

    def counted(pattern: evidence.Pattern, target: evidence.Target,
                budget: StepBudget | None = None) -> bool:
        tried.append(target.example)
        return real(pattern, target, budget)

    monkeypatch.setattr(evidence, "strong", counted)
    repeated = [TestAssertion(f"tests/test_{n}.py", 3, f"test_{n}", "pytest.raises", "match",
                              ("ValueError",), "masked arrays are not supported") for n in range(5)]
    stats = EvidenceStats()
    found = match_evidence(records, repeated, stats)
    # one fit over the group, not one per test; and the search runs only on the record whose
    # example holds the pattern's literal text (`_Group.strong_candidates`)
    assert tried == ["numpy masked arrays are not supported"]
    assert stats.assertions == 5 and stats.fitted == 5
    assert [e.path for e in found[records[0].id]] == [f"tests/test_{n}.py" for n in range(5)]


HOG = "while True:\n    pass\n"


def test_what_a_pattern_fits_does_not_change_when_every_core_is_busy() -> None:
    """The bound is counted: with a process spinning on every core, the same fits and cuts."""
    records = [record(i, f"bad value {'a' * i}b: {i} out of range") for i in range(1, 30)]
    patterns = [r"bad value (a|aa)+b", r"bad value a.*a.*b: \d+ out", r"(a+)+b: 7",
                r"value a{3}b: 3 out of range", r"aaaa.*: 2\d out"]
    tests = [assertion(p) for p in patterns]

    def fitted() -> tuple[dict[str, tuple[Evidence, ...]], int]:
        stats = EvidenceStats()
        return match_evidence(records, tests, stats), stats.cut

    quiet = fitted()
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(os.cpu_count() or 1)]
    try:
        busy = [fitted() for _ in range(3)]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert all(run == quiet for run in busy)
    assert quiet[1] == 2 and quiet[0]  # the two catastrophic ones cut, the others fit
