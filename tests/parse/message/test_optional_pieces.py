"""Text that many `if`s add to reads as one template with optional pieces: every path's message
fullmatches it, whichever pieces the path adds; the text every path prints is still required."""

from __future__ import annotations

import itertools
import re

import pytest

from tests.helpers import runtime_harness

CASES = {case.name: case for case in runtime_harness.all_cases()}


@pytest.mark.parametrize("name", ["optional_pieces", "optional_across"])
def test_every_path_matches_the_one_template(name: str) -> None:
    case = CASES[name]
    [site] = [s for s in runtime_harness.records(case) if s.function == "check"]
    assert site.message.kind in ("variable", "class_default")
    assert "{debug}" in site.message.template and "{frames}" in site.message.template
    with runtime_harness._modules(case) as namespaces:
        for debug, line, frames in itertools.product((None, "f"), (None, 3), (0, 2)):
            call = f"check(1, {debug!r}, {line!r}, {frames!r})"
            assert runtime_harness.check_raise(site, call, namespaces[site.path]) is None, call
    head = "Encountered an unexpected tracer"
    assert re.fullmatch(site.message.regex, head + ".") is None  # the tail every path adds
