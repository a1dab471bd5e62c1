"""Permalinks pinned to a commit, in the URL forms of the common forges."""

from __future__ import annotations

from urllib.parse import quote

from crawler.records import Pin


def permalink(pin: Pin, path: str, line: int, end_line: int) -> str | None:
    """A link to the lines at the pinned commit; None without a web URL or a known forge."""
    if pin.web_url is None:
        return None
    base, sha, where = pin.web_url, pin.sha, quote(path)
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
