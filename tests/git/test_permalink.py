from __future__ import annotations

import pytest

from crawler.git.permalink import permalink
from crawler.records import Pin

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("host", "line", "end", "expected"),
    [
        ("github.com", 10, 12, f"https://github.com/o/n/blob/{SHA}/a%20b/c.py#L10-L12"),
        ("github.com", 10, 10, f"https://github.com/o/n/blob/{SHA}/a%20b/c.py#L10"),
        ("gitlab.com", 10, 12, f"https://gitlab.com/o/n/-/blob/{SHA}/a%20b/c.py#L10-12"),
        ("gitlab.example.org", 3, 3, f"https://gitlab.example.org/o/n/-/blob/{SHA}/a%20b/c.py#L3"),
        ("bitbucket.org", 1, 2, f"https://bitbucket.org/o/n/src/{SHA}/a%20b/c.py#lines-1:2"),
        ("codeberg.org", 1, 2, f"https://codeberg.org/o/n/src/commit/{SHA}/a%20b/c.py#L1-L2"),
        ("git.example.org", 1, 2, None),
    ],
)
def test_permalinks(host: str, line: int, end: int, expected: str | None) -> None:
    pin = Pin(source="x", host=host, owner="o", name="n", ref="main", sha=SHA,
              web_url=f"https://{host}/o/n")
    assert permalink(pin, "a b/c.py", line, end) == expected


def test_no_permalink_without_a_web_url() -> None:
    pin = Pin(source=".", host="local", owner="local", name="n", ref="HEAD", sha=SHA)
    assert permalink(pin, "c.py", 1, 1) is None
