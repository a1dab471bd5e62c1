"""A worker the fork server forks while the crawler ends prints no Traceback; others still do.

The fork server's child reports a fault of its start (`spawn._main` reading its task from a pipe
the crawler closed: `EOFError: Ran out of input`) through `sys.excepthook`, as CPython's
`multiprocessing.forkserver.main` does. The test asks a real fork server's child for that hook.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.processes import child_env

PROGRAM = textwrap.dedent("""
    import sys
    from crawler.parse import forkserver as _forkserver

    def report(kind):
        error = {"eof": EOFError, "value": ValueError}[kind]("Ran out of input")
        sys.excepthook(type(error), error, None)
        sys.stderr.flush()

    if __name__ == "__main__":
        process = _forkserver.context().Process(target=report, args=(sys.argv[1],))
        process.start()
        process.join(120)
        print(process.exitcode)
""")


def run(kind: str, folder: Path) -> subprocess.CompletedProcess[str]:
    program = folder / "program.py"  # a file: the fork server's child imports its main module
    program.write_text(PROGRAM, encoding="utf-8")
    return subprocess.run([sys.executable, str(program), kind], env=child_env(), cwd=folder,
                          capture_output=True, text=True, timeout=180, check=True)


def test_an_eof_as_a_worker_starts_prints_nothing(tmp_path: Path) -> None:
    done = run("eof", tmp_path)
    assert done.stdout.strip() == "0" and done.stderr == "", done.stderr


def test_any_other_fault_as_a_worker_starts_is_still_printed(tmp_path: Path) -> None:
    done = run("value", tmp_path)
    assert done.stdout.strip() == "0" and done.stderr == "ValueError: Ran out of input\n", done.stderr
