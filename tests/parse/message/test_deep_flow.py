"""A message built by more `+=` than Python's stack lets the search follow costs that raise's
text (a `{msg}` placeholder, as past the search's budget), never its file."""

from __future__ import annotations

import pytest

from crawler.parse.file_tasks import visit_file


def appended(count: int) -> bytes:
    return ("def g(x):\n    msg = 'a'\n" + "".join(f"    msg += 'b{i}'\n" for i in range(count))
            + "    raise ValueError(msg)\n").encode()


@pytest.mark.parametrize("count", [300, 1000])
def test_a_message_of_many_appends_is_a_placeholder_and_its_file_is_catalogued(count: int) -> None:
    """300 appends ended the whole file as parse_failed, "nested too deeply"."""
    outcome = visit_file("pkg/appends.py", "0" * 40, appended(count))
    assert outcome.failure is None
    ((kind, template, regex),) = [(s.message.kind, s.message.template, s.message.regex)
                                  for s in outcome.sites]
    assert (kind, template, regex) == ("dynamic", "{msg}", r"^(?P<msg>[\s\S]*?)$")


def test_a_hundred_appends_are_still_read_in_full() -> None:
    outcome = visit_file("pkg/appends.py", "0" * 40, appended(100))
    (site,) = outcome.sites
    assert (site.message.kind, site.message.template) == (
        "variable", "a" + "".join(f"b{i}" for i in range(100)))
