"""A walk's files parsed on a Dask cluster: `crawler history --scheduler ADDRESS`.

`DaskPool` stands where `pipeline.visit_files` takes a worker pool: each file it is handed is
one task, `parse.file_tasks.visit_file` on a cluster worker (`read_assertions` for a test file),
and the outcomes come back as they finish. The walk's reader (`crawler.pipeline.history_run`) reads the
blobs here and sends their bytes, so the workers need no copy of the repository, only the
crawler installed. A task whose worker dies is retried by Dask and, failing again, fails the
reader: the walk's steps then parse their own files locally.

Memory stays flat however many files a walk reads: only `IN_FLIGHT` tasks per worker thread
are on the cluster at a time (a worker holds each result until its future is released), the
next file is read from git only when one comes back, and each future is released as soon as
its result is here. A file's bytes go to a worker by `scatter`, not inside the task: the
scheduler and the client keep their last messages to each peer for debugging (Dask's
`distributed.admin.low-level-log-length`, 1,000 by default), and a task that carried its file
kept a thousand files alive in each (on jax's 186 releases, the scheduler grew by 40 kB a
file it passed on; scattered, it stays flat).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from crawler.batch._connect import connect, dask_muted
from crawler.errors import CrawlerError
from crawler.parse.outcomes import FileAssertions, FileOutcome, Job
from crawler.parse.workers import WorkerPool

WORKERS_SECONDS = 10.0  # for a first worker to join it
IN_FLIGHT = 3  # tasks on the cluster per worker thread: one running, the next ones queued


class DaskPool(WorkerPool):
    """`WorkerPool.run` on the Dask scheduler at `address`; `jobs` is its workers' threads."""

    def __init__(self, address: str) -> None:
        super().__init__(1)
        self.client = connect(address)
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except TimeoutError:
            self.close()
            raise CrawlerError(f"--scheduler {address}: no worker joined the cluster within "
                               f"{WORKERS_SECONDS:g} s; start some with `dask worker {address}`"
                               ) from None
        threads = self.client.nthreads()
        self.jobs = max(1, sum(threads.values()))

    def close(self) -> None:
        with dask_muted(), contextlib.suppress(Exception):
            self.client.close()

    def run(self, jobs: Iterable[Job]) -> Iterator[tuple[int, FileOutcome]]:
        """(index in `jobs`, outcome) for every file, in the order the cluster finishes them."""
        # the parsers, imported where a cluster's reading is asked for: every batch worker
        # imports this module, and one that reads no file on a cluster needs none of them
        from crawler.parse.file_tasks import visit_file

        return self._stream(visit_file, jobs)

    def read_tests(self, files: Iterable[tuple[str, str, bytes]]
                   ) -> Iterator[tuple[int, FileAssertions]]:
        """(index in `files`, assertions) for every (path, blob, bytes) of a test file."""
        from crawler.parse.assertions import read_assertions  # as `run`'s

        return self._stream(read_assertions, files)

    def _stream(self, task: Callable[..., Any], jobs: Iterable[tuple[Any, ...]]
                ) -> Iterator[tuple[int, Any]]:
        """`task(*job)` for each job on the cluster, at most `IN_FLIGHT` per thread at a time;
        (index in `jobs`, result) as they finish, each future released once its result is here."""
        from distributed import as_completed

        source = enumerate(jobs)
        sent: dict[Any, tuple[int, Any]] = {}  # task key: (index in jobs, the bytes' future)
        finished = as_completed()

        def submit() -> bool:
            item = next(source, None)
            if item is None:
                return False
            index, (path, blob, data, *rest) = item
            [scattered] = self.client.scatter([data], hash=False)
            future = self.client.submit(task, path, blob, scattered, *rest, pure=False)
            sent[future.key] = index, scattered
            finished.add(future)
            return True

        for _ in range(IN_FLIGHT * self.jobs):
            if not submit():
                break
        for future in finished:
            (index, scattered), result = sent.pop(future.key), future.result()
            future.release()
            scattered.release()
            del future, scattered
            submit()  # the next file, read from git as this one comes back
            yield index, result


def cluster_pool(address: str | None) -> Callable[[], WorkerPool] | None:
    """What `pipeline.history_run.walk_releases` takes to read a walk's files on the Dask
    cluster at `address` (None: no cluster, its own worker processes read them). A factory,
    not a pool: the walk's reading thread opens it and closes it."""
    return functools.partial(DaskPool, address) if address is not None else None
