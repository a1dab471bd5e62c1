"""Many repositories at once, on local processes or a Dask cluster.

Owns the repos.yaml file (`reposfile`), the driver that runs its entries and writes their
results (`driver`), the worker's part (`_worker`) and where it runs (`_executors`).

May import: everything below the command line (`crawler.pipeline` and the stage packages).
"""
