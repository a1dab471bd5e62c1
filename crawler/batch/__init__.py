"""Many repositories at once, on local processes or a Dask cluster.

Owns the repos.yaml file (`reposfile`), the driver that runs its entries and writes their
results (`driver`), what it finds already written (`known`), the worker's part (`_worker`), how a
large repository is shared out over tasks and put back together (`_shards`), where the tasks
run, with the workers they lose (`_executors`), reaching a scheduler (`_connect`), and
`crawler history` as a batch task (`history_task`) or with its parsing spread over a cluster
(`dask_reading`). A worker only pins and visits; the driver alone merges and writes, so each
repository's folder comes out byte for byte as `crawler extract` alone would write it.

The contract, in one example: two local repositories, one of them already extracted at its
commit; the batch skips what is up to date, extracts the other, and a second run does nothing:

    # repos.yaml
    defaults:
      jobs: 1
    repos:
      - source: ./lib
        name: acme/lib
      - source: ./lib2
        name: acme/lib2

    $ crawler batch repos.yaml -o out -j 2
    2 repositories on local, 1 files parsed in 13.0s
    repository        sha       records   changes  time  status
    local/acme/lib    e23f4186        2  +0 ~0 -0  0.2s  up to date
    local/acme/lib2   e23f4186        2  +2 ~0 -0  3.0s  done
    $ crawler batch repos.yaml -o out -j 2
    2 repositories on local, 0 files parsed in 9.3s
    ...
    local/acme/lib2   e23f4186        2  +0 ~0 -0  0.2s  up to date

(The table is drawn with box characters on a terminal.) docs/batch.md says how to run one on a
cluster and how to size it.

May import: `crawler.pipeline`, `crawler.git`, `crawler.parse`, `crawler.store`,
`crawler.records`, `crawler.errors`.
Line budget: 1,800 lines.
"""
