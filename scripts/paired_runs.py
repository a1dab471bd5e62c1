"""Whole extraction runs of several checkouts, alternated round by round, with the floor.

Each round runs `scripts.bench --phase floor` and then `--phase extract` (1 worker, no evidence:
the benchmark's row against the floor) once per checkout, the checkouts' order rotating from
round to round, each in a fresh output and cache folder that is removed afterwards. The floor
stays first: on this kind of machine a run right after another crawler run is faster than one
right after the floor (the crawler's own imports are still in memory), so each checkout must
follow the floor and each other checkout equally often. It prints
every run, then each checkout's median, the floor's median, and the differences of the first
checkout from each other one, round by round: their median, their mean, and a bootstrap 95 %
interval of the median, in seconds and as shares of the floor's median.

    python scripts/paired_runs.py REPO [--ref REF] --code . --code /tmp/older [--rounds 12]
        [--scratch TMPFS_FOLDER]

`--code` is a checkout of the crawler (such as a `git worktree` of an older commit). Two runs
of the same code differ here by more than a few per cent of the floor, and a new file costs the
disk 0.2 to 0.9 ms of kernel time that varies between rounds: `--scratch` on a tmpfs keeps that
out of a comparison of code (the record files are written all the same).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_RESAMPLES = 10_000


def run(code: Path, phase: str, repo: str, ref: str, scratch: Path) -> dict[str, float]:
    """One `bench --phase` run of a checkout in a fresh folder: its wall and CPU seconds."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(code)
    # the benchmark left the package for scripts/: a checkout from before has it as crawler.bench
    bench = "scripts.bench" if (code / "scripts" / "bench.py").is_file() else "crawler.bench"
    try:
        done = subprocess.run(
            [sys.executable, "-m", bench, "--phase", phase, repo, "--ref", ref,
             "--cache-dir", str(folder / "cache"), "--jobs", "1", "--output", str(folder / "out")],
            cwd=code, env=env, capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seconds": figures["seconds"], "cpu_seconds": figures["cpu_seconds"]}


def interval(values: list[float], seed: int = 0) -> tuple[float, float]:
    """A bootstrap 95 % interval of the median of `values` (resampled with a fixed seed)."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(values, k=len(values)))
                     for _ in range(_RESAMPLES))
    return medians[int(0.025 * _RESAMPLES)], medians[int(0.975 * _RESAMPLES) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--code", action="append", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--scratch", type=Path, help="where each run writes (default: a temp folder)")
    args = parser.parse_args()
    codes = [code.resolve() for code in args.code]
    # checkouts go by letter in the figures, so a path with a space cannot split a line's fields
    names = ["floor", *(chr(ord("A") + number) for number in range(len(codes)))]
    for name, code in zip(names[1:], codes):
        print(f"checkout {name}: {code}", flush=True)
    walls: dict[str, list[float]] = {name: [] for name in names}
    scratch = Path(tempfile.mkdtemp(dir=args.scratch))
    try:
        for number in range(args.rounds):
            first = number % len(codes)
            line = []
            for which in [-1, *range(first, len(codes)), *range(first)]:
                name = names[which + 1]
                phase, code = ("floor", codes[0]) if which < 0 else ("extract", codes[which])
                figures = run(code, phase, args.repo, args.ref, scratch)
                walls[name].append(figures["seconds"])
                line.append(f"{name} {figures['seconds']:.2f} s ({figures['cpu_seconds']:.2f} CPU)")
            print(f"round {number}: " + " | ".join(line), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    floor = statistics.median(walls["floor"])
    for name in names:
        print(f"{name}: median {statistics.median(walls[name]):.2f} s")
    for other in names[2:]:
        gaps = [a - b for a, b in zip(walls[names[1]], walls[other])]
        low, high = interval(gaps)
        print(f"{names[1]} minus {other}, per round: {', '.join(f'{gap:+.2f}' for gap in gaps)} s")
        print(f"  median {statistics.median(gaps):+.2f} s ({100 * statistics.median(gaps) / floor:+.1f} %"
              f" of the floor), mean {statistics.mean(gaps):+.2f} s; the median's 95 % interval "
              f"{low:+.2f} to {high:+.2f} s ({100 * low / floor:+.1f} to {100 * high / floor:+.1f} %)")


if __name__ == "__main__":
    main()
