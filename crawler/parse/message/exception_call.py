"""An exception call's message read into `Template`s: one per alternative the expression reads as.

The call's arguments are read by `crawler.parse.message.reading`; how `str(exc)` shows them,
and the regex that matches it, by `crawler.parse.message.templates`.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from crawler.parse.message import flow
from crawler.parse.message.pieces import Piece
from crawler.parse.message.reading import Reader, why_dynamic
from crawler.parse.message.templates import (
    MESSAGE_KEYWORDS,
    _display,
    _display_pattern,
    _unique,
    build_template,
)
from crawler.records import Template


def call_templates(call: cst.Call, module: cst.Module, position: flow.Position = (),
                   exception_qualname: str | None = None,
                   assigned: set[str] | None = None,
                   reader: Reader | None = None) -> list[Template] | None:
    """The templates of an exception call's message, one per alternative; None without one.

    `assigned` (when known) holds the names the enclosing function assigns: any other name
    cannot be resolved, and is not searched for. A `reader` given reads in its own context
    (a callee's, or one that follows the module's helpers: `crawler.parse.message.calls`).
    """
    reader = reader if reader is not None else Reader(module, assigned)
    positional = [arg for arg in call.args if arg.keyword is None]
    if positional and positional[0].star:
        star = positional[0]
        source = star.star + reader.source(star.value)
        return [build_template("dynamic", [Piece(source, True)], argument=f"{star.star}0")]
    plain = [arg.value for arg in positional if not arg.star]
    starred = len(plain) < len(positional)
    if not plain:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in MESSAGE_KEYWORDS:
                alternatives = reader.message(arg.value, position)
                return [build_template(kind, pieces, argument=arg.keyword.value)
                        for kind, pieces in alternatives]
        return None
    readings = [reader.message(value, position) for value in plain]
    display, chosen = _display(exception_qualname, len(plain), starred)
    if chosen is None:
        chosen = next((i for i, r in enumerate(readings) if r[0][0] != "dynamic"), 0)
    templates = []
    for kind, pieces in readings[chosen]:
        seen: list[str] = []
        pattern = _display_pattern(display, readings, chosen, pieces, kind, seen, starred,
                                   written=exception_qualname == "builtins.BlockingIOError")
        template = build_template(kind, pieces, argument=str(chosen), display=display,
                                  regex="^" + pattern + "$")
        if kind == "dynamic" and len(plain) == 1:
            template = replace(template, reason=why_dynamic(reader, plain[0], position))
        templates.append(template)
    return _unique(templates)
