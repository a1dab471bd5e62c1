"""Permalinks pinned to a commit, in the URL forms of the common forges.

A tree entry's name is any bytes but `/` and NUL: git itself writes `.` and `..` into a tree
when asked (`git mktree`; only fsck warns). A browser resolves a `..` segment of a link, and
by the WHATWG URL standard `%2e%2e` too (Node's `new URL` turns `blob/<sha>/%2E%2E/x.py` into
`blob/x.py`), so no encoding of such a path names its own file: it gets no permalink. Every
other part is percent-encoded whole (a backslash, `%`, `?` and `#` included), from its bytes.

The forge, and so the URL's shape, comes from the web URL's host (GitHub, GitLab, Bitbucket,
Codeberg and other Gitea or Forgejo hosts), or from the pin where `--web-url` named a
self-hosted one; another host gets no link rather than a guessed one.
"""

from __future__ import annotations

import functools
from urllib.parse import quote, urlsplit

from crawler.records import Pin

GITHUB, GITLAB, BITBUCKET, GITEA = "github", "gitlab", "bitbucket", "gitea"
FORGES = (GITHUB, GITLAB, BITBUCKET, GITEA)
_DOT_SEGMENTS = ("", ".", "..")  # parts a URL parser drops or climbs over
# Each forge's blob page at a commit, and its anchor for one line and for a range.
_SHAPES = {
    GITHUB: ("{base}/blob/{sha}/{path}", "#L{line}", "#L{line}-L{end}"),
    GITLAB: ("{base}/-/blob/{sha}/{path}", "#L{line}", "#L{line}-{end}"),
    BITBUCKET: ("{base}/src/{sha}/{path}", "#lines-{line}", "#lines-{line}:{end}"),
    GITEA: ("{base}/src/commit/{sha}/{path}", "#L{line}", "#L{line}-L{end}"),
}


@functools.lru_cache(maxsize=64)
def forge_of(web_url: str) -> str | None:
    """The forge a web URL's host is known to run, or None."""
    host = (urlsplit(web_url).hostname or "").lower()
    if host == "github.com" or host.startswith("github."):  # github.com, GitHub Enterprise
        return GITHUB
    if host == "bitbucket.org":
        return BITBUCKET
    if host in ("codeberg.org", "gitea.com") or "gitea" in host or "forgejo" in host:
        return GITEA
    if "gitlab" in host:
        return GITLAB
    return None


def permalink(pin: Pin, path: str, line: int, end_line: int) -> str | None:
    """A link to the lines at the pinned commit; None without a web URL or a known forge, or
    for a path that a link cannot name (a `.` or `..` part)."""
    if pin.web_url is None:
        return None  # asked first: an update makes a link for every record that moved
    forge = pin.forge or forge_of(pin.web_url)
    where = _quoted(path)
    if forge not in _SHAPES or where is None:
        return None
    page, one, lines = _SHAPES[forge]
    anchor = one if end_line == line else lines
    return (page + anchor).format(base=pin.web_url, sha=pin.sha, path=where, line=line, end=end_line)


@functools.lru_cache(maxsize=4096)  # a file's records share its path
def _quoted(path: str) -> str | None:
    """The path as URL segments, or None where one of them would be resolved away."""
    parts = path.split("/")
    if any(part in _DOT_SEGMENTS for part in parts):
        return None
    # A path that is not UTF-8 came through surrogate escapes: its own bytes are encoded.
    return "/".join(quote(part, safe="", errors="surrogateescape") for part in parts)
