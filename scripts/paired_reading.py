"""The reading's cost over LibCST's bare parse, file by file, several checkouts paired.

Whole runs of `scripts.bench` on one machine move by up to 10 % between two runs of the same
code: more than a change to the reading costs. Here every file the extraction selects is parsed
by the floor (`libcst.parse_module` alone, the cyclic collector on, as `bench --phase floor`) and
visited by each checkout's `visit_file` (the collector off, as a worker runs it), one after the
other, each in its own long-lived process, the order rotating from file to file: a slow moment
of the machine falls on all of them alike. Per pass it prints the CPU seconds of each, and each
checkout's excess over the floor as a share of the floor; at the end, the medians.

    python scripts/paired_reading.py REPO [--ref REF] --code . --code /tmp/older [--passes 5]

`--code` is a checkout of the crawler (such as a `git worktree` of an older commit); the first
one's `crawler` reads the files out of REPO. Worker-side only: the crawler process's own work
(storing outcomes, the class pass, writing) is not in it.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# One process: read job numbers on stdin, answer each with the CPU seconds it took.
_SERVE = r"""
import gc, pickle, sys, time
floor = sys.argv[1] == "floor"
if not floor:
    sys.path.insert(0, sys.argv[1])
    try:
        from crawler.parse import file_tasks as tasks
        tasks.trust_parser_output()
    except ImportError:  # a checkout from before the parsers left the pool's module
        from crawler.parse import workers as tasks
        if hasattr(tasks, "_trust_parser_output"):
            tasks._trust_parser_output()
    gc.disable()  # as `workers._worker_main`
import libcst
jobs = pickle.load(open(sys.argv[2], "rb"))
for line in sys.stdin:
    path, blob, data = jobs[int(line)]
    started = time.process_time()
    if floor:
        try:
            libcst.parse_module(data)
        except Exception:
            pass
    else:
        tasks.visit_file(path, blob, data)
        gc.collect(0)  # the worker collects between batches; the young objects, here
    print(time.process_time() - started, flush=True)
"""


def _jobs(repo: str, ref: str, code: Path, folder: Path) -> Path:
    """The selected files' (path, blob, bytes), read through the first checkout's crawler."""
    reader = (
        "import pickle, sys\n"
        "from pathlib import Path\n"
        "from crawler.git.pin import pin\n"
        "from crawler.records import ExtractOptions\n"
        "from crawler.pipeline.selection import select_files\n"
        "with pin(sys.argv[1], sys.argv[2], cache_dir=Path(sys.argv[3])) as repo:\n"
        "    chosen, _, _ = select_files(repo.list_files(), ExtractOptions())\n"
        "    jobs = [(f.path, f.blob, data) for f, (_, data) in\n"
        "            zip(chosen, repo.read_blobs([f.blob for f in chosen]))]\n"
        "pickle.dump(jobs, open(sys.argv[4], 'wb'))\n")
    out = folder / "jobs.pickle"
    subprocess.run([sys.executable, "-c", reader, repo, ref, str(folder / "cache"), str(out)],
                   cwd=code, env=_env(code), check=True)
    return out


def _env(code: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--code", action="append", type=Path, required=True)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    codes = [code.resolve() for code in args.code]
    with tempfile.TemporaryDirectory() as tmp:
        jobs = _jobs(args.repo, args.ref, codes[0], Path(tmp))
        count = len(pickle.loads(jobs.read_bytes()))
        names = ["floor", *map(str, codes)]
        processes = [subprocess.Popen([sys.executable, "-c", _SERVE, name, str(jobs)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      env=_env(None)) for name in names]
        try:
            shares: dict[str, list[float]] = {name: [] for name in names[1:]}
            floors: list[float] = []
            for number in range(args.passes):
                spent = [0.0] * len(names)
                for index in range(count):
                    first = (index + number) % len(names)
                    for which in [*range(first, len(names)), *range(first)]:
                        process = processes[which]
                        assert process.stdin is not None and process.stdout is not None
                        process.stdin.write(f"{index}\n")
                        process.stdin.flush()
                        spent[which] += float(process.stdout.readline())
                floors.append(spent[0])
                line = [f"pass {number}: floor {spent[0]:.2f} s"]
                for name, seconds in zip(names[1:], spent[1:]):
                    shares[name].append((seconds - spent[0]) / spent[0])
                    line.append(f"{name} {seconds:.2f} s (+{100 * shares[name][-1]:.1f} % of the floor)")
                print(" | ".join(line), flush=True)
            print(f"{count} files; floor median {statistics.median(floors):.2f} s")
            for name, values in shares.items():
                print(f"{name}: over the floor, median {100 * statistics.median(values):.1f} %")
            if len(codes) == 2:
                gaps = [a - b for a, b in zip(*shares.values())]
                print(f"first minus second, median {100 * statistics.median(gaps):+.2f} % of the floor"
                      f" (passes: {', '.join(f'{100 * gap:+.2f}' for gap in gaps)})")
        finally:
            for process in processes:
                if process.stdin is not None:
                    process.stdin.close()
                process.wait()


if __name__ == "__main__":
    main()
