"""`crawler lookup` answered without click: the fast path of the installed command (`entry`).

A lookup's time is mostly the interpreter's start and its imports, and most of those are the
command line's (click, the other commands' options and summaries): `main` reads the arguments
of `crawler lookup MESSAGE [OUTPUT] [-n N] [--json] [-q]` itself, as `lookup`'s parser reads
them (`folder_commands._PasteCommand`, then click), and answers. Anything else (another command,
`--help`, `--db`, an option it does not know, a value click would refuse, a folder that is not
there, a shell's completion) goes to the full command line (`crawler.cli.commands.main`) before anything
is read or printed, so options, messages and exit codes are the full command line's. What
`lookup` prints is made here for both (`said`), the paste is read here for both (`Pasted`),
and a failure during the lookup is said as `cli.CrawlerGroup` says it.

Every human-readable line carries text of the catalogue (templates, paths, names, a repository's
own words) through `one_line`, the one function that makes such text safe on a terminal; no
line `lookup` prints holds an escape character, so what click would strip off a pipe is never
there, and the two paths print the same bytes whatever click's release.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from crawler.cli.terminal import INTERRUPTED, after_interrupt, echo, one_line, quiet_stdout, stdout_closed

if TYPE_CHECKING:
    from crawler.serve.lookup.ranking import Answer


# `lookup`'s options, each to whether it takes a value (what `_PasteCommand` reads them by)
OPTIONS = {"-n": True, "--limit": True, "--db": True, "--json": False, "-q": False,
           "--quiet": False, "-h": False, "--help": False}


_OPTION_SHAPED = re.compile(r"--?[A-Za-z][\w-]*(?:=.*)?\Z", re.DOTALL)


_SURROGATE = re.compile("[\ud800-\udfff]")  # a byte that is not UTF-8, read with surrogateescape


READ_CHUNK = 1 << 20  # bytes of standard input read at a time


DEFAULT_LIMIT = 10


DEFAULT_OUTPUT = "output"


@dataclass(frozen=True)
class Asked:
    """A lookup as typed: the paste (`-`: from standard input), the folder and the options."""

    message: str
    output: str
    limit: int
    as_json: bool
    quiet: bool


def split_paste_args(args: list[str], known: Mapping[str, bool]) -> tuple[list[str], list[str]]:
    """Options and arguments as `lookup` reads them: an argument that begins with `-` but is
    shaped like no option is an argument; after `--`, all are."""
    options: list[str] = []
    arguments: list[str] = []
    pending = False  # the option before takes this one as its value
    for number, arg in enumerate(args):
        if pending or (arg.split("=", 1)[0] in known or arg[:2] in known
                       or _OPTION_SHAPED.match(arg)) and arg != "--":
            options.append(arg)
            pending = not pending and known.get(arg, False)
        elif arg == "--":
            arguments.extend(args[number + 1:])
            break
        else:
            arguments.append(arg)
    return options, arguments


def asked(args: list[str]) -> Asked | None:
    """`lookup`'s arguments read as click reads them; None for anything the full command line
    must say (help, --db, an unknown option, a limit click refuses, too few or many arguments)."""
    options, arguments = split_paste_args(args, OPTIONS)
    limit, as_json, quiet = DEFAULT_LIMIT, False, False
    tokens = iter(options)
    for token in tokens:
        if token == "--json":
            as_json = True
            continue
        if token in ("-q", "--quiet"):
            quiet = True
            continue
        if token in ("-n", "--limit"):
            value = next(tokens, None)
        elif token.startswith("--limit="):
            value = token[len("--limit="):]
        else:
            return None
        if value is None or not (value.isascii() and value.isdigit()) or int(value) < 1:
            return None
        limit = int(value)
    if not 1 <= len(arguments) <= 2:
        return None
    return Asked(arguments[0], arguments[1] if len(arguments) == 2 else DEFAULT_OUTPUT, limit,
                 as_json, quiet)


@dataclass(frozen=True)
class LookupSummary:
    """`lookup`: the answer, from an output folder or an SQLite export (`--db`) alike; the JSON
    shape is `schemas/lookup.schema.json`."""

    answer: Answer

    def to_json(self) -> str:
        import json

        from crawler.serve.lookup.sources import describe

        return json.dumps(describe(self.answer), indent=2, ensure_ascii=False)

    def lines(self) -> Iterator[str]:
        from crawler.serve.lookup.ranking import NO_SITE

        paste = self.answer.paste
        if paste is not None and paste.left_out:
            yield (f"read the last {paste.read:,} characters of the paste: its first "
                   f"{paste.left_out:,} were left out (a traceback ends with the exception "
                   "raised last)")
        if self.answer.verdict == "none":
            yield NO_SITE
            return
        if not self.answer.found:
            yield "no template explains this message; the closest (~):"
        elif self.answer.group > 1:
            # a traceback tells them apart, unless the one pasted names none of their lines
            framed = paste is not None and any(report.frames for report in paste.reported)
            yield (f"printed by {self.answer.group} raise sites, which nothing in the paste tells "
                   f"apart{'' if framed else ' (its traceback would)'}:")
        for match in self.answer.matches:
            wording = match.wording
            removed = (f"; removed in {(wording.removed_in or 'an earlier run')[:12]}"
                       if wording.status == "removed" else "")
            tie = ", tied" if match.tie else ""
            where = _WHERE.get(match.where, "")
            fit = ("its message is only a variable" if match.kind == "place" else
                   "its message is only a variable; found by its class" if match.kind == "class"
                   else
                   f"explains {match.explained:.0%} of the paste, shows "
                   f"{match.coverage:.0%} of the template")
            yield from _hit_lines(match.exact, f"{wording.record_id}  "
                                  f"{wording.exception}  {wording.repo} {wording.path}:"
                                  f"{wording.line}  (#{match.rank} {match.kind}, {fit}"
                                  f"{where}{tie}{removed})",
                                  wording.template, match.captures)
            if wording.past or wording.last_release is not None:
                yield _wording_line(wording)
            if match.successor is not None:
                heir = match.successor
                yield (f"    likeliest successor: {heir.record_id} at {heir.path}:{heir.line} "
                       f"({heir.qualname}): {heir.template}")
            for other in match.also:  # another of its wordings fits: the releases may be those
                yield (f"    fits too: {other.template}, printed by {other.first_release or '?'} "
                       f"to {other.last_release or 'now'}")


# what the paste's traceback says of a record's place (`places`: 3 its line, 2 its function,
# 1 a frame above)
_WHERE = {3: ", the traceback names its line", 2: ", the traceback names its function",
          1: ", the traceback goes through its function"}


def _wording_line(wording: Any) -> str:
    """A past release's wording that matched: the releases that printed it, and what the
    message reads now (or the release a removed site was last in)."""
    printed = f"printed by {wording.first_release or '?'} to {wording.last_release or 'now'}"
    if not wording.past:  # a removed record's last wording
        return f"    removed: last in {wording.gone_after or wording.last_release}; {printed}"
    if wording.today is None:
        gone = getattr(wording, "gone_after", None)
        return (f"    an old wording, {printed}; the site was removed after "
                f"{gone or 'a release the walk did not name'}")
    return f"    an old wording, {printed}; today it reads: {wording.today}"


def _hit_lines(exact: bool, head: str, template: str, captures: Mapping[str, Any]) -> Iterator[str]:
    """One found record: `=` exact or `~` close, where it is, its template and what it captured."""
    yield f"{'=' if exact else '~'} {head}"
    yield f"    {template}"
    for name, value in captures.items():
        yield f"    {name} = {value!r}"


def said(answer: Answer, problems: tuple[str, ...], as_json: bool, quiet: bool,
         undecodable: int = 0) -> tuple[list[tuple[str, bool]], int]:
    """What `lookup` prints, in order, each line with whether it goes to stderr, and its exit
    code: the bytes of the paste that were not UTF-8 and the files left out (stderr, whatever
    the options: the answer is to another text, or incomplete), the answer (JSON, lines each
    through `one_line`, or with -q nothing), a note on regexes that ran out of time."""
    out = [("note: the paste is not all UTF-8: its undecodable bytes were read as U+FFFD, the "
            f"replacement character: {undecodable}", True)] if undecodable else []
    out.extend((f"skipped: {one_line(problem)}", True) for problem in problems)
    summary = LookupSummary(answer)
    if as_json:
        out.append((summary.to_json(), False))
    elif not quiet:
        out.extend((one_line(line), False) for line in summary.lines())
    if answer.timed_out and not quiet:
        out.append((f"note: {len(answer.timed_out)} records' regexes ran out of time and were "
                    f"not tried in full ({' '.join(answer.timed_out[:4])}); `crawler validate` "
                    "the records whose regex was edited", True))
    return out, 1 if problems or not answer.found else 0


def _plain_streams() -> bool:
    """Standard output and error as click uses them unchanged: there, and not ASCII (which click
    would wrap in UTF-8)."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is None or codecs.lookup(stream.encoding or "ascii").name == "ascii":
                return False
        except (AttributeError, LookupError):
            return False
    return True


