"""A callee's text in its caller's terms: each parameter replaced by the argument bound to it.

`Binding` is a parameter bound to the caller's argument (its source, and its text if it is text);
`substitute` puts a callee's pieces in the caller's terms: a placeholder that is a parameter
becomes the argument's text (when shown by `str()`) or a placeholder named by its source, and a
parameter inside a placeholder's expression is renamed to the argument's source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from crawler.parse.message.pieces import Alternative, Piece, _products, in_group_of, merge_text


@dataclass(frozen=True)
class Binding:
    """A callee's parameter, bound to the caller's argument: its source, and its text if any."""

    source: str
    alternatives: tuple[Alternative, ...] | None  # None: not text



def substitute(pieces: list[Piece], kind: str, bindings: Mapping[str, Binding]
               ) -> list[Alternative]:
    """A callee's pieces in the caller's terms: each parameter replaced by its argument."""
    readings: list[list[Alternative]] = []
    for piece in pieces:
        binding = bindings.get(piece.text) if piece.is_placeholder else None
        if binding is not None and binding.alternatives is not None and piece.plain:
            readings.append([(k, in_group_of(piece, list(p))) for k, p in binding.alternatives])
        elif binding is not None:
            readings.append([("dynamic", [replace(piece, text=binding.source)])])
        elif piece.is_placeholder:
            readings.append([("dynamic", [replace(piece, text=_renamed(piece.text, bindings))])])
        else:
            readings.append([(kind, [piece])])
    alternatives = []
    for combination in _products(readings):
        joined = merge_text([p for _, part in combination for p in part])
        whole = len(pieces) == 1 and pieces[0].is_placeholder
        alternatives.append((combination[0][0] if whole and combination else kind, joined))
    return alternatives


def _reads_none(pieces: list[Piece]) -> bool:
    """A placeholder that reads an attribute or item of `None`, or calls it: it always raises."""
    return any(p.is_placeholder and p.text.startswith(("None.", "None[", "None(")) for p in pieces)


def _renamed(text: str, bindings: Mapping[str, Binding]) -> str:
    """A callee's placeholder expression with its parameters renamed; as it was when unsafe."""
    if not any(name in text for name in bindings):
        return text
    # Renaming parses the expression (LibCST): imported by the first placeholder that names a
    # parameter, so the crawler's own process, which substitutes most texts without one,
    # imports no parser for them
    from crawler.parse.message.renaming import renamed

    return renamed(text, {name: binding.source for name, binding in bindings.items()})
