"""Module names, known without reading a source: the dotted module a repository file defines,
the names Python's builtins define, and the key under which a module's exports list its star
imports. The catalogue and the commands that only read records ask these; this module imports
nothing beyond the standard library (`names`, which reads import statements, needs LibCST).
"""

from __future__ import annotations

import builtins
from functools import lru_cache
from pathlib import PurePosixPath

BUILTIN_NAMES = frozenset(dir(builtins))
BUILTIN_EXCEPTIONS = frozenset(
    name for name in BUILTIN_NAMES
    if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)
)


STAR = "*"  # the key of a module's exports that lists its star imports (no name can be it)


@lru_cache(maxsize=1 << 16)  # asked for each raise and call of a run, of a few thousand paths
def module_name(path: str) -> str:
    """The dotted module a file defines: `src/pkg/mod.py` gives `pkg.mod`."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
