"""Permalinks pinned to a commit, in the URL forms of the common forges.

A tree entry's name is any bytes but `/` and NUL: git itself writes `.` and `..` into a tree
when asked (`git mktree`; only fsck warns). A browser resolves a `..` segment of a link, and
by the WHATWG URL standard `%2e%2e` too (Node's `new URL` turns `blob/<sha>/%2E%2E/x.py` into
`blob/x.py`), so no encoding of such a path names its own file: it gets no permalink. Every
other part is percent-encoded whole (a backslash, `%`, `?` and `#` included), from its bytes.
"""

from __future__ import annotations

from urllib.parse import quote

from crawler.records import Pin

_DOT_SEGMENTS = ("", ".", "..")  # parts a URL parser drops or climbs over


def permalink(pin: Pin, path: str, line: int, end_line: int) -> str | None:
    """A link to the lines at the pinned commit; None without a web URL or a known forge, or
    for a path that a link cannot name (a `.` or `..` part)."""
    where = _quoted(path)
    if pin.web_url is None or where is None:
        return None
    base, sha = pin.web_url, pin.sha
    host = pin.host.lower()
    if host == "github.com" or host.startswith("github."):
        return f"{base}/blob/{sha}/{where}#L{line}" + (f"-L{end_line}" if end_line != line else "")
    if "gitlab" in host:
        return f"{base}/-/blob/{sha}/{where}#L{line}" + (f"-{end_line}" if end_line != line else "")
    if host == "bitbucket.org":
        return f"{base}/src/{sha}/{where}#lines-{line}" + (f":{end_line}" if end_line != line else "")
    if host in ("codeberg.org", "gitea.com") or "gitea" in host or "forgejo" in host:
        return f"{base}/src/commit/{sha}/{where}#L{line}" + (f"-L{end_line}" if end_line != line else "")
    return None


def _quoted(path: str) -> str | None:
    """The path as URL segments, or None where one of them would be resolved away."""
    parts = path.split("/")
    if any(part in _DOT_SEGMENTS for part in parts):
        return None
    # A path that is not UTF-8 came through surrogate escapes: its own bytes are encoded.
    return "/".join(quote(part, safe="", errors="surrogateescape") for part in parts)
