"""Run the crawler on a corpus of real libraries, each pinned at a commit, and report each one.

The list is the table under `## Libraries` in docs/corpus.md (library, kind, source, commit):
the one place the corpus and its commits are written. For each library, from a local mirror
(no network), in a fresh output and cache folder, the installed `crawler` runs as the user
runs it:

1. `crawler extract SOURCE --commit COMMIT` (its `--json` summary gives files and records);
2. `crawler validate` of the repository's folder;
3. `crawler update SOURCE --commit COMMIT --check` (the output just written must be up to date);
4. `crawler export` to JSON Lines (one line a record: the count must be the extract's) and to
   SQLite;
5. `crawler lookup` of three of the library's own messages, each pasted as
   `Exception: message` (the template, each placeholder filled with a word), which must rank
   that record first (exit 0); the first also through `--db` on the SQLite export. The three
   are chosen from the records alone, the same ones each run: active, shown with `str`, not
   `dynamic`, printable, a template no other record of the library has, its filled text taken
   by the record's own regex, with the most literal words (then the smaller id).

Each step is measured as a whole process tree: it runs under a small parent that makes itself
the reaper of orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`), so the crawler's fork
server and its workers are waited for and counted. CPU is user + system seconds of the tree;
peak memory is the largest resident set of any one process of it (`ru_maxrss`), not a sum.

A step fails when its exit code is not the one expected; it is a crash when the exit code is
none the crawler documents (0, 1, 2, 130, 141, 143), a signal, or the timeout; a Traceback is
the text `Traceback (most recent call last)` on its standard error. The script prints one
markdown row per library (files, records, CPU s, peak MiB, wall s, failures), a total, then
every failure with its command, exit code and the first and last lines of its standard error,
and exits 1 if there is any failure.

    python scripts/corpus.py --mirrors MIRRORS [--work DIR] [--jobs 1] [--only NAME,...]
        [--json report.json]

A source `github:OWNER/NAME` (or `https://github.com/OWNER/NAME`) is read from MIRRORS, which
holds one git directory per library, named `OWNER+NAME` (a bare repository, or a folder with the
bare one in `OWNER+NAME/repo`) or a plain clone named `OWNER+NAME` or `NAME`; any other source is
a path to a git repository (absolute, or relative to the list's folder). The libraries run
smallest first (by their Python files at the commit); the table is in the list's order.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED_EXITS = frozenset({0, 1, 2, 130, 141, 143})
TRACEBACK = "Traceback (most recent call last)"
LOOKUPS = 3
_FILL = "spam"  # what a placeholder of a looked-up message is filled with
STDERR_LINES = 5  # the first and the last lines of a failing step's standard error shown

# The parent each step runs under: it reaps every descendant (the fork server outlives the
# crawler's own process for a moment), so the tree's whole CPU and largest process are counted
# in what its own parent reads from wait4; at the timeout it kills the command, so what the
# command cost is still counted. argv: RESULT_FILE TIMEOUT COMMAND...
_MEASURED = r"""
import ctypes, os, subprocess, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except (AttributeError, OSError):
    pass
child = subprocess.Popen(sys.argv[3:])
try:
    code = str(child.wait(timeout=float(sys.argv[2])))
except subprocess.TimeoutExpired:
    child.kill()
    child.wait()
    code = "timeout"
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
with open(sys.argv[1], "w") as result:
    result.write(str(code))
