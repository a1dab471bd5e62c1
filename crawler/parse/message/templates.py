"""`Template`s: a message's literal text and placeholders, and the regex of `str(exc)` that shows it.

A placeholder is named by the exact source of its expression (`f'{disallowed}'` gives
`disallowed`), conversions and format specs kept out of the name. Whatever cannot be read as
text is still a template: kind `dynamic`, the expression's source as its only placeholder.

An expression may read as several alternatives (a variable assigned in both branches of an `if`,
`ngettext`, `a if c else b`): each gives its own template, never a single guess. The regex
matches `str(exc)` as Python prints it (the template's `display`): the message itself for one
argument, its repr for a `KeyError`, the repr of the args tuple for several arguments,
`[Errno n] text` for `OSError`, and the shapes of `E(msg, *args)`, `ExceptionGroup`,
`SyntaxError(msg, details)` and the `Unicode*Error`s. An exception call is read into templates
by `crawler.parse.message.exception_call` (the expressions by `crawler.parse.message.reading`);
this module reads no source, so what only builds or shows templates imports no parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from crawler.parse.message.pieces import (
    _GROUP_IDS,
    Alternative,
    Piece,
    merge_text,
)
from crawler.records import Template

# Keyword arguments that carry the message when there is no positional one.
MESSAGE_KEYWORDS = ("message", "msg", "detail", "reason", "text", "description")

# Builtin exceptions whose str() is `[Errno n] strerror` (and `: 'filename'`) for 2 or 3 args.
OSERROR_FAMILY = frozenset(
    f"builtins.{name}" for name in (
        "OSError", "IOError", "EnvironmentError", "BlockingIOError", "ChildProcessError",
        "ConnectionError", "BrokenPipeError", "ConnectionAbortedError", "ConnectionRefusedError",
        "ConnectionResetError", "FileExistsError", "FileNotFoundError", "InterruptedError",
        "IsADirectoryError", "NotADirectoryError", "PermissionError", "ProcessLookupError",
        "TimeoutError",
    )
)

SYNTAX_ERRORS = frozenset({"builtins.SyntaxError", "builtins.IndentationError", "builtins.TabError"})
# _ssl's classes show the args tuple, unless two or more arguments set an OSError-style strerror,
# which is then shown alone (SSLError_str in CPython's Modules/_ssl.c): `('text',)` for one.
SSL_ERRORS = frozenset(
    f"{module}.{name}" for module in ("_ssl", "ssl") for name in (
        "SSLError", "SSLCertVerificationError", "SSLZeroReturnError", "SSLWantReadError",
        "SSLWantWriteError", "SSLSyscallError", "SSLEOFError",
    )
) | {"ssl.CertificateError"}
CODEC_ERRORS = {"builtins.UnicodeDecodeError": 5, "builtins.UnicodeEncodeError": 5,
                "builtins.UnicodeTranslateError": 4}  # their argument counts

ANY = "[\\s\\S]*?"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _display(exception_qualname: str | None, count: int, starred: bool) -> tuple[str, int | None]:
    """How str(exc) shows the arguments, and which one is the message (None: first textual)."""
    if starred:
        return ("varargs", 0) if count == 1 else ("args", None)
    if exception_qualname in OSERROR_FAMILY and count in (2, 3):
        return "errno", 1
    if exception_qualname in SSL_ERRORS:
        return ("str", 1) if count >= 2 else ("args", 0)
    if exception_qualname in ("builtins.ExceptionGroup", "builtins.BaseExceptionGroup") \
            and count == 2:
        return "group", 0
    if exception_qualname in SYNTAX_ERRORS and count == 2:
        return "syntax", 0
    if CODEC_ERRORS.get(exception_qualname or "") == count:
        return "codec", count - 1
    if count > 1:
        return "args", None
    return ("repr" if exception_qualname == "builtins.KeyError" else "str"), None


def single_argument_display(exception_qualname: str | None) -> str:
    """How str(exc) shows an exception built with its message as its only argument."""
    return _display(exception_qualname, 1, False)[0]


def redisplay(template: Template, display: str) -> Template:
    """The same template shown another way (`str` or `repr`), when its class says so."""
    pieces = pieces_of(template)
    if pieces is None or template.display == display:
        return template
    seen: list[str] = []
    if display == "repr" and template.kind != "dynamic":
        pattern = _repr_pattern(pieces, seen)
    else:
        pattern = _pattern(pieces, seen)
    return replace(template, display=display, regex="^" + pattern + "$")


def substitute(template: Template, name: str, given: Template) -> Template | None:
    """A class's template with its placeholder `name` replaced by the raise's own message."""
    pieces = pieces_of(template)
    inserted = pieces_of(given)
    if pieces is None or inserted is None or template.display not in ("str", "repr"):
        return None
    joined: list[Piece] = []
    for piece in pieces:
        joined.extend(inserted if piece.is_placeholder and piece.text == name else [piece])
    merged = merge_text(joined)
    seen: list[str] = []
    pattern = _repr_pattern(merged, seen) if template.display == "repr" else _pattern(merged, seen)
    return build_template(template.kind, merged, defined_at=template.defined_at,
                          display=template.display, regex="^" + pattern + "$")


def pieces_of(template: Template) -> list[Piece] | None:
    """A template's pieces read back from its text and placeholder list; None if they disagree,
    or when the regex repeats what a loop adds (the text shows it once)."""
    text = template.template
    if REPEATED_GROUP.search(template.regex):
        return _grouped_pieces(template)
    pieces: list[Piece] = []
    literal: list[str] = []
    queue = list(template.placeholders)
    index = 0
    while index < len(text):
        pair = text[index:index + 2]
        if pair in ("{{", "}}"):
            literal.append(pair[0])
            index += 2
            continue
        if text[index] == "{":
            if not queue:
                return None
            name = queue.pop(0)
            if text[index + 1:index + 2 + len(name)] != name + "}":
                return None
            pieces.extend([Piece("".join(literal)), Piece(name, True)])
            literal = []
            index += len(name) + 2
            continue
        literal.append(text[index])
        index += 1
    pieces.append(Piece("".join(literal)))
    return merge_text(pieces) if not queue else None


def _grouped_pieces(template: Template) -> list[Piece] | None:
    """The pieces of a template whose regex repeats what a loop adds (or what some paths add),
    read back off the regex `_runs` wrote: its literal runs, its placeholders (named in order by
    the template's list) and its `(?:one|another)*` groups. None unless the pieces give the
    template's text and regex back exactly (another display, a group of placeholders alone)."""
    regex = template.regex
    if template.display != "str" or not (regex.startswith("^") and regex.endswith("$")):
        return None
    names = list(template.placeholders)
    pieces: list[Piece] = []
    group = choice = 0
    index, end = 1, len(regex) - 1
    while index < end:
        if regex.startswith("(?:", index) and not group:
            group, choice = next(_GROUP_IDS), 0
            index += 3
        elif regex.startswith(")*", index) and group:
            group = 0
            index += 2
        elif regex[index] == "|" and group:
            choice += 1
            index += 1
        elif regex[index] == "(":
            found = _PLACEHOLDER_GROUP.match(regex, index)
            if found is None or not names:
                return None
            pieces.append(Piece(names.pop(0), True, group=group, choice=choice))
            index = found.end()
        elif regex[index] == "\\" and index + 1 < end:
            pieces.append(Piece(regex[index + 1], group=group, choice=choice))
            index += 2
        elif regex[index] in _REGEX_SPECIAL:
            return None
        else:
            pieces.append(Piece(regex[index], group=group, choice=choice))
            index += 1
    pieces = merge_text(pieces)
    if names or group:
        return None
    again = build_template(template.kind, pieces)
    if (again.template, again.placeholders, again.regex) != \
            (template.template, template.placeholders, regex):
        return None
    return pieces


_PLACEHOLDER_GROUP = re.compile(r"\((?:\?P<[A-Za-z_][A-Za-z0-9_]*>)?\[\\s\\S\]\*\?\)")


def _display_pattern(display: str, readings: list[list[Alternative]], chosen: int,
                     pieces: list[Piece], kind: str, seen: list[str], starred: bool = False,
                     written: bool = False) -> str:
    textual = kind != "dynamic"
    if display == "str":
        return _pattern(pieces, seen)
    if display == "repr":
        return _repr_pattern(pieces, seen) if textual else _pattern(pieces, seen)
    if display == "errno":
        pattern = f"\\[Errno ({ANY})\\] {_pattern(pieces, seen)}"
        if len(readings) == 3:
            tail = f": {_other_arg_pattern(readings[2])}"
            # BlockingIOError's third argument, when a number, is characters_written: not shown
            pattern += f"(?:{tail})?" if written else tail
        return pattern
    if display == "group":
        return f"{_pattern(pieces, seen)} \\(({ANY}) sub-exceptions?\\)"
    if display == "syntax":
        return f"{_pattern(pieces, seen)}(?: \\(({ANY})\\))?"
    if display == "codec":
        return f"({ANY}): {_pattern(pieces, seen)}"
    if display == "varargs":  # E(msg, *args): the message alone, or the args tuple
        shown = _pattern(pieces, seen)
        quoted = _repr_pattern(pieces, seen) if textual else f"({ANY})"
        return f"(?:{shown}|\\({quoted}(?:, ({ANY}))?,?\\))"
    parts = []
    for index, reading in enumerate(readings):
        if index == chosen:
            parts.append(_repr_pattern(pieces, seen) if textual else f"({ANY})")
        else:
            parts.append(_other_arg_pattern(reading))
    if len(parts) == 1 and not starred:  # a tuple of one shows its comma
        return "\\(" + parts[0] + ",\\)"
    tail = f"(?:, ({ANY}))?" if starred else ""
    return "\\(" + ", ".join(parts) + tail + "\\)"


def display_regex(display: str, readings: list[list[Alternative]], chosen: int,
                  pieces: list[Piece], kind: str) -> str:
    """The anchored regex of a message shown as `display` shows it (`call_templates`), the
    call's arguments read as `readings`, the message the `chosen` one."""
    return "^" + _display_pattern(display, readings, chosen, pieces, kind, []) + "$"


def _other_arg_pattern(reading: list[Alternative]) -> str:
    """An argument that is not the message, as its repr shows: exact when it is a plain literal."""
    if len(reading) == 1 and reading[0][0] == "literal":
        return escape_regex(repr("".join(p.text for p in reading[0][1])))
    return f"({ANY})"


def _unique(templates: list[Template]) -> list[Template]:
    seen: set[str] = set()
    unique = []
    for template in templates:
        if template.template not in seen:
            seen.add(template.template)
            unique.append(template)
    return unique


# ---------------------------------------------------------------- pieces to a template


def build_template(kind: str, pieces: Sequence[Piece], *, argument: str | None = None,
                   defined_at: str | None = None, display: str = "str",
                   regex: str | None = None) -> Template:
    """Join pieces into the template text, its placeholder list and its anchored regex."""
    pieces = [Piece(_visible(p.text), p.is_placeholder, p.plain) if _SURROGATE.search(p.text) else p
              for p in pieces]
    text: list[str] = []
    placeholders: list[str] = []
    for piece in pieces:
        if piece.is_placeholder:
            text.append("{" + piece.text + "}")
            placeholders.append(piece.text)
        else:
            text.append(piece.text.replace("{", "{{").replace("}", "}}"))
    pattern = regex if regex is not None else "^" + _pattern(pieces, []) + "$"
    pattern = _SURROGATE.sub(lambda m: escape_regex(_visible(m.group())), pattern)
    return Template(
        kind=kind,
        template="".join(text),
        placeholders=tuple(placeholders),
        regex=pattern,
        argument=argument,
        defined_at=defined_at,
        display=display,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(text: str) -> str:
    """A lone surrogate cannot be written as UTF-8: keep it as the `\\udcff` a traceback shows."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


_REGEX_SPECIAL = frozenset("\\.^$*+?()[]{}|")


def escape_regex(text: str) -> str:
    """Escape only what is special in a regex, so the pattern stays readable and portable."""
    return "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)


def _pattern(pieces: Sequence[Piece], seen: list[str]) -> str:
    return _runs(pieces, seen, escape_regex)


def _repr_pattern(pieces: Sequence[Piece], seen: list[str]) -> str:
    """The repr of a str built from pieces: exact for pure text, else either quote style."""
    if not any(p.is_placeholder or p.group for p in pieces):
        return escape_regex(repr("".join(p.text for p in pieces)))
    return f"['\"]{_runs(pieces, seen, _repr_body)}['\"]"


def _runs(pieces: Sequence[Piece], seen: list[str], literal: Callable[[str], str]) -> str:
    """The pieces as a regex: a loop's group as `(?:one pass|another)*`."""
    parts: list[str] = []
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        if not piece.group:
            parts.append(_group(piece.text, seen) if piece.is_placeholder else literal(piece.text))
            index += 1
            continue
        choices: dict[int, list[str]] = {}
        while index < len(pieces) and pieces[index].group == piece.group:
            member = pieces[index]
            choices.setdefault(member.choice, []).append(
                _group(member.text, seen) if member.is_placeholder else literal(member.text))
            index += 1
        alternatives = ["".join(c) for c in choices.values()]
        if all(a == f"({ANY})" or a.startswith("(?P<") and a.endswith(f">{ANY})")
               for a in alternatives):
            parts.append(alternatives[0])  # placeholders alone: any text, whatever the passes
        else:
            parts.append("(?:" + "|".join(alternatives) + ")*")
    return "".join(parts)


# A loop's repeated group in a regex (`_runs`): never made otherwise, where `*` is escaped or lazy.
REPEATED_GROUP = re.compile(r"(?<!\\)\)\*(?!\?)")


def _repr_body(text: str) -> str:
    """Literal text as it stands inside a str's repr, as a regex; `'` may or may not be escaped."""
    parts = []
    for char in text:
        if char == "'":
            parts.append("\\\\?'")
        elif char == '"':
            parts.append('"')
        else:
            parts.append(escape_regex(repr(char)[1:-1]))
    return "".join(parts)


def _group(name: str, seen: list[str]) -> str:
    """A regex group for a placeholder: named after it when it is a fresh identifier."""
    group = f"(?P<{name}>{ANY})" if _IDENTIFIER.match(name) and name not in seen else f"({ANY})"
    seen.append(name)
    return group
