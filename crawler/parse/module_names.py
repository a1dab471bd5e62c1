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


# The folders a repository keeps its importable code under, which are no part of a module's
# name: `src/` at the top or one folder down (a monorepo's projects: hypothesis's
# `hypothesis/src/hypothesis`, hatch's `backend/src/hatchling`), and `lib/` at the top only
# (sqlalchemy's `lib/sqlalchemy`, pyyaml's `lib/yaml`). A `lib` deeper down is a package of its
# own (`jax/lib`, `numpy/lib`), and so is any folder of another name (a namespace package such
# as poetry's `src/poetry` keeps its name).
_SOURCE_ROOTS = {"src": 2, "lib": 1}  # folder name: the deepest level it is a source root at


@lru_cache(maxsize=1 << 16)  # asked for each raise and call of a run, of a few thousand paths
def module_name(path: str) -> str:
    """The dotted module a file defines, as its users import it: below its source root.

    >>> [module_name(p) for p in ("src/pkg/mod.py", "lib/yaml/scanner.py", "pkg/__init__.py")]
    ['pkg.mod', 'yaml.scanner', 'pkg']
    >>> [module_name(p) for p in ("hypothesis/src/hypothesis/core.py", "jax/lib/xla_bridge.py")]
    ['hypothesis.core', 'jax.lib.xla_bridge']
    """
    parts = list(PurePosixPath(path).with_suffix("").parts)
    for level, part in enumerate(parts[:-1][:max(_SOURCE_ROOTS.values())], start=1):
        if _SOURCE_ROOTS.get(part, 0) >= level:
            parts = parts[level:]
            break
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
