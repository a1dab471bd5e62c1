"""Start `tests.helpers.child` as a real process, with this checkout importable and no stray GIT_*."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from crawler.pipeline import Collected

ROOT = Path(__file__).resolve().parents[2]
# the system's temporary folder, before the suite sends TMPDIR to a folder of its run (conftest):
# the first place tried for a folder another user may enter
SYSTEM_TEMP = tempfile.gettempdir()
# where else the standard library looks for a temporary folder when TMPDIR names none
_COMMON_TEMPS = ("/tmp", "/var/tmp", "/usr/tmp")


def _others_may_enter(folder: Path) -> bool:
    """Every folder from the root down to `folder` lets others through (o+x)."""
    try:
        return all(part.stat().st_mode & stat.S_IXOTH for part in [folder, *folder.parents])
    except OSError:
        return False


@contextmanager
def folder_for_another_user() -> Iterator[Path]:
    """A new folder (0755, the test's own) that another user may enter, with `tmp` in it that
    every user may write (1777, as /tmp is): the TMPDIR of `crawler_as_user`. It is made where
    every folder above it lets others through: the system's temporary folder, or where the
    standard library would look without TMPDIR when TMPDIR names a private folder. Removed after;
    the test is skipped where no such place exists."""
    bases = [Path(SYSTEM_TEMP), *map(Path, _COMMON_TEMPS)]
    base = next((b for b in bases if b.is_dir() and _others_may_enter(b)), None)
    if base is None:
        import pytest

        pytest.skip(f"no folder another user may enter among {[str(b) for b in bases]}")
    folder = Path(tempfile.mkdtemp(prefix="crawler-shared-", dir=base))
    try:
        folder.chmod(0o755)
        (folder / "tmp").mkdir()
        (folder / "tmp").chmod(0o1777)
        yield folder
    finally:
        shutil.rmtree(folder)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CRAWLER_TEST_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def start(*args: str, stdin: int | None = subprocess.PIPE, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.child", *args], cwd=ROOT,
                            env=child_env(**extra), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def pickled(collected: Collected, path: Path) -> Path:
    with path.open("wb") as handle:
        pickle.dump(collected, handle)
    return path


def crawler_as_user(user: int, args: Sequence[str | Path], temp: Path,
                    timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`crawler ARGS` with another user's ids, in a forked child that executes nothing: the
    interpreter may live where that user may not read (a home folder of mode 0700, as here), so
    every module the command needs must be imported before the fork (run it once as root).
    `temp` is the child's TMPDIR, a folder that user may write (`folder_for_another_user`'s
    `tmp`). Stopped by its id if it overruns."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            _run_as(user, [str(arg) for arg in args], temp, out.fileno(), err.fileno())
        deadline = time.monotonic() + timeout
        while not (status := os.waitpid(pid, os.WNOHANG))[0]:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["crawler", *map(str, args)], timeout)
            time.sleep(0.02)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["crawler", *map(str, args)],
                                           os.waitstatus_to_exitcode(status[1]),
                                           out.read().decode(), err.read().decode())


def _run_as(user: int, args: list[str], temp: Path, out: int, err: int) -> NoReturn:
    code = 70
    try:
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's own stdout
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.setgroups([])
        os.setgid(user)
        os.setuid(user)
        os.environ["TMPDIR"] = tempfile.tempdir = str(temp)  # the run's is root's alone
        from crawler.cli.commands import main

        try:
            main(args, prog_name="crawler")
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else int(done.code is not None)
    except BaseException:  # noqa: BLE001 - shown to the test, never raised into pytest's fork
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def ctrl_c_default() -> None:
    """For `preexec_fn`: SIGINT's default disposition, as a terminal's shell gives it. A suite
    run in the background (`nohup pytest &`) hands SIGINT on ignored, and Python started with it
    ignored leaves it so: a test that sends SIGINT would see it dropped."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
