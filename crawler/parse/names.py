"""Names to qualified names: what imports, class statements and aliases bind, read off statements.

`bindings` gives the names one import statement binds and what they stand for (`import a.b as c`
binds `c` to `a.b`; `from ..x import Y as Z` binds `Z` to `pkg.x.Y`). `dotted` turns `a.b.C` into
its parts, and `qualify` resolves those parts against scopes of bindings, innermost first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import libcst as cst

from crawler.parse.module_names import BUILTIN_NAMES


def dotted(node: cst.BaseExpression) -> list[str] | None:
    """`a.b.C` as ["a", "b", "C"]; None for anything but names and attributes."""
    parts: list[str] = []
    while type(node) is cst.Attribute:  # `type`: LibCST's isinstance that fails is a Python call
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)  # type: ignore[attr-defined]
    return parts[::-1]


def package_of(module_name: str, is_package: bool) -> str:
    """The package a module's relative imports start from."""
    if is_package:
        return module_name
    return module_name.rpartition(".")[0]


def bindings(statement: cst.BaseSmallStatement, package: str | None) -> Iterator[tuple[str, str]]:
    """(bound name, qualified name) for each name an import statement binds."""
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            parts = dotted(alias.name)
            if parts is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value, ".".join(parts)
            else:
                yield parts[0], parts[0]
    elif isinstance(statement, cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar):
        base = _from_base(statement, package)
        if base is None:
            return
        for alias in statement.names:
            parts = dotted(alias.name)
            if parts is None:
                continue
            bound = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else parts[0]
            yield bound, f"{base}.{'.'.join(parts)}" if base else ".".join(parts)


def star_module(statement: cst.BaseSmallStatement, package: str | None) -> str | None:
    """The module `from M import *` reads, qualified; None for any other statement."""
    if isinstance(statement, cst.ImportFrom) and isinstance(statement.names, cst.ImportStar):
        return _from_base(statement, package) or None
    return None


def _from_base(statement: cst.ImportFrom, package: str | None) -> str | None:
    module = ".".join(dotted(statement.module) or []) if statement.module is not None else ""
    dots = len(statement.relative)
    if not dots:
        return module
    if package is None:
        return None
    parts = package.split(".") if package else []
    if dots - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (dots - 1)]
    return ".".join([*parts, module] if module else parts)


def qualify(parts: Sequence[str], scopes: Sequence[Mapping[str, str]],
            shadowed: frozenset[str] | set[str]) -> str | None:
    """The qualified name of `parts`: through the innermost binding, else a builtin, else None."""
    head, rest = parts[0], list(parts[1:])
    for scope in scopes:
        if head in scope:
            return ".".join([scope[head], *rest])
    if head in BUILTIN_NAMES and head not in shadowed and not rest:
        return f"builtins.{head}"
    return None
