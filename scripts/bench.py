"""The benchmark: our extraction against the floor (LibCST's bare parse) and ruff, in one run.

    python -m scripts.bench PATH_OR_REPO [--ref REF] [--old SHA --new SHA] [--json FILE]
    python -m scripts.bench --stdlib            # this interpreter's standard library

Every measurement runs in a fresh child process, on the same files (those `crawler extract`
selects at the pin), and reports its wall time, CPU time and peak resident memory (`ru_maxrss`
of the child itself and of its largest worker process). The command users run comes first:
`crawler extract` with no options (test files read for evidence), the same command again with
nothing changed, and `update` (nothing changed; `--old`/`--new`: a week of changes), each as a
ratio to the default extract; then `extract --no-evidence` with 1 and N workers, as ratios to
the floor: `libcst.parse_module` over every file, one process, nothing else. Each row carries
its target (`TARGETS`). A table goes to stdout, the figures to `--json`; `--steps` adds, for the
runs of the default command and the week's update, the wall and CPU time of each step of the run
(`STEPS`: its own process and its worker processes apart).

This is a developer's tool, like a test: it prints, and it is not part of `crawler`'s commands.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scripts.bench_table import EM_RULES, LABELS, TARGETS, ratios, table

__all__ = ["TARGETS", "main", "steps_table", "timed_steps"]

# The steps of a run timed apart, in the order they run: (label, module, function). An indented
# label is a part of the step above it. A function that is not there (renamed) is left out.
STEPS = (
    ("parse sources", "crawler.pipeline.collecting", "visit_files"),
    ("read tests", "crawler.pipeline.collecting", "read_tests"),
    ("class pass", "crawler.pipeline.applying", "class_pass"),
    ("load records", "crawler.store.repo_output", "load_folder"),
    ("check the other records", "crawler.pipeline.applying", "verify_rest"),
    ("merge", "crawler.pipeline.applying", "regenerate"),
    ("entry points", "crawler.pipeline.entry_stage", "refresh"),
    ("match evidence", "crawler.pipeline.applying", "_match_tests"),
    ("write", "crawler.pipeline.applying", "_write"),
    ("  render and compare", "crawler.pipeline.applying", "_pending_writes"),
    ("  write files", "crawler.store.repo_output", "write_folder"),
    ("    prime the load cache", "crawler.store.record_files", "prime"),
)


# ---------------------------------------------------------------- inside a child process


_KIB = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux


def _peak() -> dict[str, float]:
    """Peak resident memory in MiB: this process, and its largest worker or other child.

    Workers are forked by multiprocessing's fork server, not by us, so their own report
    (`crawler.parse.workers.STATS`) is taken along with RUSAGE_CHILDREN (git and the like).
    """
    from crawler.parse.workers import STATS

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _KIB / (1 << 20)
    kids = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, STATS.peak_rss_kib)
    return {"rss_mib": round(own, 1), "worker_rss_mib": round(kids * _KIB / (1 << 20), 1),
            "workers_started": STATS.started}


def _cpu() -> float:
    """CPU seconds of this process, its waited-for children, and its retired workers."""
    from crawler.parse.workers import STATS

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + STATS.cpu_seconds)


@contextmanager
def timed_steps() -> Iterator[dict[str, dict[str, float]]]:
    """Each of `STEPS` timed while the block runs: label -> its calls, wall seconds, CPU
    seconds of this process and of the worker processes retired meanwhile (`STATS`)."""
    from crawler.parse.workers import STATS

    found: dict[str, dict[str, float]] = {}
    patched: list[tuple[Any, str, Callable[..., Any]]] = []
    inside: list[str] = []  # the steps running now, outermost first

    def timing(label: str, real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu, workers = time.perf_counter(), time.process_time(), STATS.cpu_seconds
            inside.append(label)
            try:
                return real(*args, **kwargs)
            finally:
                inside.pop()
                step = found.setdefault(label, {"calls": 0, "seconds": 0.0, "cpu_seconds": 0.0,
                                                "worker_cpu_seconds": 0.0, "outermost_cpu": 0.0})
                spent = (time.process_time() - cpu, STATS.cpu_seconds - workers)
                step["calls"] += 1
                step["seconds"] += time.perf_counter() - wall
                step["cpu_seconds"] += spent[0]
                step["worker_cpu_seconds"] += spent[1]
                if not inside:  # not a part of another step: what the steps add up to
                    step["outermost_cpu"] += sum(spent)
        return timed

    for label, module_name, name in STEPS:
        module = importlib.import_module(module_name)
        real = getattr(module, name, None)
        if real is not None:
            patched.append((module, name, real))
            setattr(module, name, timing(label, real))
    try:
        yield found
    finally:
        for module, name, real in reversed(patched):
            setattr(module, name, real)


def steps_table(name: str, figures: dict[str, Any]) -> str:
    """A run's steps (`timed_steps`), one line each, with what the run spent outside them."""
    steps: dict[str, dict[str, float]] = figures.get("steps", {})
    lines = [f"{name}: {figures['seconds']:.2f} s, {figures['cpu_seconds']:.2f} CPU s "
             "(the crawler and its workers)",
             f"  {'step':28} {'seconds':>8} {'CPU s':>8} {'worker CPU s':>13}"]
    for label, _, _ in STEPS:
        if label in steps:
            step = steps[label]
            lines.append(f"  {label:28} {step['seconds']:8.2f} {step['cpu_seconds']:8.2f} "
                         f"{step['worker_cpu_seconds']:13.2f}")
    outside = figures["cpu_seconds"] - sum(step["outermost_cpu"] for step in steps.values())
    lines.append(f"  {'outside these steps':28} {'':8} {outside:8.2f}   (pin, git, manifest, ...)")
    return "\n".join(lines)


