"""The crawler's exceptions: each names the place first and says what to do.

Only the command line (`crawler.cli`) turns them into an exit code; every stage raises them
with context.

And how a run is stopped from outside: SIGINT and SIGTERM end every command the same way.

Ctrl-C (SIGINT) is Python's `KeyboardInterrupt`; SIGTERM, whose default action would end the
process on the spot with no word and its temp files left, raises `Terminated` instead while a
command runs (`sigterm_raises`). Both are BaseExceptions, raised in the main thread wherever it
is, so no handler of a task's or a file's failure (`except Exception`) takes them: every
`finally` and `with` on the way out runs (locks let go, temp files removed, worker processes
stopped), and the command line turns them into one line and the shell's exit code (130, 143).
Every write is atomic (`crawler.store.atomic`): what a stopped run leaves is the folder before
it or after a whole file, never half of one.

Only the main thread may set a handler; elsewhere `sigterm_raises` leaves SIGTERM as it is.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class CrawlerError(Exception):
    """Base of every error the crawler reports to a user as one line."""


class SourceError(CrawlerError):
    """The source is not a repository we can read, or is refused as unsafe."""


class MissingSourceError(SourceError):
    """A source folder named on the command line is not there: a usage error (exit 2)."""


class RefError(CrawlerError):
    """The commit, branch or tag does not exist in the source."""


class OutputError(CrawlerError):
    """The output folder cannot be read or written safely."""


class RecordError(OutputError):
    """A record or manifest file on disk cannot be loaded; it is left as it is."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class SchemaError(OutputError):
    """A file does not validate against its JSON Schema."""


class BatchError(CrawlerError):
    """A batch file (repos.yaml) is not valid; the message names the entry and the field."""


class Terminated(BaseException):
    """SIGTERM reached the crawler: raised where its main thread is, as Ctrl-C's
    KeyboardInterrupt is (a BaseException, so that no handler of task failures takes it)."""


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """SIGTERM raises `Terminated` in the main thread while the block runs; the handler before
    it is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def keep_interrupts(stop_at_exit: Callable[[int], None] | None = None) -> None:
    """A Ctrl-C or SIGTERM that lands while a finalizer runs (an object's `__del__`, a weakref
    callback: GitPython's config readers close their files there) raises in it, and Python
    prints what a finalizer raises and goes on: the run ignored the signal and ended 0, after
    an "Exception ignored in" Traceback. The signal is sent again to the main thread, from a
    thread of its own a moment later (sent from the hook, it would raise in the hook, which
    Python drops the same way), so that it stops the run where its main thread is then;
    anything else a finalizer raises is reported as it was. The command line puts a quiet
    hook in its place once it has said the stop.

    As Python ends (the command's work done, its `main` returned) no thread can send it: one
    started then never runs, and waiting for it to start hung the process. There the signal is
    `stop_at_exit(signum)`'s (the command line's: its one line and exit code, at once), or,
    without it, reported as Python would."""
    reported = sys.unraisablehook

    def as_python_ends(signum: int, unraisable: Any) -> None:
        if stop_at_exit is None:
            reported(unraisable)
        else:
            stop_at_exit(signum)

    def again(unraisable: Any) -> None:
        kind = unraisable.exc_type
        signum = (signal.SIGINT if kind is not None and issubclass(kind, KeyboardInterrupt) else
                  signal.SIGTERM if kind is not None and issubclass(kind, Terminated) else None)
        if signum is None:
            reported(unraisable)
            return
        if sys.is_finalizing():
            as_python_ends(signum, unraisable)
            return
        main = threading.main_thread().ident
        try:
            threading.Thread(target=_send_later, args=(main, signum), daemon=True).start()
        except RuntimeError:  # no new thread as the interpreter ends
            as_python_ends(signum, unraisable)

    sys.unraisablehook = again


RESEND_AFTER = 0.05  # seconds: the hook has long returned


def _send_later(thread: int | None, signum: int) -> None:
    time.sleep(RESEND_AFTER)
    if thread is not None:
        signal.pthread_kill(thread, signum)


def stopped_by(error: BaseException) -> type[BaseException] | None:
    """KeyboardInterrupt or `Terminated` when one is where `error` came from: Python 3.11 wraps
    what a descriptor's `__set_name__` raises, a Ctrl-C too, in a RuntimeError as a class is made
    (LibCST's node classes, while LibCST is imported); None when the error is the run's own."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, (KeyboardInterrupt, Terminated)):
            return type(found)
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None
