"""What a user pasted, read into the exceptions it reports: class, message text and frames.

People paste a message alone or a whole traceback, in the forms their tools print: Python's own
traceback (chained: "During handling ...", "The above exception ..."), an exception group's
`+-+---- 1 ----` boxes, pytest's `E   ` lines and its `FAILED path::test - Name: text` summary
line (cut with `...`), IPython and Jupyter (ANSI colours, `---->` arrows, `Cell In[3]`), Rich's
boxed traceback, logging's prefixes (and a logged error among a program's other log records or
above a traceback), a log's or a build's column before each line, a JSON log's record holding
the traceback escaped, a process pool's remote traceback between its quotes, and lines a
terminal hard-wrapped. `read_paste` turns each into `Reported` exceptions, the last raised first
(the one a user asks about), and for each the texts to try: the message after every `Name: `
prefix it carries (`FilteredStackTrace: ValueError: ...`), and the whole line where a prefix may
be message text. Wrapping is left in the text: the ranking matches line breaks loosely
(`matching`).

A paste is read up to MAX_PASTE characters, its *end*: what every form prints last is what a
user asks about (Python's traceback ends with the exception raised last, after its frames and
the chained ones; pytest's summary line and a logger's record end with it too), and a longer
message alone is long for a placeholder's value (a repr, a dump), which identifies nothing.
256 KiB holds the longest real tracebacks whole (jax's run to a few tens of KB); what was left
out of the beginning is counted (`Paste.left_out`) and said with the answer.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from itertools import islice

from crawler.serve.lookup.matching import plain

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_HEAD = re.compile(r"^\s*(?:\+ )?(?:Exception Group )?Traceback \(most recent call last\):?\s*$"
                   r"|^╭.*Traceback")
_IPYTHON_HEAD = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)")
# (the margins are spaces and tabs only: `^\s*` at every one of many blank lines would run
# over all the blank lines after it, a quadratic cost on a paste of line breaks)
_CHAIN = re.compile(r"^[^\S\n]*(?:During\s+handling\s+of\s+the\s+above\s+exception,\s+another\s+exception"
                    r"\s+occurred:|The\s+above\s+exception\s+was\s+the\s+direct\s+cause\s+of\s+the"
                    r"\s+following\s+exception:)[^\S\n]*$", re.MULTILINE)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<line>\d+)(?:, in (?P<function>.+))?$')
_IPYTHON_FRAME = re.compile(r"^(?:File (?P<path>\S+?):(?P<line>\d+)(?:, in (?P<function>[^(\s]+))?"
                            r"|Cell In\[\d+\], line (?P<cell>\d+))")
_RICH_FRAME = re.compile(r"^│ (?P<path>\S+?):(?P<line>\d+) in (?P<function>\S+)")
_FRAME_START = re.compile(r'^\s*File "|^File \S+:\d+|^Cell In\[|^-*> ?\d+ |^│|^[╭╰]')
# `Name: text`; `Name:` then a line break when the message begins with one (its space stripped)
_EXCEPTION_LINE = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::(?:[ \n](?P<text>.*)|$)|$)", re.DOTALL)
_LOOKS_RAISED = re.compile(r"^[A-Za-z_][\w.]*(?:: |:$)|^(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception|"
                           r"Warning|Exit|Interrupt|Group|Failure|Trace)$")
_GROUP_LINE = re.compile(r"^\s*(?:\+-[-+]*(?: \d+ -+| \.\.\.)?-*|\+-+|\+-+ \.\.\..*)\s*$")
_GROUP_MARGIN = re.compile(r"^\s*[|+] ?")
_SUB_EXCEPTIONS = re.compile(r" \(\d+ sub-exceptions?\)$")
_PYTEST_E = re.compile(r"^E(?: {1,}|$)")
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S+?(?: - (?P<text>.+))?$")
# A log record's head: a time stamp (`2019-01-01 10:00:00,000`, bracketed, or celery's `[...: `),
# the logger in brackets before the level (scrapy's `[scrapy.core.scraper] ERROR: `), the level
# (celery's `ERROR/MainProcess]`), then `[logger] ` (alembic's `ERROR [alembic.util.messaging] `),
# `:logger:` (logging's default), `logger: `, `: ` or spaces.
_LOGGING = re.compile(r"^(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?::|\])?\s*)?"
                      r"(?:\[[\w.<>-]+\]\s+)?\[?(?:CRITICAL|ERROR|WARNING|WARN|INFO|DEBUG|FATAL|"
                      r"EXCEPTION)(?:/[\w-]+)?\]?(?:\s+\[[\w.<>-]+\]\s+|:[\w.<>-]*:|\s+[\w.<>-]+"
                      r"\s*:\s|\s*:\s|\s+)")
_CUT = re.compile(r"(?:\.\.\.|…)$")
# What a tool puts before each line it relays: pytest's INTERNALERROR, a mail or markdown
# quote, docker compose's service column (`web_1  | `, `api-1  | `).
_LINE_DECORATION = re.compile(r"^(?:INTERNALERROR> ?|> ?|[\w.-]+\s*\| ?)")
_DECORATED_BY = re.compile(r"^(?P<tag>INTERNALERROR>|>|[\w.-]+\s*\|)(?: |$)")
_RULE = re.compile(r"^-{4,}$", re.MULTILINE)
_FENCE = re.compile(r"^\s*(?:```|~~~)\w*\s*$")
# Sentry's lines between the message and the frames; IPython's old `path in function(args)`.
_FRAME_NOISE = re.compile(r"^\(\d+ additional frame\(s\) were not displayed\)$|^\.\.\.$")
_OLD_IPYTHON_FRAME = re.compile(r"^(?P<path>\S+\.py) in (?P<function>[\w.<>]+)\(")
# A program's usage error after its usage lines (click's `Error: `, argparse's `prog: error: `)
_CLI_ERROR = re.compile(r"^(?:Error|[\w.-]+: error): (?P<text>.+)", re.DOTALL)
# a class named inside prose, as issue titles have it: `... the following Error: text`
_NAMED_INSIDE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception): (?P<text>.+)",
                           re.DOTALL)
# The name of a prefix that is the exception's, not message text: dotted, or a class's name.
_CLASS_NAME = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*$|^_?[A-Z][A-Za-z0-9]*(?:Error|Exception|"
                         r"Warning|Exit|Interrupt|Group|Trace|Failure|Fault)$")


@dataclass(frozen=True)
class Frame:
    """One frame of a pasted traceback."""

    path: str
    line: int
    function: str | None
    source: str | None = None  # the source line Python's traceback prints under it, if any


@dataclass(frozen=True)
class Reported:
    """One exception a paste reports: its class as written (`pkg.errors.BadThing`; None when
    the paste names none) and its message; `texts` are what lookup tries, best reading first."""

    exception: str | None
    text: str
    frames: tuple[Frame, ...]
    prefixes: tuple[str, ...]  # the names removed before the message (`FilteredStackTrace`)
    cut: bool  # the paste ends in `...`: the message went on
    texts: tuple[str, ...]
    # a whole traceback: its head, then its frames down to the raise, none said left out; the
    # raise's own Python frame is its last one (if no frame is the library's, it did not raise)
    whole: bool = False
    # the message follows the frames, as Python prints it: the last frame is where it was raised
    # (not so where the message comes first and the frames after it may be cut)
    raised_last: bool = False
    # the traceback says frames were left out of it (jax's filtering, Sentry's): its last frame
    # may be the caller's, not where it was raised
    filtered: bool = False


@dataclass(frozen=True)
class Paste:
    """What a user pasted: its forms (`traceback`, `pytest`, `ipython`, `rich`, `logging`,
    `json`, `remote`, `group`, `chained`, `message`) and the exceptions it reports, the last raised first;
    `read`: the characters read (its end), `left_out`: those of its beginning that were not."""

    forms: tuple[str, ...]
    reported: tuple[Reported, ...]
    read: int = 0
    left_out: int = 0


MAX_QUOTES = 8  # levels of quoting read off a paste (`> > > `)
MAX_INSIDE = 8  # texts found inside one report (`_texts_inside`): the first ones, in order
MAX_PASTE = 262_144  # the characters of a paste read: its last ones (see the module's docstring)


def cut_paste(pasted: str) -> tuple[str, int]:
    """The end of `pasted` that a lookup reads (at most MAX_PASTE characters), and how many
    characters of its beginning are left out."""
    if len(pasted) <= MAX_PASTE:
        return pasted, 0
    return pasted[-MAX_PASTE:], len(pasted) - MAX_PASTE


def read_paste(pasted: str, left_out: int = 0) -> Paste:
    """The exceptions `pasted` reports, the last raised first (see the module's docstring);
    `left_out`: characters of the paste its reader did not keep (`cut_paste` adds its own)."""
    pasted, cut = cut_paste(pasted)
    forms: list[str] = []
    text = _clean(pasted, forms)
    sections = _sections(text, forms)
    reported = [found for section in reversed(sections)
                for found in _reports(section, forms)]
    if "remote" in forms:
        reported = _without_relays(reported)
    if not any(found.text for found in reported):
        # no message read (a traceback cut before its last line, an odd form): the whole
        # paste is tried as the message too
        reported.append(_reported(text.strip("\n"), ()))
    above = _above_head(sections[0]) if sections else ""
    if above:  # a logger's line above the traceback, the last report tried
        reported.append(_reported(above, ()))
    if not forms:
        forms.append("message")
    return Paste(tuple(dict.fromkeys(forms)), tuple(_unique(reported)), len(pasted),
                 left_out + cut)


def _clean(pasted: str, forms: list[str]) -> str:
    text = plain(_json_decoded(pasted.replace("\r\n", "\n").replace("\r", "\n"), forms))
    if _ANSI.search(text):
        forms.append("ansi")
        text = _ANSI.sub("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    for _ in range(MAX_QUOTES):  # a quote of a quote (`> > > `): each level as the first
        undecorated = _undecorated(lines, forms)
        if undecorated == lines:
            break
        lines = undecorated
    lines = _without_log_column(lines, forms)
    lines = _without_request_log(lines)
    lines = _dedented(lines)
    if _QUOTES in text:
        lines = _without_remote_quotes(lines, forms)
    if any(_GROUP_LINE.match(line) for line in lines) or "Exception Group Traceback" in text:
        forms.append("group")
        # a group's sub-exceptions become chained sections; its margins are dropped
        lines = ["During handling of the above exception, another exception occurred:"
                 if _GROUP_LINE.match(line) else _GROUP_MARGIN.sub("", line, count=1)
                 for line in lines]
    if any(line.startswith(("╭", "╰")) for line in lines):
        forms.append("rich")
    return "\n".join(lines)


# A web server's log line for a request (its request line quoted, then the response's status),
# after whatever the server puts before it (a time stamp, the client's address, a level)
# (aiohttp writes a method it could not read as `UNKNOWN`)
_REQUEST_LOG = re.compile(r'^[^"\n]*"[A-Z]+ \S+ HTTP/\d(?:\.\d)?" \d{3}(?:\s|$)')


def _without_request_log(lines: list[str]) -> list[str]:
    """The lines without a web server's log line for the request that failed, printed after
    the error or among its lines: no text of the message. Real: Django's development server's
    `[28/Jul/2020 09:55:48] "GET /redisboard/redisserver/ HTTP/1.1" 500 145` after redis-py's
    traceback (github.com/ionelmc/django-redisboard/issues/44), Werkzeug's `127.0.0.1 - -
    [08/Dec/2021 19:44:10] "POST /create_user HTTP/1.1" 500 -` after Flask's message
    (github.com/mikeizbicki/cmc-csci040/issues/218). Not a request or a response written
    otherwise (curl's `> POST /todos HTTP/1.1`, `HTTP/1.1 400 BAD REQUEST`); a paste of such
    lines alone is left as it is."""
    kept = [line for line in lines if not _REQUEST_LOG.match(line)]
    if len(kept) == len(lines) or not any(line.strip() for line in kept):
        return lines
    return kept


# A line that is a JSON object or a JSON string: a JSON log's record, an API's error body
_JSON_LINE = re.compile(r'^\s*[{"]')
_JSON = json.JSONDecoder(strict=False)  # a string may hold a tab or a line break as it is
# a string's end cut inside an escape (`\`, `\u00`): what a cut line ends with
_OPEN_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\(?:u[0-9a-fA-F]{0,3})?$")


def _json_decoded(text: str, forms: list[str]) -> str:
    """A traceback or a message a JSON log or API wrote on one line, its line breaks and quotes
    escaped (`{"channel": "...", "exception": "Traceback (most recent call last):\\n  File
    \\"...`): each line that is a JSON object or string is replaced by the strings it holds
    that span lines and read as a report (a traceback's head, `Name: text`), decoded by JSON's
    own reader, a string the line was cut inside read up to the cut. A JSON line holding none
    (a log record of one line, a body of fields) is left as it is, and so is JSON inside a
    message's line. Real: starlette's traceback in caikit's JSON log (github.com/caikit/caikit
    /issues/736), fastapi's message in an application's JSON body printed over lines
    (github.com/JiayuXu0/FastAPI-Template/issues/5)."""
    if "\\n" not in text:
        return text
    whole = _reports_in(_loaded(text)) if _JSON_LINE.match(text) else []
    if whole:  # the paste is one JSON value, on one line or printed over several
        forms.append("json")
        return "\n".join(whole)
    lines = []
    for line in text.split("\n"):
        reports = _reports_in(_json_strings(line)) if _JSON_LINE.match(line) \
            and "\\n" in line else []
        if reports:
            forms.append("json")
        lines.extend(reports or [line])
    return "\n".join(lines)


def _loaded(text: str) -> object:
    """`text` read as JSON (None if it is not, or nests deeper than the decoder goes: a value
    of thousands of nested lists is no log's record)."""
    try:
        return _JSON.decode(text)
    except (ValueError, RecursionError):
        return None


def _reports_in(value: object) -> list[str]:
    """The strings of a JSON value (a string, or those its lists and objects hold, in order)
    that span lines and read as a report; walked with a stack, as deep as the value goes."""
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if "\n" in item and _reads_as_report(item):
                found.append(item)
        elif isinstance(item, (dict, list)):
            todo.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
    return found


def _json_strings(line: str) -> list[str]:
    """The JSON strings of `line`, keys and values, in order; the last one up to the line's end
    when the line was cut inside it."""
    strings: list[str] = []
    start = line.find('"')
    while start >= 0:
        try:
            string, end = _JSON.raw_decode(line, start)
        except ValueError:  # unterminated (the line cut inside it) or not JSON
            try:
                string, end = _JSON.raw_decode(_OPEN_ESCAPE.sub("", line[start:]) + '"')[0], len(line)
            except ValueError:
                break
        strings.append(string)
        start = line.find('"', end)
    return strings


def _reads_as_report(text: str) -> bool:
    """`text` holds a traceback's head or a line `Name: text` whose name is a class's."""
    return any(_HEAD.match(line) or ((found := _EXCEPTION_LINE.match(line)) is not None
                                     and _CLASS_NAME.match(found["name"]))
               for line in text.split("\n"))


# A frame line with a log's column before it: the column ends at the frame's own margin.
_COLUMN_FRAME = re.compile(r'^(?P<column>\S.*?\s)\s*File "[^"]*", line \d+')


def _without_log_column(lines: list[str], forms: list[str]) -> list[str]:
    """A traceback a log relayed line by line, each line behind the log's own column (a time
    stamp, a process, a logger): the column cut off every line that carries it, found as what
    all its frame lines share once digits are masked; lines of the same log from another
    source (the same time stamp's shape, another process) after the column's first line are
    dropped. Real relays it reads: heroku's `2022-06-15T03:42:11.794121+00:00 app[web.1]: `
    (aiohttp's and pymongo's tracebacks, the router's line after them dropped), paramiko's
    `ERR [20170603-18:40:31.393] thr=1   paramiko.transport: `, ray's `(_execute_read_task
    pid=2023) ` (Pillow's). Not a column: pytest's `E   ` (its own form, read later), a prose
    line that happens to hold one frame (two frame lines are needed)."""
    columns = [_MASK.sub("0", found["column"]) for line in lines
               if (found := _COLUMN_FRAME.match(line)) and not _PYTEST_E.match(line)]
    if len(columns) < 2:
        return _without_stamp_column(lines, forms)
    shared = columns[0]
    for column in columns[1:]:
        shared = shared[:next((i for i, (a, b) in enumerate(zip(shared, column)) if a != b),
                              min(len(shared), len(column)))]
    width = len(shared.rstrip())
    if not width:
        return lines
    width += 1  # the one space the log puts between its column and the line it relays
    head = shared.split(None, 1)[0]  # the column's first field: a time stamp's shape, a level
    kept: list[str] = []
    relayed = False  # the column's first line is behind
    for line in lines:
        masked = _MASK.sub("0", line[:width])
        if masked == shared[:width]:
            kept.append(line[width:])
            relayed = True
        elif not (relayed and masked.startswith(head)):
            kept.append(line)
    forms.append("logging")
    return kept


# a line's leading field and the one blank after it: bracketed (`[   32s] `) or a word
_LEAD_FIELD = re.compile(r"(?P<field>\[[^\]]*\]|\S+)(?:[ \t]|$)")
_DIGITS = re.compile(r"\d+")
_DIGIT_FIRST = re.compile(r"\[[^\]\d]*\d|[^\s\d\[]*\d")  # a digit in the line's first field
# a stamp's shape: a bracket, a clock's colon, a counter's `#` or a date's dash or slash between
# digits, and no word (`[0s]`, `0:0:0`, `#0`, `0-0-0T0:0:0`); not a list's `0)` or `0.`, which a
# message's numbered lines begin with (scipy's `fpchec` conditions: "1) k+1 <= n-k-1 <= m")
_STAMP = re.compile(r"^(?!.*[A-Za-z]{2})(?=.*(?:\[|:|#|0-0|0/0))")


def _without_stamp_column(lines: list[str], forms: list[str]) -> list[str]:
    """The log's column on lines without frames (a usage error, a message a build printed),
    where no frame says where it ends: the leading fields every line that carries it shares
    in shape (digit runs and a bracket's blanks masked), from a first field that is a time
    stamp or a counter (`[   32s]`, `02:28:36`, `#12`: digits and signs, no word, not a number
    alone, which a table's index is), as far as each field holds a digit. It is cut when at
    least two lines and half the paste's lines carry it; a line `_LOGGING` reads as a record's
    head is left to it. Real: an openSUSE build's `[   32s] ` before pytest's usage error
    (github.com/Kozea/Pyphen/issues/42), Jenkins's `02:28:36 ` before it (github.com
    /couchbaselabs/mobile-testkit/issues/1201), docker build's `#12 7.813 ` before pip's
    (github.com/docker/docs/issues/12736)."""
    fields = {number: _stamp_fields(line) for number, line in enumerate(lines)
              if _DIGIT_FIRST.match(line) and not _LOGGING.match(line)}
    firsts = [found[0][0] for found in fields.values() if found]
    if not firsts:
        return lines
    first = max(set(firsts), key=firsts.count)
    carrying = {number: found for number, found in fields.items() if found and found[0][0] == first}
    if len(carrying) < 2 or len(carrying) * 2 < sum(1 for line in lines if line.strip()):
        return lines
    shapes = [[shape for shape, _ in found] for found in carrying.values()]
    width = 1  # the fields all the lines share
    while width < min(map(len, shapes)) and len({tuple(shape[:width + 1]) for shape in shapes}) == 1:
        width += 1
    forms.append("logging")
    return [line[carrying[number][width - 1][1]:] if number in carrying else line
            for number, line in enumerate(lines)]


def _stamp_fields(line: str) -> list[tuple[str, int]]:
    """The leading fields of `line` that hold a digit, the first a time stamp's or a counter's
    shape: each field's shape and where the line goes on after it (and its one blank)."""
    found: list[tuple[str, int]] = []
    place = 0
    while (field := _LEAD_FIELD.match(line, place)) is not None and \
            any(character.isdigit() for character in field["field"]):
        shape = _DIGITS.sub("0", "".join(field["field"].split()))
        if not found and not _STAMP.match(shape):
            break  # a number alone, a word (`[Errno 101]`): no stamp
        found.append((shape, field.end()))
        place = field.end()
    return found


_MASK = re.compile(r"\d")
_QUOTES = '"' * 3  # the line that delimits a traceback relayed from another process


def _without_remote_quotes(lines: list[str], forms: list[str]) -> list[str]:
    """A traceback another process raised, printed between two lines of three double quotes as
    the message of the exception that relays it: concurrent.futures' `_RemoteTraceback` and
    multiprocessing.pool's `RemoteTraceback` print `'\\n' + _QUOTES + '\\n%s' + _QUOTES`, then
    "The above exception was the direct cause ...". The quotes delimit it, they are no text of
    its last exception's message: a quotes line right before a traceback's head opens it, the
    next line like it closes it. Real: black's in blackd's log (github.com/psf/black/issues
    /1922), Pillow's in a discord bot's (github.com/machineonamission/mediaforge/issues/14). A
    quotes line elsewhere, a docstring's end among the source lines pytest or IPython shows
    (jsonschema's `resolve_from_url` in github.com/internetarchive/openlibrary-client/issues
    /293), is kept."""
    kept: list[str] = []
    closing = None  # the opening line, once one is read: the closing one is the same
    for number, line in enumerate(lines):
        if closing is None and line.strip() == _QUOTES and number + 1 < len(lines) \
                and _HEAD.match(lines[number + 1]):
            closing = line
            forms.append("remote")
        elif closing is not None and line == closing:
            closing = None
        else:
            kept.append(line)
    return kept


def _dedented(lines: list[str]) -> list[str]:
    """The lines without the margin all of them share (a paste indented as a code block, or
    by a quote's space): what is left begins as the program printed it."""
    margins = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    margin = min(margins, default=0)
    if not margin:
        return lines
    return [line[margin:] for line in lines]


def _undecorated(lines: list[str], forms: list[str]) -> list[str]:
    """The lines without what a tool put before each (`_LINE_DECORATION`), when most carry
    the same one; markdown fences and a paste's enclosing backticks dropped."""
    lines = [line for line in lines if not _FENCE.match(line)]
    if lines and lines[0].startswith("`") and lines[-1].endswith("`"):
        lines[0], lines[-1] = lines[0][1:], lines[-1][:-1]
    tags = [found["tag"] for line in lines if (found := _DECORATED_BY.match(line))]
    if not tags:
        return lines
    tag, count = max(((t, tags.count(t)) for t in set(tags)), key=lambda pair: pair[1])
    quoted = tag == ">" and lines[0].startswith(">") and not any(_PYTEST_E.match(line)
                                                                 for line in lines)
    if count * 2 < sum(1 for line in lines if line.strip()) and not quoted:
        return lines
    forms.append("quoted" if tag == ">" else "relayed")
    return [_LINE_DECORATION.sub("", line, count=1) if line.startswith(tag) else line
            for line in lines]


def _sections(text: str, forms: list[str]) -> list[str]:
    """A chained traceback cut into one section per exception, in the order printed."""
    parts = _CHAIN.split(text)
    if len(parts) > 1 and "group" not in forms:
        forms.append("chained")
    return [part.strip("\n") for part in parts if part.strip()]


def _reports(section: str, forms: list[str]) -> list[Reported]:
    lines = section.split("\n")
    pytest_lines = [line for line in lines if _PYTEST_E.match(line)]
    if pytest_lines:
        forms.append("pytest")
        return _pytest_reports(lines)
    summary = [m["text"] for line in lines if (m := _PYTEST_SUMMARY.match(line)) and m["text"]]
    if summary:
        forms.append("pytest")
        return [_reported(text, ()) for text in reversed(summary)]
    frames = _frames(lines, forms)
    if not frames and any(_PYTEST_SOURCE.match(line) for line in lines) and \
            not any(_LOOKS_RAISED.match(line) for line in lines if line[:1].strip()):
        # pytest's source of the failing test, its `>` line a raise, cut before its `E` lines
        cut = _cut_report(lines, ())
        if cut.text:
            forms.append("pytest")
            return [cut, _reported("\n".join(lines).strip("\n"), ())]
    span = _report_span(lines, forms)
    if span is None:
        return [_cut_report(lines, tuple(frames))] if frames else []
    start, end = span
    kept = [line for line in lines[start:end] if not _FRAME_NOISE.match(line)]
    found = _reported("\n".join(kept).strip("\n"), tuple(frames))
    # frames left out, said by the traceback (jax's, Sentry's) or by whoever pasted it (`[...]`)
    filtered = bool(_FILTERED.search(section)) or any(_ELIDED.match(line) for line in lines[:start])
    whole = bool(frames) and any(_HEAD.match(line) or _IPYTHON_HEAD.match(line)
                                 for line in lines[:start]) and not filtered
    rows = [number for number, line in enumerate(lines) if _FRAME_START.match(line)
            or _OLD_IPYTHON_FRAME.match(line)]
    return [replace(found, whole=whole, raised_last=bool(frames) and bool(rows)
                    and start > rows[-1], filtered=filtered)]


# the source line a frame shows for a raise, after the margin Rich (`│ ❱ 214 │ │`), IPython
# (`----> 214`) or pytest (`>   `, the failing line of a test's source) puts before it
_RAISE_CALL = re.compile(r"^[\s│]*(?:(?:❱|-*>)?\s*\d+\s*|>\s+)?[\s│]*raise\s+"
                         r"(?P<name>[A-Za-z_][\w.]*)\s*\((?P<rest>.*)$")
_PYTEST_SOURCE = re.compile(r"^>\s+raise\s")
_STRING_START = re.compile(r"^[\s│]*(?P<prefix>[rRuUfFbB]{0,2})(?P<quote>['\"])")
# a line where whoever pasted left frames out (`[...]`, `...`)
_ELIDED = re.compile(r"^\s*\[?(?:\.\.\.|…)\]?\s*$")
# a traceback that says frames were left out of it (jax's filtering, Sentry's)
_FILTERED = re.compile(r"internal frames|frames? (?:were |are )?(?:not displayed|hidden|filtered"
                       r"|omitted)", re.IGNORECASE)


def _cut_report(lines: list[str], frames: tuple[Frame, ...]) -> Reported:
    """A traceback cut before its exception's line (a page or a log excerpt ends there): its
    frames, which say where it was raised, and the message as far as the last frame's source
    shows it (`raise AssertionError('A setup function was called after`), cut."""
    for number in range(len(lines) - 1, -1, -1):
        line = lines[number]
        found = _RAISE_CALL.match(line)
        text = _raise_text(found["rest"], lines[number + 1:]) if found is not None else ""
        if found is not None and text:
            return Reported(found["name"], text, frames, (), True, (text,))
        if _FRAME.match(line) or _RICH_FRAME.match(line) or _IPYTHON_FRAME.match(line):
            break  # the last frame's own lines hold no raise
    return Reported(None, "", frames, (), True, ("",))


def _raise_text(rest: str, following: list[str]) -> str:
    """The message a raise's source shows: its string literals from `rest` (the line after
    `raise Name(`) on, joined as Python joins adjacent ones across the lines that continue the
    call (pytest shows them all), up to one left open (the paste is cut there) or anything
    else; an f-string up to its first field."""
    texts = []
    for number, chunk in enumerate([rest, *following]):
        start = _STRING_START.match(chunk)
        if start is None:
            if number == 0 and not chunk.strip():
                continue  # `raise Name(`, its first literal on the next line
            break
        body = chunk[start.end():]
        end = body.find(start["quote"])
        text = body[:end] if end >= 0 else body
        field = re.search(r"(?<!\{)\{(?!\{)", text) if "f" in start["prefix"].lower() else None
        texts.append(text[:field.start()] if field else text)
        if end < 0 or field or body[end + 1:].strip():
            break  # cut, a value, or more than a literal: what follows is not shown as text
    return "".join(texts)


def _pytest_reports(lines: list[str]) -> list[Reported]:
    """pytest's `E   ` lines, one block per exception (a blank `E` line inside one is kept)."""
    blocks: list[list[str]] = []
    previous = False
    for line in lines:
        is_e = bool(_PYTEST_E.match(line))
        if is_e and not previous:
            blocks.append([])
        if is_e:
            blocks[-1].append(line[1:])
        previous = is_e
    found = []
    for block in reversed(blocks):
        indent = min((len(line) - len(line.lstrip()) for line in block if line.strip()), default=0)
        found.append(_reported("\n".join(line[indent:] for line in block).strip("\n"), ()))
    return found


def _frames(lines: list[str], forms: list[str]) -> list[Frame]:
    frames = []
    for number, line in enumerate(lines):
        found = _FRAME.match(line) or _RICH_FRAME.match(line)
        ipython = _IPYTHON_FRAME.match(line) or _OLD_IPYTHON_FRAME.match(line)
        if ipython is not None and "ipython" not in forms:
            forms.append("ipython")
        if found is not None:
            following = lines[number + 1] if number + 1 < len(lines) else ""
            source = following.strip() if following[:1].isspace() and \
                not _FRAME_START.match(following) else None
            frames.append(Frame(found["path"], int(found["line"]), found["function"], source))
        elif ipython is not None:
            numbers = ipython.groupdict()
            frames.append(Frame(ipython["path"] or "<cell>",
                                int(numbers.get("line") or numbers.get("cell") or 0),
                                ipython["function"]))
    return frames


def _report_span(lines: list[str], forms: list[str]) -> tuple[int, int] | None:
    """The lines of the exception's report: after the traceback's head and its last frame, from
    the first line that reads as `Name: text` (a wrapped frame or source line does not). A
    paste with frames but no head (its top cut off) is read the same way; one whose frames
    follow the message (Sentry) gives the lines before its first frame."""
    heads = [n for n, line in enumerate(lines) if _HEAD.match(line) or _IPYTHON_HEAD.match(line)]
    frames = [n for n, line in enumerate(lines) if _FRAME_START.match(line)
              or _OLD_IPYTHON_FRAME.match(line)]
    if not heads and not frames:
        logged = [n for n, line in enumerate(lines) if _LOGGING.match(line)]
        if logged and "logging" not in forms:
            forms.append("logging")
        return 0, len(lines)
    forms.append("traceback")
    if (heads[0] if heads else frames[0]) > 0 and _LOGGING.match(lines[0]):
        forms.append("logging")
    after = max(frames + heads)
    for number in range(after + 1, len(lines)):
        line = lines[number]
        if line and not line[0].isspace() and _LOOKS_RAISED.match(line):
            return number, len(lines)
    # the message printed before the traceback: Sentry's issue page, Werkzeug's debugger page
    # (`RuntimeError`, `RuntimeError: text`, then `Traceback (most recent call last)`)
    start = min(frames + heads)
    before = [number for number in range(start) if lines[number]
              and not lines[number][0].isspace() and _LOOKS_RAISED.match(lines[number])]
    if before:
        forms.append("message first" if heads else "sentry")
        named = [number for number in before if ": " in lines[number]]
        return (named[-1] if named else before[0]), start
    return None


def _reported(report: str, frames: tuple[Frame, ...], inside: bool = True) -> Reported:
    """A report's class, text and the texts to try: each `Name: ` prefix removed in turn;
    `inside`: with the texts found inside it (`_texts_inside`), which reads only their text."""
    report = _LOGGING.sub("", report, count=1) if _LOGGING.match(report) else report
    cut = bool(_CUT.search(report))
    if cut:
        report = _CUT.sub("", report).rstrip()
    prefixes: list[str] = []
    rest = report
    peeled: list[str] = []  # the text after each prefix, the last one first
    while (found := _EXCEPTION_LINE.match(rest)) is not None and _CLASS_NAME.match(found["name"]):
        prefixes.append(found["name"])
        rest = _SUB_EXCEPTIONS.sub("", found["text"] or "")
        peeled.insert(0, rest)
        if found["text"] is None:
            break
    # a message may itself begin with a class's name: a `__str__` that prints it (sympy's
    # SympifyError: `sympy.core.sympify.SympifyError: SympifyError: 'a'`), or a wrapper's
    # `f"{type(e).__name__}: {e}"`; so each fewer prefix is tried too, after all of them
    texts = [rest, *peeled[1:]]
    # `word: text`, the word no class's name: message text, or a class named unusually
    found = _EXCEPTION_LINE.match(rest)
    if found is not None and found["text"]:
        texts.append(found["text"])
    texts.extend(_texts_inside(rest) if inside and not prefixes else [])
    # a note printed after the message, below a rule (jax's "For simplicity, JAX has removed
    # its internal frames ..."): the message without it, cut at the last rule
    rules = [found.start() for found in _RULE.finditer(rest)]
    if rules and rest[rules[-1]:].strip("-\n "):
        texts.insert(1, rest[:rules[-1]].rstrip())
    return Reported(prefixes[-1] if prefixes else None, rest, frames, tuple(prefixes), cut,
                    tuple(dict.fromkeys(t for t in texts if t)) or ("",))


def _texts_inside(report: str) -> list[str]:
    """Where a message may begin inside a report that does not start with it: a program's
    usage error after its usage lines or command (`Error: text`, `prog: error: text`), each
    line that reads as `Name: text`, a class named inside a title's prose, an exception's
    repr, a dict's values."""
    texts: list[str] = []
    lines = report.split("\n")
    for number, line in enumerate(lines[1:], 1):
        if len(texts) == MAX_INSIDE:  # a paste of many such lines: each text is tried on every
            break  # candidate, and each is the rest of the paste
        cli = _CLI_ERROR.match(line)
        if cli is not None:
            texts.append("\n".join([cli["text"], *lines[number + 1:]]))
        elif _EXCEPTION_LINE.match(line) and _LOOKS_RAISED.match(line):
            texts.append(_reported("\n".join(lines[number:]), (), inside=False).text)
    texts.extend(_logged_texts(lines))
    inside = _NAMED_INSIDE.search(lines[0])
    if inside is not None and inside.start() > 0:
        text = inside["text"]
        quote = lines[0][inside.start() - 1]
        if quote in "\"'`" and text.endswith(quote):  # a title quoting it: `... "Name: text"`
            text = text[:-1]
        texts.append("\n".join([text, *lines[1:]]))
    texts.extend(_repr_texts(report)[:MAX_INSIDE])
    texts.extend(_dict_texts(report))
    return texts


def _logged_texts(lines: list[str]) -> list[str]:
    """The messages of the log records after a report's first line (a logged error among a
    program's other log lines, no traceback: alembic's `ERROR [alembic.util.messaging] Can't
    locate revision ...`, Flask-Migrate's `ERROR [root] Error: Target database is not up to
    date.`): each record's text after its head, with the lines up to the next record, each
    `Name: ` prefix peeled as a report's; the last MAX_INSIDE records, what was printed last
    first."""
    heads = [(number, found.end()) for number in range(1, len(lines))
             if (found := _LOGGING.match(lines[number])) is not None]
    texts: list[str] = []
    for place, (number, head_end) in reversed(list(enumerate(heads))[-MAX_INSIDE:]):
        end = heads[place + 1][0] if place + 1 < len(heads) else len(lines)
        record = "\n".join([lines[number][head_end:], *lines[number + 1:end]]).strip("\n")
        if record.strip():
            texts.extend(_reported(record, (), inside=False).texts)
    return texts


# An exception's repr inside a logged line: `raised exception: ValueError('task args must be a
# list or tuple')` (Celery's worker log), `ERROR:app:RuntimeError('Working outside of ...')`
# (a logger given the exception object); its string literal, escapes read, cut if unclosed.
_REPR = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*\((?P<literal>(?P<quote>['\"])(?:\\.|(?!(?P=quote))"
                   r"[^\\\n])*(?P=quote)?)")


def _repr_texts(report: str) -> list[str]:
    """The messages of exception reprs written inside a report (`Name('text')`)."""
    texts = []
    for found in _REPR.finditer(report):
        literal = found["literal"]
        closed = len(literal) > 1 and literal.endswith(found["quote"]) and \
            not literal.endswith("\\" + found["quote"])
        try:
            text = ast.literal_eval(literal if closed else literal + found["quote"])
        except (SyntaxError, ValueError):
            text = literal[1:]
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return texts


def _above_head(section: str) -> str:
    """The lines a program printed above a traceback's head whose own report follows its
    frames: a logger's message there may name the error asked about while the traceback is of
    the exceptions that led to it, often cut (celery's `Chord '...' raised: ChordError(
    "Dependency ... raised Exception('Error task called')")` above the task's own traceback,
    github.com/celery/celery/issues/6220; a web UI's `*** API error: ... {'errors': 'File at
    path ... does not exist.'}` above a cut traceback of anyio's WouldBlock, github.com
    /zombieyang/sd-ppp/issues/28). Read as one more report, after every other (it is no
    exception's own line); none where the message is printed before the head instead (read
    as the report, `message first`)."""
    lines = section.split("\n")
    head = next((number for number, line in enumerate(lines) if _HEAD.match(line)), 0)
    if not head or not any(line[:1].strip() and _LOOKS_RAISED.match(line) and not _HEAD.match(line)
                           for line in lines[head + 1:]):
        return ""
    return "\n".join(lines[:head]).strip("\n")


# a dict's or a JSON object's literal written on one line (`{'error': 'RuntimeError', ...}`)
_DICT = re.compile(r"\{[^{}\n]*\}")


def _dict_texts(report: str) -> list[str]:
    """The values of the dict literals (Python's repr or JSON) written in a report that read as
    words, a space in them: a message a program put in a field (a web UI's API error log's
    `'errors'`, github.com/zombieyang/sd-ppp/issues/28; fastapi's `{"detail": "Not
    authenticated"}` body, github.com/fastapi/fastapi/issues/5290), not a key or a token
    (`{'b': 'data'}` in IPython's input line, github.com/marshmallow-code/marshmallow/issues
    /320). The first MAX_INSIDE literals are read."""
    texts: list[str] = []
    for found in islice(_DICT.finditer(report), MAX_INSIDE):
        value = _loaded(found[0])
        if not isinstance(value, dict):
            try:
                value = ast.literal_eval(found[0])
            except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict):
            texts.extend(text for text in value.values() if isinstance(text, str)
                         and " " in text.strip())
    return texts


def _without_relays(reported: list[Reported]) -> list[Reported]:
    """A remote traceback's exception re-raised by the process pool that relays it (the caller's
    traceback after "The above exception was the direct cause", down to concurrent.futures'
    `raise self._exception`): the same class and text as an exception raised before it that
    has frames, reported once, where the worker raised it (the caller's frames end at the
    pool's re-raise, not at the raise)."""
    return [found for number, found in enumerate(reported)
            if not any(other.frames and (other.exception, other.text) == (found.exception, found.text)
                       for other in reported[number + 1:])]


def _unique(reported: list[Reported]) -> list[Reported]:
    seen: set[tuple[str | None, str]] = set()
    kept = []
    for found in reported:
        key = (found.exception, found.text)
        if key not in seen:
            seen.add(key)
            kept.append(found)
    return kept
