"""The literal text a record's regex requires: what lookup looks for in a paste before it runs
any regex (`ranking.Wording.required`, the index's `required` column).

A crawler regex is literal runs between `(?P<name>[\\s\\S]*?)` groups, anchored by `^` and
`$`: every message it matches holds each run. A regex edited into another shape (a class
escape like `\\d`, an alternation) gives no runs: no prefilter, every paste tries it.
"""

from __future__ import annotations


def literal_runs(regex: str) -> list[str]:
    """The runs of literal text a crawler regex requires, outside its groups and classes."""
    body = regex[1:] if regex.startswith("^") else regex
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    runs: list[str] = []
    run: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            if body[index + 1].isalnum():
                return []  # a class escape like \d: not our format, no prefilter
            run.append(body[index + 1])
            index += 2
            continue
        if char in "?*+":
            if run:
                run.pop()
            runs.append("".join(run))
            run = []
        elif char in "([":
            runs.append("".join(run))
            run = []
            index = _skip(body, index)
            continue
        elif char in ".|^$)]{}":
            return []
        else:
            run.append(char)
        index += 1
    runs.append("".join(run))
    return [r for r in runs if r]


def _skip(body: str, index: int) -> int:
    """The index after the group or class that opens at `index`."""
    depth = 0
    in_class = False
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if depth == 0 and not in_class:
            return index + 1
        index += 1
    return index
