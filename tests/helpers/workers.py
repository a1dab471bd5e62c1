"""Files to hand the worker pool (good ones, one whose parse kills its worker) and a pool run."""

from __future__ import annotations

from crawler.parse.outcomes import FileOutcome, Job
from crawler.parse.workers import Limits, WorkerPool

# LibCST 1.9 kills its process with SIGSEGV on these (measured; the `+` chain takes about 30 s
# before it dies, so a test with a short time limit sees it time out instead).
PARENS = ("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n").encode()
FAST = Limits(seconds=20)


def good(name: str) -> Job:
    return (f"{name}.py", name, f"def {name}():\n    raise ValueError('{name} failed')\n".encode(),
            None)


def run(jobs: list[Job], workers: int = 2, limits: Limits = FAST) -> tuple[list[FileOutcome], int]:
    """Outcomes in the order of `jobs`, and how many worker processes were started."""
    outcomes: list[FileOutcome | None] = [None] * len(jobs)
    with WorkerPool(workers, limits) as pool:
        for index, outcome in pool.run(jobs):
            assert outcomes[index] is None, f"{index} answered twice"
            outcomes[index] = outcome
        started = pool.started
    assert all(o is not None for o in outcomes)
    return outcomes, started  # type: ignore[return-value]


def messages(outcome: FileOutcome) -> list[str]:
    return [site.message.template for site in outcome.sites]


TEST_FILE = b'''\
import pytest

def test_negative():
    with pytest.raises(ValueError, match="x must be positive"):
        check(-1)
'''