def _folder_readable(output: Path) -> bool:
    """Whether click.Path (readable) lets OUTPUT through and it is a folder: else the full
    command line says what is wrong."""
    try:
        os.stat(output)
    except (OSError, ValueError):
        return False
    return os.access(output, os.R_OK) and output.is_dir()


@dataclass(frozen=True)
class Pasted:
    """A paste as the command read it: its text, with each byte that is not UTF-8 read as
    U+FFFD (`undecodable` of them); `left_out`: the characters of its beginning not kept
    (a lookup reads a paste's end, `serve.lookup.paste.MAX_PASTE` characters)."""

    text: str
    left_out: int = 0
    undecodable: int = 0


def pasted_argument(message: str) -> Pasted:
    """The paste given as the argument: Python reads a command line's bytes that are not UTF-8
    as surrogate escapes, which no text can be written with (SQLite, a terminal)."""
    return _readable(message, 0)


def pasted_stdin(stream: BinaryIO) -> Pasted:
    """The paste on standard input, read as click's text stream reads it (UTF-8, universal
    newlines) but for what is not UTF-8 (replaced, counted) and for its length: only its last
    `MAX_PASTE` characters are kept while it is read, so a paste of any size costs that."""
    from crawler.serve.lookup.paste import MAX_PASTE

    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    kept, left_out = "", 0
    while chunk := stream.read(READ_CHUNK):
        kept += decoder.decode(chunk)
        if len(kept) > 2 * MAX_PASTE:
            left_out += len(kept) - MAX_PASTE
            kept = kept[-MAX_PASTE:]
    kept += decoder.decode(b"", final=True)
    return _readable(kept.replace("\r\n", "\n").replace("\r", "\n"), left_out)