"""


@dataclass(frozen=True)
class Library:
    """One row of the list: a name, a kind, where its git repository comes from, the commit."""

    name: str
    kind: str
    source: str
    commit: str


@dataclass
class Step:
    """One crawler command of a library's run and what it cost."""

    name: str
    argv: list[str]
    expected: int
    exit: int | None = None  # None: killed at the timeout
    signal: int | None = None  # the signal that ended the crawler's process, if one did
    cpu_seconds: float = 0.0
    peak_kib: int = 0
    wall_seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    note: str = ""  # why the step failed though its exit code was the expected one

    @property
    def crashed(self) -> bool:
        return self.exit is None or self.signal is not None or self.exit not in DOCUMENTED_EXITS

    @property
    def traceback(self) -> bool:
        return TRACEBACK in self.stderr

    @property
    def failed(self) -> bool:
        return self.crashed or self.traceback or self.exit != self.expected or bool(self.note)

    def describe(self) -> str:
        """The failure as the team needs it: the command, the exit, the ends of stderr."""
        note = self.note
        if self.exit is None:
            ended, note = self.note or "killed at the timeout", ""
        elif self.signal is not None:
            ended = f"killed by signal {self.signal}"
        else:
            ended = f"exit {self.exit} (expected {self.expected})"
        kinds = [word for word, there in (("crash", self.crashed), ("Traceback", self.traceback))
                 if there]
        lines = [f"{self.name}: {ended}" + (f" [{', '.join(kinds)}]" if kinds else "")
                 + (f": {note}" if note else ""),
                 "    $ " + " ".join(_quote(word) for word in self.argv)]
        err = self.stderr.splitlines()
        shown = err if len(err) <= 2 * STDERR_LINES else (
            err[:STDERR_LINES] + [f"... ({len(err) - 2 * STDERR_LINES} lines)"]
            + err[-STDERR_LINES:])
        lines += ["    | " + line[:300] for line in shown]
        frames = collections.Counter(
            f"{Path(match[0]).name}:{match[1]}"
            for match in re.findall(r'^  File "([^"]+)", line \d+, in (\S+)$', self.stderr, re.M))
        repeated = [f"{frame} x{times}" for frame, times in frames.most_common(3) if times > 2]
        if repeated:  # a deep recursion's frames, which the first and last lines leave out
            lines.append(f"    frames repeated most: {', '.join(repeated)}")
        return "\n".join(lines)


@dataclass
class Outcome:
    """A library's run: its figures and its steps (a failure is a step that failed)."""

    library: Library
    files: int | None = None
    records: int | None = None
    steps: list[Step] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # failures that are no crawler command's

    @property
    def cpu_seconds(self) -> float:
        return sum(step.cpu_seconds for step in self.steps)

    @property
    def peak_mib(self) -> float:
        return max((step.peak_kib for step in self.steps), default=0) / 1024

    @property
    def wall_seconds(self) -> float:
        return sum(step.wall_seconds for step in self.steps)

    @property
    def failures(self) -> list[str]:
        return self.problems + [step.describe() for step in self.steps if step.failed]


class Stopped(Exception):
    """The run was interrupted: no further command starts."""


class ListError(Exception):
    """The list of libraries cannot be read: the message names the file and the line."""


def _quote(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./-]+", word) else json.dumps(word)


def read_list(path: Path) -> list[Library]:
    """The table under the `## Libraries` heading of `path`, one Library a row."""
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = next(n for n, line in enumerate(lines) if line.strip() == "## Libraries")
    except StopIteration:
        raise ListError(f"{path}: no '## Libraries' heading") from None
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append((number, [cell.strip() for cell in line.strip().strip("|").split("|")]))
    if len(rows) < 2:
        raise ListError(f"{path}:{start + 1}: no table under '## Libraries'")
    header = [cell.lower() for cell in rows[0][1]]
    missing = [name for name in ("library", "kind", "source", "commit") if name not in header]
    if missing:
        raise ListError(f"{path}:{rows[0][0]}: the table has no column {', '.join(missing)}")
    libraries: list[Library] = []
    for number, cells in rows[2:]:
        if len(cells) != len(header):
            raise ListError(f"{path}:{number}: {len(cells)} cells, the header has {len(header)}")
        row = dict(zip(header, cells))
        if not re.fullmatch(r"[0-9a-f]{40}", row["commit"]):
            raise ListError(f"{path}:{number}: commit {row['commit']!r} is not a 40-hex sha")
        libraries.append(Library(row["library"], row["kind"], row["source"], row["commit"]))
    names = [library.name for library in libraries]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise ListError(f"{path}: library named twice: {', '.join(doubled)}")
    return libraries


