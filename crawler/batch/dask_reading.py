"""A walk's files parsed on a Dask cluster: `crawler history --scheduler ADDRESS`.

`DaskPool` stands where `pipeline.visit_files` takes a worker pool: each file it is handed is
one task, `parse.workers.visit_file` on a cluster worker, and the outcomes come back as they
finish. The walk's reader (`crawler.history`) reads the blobs here and sends their bytes, so
the workers need no copy of the repository, only the crawler installed. A task whose worker
dies is retried by Dask and, failing again, fails the reader: the walk's steps then parse
their own files locally.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from crawler.batch._executors import _dask_muted
from crawler.errors import CrawlerError
from crawler.parse.workers import FileOutcome, Job, WorkerPool, visit_file

CONNECT_SECONDS = 30  # to reach the scheduler
WORKERS_SECONDS = 10.0  # for a first worker to join it


class DaskPool(WorkerPool):
    """`WorkerPool.run` on the Dask scheduler at `address`; `jobs` is its workers' threads."""

    def __init__(self, address: str) -> None:
        super().__init__(1)
        try:
            from distributed import Client
        except ImportError as error:
            raise CrawlerError(f"--scheduler {address}: dask.distributed is not installed; "
                               "install the extra with `pip install 'raise-site-crawler[dask]'`"
                               ) from error
        try:
            self.client = Client(address, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as error:
            raise CrawlerError(f"--scheduler {address}: cannot reach the scheduler ({error}); "
                               "start one with `dask scheduler`") from error
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
        with _dask_muted(), contextlib.suppress(Exception):
            self.client.close()

    def run(self, jobs: Iterable[Job]) -> Iterator[tuple[int, FileOutcome]]:
        """(index in `jobs`, outcome) for every file, in the order the cluster finishes them."""
        from distributed import as_completed

        futures = {self.client.submit(visit_file, *job, pure=False): index
                   for index, job in enumerate(jobs)}
        for future in as_completed(futures):
            yield futures[future], future.result()