def _readable(text: str, left_out: int) -> Pasted:
    undecodable = len(_SURROGATE.findall(text))
    return Pasted(_SURROGATE.sub("\ufffd", text) if undecodable else text, left_out, undecodable)


def quick_lookup(args: list[str]) -> int | None:
    """`crawler ARGS` answered here when it is a lookup in a folder: its exit code; None where
    the full command line must run (nothing was read or printed)."""
    if not args or args[0] != "lookup" or not _plain_streams():
        return None
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # a shell asks click to complete the command line
    question = asked(args[1:])
    if question is None or not _folder_readable(Path(question.output)):
        return None
    try:
        from crawler.serve.lookup.sources import lookup_output

        pasted = (pasted_stdin(sys.stdin.buffer) if question.message == "-"
                  else pasted_argument(question.message))
        found = lookup_output(Path(question.output), pasted.text, question.limit,
                              pasted.left_out)
        lines, code = said(found.answer, found.problems, question.as_json, question.quiet,
                           pasted.undecodable)
        for text, err in lines:
            echo(text, err)
    except KeyboardInterrupt:
        sys.unraisablehook = after_interrupt
        return error_line("interrupted", INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - said as CrawlerGroup.invoke says it, or raised
        return _failure(error)
    return code


def _failure(error: Exception) -> int:
    """An error the lookup let through, said as `cli.CrawlerGroup.invoke` says it: a folder
    named that is not there is usage (2), the crawler's errors and the machine's one line (1),
    a reader gone from standard output a quiet end (0); anything else is a bug, raised."""
    from crawler.errors import CrawlerError, MissingSourceError

    if isinstance(error, MissingSourceError):
        return error_line(one_line(str(error)), 2)
    if isinstance(error, CrawlerError):
        return error_line(one_line(str(error)), 1)
    if isinstance(error, OSError):
        if error.errno == errno.EPIPE and stdout_closed():
            quiet_stdout()
            return 0
        where = f"{error.filename}: " if error.filename else ""
        return error_line(one_line(f"{where}{error.strerror or error}"), 1)
    raise error


def error_line(message: str, code: int) -> int:
    echo(f"Error: {message}", err=True)
    return code