def size(library: Library, mirrors: Path | None, base: Path) -> int:
    """How many Python files the library has at its commit: the small ones are run first."""
    try:
        source, _ = resolve(library, mirrors, base)
    except LookupError:
        return 0
    names = subprocess.run(["git", "-C", str(source), "ls-tree", "-r", "--name-only",
                            library.commit], capture_output=True, text=True).stdout
    return sum(name.endswith(".py") for name in names.splitlines())


def _is_git(path: Path) -> bool:
    return path.is_dir() and subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"],
        capture_output=True).returncode == 0


def resolve(library: Library, mirrors: Path | None, base: Path) -> tuple[Path, str]:
    """The local git directory of a library and the `--name` its output goes under."""
    match = re.fullmatch(r"(?:github:|https://github\.com/)([\w.-]+)/([\w.-]+?)(?:\.git)?/?",
                         library.source)
    if match:
        owner, name = match.groups()
        folder = f"{owner}+{name}"
        candidates = [] if mirrors is None else [
            mirrors / folder / "repo", mirrors / folder, mirrors / name]
        for candidate in candidates:
            if _is_git(candidate):
                return candidate, f"github.com/{owner}/{name}"
        raise LookupError(f"{library.name}: no mirror of {library.source} in {mirrors} "
                          f"(looked for {folder}/repo, {folder}, {name})")
    path = Path(library.source)
    path = path if path.is_absolute() else base / path
    if _is_git(path):
        return path, library.name
    raise LookupError(f"{library.name}: {library.source} is no git repository")


