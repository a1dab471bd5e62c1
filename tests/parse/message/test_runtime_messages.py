"""Every case's raises run for real: `str(exc)` must fullmatch the regex of the record it came from.

Cases are globbed (`runtime_harness.all_cases`): a case file added under `tests/cases/`, or a
package under `tests/packages/` with its yaml, is run here with no change to this file.
"""

from __future__ import annotations

import pytest

from tests.helpers import runtime_harness
from tests.helpers.runtime_harness import Case
from tests.helpers.visits import site_fields

CASES = runtime_harness.all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_raise_that_can_run_matches_its_record(case: Case) -> None:
    made = runtime_harness.records(case)
    assert len(made) == len(case.sites), [(s.path, s.line) for s in made]
    for want, got in zip(case.sites, made):
        fields = {**site_fields(got), "path": got.path}
        expected = {k: v for k, v in want.items() if k != "run"}
        assert {k: fields[k] for k in expected} == expected, (case.name, got.line)
    outcome = runtime_harness.run_case(case)
    assert not outcome.failures, "\n".join(outcome.failures)
    assert outcome.ran + outcome.cannot_run == len(case.sites)


def test_the_harness_counts_what_cannot_run() -> None:
    """The cases' records that no expression reaches, by case: each one says why in its case."""
    cannot = {c.name: runtime_harness.run_case(c).cannot_run for c in CASES}
    # imports.py's relative imports and scopes.py's missing module and module-level raise keep
    # both files from loading outside a package
    assert (cannot["imports"], cannot["scopes"]) == (9, 15)
    every_one_runs = ["arguments", "concat", "format", "fstrings", "fstrings_more", "literals",
                      "percent", "variables", "wrappers"]
    assert [cannot[name] for name in every_one_runs] == [0] * len(every_one_runs)


def test_a_wrong_regex_or_line_is_reported() -> None:
    """The harness fails a record whose regex does not match, or whose line is not the raise's."""
    case = next(c for c in CASES if c.name == "literals")
    site = runtime_harness.records(case)[0]
    call = case.sites[0]["run"]
    with runtime_harness._modules(case) as namespaces:
        namespace = namespaces[site.path]
        assert runtime_harness.check_raise(site, call, namespace) is None
        wrong = site.__class__(**{**site.__dict__,
                                  "message": site.message.__class__(
                                      **{**site.message.__dict__, "regex": "^nothing like it$"})})
        assert "does not fullmatch" in (runtime_harness.check_raise(wrong, call, namespace) or "")
        moved = site.__class__(**{**site.__dict__, "line": site.line + 1,
                                  "end_line": site.end_line + 1})
        assert "not at the raise" in (runtime_harness.check_raise(moved, call, namespace) or "")
        assert "raised nothing" in (runtime_harness.check_raise(site, "len('x')", namespace) or "")
