"""Where the crawler keeps its caches on this machine when the user names no folder: the
fetched repositories, the roots of local ones, and the cache database. A module of its own, so
that a command that reads only the cache database (`crawler check`) does not import git."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/raise-site-crawler, or ~/.cache/raise-site-crawler."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"  # XDG: ignore relative
    return root / "raise-site-crawler"
