"""The workers' start method, and when their fork server starts.

A fork server imports the parsers (`crawler.parse.file_tasks`, LibCST with it) once, then forks
each worker from that small parent: cheap to fork, and no threads. `warm_up` starts it from the
main thread, where Ctrl-C can be set aside for it, when the first file is to be parsed: a run
whose files all come from the cache (a rerun, most of a weekly update) starts none, which spares
its 0.3 s of CPU (in the test suite, 129 of 289 fork servers started at a command's start had
never forked). A release walk, which parses at nearly every step, starts it as it begins, so
that its imports run on another core while the crawler pins. This module imports nothing heavy.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

WORKER_MODULE = "crawler.parse.workers"
TASKS_MODULE = "crawler.parse.file_tasks"  # the parsers: every fork has them imported
ORPHAN_MODULE = "crawler.parse.orphan"  # imported first, it has the kernel kill the server
QUIET_MODULE = "crawler.parse.spawn_quiet"  # a worker forked as the crawler ends prints nothing
PARENT_VARIABLE = "CRAWLER_FORK_SERVER_PARENT"  # the pid the fork server must not outlive
_preload = [QUIET_MODULE, WORKER_MODULE, TASKS_MODULE]
_server_started = False  # has this process started its fork server with Ctrl-C ignored?


def die_with_parent() -> None:
    """Have the fork server this process starts killed by the kernel when this process ends (a
    batch's worker process: the driver kills it on Ctrl-C or SIGTERM). Otherwise a fork server
    still importing LibCST, which takes seconds on a busy machine, outlives it until the import
    is done. Only for a process that starts it from its main thread: the kernel's signal follows
    the thread that started it."""
    global _preload
    _preload = [ORPHAN_MODULE, QUIET_MODULE, WORKER_MODULE, TASKS_MODULE]
    os.environ[PARENT_VARIABLE] = str(os.getpid())  # the server inherits it


def context() -> Any:
    """forkserver where there is one (Linux), preloaded with the workers' module; else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        forks = multiprocessing.get_context("forkserver")
        forks.set_forkserver_preload(list(_preload))
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


@contextmanager
def ctrl_c_ignored_by_forks() -> Iterator[None]:
    """Start the fork server with Ctrl-C ignored, so that every worker ignores it from its
    first instruction: Python leaves a SIGINT that is ignored at its start ignored, and the fork
    server gives each child it forks the disposition it started with (multiprocessing restores
    it there), while the mask `ctrl_c_held` sets does not reach the workers through the fork
    server's start (measured: its SigBlk is 0). Without this, a Ctrl-C sent to the process group
    while a worker unpickles its task or imports printed a traceback from the worker.

    Ignoring is process-wide, so this is done once, for the fork server's start (`warm_up`, or
    the first worker's), and never around a later worker's: the server already has its
    disposition. Ignored, a SIGINT sent to the crawler while its main thread holds the mask is
    not kept pending: Linux gives it to any other thread of the process, which drops it (a
    progress bar's, a writer's), and setting SIG_IGN drops one already pending. Ctrl-C then did
    nothing at all, the run going on to exit 0 (tests/parse/test_launch.py starts workers with a
    thread beside them and a SIGINT sent during each start). A SIGINT already pending here
    skips the ignoring: it stops the run as soon as the mask is lifted. Nothing inside the window
    may lift the mask: multiprocessing's resource tracker, which the fork server's start starts
    first, did (SIG_UNBLOCK as it ends), so it is started before.

    Only the main thread may change a handler; elsewhere the mask alone is held."""
    global _server_started
    if not _server_started and threading.current_thread() is threading.main_thread():
        # Before the window: multiprocessing starts its resource tracker as the fork server's
        # first step, and unblocks SIGINT after (SIG_UNBLOCK, not the mask it found): inside
        # the window a Ctrl-C was then neither held nor handled, but dropped.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    with ctrl_c_held():
        if (_server_started or threading.current_thread() is not threading.main_thread()
                or signal.SIGINT in signal.sigpending()):
            yield
            return
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
            _server_started = context().get_start_method() == "forkserver"  # spawn: every start
        finally:
            signal.signal(signal.SIGINT, before)


def warm_up() -> None:
    """Start the fork server now (once per process); nothing where workers are spawned."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with ctrl_c_ignored_by_forks():  # the fork server, and the workers forked from it
            forkserver.ensure_running()