def _files(source: str, ref: str, cache_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of the files an extraction would parse, read from the pinned commit."""
    from crawler.git.pin import pin
    from crawler.pipeline.selection import select_files
    from crawler.records import ExtractOptions

    with pin(source, ref, cache_dir=cache_dir) as repo:
        chosen, _, _ = select_files(repo.list_files(), ExtractOptions())
        for entry, (_, data) in zip(chosen, repo.read_blobs([f.blob for f in chosen])):
            yield entry.path, data


def phase_floor(args: argparse.Namespace) -> dict[str, Any]:
    """LibCST's bare parse of every file, one process: the floor. Also `ast`, for reference."""
    import ast
    import warnings

    import libcst

    blobs = [data for _, data in _files(args.source, args.ref, Path(args.cache_dir))]
    failed = 0
    cpu = time.process_time()
    started = time.perf_counter()
    for data in blobs:
        try:
            libcst.parse_module(data)
        except Exception:  # noqa: BLE001 - a file LibCST refuses still costs its time
            failed += 1
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    ast_failed = 0
    ast_started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in blobs:
            try:
                ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                ast_failed += 1
    return {"seconds": seconds, "cpu_seconds": cpu, "files": len(blobs), "bytes": sum(map(len, blobs)),
            "parse_failed": failed, "ast_seconds": time.perf_counter() - ast_started,
            "ast_failed": ast_failed}


def phase_extract(args: argparse.Namespace) -> dict[str, Any]:
    """`crawler extract` as the command runs it: pin, visit in workers, merge, write."""
    from crawler.git.pin import pin
    from crawler.pipeline import extract

    cache = Path(args.cache_dir)
    pin_started = time.perf_counter()
    with pin(args.source, args.ref, cache_dir=cache):  # fills the fetch cache; timed apart
        pass
    pin_seconds = time.perf_counter() - pin_started
    cpu = _cpu()
    started = time.perf_counter()
    with timed_steps() as steps:
        result = extract(args.source, ref=args.ref, output_root=Path(args.output),
                         cache_dir=cache, jobs=args.jobs, evidence=args.evidence)
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    counts = result.manifest.counts
    return {"seconds": seconds, "cpu_seconds": cpu, "pin_seconds": pin_seconds, "steps": steps,
            "files": counts.parsed,
            "records": counts.records, "skipped": counts.skipped,
            "files_written": result.files_written, **_matching(result)}


def phase_update(args: argparse.Namespace) -> dict[str, Any]:
    """`crawler update` as the command runs it: only the files whose blob changed are read."""
    from crawler.pipeline import update

    cpu = _cpu()
    started = time.perf_counter()
    with timed_steps() as steps:
        result = update(args.source, ref=args.ref, output_root=Path(args.output),
                        cache_dir=Path(args.cache_dir), jobs=args.jobs)
    seconds = time.perf_counter() - started
    counts = result.manifest.counts
    return {"seconds": seconds, "cpu_seconds": _cpu() - cpu, "steps": steps, "files": result.parsed,
            "records": counts.records, "skipped": counts.skipped,
            "files_written": result.files_written,
            "changes": {name: len(getattr(result.merged, name))
                        for name in ("added", "moved", "changed", "removed", "revived")},
            **_matching(result)}


def _matching(result: Any) -> dict[str, Any]:
    """The evidence matching's share of a run (the crawler's own process, after the parse)."""
    stats = result.evidence
    if stats is None:
        return {}
    return {"matching_seconds": round(stats.seconds, 3), "assertions": stats.assertions,
            "records_with_evidence": stats.records}


PHASES = {"floor": phase_floor, "extract": phase_extract, "update": phase_update}


# ---------------------------------------------------------------- the driver


def run_phase(phase: str, source: str, ref: str, cache_dir: Path, *, output: Path | None = None,
              jobs: int = 1, evidence: bool = False) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; its figures, plus its wall time from outside."""
    command = [sys.executable, "-m", "scripts.bench", "--phase", phase, source, "--ref", ref,
               "--cache-dir", str(cache_dir), "--jobs", str(jobs)]
    if evidence:
        command.append("--evidence")
    if output is not None:
        command += ["--output", str(output)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bench: phase {phase} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["wall_seconds"] = wall
    return figures


def run_ruff(source: str, ref: str, cache_dir: Path, workdir: Path) -> dict[str, Any] | None:
    """ruff's EM101/EM102/EM103 over the same files, written out to a folder; None without ruff."""
    ruff = shutil.which("ruff")
    if ruff is None:
        return None
    tree = workdir / "ruff-tree"
    count = 0
    for path, data in _files(source, ref, cache_dir):
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        count += 1
    command = [ruff, "check", "--isolated", "--no-cache", "--select", EM_RULES, "--exit-zero",
               "--output-format", "concise", str(tree)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    findings = sum(1 for line in done.stdout.splitlines() if " EM10" in line)
    return {"seconds": seconds, "files": count, "findings": findings}


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median time, with every run's time kept beside it."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    middle = dict(ordered[(len(ordered) - 1) // 2])
    middle["runs"] = [round(r["seconds"], 3) for r in runs]
    middle["seconds"] = statistics.median(r["seconds"] for r in runs)
    return middle


def benchmark(source: str, ref: str, jobs: int, repeat: int, old: str | None, new: str | None,
              workdir: Path, say: Any) -> dict[str, Any]:
    """Every measure, `repeat` rounds interleaved (so a change in the machine's load falls on all
    of them alike), and the median of each."""
    runs: dict[str, list[dict[str, Any]]] = {}
    pin_cache = workdir / "pin-cache"

    def measure(label: str, phase: str, folder: str, at: str = ref, workers: int = jobs,
                evidence: bool = False) -> None:
        out, cache = workdir / f"out-{folder}", workdir / f"cache-{folder}"
        runs.setdefault(label, []).append(
            run_phase(phase, source, at, cache, output=out, jobs=workers, evidence=evidence))

    for attempt in range(repeat):
        say(f"round {attempt + 1} of {repeat}: floor (libcst.parse_module, one process)")
        runs.setdefault("floor", []).append(run_phase("floor", source, ref, pin_cache))
        # A fresh output folder and cache for each first extraction: nothing earlier is reused.
        say(f"round {attempt + 1}: `crawler extract` as it runs with no options ({jobs} workers, "
            "test evidence), then again with nothing changed, then `update`")
        measure("extract_default", "extract", f"default-{attempt}", evidence=True)
        measure("rerun_default", "extract", f"default-{attempt}", evidence=True)
        measure("rerun", "update", f"default-{attempt}")
        if old and new:
            say(f"round {attempt + 1}: update {old[:12]} -> {new[:12]} (folder of a default "
                "extract)")
            run_phase("extract", source, old, workdir / f"cache-regen-{attempt}",
                      output=workdir / f"out-regen-{attempt}", jobs=jobs, evidence=True)
            measure("regen", "update", f"regen-{attempt}", at=new)
        for label, workers in (("extract_1", 1), ("extract_n", jobs)):
            say(f"round {attempt + 1}: extract --no-evidence, {workers} worker(s)")
            measure(label, "extract", f"{label}-{attempt}", workers=workers)
    results = {name: median_of(found) for name, found in runs.items()}
    say("ruff " + EM_RULES)
    ruff = run_ruff(source, ref, pin_cache, workdir)
    if ruff is not None:
        results["ruff_em"] = ruff
    return results


@contextmanager
def stdlib_repo(workdir: Path) -> Iterator[Path]:
    """This interpreter's standard library (.py files only) committed into a new git repo."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    repo = workdir / "stdlib"
    for path in sorted(stdlib.rglob("*.py")):
        relative = path.relative_to(stdlib)
        if relative.parts[0] in ("site-packages", "dist-packages") or not path.is_file():
            continue
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid",
               GIT_CONFIG_NOSYSTEM="1")
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "stdlib"]):
        subprocess.run(["git", *command], cwd=repo, env=env, check=True, capture_output=True)
    yield repo


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", help="a local repository, URL or OWNER/NAME")
    parser.add_argument("--stdlib", action="store_true",
                        help="benchmark this interpreter's standard library, committed to a temp repo")
    parser.add_argument("--ref", default="HEAD", help="the commit to measure [HEAD]")
    parser.add_argument("--old", help="with --new: time a regeneration from OLD to NEW")
    parser.add_argument("--new", help="the commit a regeneration moves to")
    parser.add_argument("--jobs", type=int, default=None, help="workers for the parallel run [all cores]")
    parser.add_argument("--evidence", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measure; medians are shown")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--steps", action="store_true",
                        help="also show the time of each step of the default extract and the updates")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temp folder)")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.phase and not args.source and not args.stdlib:
        parser.error("give PATH_OR_REPO or --stdlib")
    if bool(args.old) != bool(args.new):
        parser.error("--old and --new go together")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.phase:
        figures = PHASES[args.phase](args)
        figures.update(_peak())
        print(json.dumps(figures))
        return
    from crawler.parse.workers import default_jobs

    jobs = args.jobs or default_jobs()
    with _workdir(args.keep) as workdir:
        context = stdlib_repo(workdir) if args.stdlib else _given(args.source)
        with context as source_path:
            source = str(source_path)
            results = benchmark(source, args.ref, jobs, max(1, args.repeat), args.old, args.new,
                                workdir, lambda text: print(f"... {text}", file=sys.stderr))
    print(table(results, jobs))
    if args.steps:
        for name in ("extract_default", "rerun_default", "rerun", "regen"):
            if "steps" in results.get(name, {}):
                print("\n" + steps_table(LABELS[name].format(jobs=jobs), results[name]))
    if args.json:
        report = {
            "source": "stdlib" if args.stdlib else args.source,
            "ref": args.ref, "old": args.old, "new": args.new, "jobs": jobs,
            "repeat": args.repeat, "python": platform.python_version(),
            "machine": {"cores": default_jobs(), "platform": platform.platform()},
            "results": results, "ratios": ratios(results),
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


@contextmanager
def _workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="crawler-bench-") as folder:
        yield Path(folder)


@contextmanager
def _given(source: str) -> Iterator[str]:
    yield source


if __name__ == "__main__":
    main()
