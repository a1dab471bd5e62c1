"""What every command prints through: text of the catalogue made safe on a terminal (`one_line`), a
reader that went away, and the exit code of an interrupt. Imports nothing of the crawler and
nothing heavy: the fast lookup path (`fast_lookup`) prints through it before click is loaded."""

from __future__ import annotations

import os
import sys
from typing import Any

INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C (128 + SIGINT)
TERMINATED = 143  # a command stopped by SIGTERM (128 + SIGTERM)


def one_line(message: str) -> str:
    """`message` as one line safe on a terminal: every character Python does not call printable
    written as its escape, as `repr` writes it (`\\x1b`, `\\r`, `\\n`, `\\u202e`).

    The one function through which the command line shows text of the catalogue, or anything
    else a repository or a user wrote (templates, paths, tag names, a file's problem): an OSC 52
    sequence would write the clipboard, OSC 0 the window title, a `\\r` or a CSI overwrite what
    was printed before, a line break forge a line of the answer, a bidirectional override
    reorder it. It escapes whether or not standard output is a terminal: output piped to a file
    or a pager reaches a terminal later, and the same answer is then the same bytes anywhere
    (a pipe changes how wide a table is drawn and whether colours are, never text). JSON
    output does not pass here: JSON escapes control characters itself and stays exact. Printable
    text is left as it is, a `\\` included: what was an escape character reads `\\x1b`, as it
    would in Python."""
    if message.isprintable():
        return message
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)


def stdout_closed() -> bool:
    """Has the reader of standard output gone? (A pipe whose reading end closed polls POLLERR.)"""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
    except (AttributeError, OSError, ValueError):  # not a real file (a test's runner)
        return False
    return any(events & select.POLLERR for _, events in poller.poll(0))


def quiet_stdout(*others: Any) -> None:
    """Standard output (and `others`) to nowhere, so that the interpreter's last flush does
    not fail."""
    for stream in (sys.stdout, *others):
        try:
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, stream.fileno())
            os.close(nowhere)
        except (AttributeError, OSError, ValueError):
            pass


def after_interrupt(unraisable: Any) -> None:
    """Say nothing of what a finalizer raises once Ctrl-C is reported: objects the interrupt cut
    off mid-read (GitPython's `cat-file` streams) raise from `__del__` as they are freed, which
    would print an "Exception ignored in" trace beside the one line the interrupt gets."""


def echo(text: str, err: bool = False) -> None:
    """One line, flushed. What click.echo would strip off a pipe (escape sequences) is never in
    what lookup prints (`one_line`; JSON escapes it), so nothing is stripped here."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()