class Runner:
    """Runs measured commands, each in its own process group that a timeout or Ctrl-C ends."""

    def __init__(self, crawler: list[str], timeout: float) -> None:
        self.crawler = crawler
        self.timeout = timeout
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self._stopping = False

    def stop_all(self) -> None:
        """Kill every command under way; a library's next command is then not started."""
        with self._lock:
            self._stopping = True
            for group in self._groups:
                try:
                    os.killpg(group, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def run(self, name: str, args: list[str], logs: Path, expected: int = 0) -> Step:
        argv = [*self.crawler, *args]
        step = Step(name, argv, expected)
        out, err, result = (logs / f"{name}.{what}" for what in ("out", "err", "exit"))
        result.unlink(missing_ok=True)
        started = time.monotonic()
        with self._lock, open(out, "wb") as stdout, open(err, "wb") as stderr:
            if self._stopping:
                raise Stopped(name)
            process = subprocess.Popen(
                [sys.executable, "-c", _MEASURED, str(result), str(self.timeout), *argv],
                stdin=subprocess.DEVNULL,
                stdout=stdout, stderr=stderr, start_new_session=True)
            self._groups.add(process.pid)
        timer = threading.Timer(self.timeout + 60, self._kill, (process.pid,))  # a last resort
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
            with self._lock:
                self._groups.discard(process.pid)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        step.wall_seconds = time.monotonic() - started
        step.cpu_seconds = usage.ru_utime + usage.ru_stime
        step.peak_kib = usage.ru_maxrss
        code = result.read_text().strip() if result.exists() else ""
        if not code:
            step.note = "killed with its measuring parent (the last-resort timer, or from outside)"
        elif code == "timeout":
            step.note = f"killed at the timeout ({self.timeout:g} s)"
        elif code:
            step.exit = int(code) if int(code) >= 0 else None
            step.signal = -int(code) if int(code) < 0 else None
            if step.signal is not None:
                step.exit = 128 + step.signal
        step.stdout = out.read_text(encoding="utf-8", errors="replace")
        step.stderr = err.read_text(encoding="utf-8", errors="replace")
        return step

    def _kill(self, group: int) -> None:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


def pasted_text(message: dict) -> str | None:
    """The message as it would print, each placeholder filled with a word, if the record's own
    regex takes it with that word in each of its groups (else None: a template whose
    placeholders this cannot fill)."""
    text = message["template"]
    for placeholder in message.get("placeholders") or []:
        text = text.replace("{" + placeholder + "}", _FILL)
    regex = message.get("regex")
    fit = re.fullmatch(regex, text) if regex is not None else None
    return text if fit is not None and all(group == _FILL for group in fit.groups()) else None


def pick_templates(records: list[dict], count: int = LOOKUPS) -> list[tuple[dict, str]]:
    """The records whose own message is looked up, with the text pasted: the same ones from
    the same records (the most literal words, then the smaller id)."""
    templates: dict[str, int] = {}
    for record in records:
        template = record["extracted"]["message"]["template"]
        templates[template] = templates.get(template, 0) + 1
    eligible = []
    for record in records:
        extracted = record["extracted"]
        message = extracted["message"]
        template = message["template"]
        if (record["status"] != "active" or message["kind"] == "dynamic"
                or message.get("display") != "str" or extracted.get("factory")
                or templates[template] > 1
                or not all(char.isprintable() or char == "\n" for char in template)):
            continue
        literal = template
        for placeholder in message.get("placeholders") or []:
            literal = literal.replace("{" + placeholder + "}", " ")
        words = len(re.findall(r"\w+", literal))
        text = pasted_text(message) if words else None
        if text is not None:
            eligible.append((-words, record["id"], record, text))
    return [(record, text) for *_, record, text in sorted(eligible, key=lambda item: item[:2])][
        :count]


def _looked_up(step: Step, record_id: str) -> None:
    """A lookup must rank the record whose template was pasted first: else say what it did."""
    if step.exit not in (0, 1) or step.traceback:
        return
    try:
        answer = json.loads(step.stdout)
    except ValueError:
        step.note = "its --json output is not JSON"
        return
    firsts = [match["id"] for match in answer.get("matches", []) if match.get("rank") == 1]
    if record_id not in firsts:
        step.note = (f"record {record_id} is not ranked first (verdict {answer.get('verdict')!r},"
                     f" first: {', '.join(firsts) or 'none'})")


def run_library(library: Library, runner: Runner, mirrors: Path | None, base: Path,
                work: Path, jobs: int) -> Outcome:
    """Every step of one library, in a fresh folder under `work`."""
    outcome = Outcome(library)
    try:
        source, name = resolve(library, mirrors, base)
    except LookupError as error:
        outcome.problems.append(str(error))
        return outcome
    folder = work / library.name
    shutil.rmtree(folder, ignore_errors=True)
    logs = folder / "logs"
    logs.mkdir(parents=True)
    output, cache = folder / "output", folder / "cache"
    common = ["--commit", library.commit, "-o", str(output), "--cache-dir", str(cache),
              "--name", name, "-j", str(jobs)]
    extract = runner.run("extract", ["extract", str(source), *common, "--json"], logs)
    outcome.steps.append(extract)
    if extract.crashed or extract.traceback:
        return outcome
    try:
        summary = json.loads(extract.stdout)
        outcome.files, outcome.records = summary["files"], summary["records"]
        repo_folder = Path(summary["folder"])
    except (ValueError, KeyError, TypeError):
        extract.note = "its --json summary cannot be read"
        return outcome
    repo_folder = repo_folder if repo_folder.is_absolute() else Path.cwd() / repo_folder
    outcome.steps.append(runner.run("validate", ["validate", str(repo_folder), "-q"], logs))
    outcome.steps.append(runner.run(
        "update-check", ["update", str(source), *common, "--check", "-q"], logs))
    jsonl, database = folder / "records.jsonl", folder / "errors.sqlite"
    exported = runner.run("export-jsonl", ["export", str(output), "-o", str(jsonl), "-q"], logs)
    outcome.steps.append(exported)
    outcome.steps.append(runner.run(
        "export-sqlite", ["export", str(output), "-o", str(database), "-q"], logs))
    if exported.crashed or exported.traceback or not jsonl.exists():
        return outcome  # a record left out of the export (exit 1) still leaves the others
    with open(jsonl, encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    if len(records) != outcome.records:
        exported.note = f"{len(records)} records exported, the extract said {outcome.records}"
    if database.exists():
        with sqlite3.connect(database) as db:
            tables = {row[0] for row in db.execute("select name from sqlite_master")}
        if not tables:
            outcome.problems.append(f"export-sqlite: {database.name} has no table")
    chosen = pick_templates(records)
    if len(chosen) < LOOKUPS:
        outcome.problems.append(
            f"lookup: only {len(chosen)} templates fit for a lookup (active, shown with str, "
            "unique, printable, with a word, placeholders the record's regex takes)")
    for number, (record, text) in enumerate(chosen, 1):
        paste = f"{record['extracted']['exception']}: {text}"
        step = runner.run(f"lookup-{number}", ["lookup", "--json", "-n", "5", "--", paste,
                                               str(repo_folder)], logs)
        _looked_up(step, record["id"])
        outcome.steps.append(step)
        if number == 1 and database.exists():
            step = runner.run("lookup-db", ["lookup", "--json", "-n", "5", "--db", str(database),
                                            "--", paste], logs)
            _looked_up(step, record["id"])
            outcome.steps.append(step)
    return outcome


def table(outcomes: list[Outcome]) -> str:
    """One markdown row per library and a total."""
    rows = ["| library | kind | files | records | CPU s | peak MiB | wall s | failures |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def number(value: int | None) -> str:
        return "-" if value is None else str(value)

    for outcome in outcomes:
        rows.append(f"| {outcome.library.name} | {outcome.library.kind} | "
                    f"{number(outcome.files)} | {number(outcome.records)} | "
                    f"{outcome.cpu_seconds:.1f} | {outcome.peak_mib:.0f} | "
                    f"{outcome.wall_seconds:.1f} | {len(outcome.failures)} |")
    rows.append(f"| total ({len(outcomes)}) | | {sum(o.files or 0 for o in outcomes)} | "
                f"{sum(o.records or 0 for o in outcomes)} | "
                f"{sum(o.cpu_seconds for o in outcomes):.1f} | "
                f"{max((o.peak_mib for o in outcomes), default=0):.0f} | "
                f"{sum(o.wall_seconds for o in outcomes):.1f} | "
                f"{sum(len(o.failures) for o in outcomes)} |")
    return "\n".join(rows)


def counts(outcomes: list[Outcome]) -> dict[str, int]:
    steps = [step for outcome in outcomes for step in outcome.steps]
    return {
        "libraries": len(outcomes),
        "crashes": sum(step.crashed for step in steps),
        "tracebacks": sum(step.traceback for step in steps),
        "not_validated": sum(not any(step.name == "validate" and not step.failed
                                     for step in outcome.steps) for outcome in outcomes),
        "failures": sum(len(outcome.failures) for outcome in outcomes),
    }


def _crawler_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "crawler"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def report(outcomes: list[Outcome], commit: str, started: str) -> dict:
    return {
        "started": started,
        "crawler_commit": commit,
        "counts": counts(outcomes),
        "libraries": [{
            **asdict(outcome.library), "files": outcome.files, "records": outcome.records,
            "cpu_seconds": round(outcome.cpu_seconds, 2), "peak_mib": round(outcome.peak_mib, 1),
            "wall_seconds": round(outcome.wall_seconds, 2), "failures": outcome.failures,
            "steps": [{"name": step.name, "argv": step.argv, "exit": step.exit,
                       "signal": step.signal, "expected": step.expected,
                       "cpu_seconds": round(step.cpu_seconds, 2),
                       "peak_mib": round(step.peak_kib / 1024, 1),
                       "wall_seconds": round(step.wall_seconds, 2), "crashed": step.crashed,
                       "traceback": step.traceback, "failed": step.failed, "note": step.note}
                      for step in outcome.steps],
        } for outcome in outcomes],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: python scripts/corpus.py --mirrors ~/mirrors --work /tmp/corpus "
               "--only networkx,flask --json corpus.json")
    parser.add_argument("--list", type=Path, default=ROOT / "docs" / "corpus.md",
                        help="the markdown file whose '## Libraries' table is the corpus "
                             "[default: docs/corpus.md]")
    parser.add_argument("--mirrors", type=Path,
                        help="the folder of local git mirrors (OWNER+NAME), for sources that "
                             "are no path")
    parser.add_argument("--work", type=Path,
                        help="where each library's output, cache and logs go, kept after the run "
                             "[default: a temporary folder, removed]")
    parser.add_argument("--only", help="NAME,NAME: run these libraries of the list only")
    parser.add_argument("--jobs", type=int, default=1, help="libraries run at once [default: 1]")
    parser.add_argument("--crawler-jobs", type=int, default=1,
                        help="the crawler's own -j for extract and update [default: 1]")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds a crawler command may take before it is killed "
                             "[default: 3600]")
    parser.add_argument("--crawler", default="crawler",
                        help="the crawler command to run [default: crawler]")
    parser.add_argument("--json", type=Path, dest="json_file",
                        help="also write the whole report (every step's figures) to this file")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.crawler_jobs < 1:
        parser.error("--jobs and --crawler-jobs take 1 or more")
    try:
        libraries = read_list(args.list)
    except (OSError, ListError) as error:
        print(f"corpus: {error}", file=sys.stderr)
        return 2
    if args.only:
        wanted = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {library.name for library in libraries})
        if unknown:
            print(f"corpus: not in {args.list}: {', '.join(unknown)}", file=sys.stderr)
            return 2
        libraries = [library for library in libraries if library.name in wanted]
    crawler = shlex.split(args.crawler)
    if shutil.which(crawler[0]) is None:
        print(f"corpus: no command {crawler[0]!r} on PATH (install the crawler, or --crawler)",
              file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    commit = _crawler_commit()
    temporary = args.work is None
    work = Path(tempfile.mkdtemp(prefix="corpus-")) if temporary else args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    mirrors = args.mirrors.resolve() if args.mirrors else None
    runner = Runner(crawler, args.timeout)
    outcomes: dict[str, Outcome] = {}
    base = args.list.resolve().parent
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        futures = [pool.submit(run_library, library, runner, mirrors, base, work,
                               args.crawler_jobs)
                   for library in sorted(libraries, key=lambda lib: size(lib, mirrors, base))]
        for future in concurrent.futures.as_completed(futures):
            outcome = future.result()
            outcomes[outcome.library.name] = outcome
            print(f"{outcome.library.name}: {outcome.records} records, "
                  f"{outcome.cpu_seconds:.1f} s CPU, {len(outcome.failures)} failures",
                  file=sys.stderr, flush=True)
            if args.json_file:  # so far, in the list's order: a run cut short still tells
                done = [outcomes[lib.name] for lib in libraries if lib.name in outcomes]
                args.json_file.write_text(
                    json.dumps(report(done, commit, started), indent=2) + "\n",
                    encoding="utf-8")
    except KeyboardInterrupt:
        runner.stop_all()  # before the pool is shut down, which waits for its threads
        print("corpus: interrupted", file=sys.stderr)
        return 130
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    ordered = [outcomes[library.name] for library in libraries]
    total = counts(ordered)
    print(f"crawler at {commit}, started {started}\n")
    print(table(ordered))
    print(f"\n{total['libraries']} libraries: {total['crashes']} crashes, "
          f"{total['tracebacks']} Tracebacks, {total['not_validated']} not validated, "
          f"{total['failures']} failures")
    for outcome in ordered:
        for failure in outcome.failures:
            print(f"\n{outcome.library.name}: {failure}")
    if args.json_file:
        args.json_file.write_text(json.dumps(report(ordered, commit, started), indent=2) + "\n",
                                  encoding="utf-8")
    return 1 if total["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
