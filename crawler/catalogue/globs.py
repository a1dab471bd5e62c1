"""Templates and test patterns as globs: literal characters and wilds (any text), and the
dynamic programme of the evidence rule's WEAK fit (`coverage`) over two globs."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import accumulate

try:  # the regex parser behind `re`; `sre_parse` before Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

MAX_DP_CELLS = 200_000  # a weak-fit search larger than this is not tried

WILD = None  # a glob symbol: any text
Glob = tuple[str | None, ...]


def template_glob(template: str, placeholders: Sequence[str]) -> Glob:
    """A template as a glob: its literal characters, each placeholder one wildcard."""
    symbols: list[str | None] = []
    index, k = 0, 0
    while index < len(template):
        char = template[index]
        if template.startswith("{{", index) or template.startswith("}}", index):
            symbols.append(char)
            index += 2
        elif char == "{" and k < len(placeholders) and \
                template.startswith("{" + placeholders[k] + "}", index):
            if not symbols or symbols[-1] is not WILD:
                symbols.append(WILD)
            index += len(placeholders[k]) + 2
            k += 1
        else:
            symbols.append(char)
            index += 1
    return tuple(symbols)


def pattern_globs(pattern: str, parsed: _sre.SubPattern | None = None) -> tuple[list[Glob], bool]:
    """A searched regex as globs (one per top-level alternative), and whether it ignores case.

    Literal characters are kept; anything else (classes, `.`, repeats, back references) is a
    wildcard; zero-width parts are dropped; `^` and `$` at the ends anchor the glob.
    """
    parsed = _sre.parse(pattern) if parsed is None else parsed  # `parsed`: the caller's parse of it
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    items = list(parsed)
    branches = [items]
    if len(items) == 1 and items[0][0] == _sre.BRANCH:
        branches = [list(branch) for branch in items[0][1][1]]
    globs = []
    for branch in branches:
        start = bool(branch) and branch[0][0] == _sre.AT and \
            branch[0][1] in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING)
        end = bool(branch) and branch[-1][0] == _sre.AT and \
            branch[-1][1] in (_sre.AT_END, _sre.AT_END_STRING)
        symbols: list[str | None] = [] if start else [WILD]
        _flatten(branch, symbols, ignore_case)
        if not end:
            symbols.append(WILD)
        globs.append(_collapse(symbols))
    return globs, ignore_case


def _flatten(items: Iterable[tuple[object, object]], out: list[str | None], ignore_case: bool) -> None:
    for op, arg in items:
        if op == _sre.LITERAL:
            char = chr(arg)  # type: ignore[arg-type]
            out.append(char.lower() if ignore_case else char)
        elif op == _sre.SUBPATTERN:
            _flatten(arg[-1], out, ignore_case)  # type: ignore[index]
        elif op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue  # zero-width
        else:
            out.append(WILD)


def _collapse(symbols: list[str | None]) -> Glob:
    out: list[str | None] = []
    for symbol in symbols:
        if symbol is WILD and out and out[-1] is WILD:
            continue
        out.append(symbol)
    return tuple(out)


def coverage(template: Glob, pattern: Glob) -> int:
    """The most literal pattern characters matched by literal template characters, over every
    message the template can give that the pattern finds; -1 when there is no such message.

    A dynamic programme over (template position, pattern position), filled from the ends: a
    wild of either side takes nothing or the other side's next symbol; two equal literals match
    and count one. A row is built whole, by the kind of its template symbol (this runs for each
    weak fit of a run's tests): under a wild, the running maximum of the row below from the
    right; under a literal, -1 but where the pattern has that literal (a few places, looked up)
    and at the pattern's wilds, filled from the right."""
    rows, cols = len(template), len(pattern)
    if (rows + 1) * (cols + 1) > MAX_DP_CELLS:
        return -1
    wilds = [j for j in range(cols - 1, -1, -1) if pattern[j] is WILD]  # right to left
    places: dict[str, list[int]] = defaultdict(list)  # a literal -> where the pattern has it
    for j, symbol in enumerate(pattern):
        if symbol is not WILD:
            places[symbol].append(j)
    below = [-1] * (cols + 1)  # past the template's end, only pattern wilds taking nothing
    below[cols] = 0
    for j in wilds:
        below[j] = below[j + 1]
    for i in range(rows - 1, -1, -1):
        symbol = template[i]
        if symbol is WILD:
            row = list(accumulate(reversed(below), max))
            row.reverse()
        else:
            row = [-1] * (cols + 1)
            for j in places.get(symbol, ()):
                if below[j + 1] >= 0:
                    row[j] = below[j + 1] + 1
            for j in wilds:
                row[j] = max(row[j + 1], below[j])
        below = row
    return below[0]


def fragments(glob: Glob) -> list[str]:
    """The literal runs of a glob, in order."""
    runs: list[str] = []
    current: list[str] = []
    for symbol in glob:
        if symbol is WILD:
            if current:
                runs.append("".join(current))
            current = []
        else:
            current.append(symbol)
    if current:
        runs.append("".join(current))
    return runs
