"""Measure `crawler lookup` on an output folder: the share of runtime messages found first, and time.

Runtime messages are made from the records' own templates: each placeholder replaced by a value
a program could print for an expression of that name (a shape for `shape`, a dtype for `dtype`,
a number for `axis`, a quoted name otherwise), a KeyError's text quoted as `str(KeyError(m))`
quotes it, and the line pasted as a traceback shows it (`ValueError: ...`). Records whose message
is a variable or cannot be read (`dynamic`, `variable`: no text to look for) are not drawn.

A message is found first when the first match is its record, or a record of the same exception
and template (a user cannot tell those apart: same text, same class). The same messages are
looked up in the folder (its lookup index) and, with --db, in an SQLite export: the answers must
be the same. Times: each lookup in this process (the index open, brought up to date, asked), and
with --processes N the command itself, N runs, CPU and wall seconds (the process's start
included).

    python scripts/lookup_share.py output/github.com/jax-ml/jax --count 300 [--db errors.db]
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from crawler.serve.lookup.sources import describe, load_records, lookup_database, lookup_output

_PLACEHOLDER = re.compile(r"(?<!\{)\{(?!\{)([^{}]*)\}")
VALUES = (  # the first rule whose word is in the placeholder's name gives its value
    ("shape", "(3, 4)"), ("dtype", "float32"), ("axis", "2"), ("axes", "(0, 1)"),
    ("ndim", "3"), ("rank", "2"), ("len", "5"), ("size", "7"), ("num", "4"), ("count", "4"),
    ("index", "1"), ("idx", "1"), ("dim", "2"), ("type", "<class 'int'>"), ("name", "'x'"),
    ("path", "'/tmp/x'"), ("key", "'k'"), ("", "foo"),
)


def plausible(expression: str) -> str:
    lowered = expression.lower()
    return next(value for word, value in VALUES if word in lowered)


def runtime_message(record: object) -> str:
    site = record.site  # type: ignore[attr-defined]
    text = _PLACEHOLDER.sub(lambda m: plausible(m.group(1)), site.message.template)
    text = text.replace("{{", "{").replace("}}", "}")
    name = (site.exception_qualname or site.exception).rpartition(".")[2]
    if name == "KeyError":
        text = repr(text)
    return f"{name}: {text}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--processes", type=int, default=0)
    args = parser.parse_args()

    records, _ = load_records(args.folder)
    drawable = sorted((r for r in records if r.status != "removed"
                       and r.site.message.kind not in {"dynamic", "variable"}), key=lambda r: r.id)
    drawn = random.Random(args.seed).sample(drawable, min(args.count, len(drawable)))
    same_record = same_text = found = 0
    times, different = [], 0
    for record in drawn:
        message = runtime_message(record)
        started = time.perf_counter()
        answer = lookup_output(args.folder, message, limit=10).answer
        times.append(time.perf_counter() - started)
        found += answer.found
        if answer.matches and answer.matches[0].exact:
            first = answer.matches[0].wording
            same_record += first.record_id == record.id
            same_text += (first.template, first.exception_name) == (
                record.site.message.template,
                (record.site.exception_qualname or record.site.exception).rpartition(".")[2])
        if args.db is not None:
            other = lookup_database(args.db, message, limit=10)
            different += describe(other.matches) != describe(answer.matches)
    count = len(drawn)
    print(f"{len(records)} records, {len(drawable)} with text to look for; {count} messages drawn")
    print(f"found (a template matches): {found}/{count} = {found / count:.1%}")
    print(f"found first, its record: {same_record}/{count} = {same_record / count:.1%}")
    print(f"found first, its exception and template: {same_text}/{count} = {same_text / count:.1%}")
    print(f"in-process lookup: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms")
    if args.db is not None:
        print(f"answers that differ between the folder and --db: {different}/{count}")
    if args.processes:
        command_times(args.folder, runtime_message(drawn[0]), args.processes)


def command_times(folder: Path, message: str, runs: int) -> None:
    """`crawler lookup` as a process, `runs` times: CPU and wall seconds, and an empty start's."""
    def timed(argv: list[str]) -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    lookups = [timed([sys.executable, "-m", "crawler", "lookup", message, str(folder), "-q"])
               for _ in range(runs)]
    empty = [timed([sys.executable, "-c", "pass"]) for _ in range(runs)]
    for name, rows in (("crawler lookup", lookups), ("python -c pass", empty)):
        walls, cpus = zip(*rows, strict=True)
        print(f"{name}: wall min {min(walls):.3f} s median {statistics.median(walls):.3f} s; "
              f"cpu min {min(cpus):.3f} s median {statistics.median(cpus):.3f} s")


if __name__ == "__main__":
    main()
