"""The installed `crawler` command (`crawler.cli.entry:main`): a lookup in an output folder is
answered by `fast_lookup`, without click; anything else goes to the full command line
(`commands.main`), loaded only then.

A Ctrl-C is one line and exit 130 from the first moment: while this module loads (the hook
below, until `main` starts), and in `main` around all of it, where no command handles it yet or
any more: while the command line is imported, while click reads the arguments, and on the way
out. Uncaught, Python printed a Traceback from the middle of an import and ended by the signal
itself (-2).
"""

from __future__ import annotations

import os
import sys
from types import TracebackType  # loaded with Python's start: costs no moment

# The exit code of a stop by Ctrl-C, `terminal.INTERRUPTED` (a test holds them equal), written
# here rather than imported: the hook below is set before any other module of the crawler loads,
# since an import, however light, is a moment a Ctrl-C can land in (one did, in the suite).
EXIT_INTERRUPTED = 130


def _interrupted_while_loading(kind: type[BaseException], value: BaseException,
                               traceback: TracebackType | None) -> None:
    """Ctrl-C while the installed command loads its modules, before `main` can catch it: the
    one line and exit 130 (nothing has started that would need stopping), not a Traceback from
    the middle of an import and death by the signal (-2). Any other exception as Python says
    it."""
    if issubclass(kind, KeyboardInterrupt):
        os.write(2, b"Error: interrupted\n")
        os._exit(EXIT_INTERRUPTED)
    sys.__excepthook__(kind, value, traceback)


if os.path.basename(sys.argv[0]) == "crawler":  # the installed command, as it starts; `main` ends it
    sys.excepthook = _interrupted_while_loading

# ruff: noqa: E402 - the imports after the hook: they are the most of this module's load
import signal
from typing import NoReturn

from crawler.cli.fast_lookup import error_line, quick_lookup
from crawler.cli.terminal import INTERRUPTED, TERMINATED, after_interrupt, quiet_stdout


def main() -> NoReturn:
    """The `crawler` command: a lookup in an output folder here, anything else
    `crawler.cli.commands`; a stop anywhere in it said as one line with its exit code."""
    sys.excepthook = sys.__excepthook__  # from here on a Ctrl-C is caught below, workers stopped
    from crawler.errors import keep_interrupts

    keep_interrupts(stop_as_python_ends)
    try:
        code = _run_command()
    finally:
        # The command's work is done (click's own main ends it by raising SystemExit). A signal
        # from here on lands as Python ends: in an exit-time finalizer (multiprocessing's), in
        # module teardown, where a handler's KeyboardInterrupt goes to a hook `sys` no longer
        # holds, or after the handlers are gone: the run ended 0, or by SIGTERM's default. It
        # ends the process where it lands, with its line and code.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _stop_at_once)
    raise SystemExit(code)


def _run_command() -> int:
    """The command, its exit code; a stop anywhere in it said as its one line."""
    from crawler.errors import stopped_by

    try:
        code = quick_lookup(sys.argv[1:])
        if code is None:
            from crawler.cli.commands import main as command_line

            command_line()
            code = 0  # click's main exits itself
        try:
            sys.stdout.flush()
        except BrokenPipeError:  # what is still buffered for a reader that is gone
            quiet_stdout()
    except KeyboardInterrupt:
        sys.unraisablehook = after_interrupt
        code = error_line("interrupted", INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - a stop wrapped in another error, or raised
        stop = stopped_by(error)
        if stop is None:
            raise
        sys.unraisablehook = after_interrupt
        code = (error_line("interrupted", INTERRUPTED) if issubclass(stop, KeyboardInterrupt)
                else error_line("terminated", TERMINATED))
    return code


def _stop_at_once(signum: int, frame: object) -> NoReturn:
    stop_as_python_ends(signum)


def stop_as_python_ends(signum: int) -> NoReturn:
    """A Ctrl-C or SIGTERM that lands in a finalizer as Python ends, the command's work done and
    nothing left to stop: said as any stop is, and the process ends with its code at once (a
    finalizer can raise no further; the streams are flushed first, what the command printed kept)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a reader gone, a stream closed or None
            pass
    interrupted = signum == signal.SIGINT
    os.write(2, b"Error: interrupted\n" if interrupted else b"Error: terminated\n")
    os._exit(INTERRUPTED if interrupted else TERMINATED)
