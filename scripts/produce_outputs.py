"""Extract a fixed list of inputs into one output root, the same way each time, for a comparison.

Each line of the list names an input: `NAME PATH COMMIT [IDENTITY]` (blank lines and `#`
comments skipped), where PATH is a local git repository that holds COMMIT and IDENTITY the
output identity the records are written under (`github.com/OWNER/NAME` gives them permalinks;
NAME when left out). For each one, in a fresh folder `ROOT/NAME` and a fresh cache under
`--work`, the installed `crawler` runs

    crawler extract PATH --commit COMMIT --name IDENTITY -o ROOT/NAME
        --cache-dir WORK/cache/NAME -j JOBS --json

(the command `scripts/corpus.py` runs, evidence on, as its default is), its standard output and
error kept in `WORK/logs/NAME.out` and `.err`, outside the folder compared. Two runs of this
script with two versions of the crawler, into two roots, give folders that
`scripts/compare_outputs.py ROOT_A ROOT_B` compares byte for byte.

    python scripts/produce_outputs.py LIST ROOT [--work DIR] [--jobs 1] [--only NAME,...]
        [--crawler COMMAND]

`--crawler` is the command that runs the crawler (default `crawler`, the installed one): another
checkout's code runs as `--crawler "python -m crawler"` with that checkout as the current folder
and on PYTHONPATH (what `scripts/template_changes.py` does).

COMMIT must be a full sha the repository holds (a branch could move between the two runs). The
script prints one line per input (exit code, files and records of the summary, wall and CPU
seconds, CPU counted over the whole process tree: the script takes in orphaned descendants
with Linux's child subreaper and reaps them after each extract) and exits 1 if any extract
failed or any input is not as the list says.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Input:
    name: str
    path: Path
    commit: str
    identity: str


class ListError(Exception):
    """The list cannot be read, or an input is not what it says: the message says which."""


def read_list(path: Path) -> list[Input]:
    inputs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) not in (3, 4) or not re.fullmatch(r"[0-9a-f]{40}", words[2]) \
                or not re.fullmatch(r"[\w.-]+", words[0]):
            raise ListError(f"{path}:{number}: expected `NAME PATH COMMIT [IDENTITY]` (a full "
                            f"sha), got {line.strip()!r}")
        inputs.append(Input(words[0], Path(words[1]), words[2], (words[3:] or words[:1])[0]))
    names = [item.name for item in inputs]
    if len(set(names)) != len(names):
        raise ListError(f"{path}: a name is listed twice")
    return inputs


def check_input(item: Input) -> None:
    """The repository must hold the commit (what it resolves to is the commit itself)."""
    found = subprocess.run(["git", "-C", str(item.path), "rev-parse", "--verify", "-q",
                            f"{item.commit}^{{commit}}"], capture_output=True, text=True)
    if found.returncode != 0 or found.stdout.strip() != item.commit:
        raise ListError(f"{item.name}: {item.path} holds no commit {item.commit}")


def _reap_orphans() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def extract(item: Input, root: Path, work: Path, jobs: int,
            crawler: tuple[str, ...] = ("crawler",)) -> tuple[int, dict, float, float]:
    """One input's extract into a fresh folder: exit code, summary, wall and CPU seconds."""
    output, cache, logs = root / item.name, work / "cache" / item.name, work / "logs"
    for folder in (output, cache):
        shutil.rmtree(folder, ignore_errors=True)
    logs.mkdir(parents=True, exist_ok=True)
    argv = [*crawler, "extract", str(item.path), "--commit", item.commit, "--name", item.identity,
            "-o", str(output), "--cache-dir", str(cache), "-j", str(jobs), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(logs / f"{item.name}.out", "wb") as out, open(logs / f"{item.name}.err", "wb") as err:
        err.write((" ".join(argv) + "\n").encode())
        err.flush()
        code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err).returncode
    _reap_orphans()
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        summary = json.loads((logs / f"{item.name}.out").read_text(encoding="utf-8"))
    except ValueError:
        summary = {}
    return code, summary if isinstance(summary, dict) else {}, wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list", type=Path, help="lines of NAME PATH COMMIT [IDENTITY]")
    parser.add_argument("root", type=Path, help="the output root: one folder per input")
    parser.add_argument("--work", type=Path, default=None,
                        help="caches and logs [default: ROOT.work beside the root]")
    parser.add_argument("--jobs", type=int, default=1, help="the crawler's -j [default: 1]")
    parser.add_argument("--only", default="", help="these names only, comma-separated")
    parser.add_argument("--crawler", default="crawler",
                        help="the command that runs the crawler [default: crawler]")
    args = parser.parse_args(argv)
    try:
        inputs = read_list(args.list)
        only = {name for name in args.only.split(",") if name}
        unknown = only - {item.name for item in inputs}
        if unknown:
            raise ListError(f"not in {args.list}: {', '.join(sorted(unknown))}")
        inputs = [item for item in inputs if not only or item.name in only]
        for item in inputs:
            check_input(item)
    except (ListError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    root = args.root.resolve()
    work = (args.work or root.with_name(root.name + ".work")).resolve()
    try:  # orphaned descendants (the fork server, workers) become ours: reaped and counted
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (AttributeError, OSError):
        pass
    failed = 0
    print(f"{'input':<12} {'exit':>4} {'files':>6} {'records':>7} {'wall s':>8} {'CPU s':>8}",
          flush=True)
    for item in inputs:
        code, summary, wall, cpu = extract(item, root, work, args.jobs,
                                           tuple(shlex.split(args.crawler)))
        failed += code != 0
        print(f"{item.name:<12} {code:>4} {summary.get('files', '-')!s:>6} "
              f"{summary.get('records', '-')!s:>7} {wall:>8.1f} {cpu:>8.1f}", flush=True)
    print(f"{len(inputs)} inputs into {root}, {failed} failed (logs in {work / 'logs'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
