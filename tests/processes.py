"""Start `tests.child` as a real process, with this checkout importable and no stray GIT_*."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from crawler.pipeline import Collected

ROOT = Path(__file__).resolve().parent.parent


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CRAWLER_TEST_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def start(*args: str, stdin: int | None = subprocess.PIPE, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.child", *args], cwd=ROOT,
                            env=child_env(**extra), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def pickled(collected: Collected, path: Path) -> Path:
    with path.open("wb") as handle:
        pickle.dump(collected, handle)
    return path
