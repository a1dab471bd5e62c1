"""Many repositories at once, on local processes or a Dask cluster.

Owns the repos.yaml file (`reposfile`) and the driver that runs its entries and writes their
results (`driver`).

May import: everything below the command line (`crawler.pipeline` and the stage packages).
"""
