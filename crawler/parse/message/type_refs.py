"""The TypeRef of a chain of attributes and calls (`x.a.m().b(...)`): what a static reader
knows of the value it gives, read from the innermost name out (`call_edges` keeps the kinds).

A loop, since the chain is as long as the file makes it, and each link read once: `type_of`
read the receiver of a method call on a value of no known type twice, 2**n times for a chain
of n calls (20 calls: 2.8 s of CPU; 30: about 50 minutes)."""

from __future__ import annotations

import ast
from collections.abc import Callable

ATTRIBUTE, METHOD, CALL = "attribute", "method", "call"  # a link of a chain


def type_of(node: ast.expr, of_name: Callable[[str], str]) -> str:
    """A TypeRef of what an expression gives, or "" when a static reader cannot tell;
    `of_name`: the TypeRef of a bare name in the scope read."""
    links: list[tuple[str, str]] = []  # from the outside in
    while True:
        if isinstance(node, ast.Attribute):
            links.append((ATTRIBUTE, node.attr))
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            links.append((METHOD, node.func.attr))
            node = node.func.value
        elif isinstance(node, ast.Call):
            links.append((CALL, ""))
            node = node.func
        else:
            break
    ref = of_name(node.id) if isinstance(node, ast.Name) else ""
    for kind, name in reversed(links):
        ref = link(ref, kind, name)
    return ref


def link(owner: str, kind: str, name: str) -> str:
    """What one link gives, of the TypeRef of what it is on ("" stays "")."""
    if kind == CALL:  # a callable of a known name, called: what it returns; an item of a
        # table, called (`create = creators.get(kind)`, then `create(...)`): what its items return
        return "R " + owner[2:] if owner.startswith("V ") else \
            "I " + owner[2:] if owner.startswith("T ") else ""
    if owner[:2] in ("A ", "D ") and kind == ATTRIBUTE:  # an attribute's attribute, as a path
        return f"D {owner[2:]}.{name}"  # on the first class (`self.map._matcher`: "D pkg.C map._matcher")
    if owner[:2] in ("S ", "N "):  # an instance of a known class: its attribute, its method
        return f"{'A' if kind == ATTRIBUTE else 'M'} {owner[2:]} {name}"
    if owner.startswith("V "):  # a known name: the name under it, or what calling it returns
        return f"{'V' if kind == ATTRIBUTE else 'R'} {owner[2:]}.{name}"
    return ""
