"""Replay weekly steps of a real repository's history and measure what happens to annotations.

An annotation is planted on every record at the first week's commit; then `crawler update` runs
at each following week's commit (the first commit on the branch at or after the date), and after
each step the script counts:

- lost and duplicated annotations (each planted note must be in exactly one record file);
- silently misattached: a record active and unflagged whose site moved to a place other than the
  one git's diff maps its old lines to;
- untouched sites that lost their id: git's diff maps a record's old lines to a live site that
  another record now holds;
- flagged pairs (records that went to `needs_review` in that step, or were paired again while
  waiting for review), listed in `flagged.txt` to be read by hand;
- removed records, each with its three likeliest successors among the records added in the same
  step (`pairing.score`), listed in `removed.txt` to be read by hand;
- each step's update time.

At the end, the planted folder at the first commit is updated once to the last commit, and the
records holding each note are compared with the stepwise result (`direct.txt`): the same outcome
is the same live site, or removed in both.

With `--baseline DIR` (another checkout of the crawler, such as a `git worktree` of an older
commit) every step runs with both, alternately first, each with its own output and cache, so that
their times are measured under the same load.

    python scripts/replay_history.py /path/to/jax.git --start 2026-05-01 --weeks 10 \\
        --work /tmp/replay [--baseline /tmp/start] [--include 'jax/*']
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from crawler.catalogue.pairing import score
from crawler.git.diff import LineMap, line_map
from crawler.git.pin import pin
from crawler.records import NEEDS_REVIEW, REMOVED, ErrorRecord
from crawler.store import record_files, render, repo_output

CODE = Path(__file__).resolve().parent.parent
NAME = "replay/repo"


def weekly_commits(source: str, branch: str, start: dt.date, weeks: int) -> list[tuple[str, str]]:
    """(date, sha) of the first commit on the branch's first-parent line at or after each week."""
    out = subprocess.run(["git", "--git-dir", source, "log", "--first-parent", "--format=%H %cI",
                          branch], check=True, capture_output=True, text=True).stdout
    history = sorted((dt.datetime.fromisoformat(line.split()[1]), line.split()[0])
                     for line in out.splitlines())
    found = []
    for week in range(weeks + 1):
        day = dt.datetime.combine(start + dt.timedelta(days=7 * week), dt.time(),
                                  tzinfo=dt.timezone.utc)
        later = [sha for when, sha in history if when >= day]
        if later:
            found.append((day.date().isoformat(), later[0]))
    return found


