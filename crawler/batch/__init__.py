"""Many repositories at once, on local processes or a Dask cluster.

Owns the repos.yaml file (`reposfile`), the driver that runs its entries and writes their
results (`driver`), what it finds already written (`known`), the worker's part (`_worker`), how a
large repository is shared out over tasks and put back together (`_shards`) and where the tasks
run, with the workers they lose (`_executors`).

May import: everything below the command line (`crawler.pipeline` and the stage packages).
"""
