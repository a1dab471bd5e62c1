"""Throughput of `crawler batch`: this Python's standard library split into a dozen repositories.

Each repository gets a share of the stdlib's top-level modules and packages (balanced by bytes),
committed into a fresh git repository in a temporary folder. The same batch then runs on local
processes and on a `distributed.LocalCluster`, each into its own output folder, and the two
outputs are compared byte for byte.

    python scripts/bench_batch.py [--repos 12] [--workers N] [--no-tests]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from crawler.batch.driver import BatchResult, run_batch
from crawler.batch.reposfile import load_batch

SKIP = {"site-packages", "__pycache__", "lib2to3"}  # lib2to3's fixture files are Python 2


def split_stdlib(count: int) -> list[list[Path]]:
    """Top-level stdlib entries in `count` groups of about equal size, largest first."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sizes = []
    entries = sorted(stdlib.iterdir())
    while entries:
        entry = entries.pop(0)
        if entry.name in SKIP or not (entry.is_dir() or entry.suffix == ".py"):
            continue
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*.py")
                                                  if "__pycache__" not in p.parts]
        if len(files) > 200:  # the test package: share its modules out instead
            entries.extend(sorted(entry.iterdir()))
            continue
        if files:
            sizes.append((sum(p.stat().st_size for p in files), str(entry), files))
    groups: list[tuple[int, list[Path]]] = [(0, []) for _ in range(count)]
    for size, _, files in sorted(sizes, key=lambda s: (-s[0], s[1])):
        total, members = min(groups, key=lambda g: g[0])
        groups.remove((total, members))
        groups.append((total + size, members + files))
    return [sorted(members) for _, members in sorted(groups, key=lambda g: -g[0])]


def make_repos(root: Path, groups: list[list[Path]]) -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    repos = []
    for index, files in enumerate(groups):
        repo = root / f"stdlib{index:02d}"
        for path in files:
            target = repo / path.relative_to(stdlib)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "stdlib"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        repos.append(repo)
    return repos


def cpu() -> tuple[float, float]:
    """(this process's, its reaped children's) CPU seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def report(label: str, result: BatchResult, before: tuple[float, float]) -> None:
    done = [r for r in result.results if r.status == "done"]
    files = sum(r.files for r in done)
    driver, workers = (now - then for now, then in zip(cpu(), before))
    records = sum(r.records for r in done)
    print(f"{label:>28}: {len(done)} repos, {files} files, {records} records, {result.seconds:6.1f}s wall, "
          f"{files / result.seconds:6.1f} files/s, {len(done) / result.seconds * 60:6.1f} repos/min; "
          f"CPU: workers {workers:.0f}s ({files / max(workers, 1e-9):.1f} files per CPU-second), "
          f"driver {driver:.0f}s" + (f", {len(result.failed)} FAILED" if result.failed else ""))
    for failed in result.failed:
        print(f"{'':>30}repos[{failed.entry.index}]: {failed.error}")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=12)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-tests", action="store_true", help="leave test files out (the default "
                        "of extract); by default every file is parsed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as folder:
        root = Path(folder)
        started = time.perf_counter()
        repos = make_repos(root, split_stdlib(args.repos))
        print(f"{len(repos)} repositories built in {time.perf_counter() - started:.1f}s, "
              f"{args.workers} workers")
        spec = root / "repos.yaml"
        tests = "false" if args.no_tests else "true"
        spec.write_text(f"defaults:\n  include_tests: {tests}\nrepos:\n"
                        + "".join(f"  - source: ./{repo.name}\n" for repo in repos), encoding="utf-8")
        cache = root / "cache"

        before = cpu()
        local = run_batch(load_batch(spec, root / "out-local"), jobs=args.workers, cache_dir=cache)
        report("local processes", local, before)
        rerun = run_batch(load_batch(spec, root / "out-local"), jobs=args.workers, cache_dir=cache)
        print(f"{'re-run, all up to date':>28}: {rerun.seconds:.1f}s")

        from dask import config as dask_config
        from distributed import LocalCluster

        started, before = time.perf_counter(), cpu()
        with dask_config.set({"distributed.worker.daemon": False}), \
                LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                             host="127.0.0.1", dashboard_address=":0",
                             worker_dashboard_address=None) as cluster:
            up = time.perf_counter() - started
            dask = run_batch(load_batch(spec, root / "out-dask"), scheduler=cluster.scheduler_address,
                             cache_dir=cache)
        report(f"LocalCluster (+{up:.1f}s start)", dask, before)
        same = tree(root / "out-local") == tree(root / "out-dask")
        print(f"{'outputs byte-identical':>28}: {same}")


if __name__ == "__main__":
    main()
