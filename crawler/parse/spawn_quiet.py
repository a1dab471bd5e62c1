"""Imported by the fork server only (a preload): a worker forked while the crawler ends is quiet.

When a command is stopped (Ctrl-C, SIGTERM) while the fork server is forking a worker, the
crawler closes its end before it has sent the worker its task, and multiprocessing's child reads
an empty pipe: `EOFError: Ran out of input`, which the fork server's child prints through
`sys.excepthook` as a Traceback under the command's own one line ("Error: terminated"). That
worker had no work yet, and the command has said why it stopped, so the hook says nothing of an
`EOFError`; anything else is printed as before.
"""

from __future__ import annotations

import sys
from types import TracebackType

_printed = sys.excepthook


def _quiet_when_the_crawler_went_away(kind: type[BaseException], value: BaseException,
                                      traceback: TracebackType | None) -> None:
    if issubclass(kind, EOFError):
        return
    _printed(kind, value, traceback)


sys.excepthook = _quiet_when_the_crawler_went_away
