"""SIGKILL `crawler extract` and `crawler update` as many times as asked, and count what breaks.

The same scene as tests/store/test_kill_repo.py, at any size: a generated library (or, with
`--stdlib`, this Python's standard library) committed three times into a git repository in a
temporary folder, extracted at the first commit, an annotation planted on every record. Then
chains of kills of `extract` and `update` to the last commit, each chain on a fresh copy of
that start and healed by one run to the end; one chain in four starts with a kill just before
a random file step. Prints the figures; exits 1 if any annotation changed, any file failed to
load, any healed output differed from the clean one, or any process outlived its run.

    python scripts/kill_fuzz.py --kills 200 [--seed N] [--files 300] [--chain 4]
    python scripts/kill_fuzz.py --kills 20 --stdlib
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's crawler and tests, not an installed one

from tests.helpers.killlib import Tree, library  # noqa: E402
from tests.helpers.killrun import COMMANDS, Figures, KillScene, kill_chain  # noqa: E402

SKIP = {"site-packages", "__pycache__", "test", "tests", "idlelib", "lib2to3"}


def stdlib_tree() -> Tree:
    """This Python's standard library sources (not its test suite), as `path: text`."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    tree = {}
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if SKIP.isdisjoint(rel.parts):
            try:
                tree[rel.as_posix()] = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # a file git would hold as bytes; the generator edits text
    return tree


def fuzz(scene: KillScene, kills: int, chain: int, seed: int, log: bool) -> Figures:
    """`kills` SIGKILLs over both commands, in chains of `chain` on a fresh copy each."""
    rng = random.Random(seed)
    figures = Figures()
    number = 0
    while figures.kills < kills:
        command = COMMANDS[number % len(COMMANDS)]
        first_step = rng.randint(1, scene.steps[command]) if number % 4 < 2 else None
        found = kill_chain(scene, command, min(chain, kills - figures.kills), rng,
                           f"chain {number} {command}", first_step=first_step)
        figures.add(found)
        if log:
            print(f"  chain {number:3d} {command:7s} kills {found.kills} finished {found.finished}"
                  f" temps {found.temps} problems {len(found.problems)} ({found.seconds:.1f} s)",
                  flush=True)
        for line in found.problems:
            print(f"  PROBLEM {line}", flush=True)
        number += 1
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs in all (default 200)")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--files", type=int, default=300, help="modules of the generated library")
    parser.add_argument("--chain", type=int, default=4, help="kills on one folder before it heals")
    parser.add_argument("--stdlib", action="store_true", help="this Python's stdlib, not a library")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("-q", "--quiet", action="store_true", help="no line per chain")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kill-fuzz-") as temp:
        base = args.keep or Path(temp)
        base.mkdir(parents=True, exist_ok=True)
        tree = stdlib_tree() if args.stdlib else library(args.files, args.seed)
        scene = KillScene(base / "scene", tree, args.seed)
        print(f"scene: {scene.files} files, {scene.records} records annotated; clean runs: "
              + ", ".join(f"{c} {scene.seconds[c]:.1f} s ({scene.steps[c]} file steps)"
                          for c in COMMANDS)
              + f"; built in {time.monotonic() - started:.0f} s", flush=True)
        figures = fuzz(scene, args.kills, args.chain, args.seed, not args.quiet)
    print(f"kills: {figures.kills}")
    print(f"runs that finished before their kill: {figures.finished}")
    print(f"healing runs, each compared byte for byte with a clean run: {figures.heals}")
    print(f"annotation blocks checked byte for byte: {figures.annotations}")
    print(f"temp files seen after kills (removed by the next run): {figures.temps}")
    print(f"mismatches: {len(figures.problems)}")
    print(f"leftover processes: {len(figures.leftovers)}")
    print(f"longest a process outlived its kill: {figures.lingered:.1f} s")
    print(f"time: {time.monotonic() - started:.0f} s (seed {args.seed})")
    return 1 if figures.problems or figures.leftovers else 0


if __name__ == "__main__":
    sys.exit(main())
