"""Time the installed `crawler lookup` as a user runs it, on pastes of every form, in CPU seconds.

    python scripts/lookup_times.py OUTPUT_FOLDER [--rounds 5] [--corpus]

The first call is timed right after the folder was written (run it just after `crawler extract`:
the index extract made must serve it without reading a record); then every paste is looked up
`--rounds` times. Prints the first call's CPU seconds and each paste form's median, with the
verdict and the first record's path:line, and the median over all of them. CPU seconds (user
and system, of the process and what it started): on a machine other work shares, wall seconds
say more of the others than of the lookup. `--corpus`: the pastes of tests/serve/lookup/pastes/jax.yaml
(jax's errors as running jax printed them, in every form) instead of the few below.

Python compiles a module whose cached bytecode is stale each time it is imported where
PYTHONDONTWRITEBYTECODE is set: run `python -m compileall -q crawler` after editing, or the
figures count compiling too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
from pathlib import Path

# Pastes of jax's own errors in the forms users paste them (texts as jax prints them at cec06d1).
TRACER = ("Abstract tracer value encountered where concrete value is expected: traced array "
          "with shape int32[]")
PASTES = {
    "first line": f"jax.errors.ConcretizationTypeError: {TRACER}",
    "prefix chain": f"FilteredStackTrace: jax._src.errors.ConcretizationTypeError: {TRACER}",
    "traceback": ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                  "    f(1)\n  File \"t.py\", line 2, in f\n    return int(x)\n"
                  f"jax.errors.ConcretizationTypeError: {TRACER}\nThe problem arose with the "
                  "`int` function."),
    "pytest E lines": f"E   jax.errors.ConcretizationTypeError: {TRACER}\nE   The problem arose",
    "pytest summary": "FAILED t.py::test_f - jax.errors.ConcretizationTypeError: Abstract tra...",
    "wrapped at 40": "\n".join(TRACER[i:i + 40] for i in range(0, len(TRACER), 40)),
    "logging": f"2024-01-01 12:00:00,123 ERROR root: TypeError: {TRACER}",
    "not from jax": "ValueError: operands could not be broadcast together with shapes (3,) (4,)",
}


def timed(crawler: str, paste: str, folder: Path) -> tuple[float, dict[str, object]]:
    """The call's CPU seconds and its answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([crawler, "lookup", paste, str(folder), "--json", "-n", "3"],
                          capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, json.loads(done.stdout or "{}")


def corpus_pastes() -> dict[str, str]:
    """The jax pastes of the corpus, by id."""
    import yaml

    items = yaml.safe_load((Path(__file__).resolve().parent.parent / "tests" / "serve" / "lookup" / "pastes"
                            / "jax.yaml").read_text(encoding="utf-8"))
    return {item["id"]: item["paste"] for item in items}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", action="store_true",
                        help="the pastes of tests/serve/lookup/pastes/jax.yaml")
    args = parser.parse_args()
    crawler = shutil.which("crawler") or "crawler"
    pastes = corpus_pastes() if args.corpus else PASTES
    first, _ = timed(crawler, next(iter(pastes.values())), args.folder)
    print(f"first call after the folder was written: {first:.3f} s CPU")
    every = []
    for form, paste in pastes.items():
        times = []
        answer: dict[str, object] = {}
        for _ in range(args.rounds):
            seconds, answer = timed(crawler, paste, args.folder)
            times.append(seconds)
        every.extend(times)
        matches = answer.get("matches") or [{}]
        top = matches[0] if isinstance(matches, list) and matches else {}
        print(f"{form[:32]:>32}: median {statistics.median(times):.3f} s CPU  "
              f"{answer.get('verdict')}  {top.get('path')}:{top.get('line')}")
    print(f"median over {len(every)} calls: {statistics.median(every):.3f} s CPU; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
