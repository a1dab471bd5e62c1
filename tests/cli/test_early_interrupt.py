"""Ctrl-C as a command starts: one line and exit 130, every time (issue 44).

About one SIGINT in ten sent to `update` early in its run ended it with a Traceback from the
middle of an import and death by the signal (-2): the command line caught Ctrl-C only inside a
command, not while it was imported (crawler.cli, click, every option), nor while click read the
arguments (click's own "Aborted!", exit 1), nor while the installed command loaded its first
module. Here the installed `crawler` runs `update` and `check` again and again, each sent SIGINT
at a delay spread over the start of a run (two runs in three) or the whole of it, alternately to
its pid and to its process group as a terminal's Ctrl-C. Every run must end with the one line and 130 (or end
before the signal came), and the annotation planted before stays byte for byte.

Python's own start is outside the crawler: a SIGINT before Python has its handler kills it
(-2, nothing printed); one while Python imports its `site` module (the paths of installed
packages) ends in Python's "Fatal Python error: init_import_site" (exit 1); one in the
installed script's own imports (`re`, then Python finding and loading the package) is a
Traceback with no frame of the crawler's: all before any line of the crawler runs. Those are
counted apart, never as passing runs.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import crawler
from crawler.store import render
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ctrl_c_default
from tests.helpers.update_output import BASE, OTHER, Output

TRIALS = 24
CRAWLER = shutil.which("crawler", path=str(Path(sys.executable).parent)) or "crawler"
PACKAGE = str(Path(crawler.__file__).parent) + os.sep  # a frame here: the crawler's code ran


def run(args: list[str], delay: float | None, group: bool) -> tuple[int, str, float]:
    """The installed command, sent SIGINT after `delay` seconds (None: not at all): its exit
    code, its stderr and how long it ran."""
    started = time.monotonic()
    child = subprocess.Popen([CRAWLER, *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True, preexec_fn=ctrl_c_default)
    try:
        if delay is not None:
            time.sleep(delay)
            if child.poll() is None:
                (os.killpg if group else os.kill)(child.pid, signal.SIGINT)
        _, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, stderr.decode(errors="replace"), time.monotonic() - started


def before_the_crawler(code: int, stderr: str) -> bool:
    """Ended in Python's own start, before a line of the crawler ran: killed before Python has
    its handler, stopped in one of its start's steps (`site`, the standard streams), or a
    Traceback in which no frame is the crawler's (the installed script's own imports, or Python
    finding and loading the package for them)."""
    if code == -signal.SIGINT and stderr == "":
        return True
    # Python's own start, one of its steps (`init_import_site`, `init_sys_streams`, ...)
    if code == 1 and stderr.startswith("Fatal Python error: init_"):
        return True
    frames = re.findall(r'File "([^"]+)"', stderr)
    return (code == -signal.SIGINT and frames[:1] == [CRAWLER]
            and not any(frame.startswith(PACKAGE) for frame in frames)
            and stderr.rstrip().endswith("KeyboardInterrupt"))


@pytest.mark.slow  # two dozen runs of the installed command
def test_ctrl_c_early_in_a_command_is_one_line_and_130(make_repo, tmp_path: Path) -> None:
    repo: GitRepo = make_repo("lib")
    repo.write("lib/m.py", BASE)
    repo.write("lib/other.py", OTHER)
    repo.commit("first")
    start = Output(repo, tmp_path / "start", tmp_path / "cache")
    start.extract()
    planted = next(iter(start.records()))
    block = start.annotate(planted, "planted before the runs")
    relative = start.path(planted).relative_to(start.root)
    repo.write("lib/m.py", "import os\n\n\n" + BASE.replace("no path given", "no path was given"))
    repo.commit("second")

    def command(kind: str, root: Path) -> list[str]:
        if kind == "check":
            return ["check", str(root)]
        return ["update", str(repo.path), "-o", str(root), "--cache-dir", str(start.cache),
                "-j", "2"]

    spans, plain = {}, {}
    for kind in ("update", "check"):
        shutil.copytree(start.root, tmp_path / "plain", symlinks=True)
        code, stderr, spans[kind] = run(command(kind, tmp_path / "plain"), None, False)
        plain[kind] = (code, stderr)
        assert code == 0 and stderr == "", stderr
        shutil.rmtree(tmp_path / "plain")
    # The start: the interpreter, the command line's imports, click reading the arguments.
    started = min(run(["update", "--help"], None, False)[2] for _ in range(3))

    said, ended_first, python_start, problems = 0, 0, 0, []
    for number in range(TRIALS):
        kind = "update" if number % 3 else "check"
        root = tmp_path / f"run{number}"
        shutil.copytree(start.root, root, symlinks=True)
        # two runs in three in the start (up to half as long again), the others over the run
        early = number % 3 != 2
        span = 1.5 * started if early else spans[kind]
        delay = span * (number + 0.5) / TRIALS
        code, stderr, _ = run(command(kind, root), delay, group=number % 2 == 1)
        if code == 130 and stderr == "Error: interrupted\n":
            said += 1
        elif (code, stderr) == plain[kind]:
            ended_first += 1  # done before the signal came
        elif before_the_crawler(code, stderr):
            python_start += 1
        else:
            problems.append(f"{kind} #{number} at {delay:.3f} s: exit {code}, {stderr[-600:]!r}")
        text = (root / relative).read_text(encoding="utf-8")
        if render.annotation_block(text) != block:
            problems.append(f"{kind} #{number}: the planted annotation changed")
        shutil.rmtree(root)
    assert problems == [], problems
    assert said >= TRIALS // 3, (said, ended_first, python_start)  # the signal did land in runs


def test_the_hook_is_set_before_any_module_of_the_crawler_loads() -> None:
    """The installed command's hook comes before every import of the crawler's modules in
    `crawler.cli.entry` (a Ctrl-C once landed in the import that used to come first), and its
    exit code is the one the command line gives an interrupt."""
    from crawler.cli import entry, terminal

    tree = ast.parse(Path(entry.__file__).read_text(encoding="utf-8"))
    hook = next(node.lineno for node in tree.body if isinstance(node, ast.If)
                and "excepthook" in ast.unparse(node))
    imports = [node.lineno for node in tree.body if isinstance(node, ast.ImportFrom)
               and (node.module or "").startswith("crawler")]
    assert imports and hook < min(imports)
    assert entry.EXIT_INTERRUPTED == terminal.INTERRUPTED


LATE_STOP = """
import sys
from crawler.cli.entry import stop_as_python_ends
from crawler.errors import Terminated, keep_interrupts

