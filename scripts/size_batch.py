"""Sizing `crawler batch`: what one repository costs, and what splitting a large one buys.

    python scripts/size_batch.py costs [PACKAGE ...]    # per-repository cost, first and weekly
    python scripts/size_batch.py wall [--split 100]      # one large + small repos, 2 workers

`costs`: each installed package (site-packages, default a dozen of different sizes) is committed
into a temporary git repository, then a "weekly" commit changes 5% of its files (a new raise
appended). In a process of its own, the worker's part (`pipeline.collect`, evidence read, one
parser process) runs at the first commit, then at the second with the result cache of the first,
as a batch worker would. Measured: CPU seconds (the process and its parser processes, started
with `subprocess` as on a Dask worker so that their CPU is counted), bytes fetched into the
worker's cache (a file:// fetch), bytes of the pickled result sent back, and the driver's CPU to
merge and write it. One JSON line per package, then a summary.

`wall`: this interpreter's standard library (sources, evidence off) and six small packages, run
as a local batch (-j 2, one task per repository), then on a 2-worker LocalCluster with the
large one split; wall times against the sum of the tasks' times.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PACKAGES = ["certifi", "colorama", "attr", "yaml", "click", "requests", "packaging", "jinja2",
            "git", "werkzeug", "rich", "distributed"]
SMALL = ["colorama", "attr", "yaml", "click", "requests", "jinja2"]
WEEKLY_SHARE = 0.05  # files a weekly bump changes
GIT_ENV = {"GIT_AUTHOR_NAME": "size", "GIT_AUTHOR_EMAIL": "size@example.invalid",
           "GIT_COMMITTER_NAME": "size", "GIT_COMMITTER_EMAIL": "size@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env,
                          check=True, capture_output=True, text=True).stdout.strip()


def commit_tree(source: Path, repo: Path, prefix: str) -> None:
    """Every .py file under `source` into a new repository, under `prefix`/."""
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        target = repo / prefix / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")


def weekly_bump(repo: Path) -> int:
    """Append a raise to every twentieth file (5%, at least one); commit; how many changed."""
    files = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)
    step = max(1, round(1 / WEEKLY_SHARE))
    changed = files[::step] or files[:1]
    for index, path in enumerate(changed):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef _weekly_{index}(value):\n"
                         f"    raise ValueError(f'weekly {index}: {{value}} is not allowed')\n")
    git(repo, "commit", "-q", "-am", "weekly")
    return len(changed)


def cpu() -> float:
    """CPU seconds of this process and of its children reaped so far."""
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure_one(repo: Path, work: Path) -> dict[str, Any]:
    """In this process: the worker's and the driver's cost of a run at the repository's HEAD,
    with the cache and output that earlier runs left in `work`."""
    import multiprocessing.process

    # Parser processes started with subprocess, as on a Dask worker: reaped, so counted.
    multiprocessing.process.current_process()._config["daemon"] = True  # type: ignore[attr-defined]
    from crawler.pipeline import apply, collect
    from crawler.store.context import StoreContext

    cache, out = work / "cache", work / "out"
    stores = cache / "repos"  # the fetched git objects, packs and refs
    fetched_before = folder_bytes(stores) if stores.exists() else 0
    started, wall = cpu(), time.perf_counter()
    collected = collect(repo.as_uri(), ref=git(repo, "rev-parse", "HEAD"), cache_dir=cache,
                        jobs=1, evidence=True)
    worker_cpu, worker_wall = cpu() - started, time.perf_counter() - wall
    sent = len(pickle.dumps(collected, protocol=pickle.HIGHEST_PROTOCOL))
    started = cpu()
    run = apply(collected, out, store=StoreContext())
    return {
        "files": len(collected.outcomes), "sites": sum(len(o.sites) for o in collected.outcomes),
        "assertions": len(collected.assertions),
        "worker_cpu": round(worker_cpu, 2), "worker_wall": round(worker_wall, 2),
        "fetched_bytes": folder_bytes(stores) - fetched_before, "sent_bytes": sent,
        "driver_cpu": round(cpu() - started, 2), "files_written": run.files_written,
    }


def run_one(repo: Path, work: Path) -> dict[str, Any]:
    child = subprocess.run([sys.executable, __file__, "one", str(repo), str(work)],
                           capture_output=True, text=True,
                           env=os.environ | {"XDG_CACHE_HOME": str(work / "xdg")})
    if child.returncode:
        raise SystemExit(f"{repo}: {child.stderr.strip()}")
    return json.loads(child.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def costs(packages: list[str]) -> None:
    site_packages = Path(site.getsitepackages()[0])
    rows = []
    with tempfile.TemporaryDirectory(prefix="size-batch-") as folder:
        for name in packages:
            root = Path(folder) / name
            repo = root / "repo"
            commit_tree(site_packages / name, repo, name)
            source_bytes = sum(p.stat().st_size for p in repo.rglob("*.py") if ".git" not in p.parts)
            first = run_one(repo, root / "work")
            changed = weekly_bump(repo)
            row = {"package": name, "py_files": len(list(repo.rglob("*.py"))),
                   "source_bytes": source_bytes, "weekly_changed_files": changed,
                   "first": first, "weekly": run_one(repo, root / "work")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summarise(rows)


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares `y = a + b x`: a repository's fixed cost and its cost per file."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs) or 1.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / spread
    return my - b * mx, b


def project(rows: list[dict[str, Any]], repos: int = 5000, files: int = 300,
            moved: float = 0.2) -> dict[str, Any]:
    """Cores and hours for `repos` repositories of `files` files on average, from the fitted
    per-repository costs: a first pass, and a week where `moved` of them moved."""
    xs = [float(r["first"]["files"]) for r in rows]
    out: dict[str, Any] = {}
    for label, share in (("first", 1.0), ("weekly", moved)):
        per_repo = {}
        for key in ("worker_cpu", "driver_cpu", "fetched_bytes", "sent_bytes"):
            a, b = fit(xs, [float(r[label][key]) for r in rows])
            per_repo[key] = max(0.0, a + b * files)  # a fit on few points may dip below
        count = repos * share
        out[label] = {
            "repositories_run": round(count),
            "worker_core_hours": round(count * per_repo["worker_cpu"] / 3600, 1),
            "driver_core_hours": round(count * per_repo["driver_cpu"] / 3600, 1),
            "fetched_gib": round(count * per_repo["fetched_bytes"] / 2**30, 2),
            "sent_back_gib": round(count * per_repo["sent_bytes"] / 2**30, 2),
            "per_repo": {k: round(v, 3) for k, v in per_repo.items()},
        }
    return out


def summarise(rows: list[dict[str, Any]]) -> None:
    first = [r["first"] for r in rows]
    weekly = [r["weekly"] for r in rows]
    files = sum(f["files"] for f in first)
    sites = sum(f["sites"] for f in first)
    total = {key: sum(f[key] for f in first) for key in
             ("worker_cpu", "driver_cpu", "fetched_bytes", "sent_bytes")}
    week = {key: sum(w[key] for w in weekly) for key in
            ("worker_cpu", "driver_cpu", "fetched_bytes", "sent_bytes")}
    count = len(rows)
    print(json.dumps({
        "repositories": count, "files": files, "sites": sites,
        "first_per_repo": {k: round(v / count, 3) for k, v in total.items()},
        "weekly_per_repo": {k: round(v / count, 3) for k, v in week.items()},
        "files_per_worker_cpu_second": round(files / total["worker_cpu"], 1),
        "sent_bytes_per_site": round(total["sent_bytes"] / max(sites, 1)),
        "sent_bytes_per_file": round(total["sent_bytes"] / files),
        "fetched_bytes_per_source_byte": round(total["fetched_bytes"]
                                               / sum(r["source_bytes"] for r in rows), 3),
    }))
    print(json.dumps({"5000_repositories_of_300_files": project(rows)}))


def wall(split: int) -> None:
    from distributed import LocalCluster

    from crawler.batch.driver import run_batch
    from crawler.batch.reposfile import load_batch
    from scripts.bench import stdlib_repo

    site_packages = Path(site.getsitepackages()[0])
    with tempfile.TemporaryDirectory(prefix="size-wall-") as folder, \
            stdlib_repo(Path(folder)) as big:
        root = Path(folder)
        for name in SMALL:
            commit_tree(site_packages / name, root / name, name)
        body = (f"defaults:\n  evidence: false\nrepos:\n  - source: ./{big.name}\n"
                + "".join(f"  - source: ./{name}\n" for name in SMALL))
        (root / "repos.yaml").write_text(body, encoding="utf-8")
        cache = root / "cache"
        local = run_batch(load_batch(root / "repos.yaml", root / "out-local", split_files=0),
                          jobs=2, cache_dir=cache / "local")
        line("local -j 2, one task each", local)
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster:
            dask = run_batch(load_batch(root / "repos.yaml", root / "out-dask", split_files=split),
                             scheduler=cluster.scheduler_address, cache_dir=cache / "dask")
        line(f"2-worker LocalCluster, split {split}", dask)
        same = tree(root / "out-local") == tree(root / "out-dask")
        print(json.dumps({"byte_identical": same}))


def line(label: str, result: Any) -> None:
    tasks = sum(r.seconds for r in result.results)
    print(json.dumps({"run": label, "wall": round(result.seconds, 1),
                      "sum_of_task_seconds": round(tasks, 1),
                      "wall_over_sum": round(result.seconds / tasks, 2),
                      "largest": round(max(r.seconds for r in result.results), 1),
                      "tasks": [r.tasks for r in result.results],
                      "statuses": sorted({r.status for r in result.results})}), flush=True)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    costs_parser = commands.add_parser("costs")
    costs_parser.add_argument("packages", nargs="*", default=PACKAGES)
    costs_parser.add_argument("--summarise", type=Path, metavar="ROWS.jsonl",
                              help="no measuring: summarise the rows an earlier run printed")
    wall_parser = commands.add_parser("wall")
    wall_parser.add_argument("--split", type=int, default=100)
    one = commands.add_parser("one")  # the measured process of `costs`
    one.add_argument("repo", type=Path)
    one.add_argument("work", type=Path)
    args = parser.parse_args()
    if args.command == "costs" and args.summarise:
        summarise([json.loads(line) for line in args.summarise.read_text().splitlines()
                   if line.startswith('{"package"')])
    elif args.command == "costs":
        costs(args.packages)
    elif args.command == "wall":
        wall(args.split)
    else:
        print(json.dumps(measure_one(args.repo, args.work)))


if __name__ == "__main__":
    main()
