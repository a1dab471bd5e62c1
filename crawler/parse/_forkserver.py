"""The workers' start method, and starting their fork server before the crawler's own imports.

A fork server imports `crawler.workers` (LibCST with it) once, then forks each worker from that
small parent: cheap to fork, and no threads. Its imports take about 0.2 s; started as a command
begins, they run on another core while the crawler imports, pins and reads its manifest, instead
of after. This module imports nothing heavy, so the command line can start it first.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

WORKER_MODULE = "crawler.parse.workers"


def context() -> Any:
    """forkserver where there is one (Linux), preloaded with the workers' module; else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        forks = multiprocessing.get_context("forkserver")
        forks.set_forkserver_preload([WORKER_MODULE])
        return forks
    return multiprocessing.get_context("spawn")


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Start processes with Ctrl-C blocked, which they inherit (across fork and exec): a Ctrl-C
    that lands while a fork server or a worker imports would print a traceback from the middle
    of an import, or kill an interpreter in its start-up. The workers then ignore it (the
    crawler stops them); one that reaches us meanwhile is delivered when this block ends."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def warm_up() -> None:
    """Start the fork server now (once per process); nothing where workers are spawned."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with ctrl_c_held():  # the fork server, and the workers forked from it
            forkserver.ensure_running()