@dataclass
class Run:
    """One checkout of the crawler, with its own output folder and cache."""

    label: str
    code: Path
    work: Path
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU seconds of the crawler and what it reaps
    cpu_all: list[float] = field(default_factory=list)  # ... and of every process it started
    last_cpu: float = 0.0
    last_cpu_all: float = 0.0

    @property
    def root(self) -> Path:
        return self.work / self.label / "out"

    @property
    def cache(self) -> Path:
        return self.work / self.label / "cache"

    @property
    def update_options(self) -> list[str]:
        """Updates without test evidence, like the extract, where the checkout's update reads
        tests (an older one has no such option): the replay measures pairing, not evidence."""
        shown = subprocess.run([sys.executable, "-m", "crawler", "update", "--help"], cwd=self.code,
                               env=_crawler_env(self.code),
                               capture_output=True, text=True).stdout
        return ["--no-evidence"] if "--no-evidence" in shown else []

    def crawl(self, command: str, source: str, sha: str, extra: list[str], root: Path | None = None
              ) -> tuple[float, dict]:
        args = [sys.executable, "-m", "crawler", command, source, "--commit", sha, "-o",
                str(root or self.root), "--cache-dir", str(self.cache), "--name", NAME, "--json",
                *extra]
        env = _crawler_env(self.code)
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run(args, cwd=self.code, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        # on a shared machine wall time follows the load; CPU time follows the work
        self.last_cpu = _children_cpu() - cpu
        _reap_orphans()  # the parser's fork server and its workers, which the crawler leaves
        self.last_cpu_all = _children_cpu() - cpu
        if done.returncode != 0:
            raise SystemExit(f"{self.label}: crawler {command} failed: {done.stderr.strip()[-2000:]}")
        return seconds, json.loads(done.stdout)


def _crawler_env(code: Path) -> dict[str, str]:
    """The environment a checkout's crawler runs in: its code first on the path, and Python's
    bytecode written and reused, as an installed crawler's is (pip compiles it at install).
    Without it (PYTHONDONTWRITEBYTECODE) every run would compile each module it imports, and a
    larger crawler would pay for its size on every step."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _adopt_orphans() -> None:
    """Become the subreaper of every process the crawlers start, so that a process a crawler
    leaves behind (multiprocessing's fork server, which reaps the parser's workers) is reaped
    here and its CPU counted in `_children_cpu` (Linux; elsewhere only the crawler's own)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap_orphans(wait: float = 30.0) -> None:
    """Reap the processes a finished crawler left, which end when they see it gone."""
    deadline = time.monotonic() + wait
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                print("a process the crawler left is still running; its CPU is not counted",
                      file=sys.stderr)
                return
            time.sleep(0.05)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def folder_of(root: Path) -> Path:
    return root / "local" / NAME


def load(root: Path) -> dict[str, ErrorRecord]:
    loaded = repo_output.load_folder(folder_of(root))
    assert not loaded.broken, loaded.broken[:3]
    return {r.id: r for r in loaded.records}


def plant(root: Path) -> int:
    """An annotation on every live record: a note naming its id, as a person would write it."""
    folder = folder_of(root) / record_files.ERRORS_DIR
    count = 0
    for path in sorted(folder.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        record = record_files.load_record(path)
        if record.status == REMOVED:
            continue
        old = render.annotation_block(text)
        assert old is not None
        block = (f"annotation:\n  written_for: {json.dumps(record.site.message.template)}\n"
                 f"  what_it_means: planted {record.id}  # planted {record.id}\n")
        path.write_text(text.replace(old, block), encoding="utf-8")
        count += 1
    return count


def holders(root: Path) -> dict[str, list[str]]:
    """Planted note -> the record files that hold it."""
    found: dict[str, list[str]] = {}
    for path in (folder_of(root) / record_files.ERRORS_DIR).glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        marker = text.find("# planted ")
        while marker != -1:
            end = text.index("\n", marker)
            found.setdefault(text[marker + 10:end], []).append(path.stem)
            marker = text.find("# planted ", end)
    return found


def flagged(record: ErrorRecord) -> bool:
    h = record.history
    return record.status == NEEDS_REVIEW or (h is not None and (
        h.previous_template is not None or getattr(h, "previous_exception", None) is not None))


def _wording(record: ErrorRecord) -> tuple[str, str, str, str]:
    # a record still waiting for review from an earlier step is not a new pair, even if it moved
    s = record.site
    return (s.path, s.qualname, s.exception, s.message.template)


def same_outcome(a: ErrorRecord, b: ErrorRecord) -> bool:
    """Whether two runs left one annotation on the same error: removed in both, or live at one place.

    A removed record keeps the facts of the last commit that had its site, which an update across
    many commits sees at another commit than the weekly steps did; that is not a different outcome.
    """
    if a.status == REMOVED or b.status == REMOVED:
        return a.status == b.status
    return (a.status, a.site.path, a.site.line) == (b.status, b.site.path, b.site.line)


def describe(record: ErrorRecord) -> str:
    s = record.site
    return f"{s.path}:{s.line} {s.qualname} {s.exception}({s.message.template!r}) [{record.status}]"


@dataclass
class StepFigures:
    lost: int = 0
    duplicated: int = 0
    misattached: list[str] = field(default_factory=list)
    untouched_lost_id: list[str] = field(default_factory=list)
    untouched_kept: int = 0
    flagged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    added: int = 0


def measure(before: dict[str, ErrorRecord], after: dict[str, ErrorRecord], lines: LineMap,
            notes: dict[str, list[str]], planted: set[str]) -> StepFigures:
    figures = StepFigures()
    for note in planted:
        held = notes.get(note, [])
        figures.lost += not held
        figures.duplicated += len(held) > 1
    live_at = {(r.site.path, r.site.line, r.site.column, r.site.message.template,
                r.site.exception_qualname): r.id
               for r in after.values() if r.status != REMOVED}
    new_ids = [i for i in after if i not in before]
    figures.added = len(new_ids)
    for record_id, old in before.items():
        new = after.get(record_id)
        if new is None or old.status == REMOVED:
            continue
        place = lines.follow(old.site.path, old.site.line, old.site.end_line)
        # one raise may give several sites, one per message and one per class an alias may
        # name (`err = A if c else B; raise err(msg)`): told apart by template and class
        holder = (live_at.get((place[0], place[1], old.site.column, old.site.message.template,
                               old.site.exception_qualname)) if place else None)
        if holder is not None:
            if holder == record_id:
                figures.untouched_kept += 1
            else:
                figures.untouched_lost_id.append(f"{record_id} {describe(old)} -> held by {holder}")
        moved = new.site != old.site
        if new.status != REMOVED and moved and not flagged(new) and place is not None and (
                (new.site.path, new.site.line) != place):
            figures.misattached.append(f"{record_id} {describe(old)} -> {describe(new)}")
        if new.status == NEEDS_REVIEW and (old.status != NEEDS_REVIEW or _wording(new) != _wording(old)):
            why = getattr(new.history, "paired_by", None)
            figures.flagged.append(f"{record_id}\n  was {describe(old)}\n  now {describe(new)}\n"
                                   f"  paired_by: {why}")
        if new.status == REMOVED and old.status != REMOVED:
            ranked = sorted(((score(old, after[i].site).total, i) for i in new_ids), reverse=True)[:3]
            options = "".join(f"\n  {total:.2f} {describe(after[i])} "
                              f"[{score(old, after[i].site).signal}]" for total, i in ranked)
            figures.removed.append(f"{record_id} {describe(old)}{options or ' (no record added)'}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("--start", type=dt.date.fromisoformat, required=True)
    parser.add_argument("--weeks", type=int, default=10)
    parser.add_argument("--branch", default="main")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, help="another checkout of the crawler, for times")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--planted", type=Path,
                        help="an output root already extracted at the first commit and planted "
                             "by an earlier replay: copied instead of extracting again")
    args = parser.parse_args()
    _adopt_orphans()
    commits = weekly_commits(args.source, args.branch, args.start, args.weeks)
    print("commits:", " ".join(f"{day} {sha[:10]}" for day, sha in commits), flush=True)
    shutil.rmtree(args.work, ignore_errors=True)
    runs = [Run("new", CODE, args.work)]
    if args.baseline:
        runs.append(Run("baseline", args.baseline.resolve(), args.work))
    extra = ["-j", str(args.jobs), *(x for glob in args.include for x in ("--include", glob))]
    first = commits[0][1]
    planted: dict[str, set[str]] = {}
    for run in runs:
        if args.planted:
            shutil.copytree(args.planted, run.root)
            if (args.planted.parent / "cache").is_dir():  # the parse results of its extract
                shutil.copytree(args.planted.parent / "cache", run.cache)
            print(f"{run.label}: planted folder copied from {args.planted}", flush=True)
        else:
            seconds, summary = run.crawl("extract", args.source, first, [*extra, "--no-evidence"])
            count = plant(run.root)
            print(f"{run.label}: extract {seconds:.1f}s, CPU {run.last_cpu:.1f}s (with the "
                  f"workers {run.last_cpu_all:.1f}s), {summary['records']} records, {count} planted",
                  flush=True)
        planted[run.label] = set(load(run.root))
        shutil.copytree(run.root, args.work / run.label / "direct")
    report = {run.label: [] for run in runs}  # type: dict[str, list[dict]]
    lists = {run.label: {"flagged": [], "removed": [], "misattached": [], "untouched_lost_id": []}
             for run in runs}  # type: dict[str, dict[str, list[str]]]
    for step, ((_, old_sha), (day, sha)) in enumerate(zip(commits, commits[1:]), start=1):
        with pin(args.source, sha) as repo:
            lines = line_map(repo, old_sha)
        order = runs if step % 2 else runs[::-1]
        for run in order:
            before = load(run.root)
            seconds, summary = run.crawl("update", args.source, sha,
                                         ["-j", str(args.jobs), *run.update_options])
            run.times.append(seconds)
            run.cpu.append(run.last_cpu)
            run.cpu_all.append(run.last_cpu_all)
            after = load(run.root)
            figures = measure(before, after, lines, holders(run.root), planted[run.label])
            for key in lists[run.label]:
                lists[run.label][key] += [f"step {step} ({day}) {item}" for item in getattr(figures, key)]
            row = {"step": step, "date": day, "sha": sha[:10], "seconds": round(seconds, 1),
                   "cpu_seconds": round(run.last_cpu, 2),
                   "cpu_all_seconds": round(run.last_cpu_all, 2),
                   "crawler_seconds": summary["seconds"], "read": summary["files_read_again"],
                   "lost": figures.lost, "duplicated": figures.duplicated,
                   "misattached": len(figures.misattached),
                   "untouched_kept": figures.untouched_kept,
                   "untouched_lost_id": len(figures.untouched_lost_id),
                   "flagged": len(figures.flagged), "removed": len(figures.removed),
                   "added": figures.added}
            report[run.label].append(row)
            print(run.label, json.dumps(row), flush=True)
    last = commits[-1][1]
    for run in runs:
        stepwise = load(run.root)
        run.crawl("update", args.source, last, ["-j", str(args.jobs), *run.update_options],
                  root=args.work / run.label / "direct")
        direct = load(args.work / run.label / "direct")
        differ = []
        for record_id in sorted(planted[run.label]):
            a, b = stepwise.get(record_id), direct.get(record_id)
            if a is None or b is None or not same_outcome(a, b):
                differ.append(f"{record_id}\n  stepwise {describe(a) if a else None}\n"
                              f"  direct   {describe(b) if b else None}")
        lists[run.label]["direct"] = differ
        totals = Counter[str]()
        for row in report[run.label]:
            totals.update({k: v for k, v in row.items() if isinstance(v, int) and k != "step"})
        print(f"{run.label}: totals {dict(totals)}; stepwise vs direct: {len(differ)} notes differ; "
              f"update seconds {[round(t, 1) for t in run.times]} sum {sum(run.times):.1f}, "
              f"CPU seconds {[round(t, 2) for t in run.cpu]} sum {sum(run.cpu):.2f}, "
              f"with the parser's workers {[round(t, 2) for t in run.cpu_all]} "
              f"sum {sum(run.cpu_all):.2f}",
              flush=True)
        for key, items in lists[run.label].items():
            (args.work / f"{run.label}-{key}.txt").write_text("\n".join(items) + "\n", encoding="utf-8")
    (args.work / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