keep_interrupts(stop_as_python_ends)


class Late:  # freed as Python ends, after the work: where a signal's handler raises then
    def __init__(self, kind):
        self.kind = kind

    def __del__(self):
        raise self.kind()


late = Late(KeyboardInterrupt if sys.argv[1] == "interrupt" else Terminated)
print("work done")
"""


@pytest.mark.parametrize(("kind", "code", "line"), [("interrupt", 130, "Error: interrupted"),
                                                    ("terminate", 143, "Error: terminated")])
def test_a_stop_that_lands_as_python_ends_is_one_line_and_its_code(
        tmp_path: Path, kind: str, code: int, line: str) -> None:
    """A Ctrl-C or SIGTERM raised in a finalizer as the interpreter ends (the slow suite saw a
    SIGTERM so: a Traceback and exit 0) is the stop's one line and code, at once: sending it
    again from a new thread, as during a run, hung the process, since no thread runs then."""
    script = tmp_path / "late_stop.py"
    script.write_text(LATE_STOP, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), kind], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (code, "work done\n", f"{line}\n")


AT_EXIT = """
import sys, time, weakref

class Pool:  # what a run leaves for Python to close as it ends: multiprocessing's own finalizers
    pass

pool = Pool()
weakref.finalize(pool, lambda: (print("closing", flush=True), time.sleep(5)))
sys.argv = ["crawler", "--version"]
from crawler.cli.entry import main
main()
"""


@pytest.mark.parametrize(("signum", "code", "line"), [(signal.SIGINT, 130, "Error: interrupted"),
                                                      (signal.SIGTERM, 143, "Error: terminated")])
def test_a_signal_after_the_work_ends_the_process_where_it_lands(
        tmp_path: Path, signum: int, code: int, line: str) -> None:
    """The slow suite saw a Ctrl-C sent as an `update` ended land in multiprocessing's exit-time
    finalizer (`Exception ignored in: <Finalize object, dead>`) and the run end 0: from the end
    of `main` on, a signal is the stop's one line and code where it lands."""
    script = tmp_path / "at_exit.py"
    script.write_text(AT_EXIT, encoding="utf-8")
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith("crawler, version")
        assert child.stdout.readline() == "closing\n"  # main has ended; Python closes the pool
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, err) == (code, f"{line}\n")
