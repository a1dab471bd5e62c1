"""Hostile source through real worker processes: crashes, time and memory limits, encodings.

Every test here runs LibCST in real worker processes, as a run does; nothing is mocked.
"""

from __future__ import annotations

import ast
import os
import signal
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.parse.file_tasks import visit_file
from crawler.parse.outcomes import PARSE_FAILED, PARSER_CRASHED, TIMED_OUT, Job
from crawler.parse.workers import Limits, WorkerPool
from crawler.records import SourceFile
from tests.helpers.workers import FAST, PARENS, TEST_FILE, good, messages, run

pytestmark = pytest.mark.runs_long

BRACKETS = ("x = " + "[" * 2000 + "]" * 2000 + "\n").encode()
PLUS_CHAIN = ("x = " + " + ".join(["1"] * 10_000) + "\n").encode()


@pytest.mark.parametrize("workers", [1, 2])
def test_segfaults_are_named_exactly_and_the_run_goes_on(workers: int) -> None:
    jobs = [good("a"), ("parens.py", "p", PARENS, None), good("b"), good("c"),
            ("brackets.py", "k", BRACKETS, None), good("d")]
    outcomes, started = run(jobs, workers)
    by_path = {o.path: o for o in outcomes}
    for name in "abcd":
        assert by_path[f"{name}.py"].failure is None
        assert messages(by_path[f"{name}.py"]) == [f"{name} failed"]
    for path in ("parens.py", "brackets.py"):
        failure = by_path[path].failure
        assert failure is not None and failure.reason == PARSER_CRASHED, failure
        assert failure.detail is not None and "SIGSEGV" in failure.detail
    # Each crash kills one worker, and its confirmation run alone kills one more.
    assert started >= 4


def test_a_long_plus_chain_crashes_or_times_out_and_the_run_goes_on() -> None:
    outcomes, _ = run([("plus.py", "q", PLUS_CHAIN, None), good("a")], 1, Limits(seconds=3))
    failure = outcomes[0].failure
    assert failure is not None and failure.reason in (PARSER_CRASHED, TIMED_OUT)
    assert messages(outcomes[1]) == ["a failed"]


def test_a_file_over_the_time_limit_is_timed_out() -> None:
    slow = ("x = [" + "1, " * 400_000 + "]\n").encode()
    outcomes, _ = run([good("a"), ("slow.py", "s", slow, None), good("b")], 1, Limits(seconds=0.5))
    failure = outcomes[1].failure
    assert failure is not None and failure.reason == TIMED_OUT
    assert failure.detail == "parse took over 0.5 s of CPU; the worker was stopped"
    assert messages(outcomes[0]) == ["a failed"] and messages(outcomes[2]) == ["b failed"]


def test_the_time_limit_counts_the_workers_cpu_not_the_wall_clock() -> None:
    """A worker kept off the CPU (here: stopped with SIGSTOP for twice the limit) is not cut:
    on a busy machine a file is cut exactly where it is cut on a quiet one."""
    files = [good("a"), good("b")]
    with WorkerPool(1, Limits(seconds=1.0)) as pool:
        assert [o.failure for _, o in pool.run([good("warm")])] == [None]  # one idle worker
        [worker] = pool._workers
        pid = worker.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        resume = threading.Timer(2.5, os.kill, (pid, signal.SIGCONT))
        resume.start()
        try:
            outcomes = [outcome for _, outcome in sorted(pool.run(files), key=lambda p: p[0])]
        finally:
            resume.cancel()
            os.kill(pid, signal.SIGCONT)
    assert all(outcome.failure is None for outcome in outcomes)
    assert [messages(outcome) for outcome in outcomes] == [["a failed"], ["b failed"]]


def test_a_50_megabyte_module_is_stopped_by_a_limit() -> None:
    line = b"value_%07d = compute(argument_one, argument_two, 'some text')  # pad\n"
    huge = b"".join(line % i for i in range(50_000_000 // len(line)))
    assert len(huge) >= 49_000_000
    outcomes, _ = run([("huge.py", "h", huge, None), good("a")], 1,
                      Limits(seconds=4, memory_bytes=1 << 30))
    failure = outcomes[0].failure
    assert failure is not None and failure.reason in (TIMED_OUT, PARSE_FAILED, PARSER_CRASHED)
    assert messages(outcomes[1]) == ["a failed"]


def test_a_file_over_the_memory_limit_fails_in_its_worker_only() -> None:
    big = b"".join(b"x%d = [%s]\n" % (i, b"1, " * 2000) for i in range(400))  # ~2.4 MB of tokens
    outcomes, _ = run([("big.py", "g", big, None), good("a")], 1,
                      Limits(seconds=30, memory_bytes=300 << 20))
    failure = outcomes[0].failure
    assert failure is not None and failure.reason in (PARSE_FAILED, PARSER_CRASHED), failure
    assert messages(outcomes[1]) == ["a failed"]


def test_workers_are_recycled() -> None:
    jobs = [good(f"f{i}") for i in range(12)]
    outcomes, started = run(jobs, 1, Limits(files_per_worker=3, batch_files=2))
    assert [messages(o) for o in outcomes] == [[f"f{i} failed"] for i in range(12)]
    assert started == 3  # four files each (two batches of two), and none started for nothing


def test_blobs_are_pulled_only_as_workers_free_up() -> None:
    limits = Limits(batch_files=4)
    pulled = 0

    def source() -> Iterator[Job]:
        nonlocal pulled
        for i in range(200):
            pulled += 1
            yield good(f"f{i}")

    most_ahead = 0
    answered = 0
    with WorkerPool(2, limits) as pool:
        for _ in pool.run(source()):
            answered += 1
            most_ahead = max(most_ahead, pulled - answered)
    assert answered == 200
    assert most_ahead <= 2 * limits.batch_files


# ---------------------------------------------------------------- bytes that are not plain UTF-8

HOSTILE: dict[str, tuple[bytes, str | None, list[str]]] = {
    # name: (bytes, failure reason or None, the messages expected)
    "invalid_utf8": (b"x = '\xff\xfe'\nraise ValueError('after bad bytes')\n", PARSE_FAILED, []),
    "latin1_pep263": (b"# -*- coding: latin-1 -*-\nraise ValueError('caf\xe9')\n", None,
                      ["caf\u00e9"]),
    "cp1252_pep263": (b"# vim: set fileencoding=cp1252 :\nraise ValueError('\x93quoted\x94')\n",
                      None, ["\u201cquoted\u201d"]),
    "utf8_bom": (b"\xef\xbb\xbfraise ValueError('bom')\n", None, ["bom"]),
    "bom_only": (b"\xef\xbb\xbf", None, []),
    "bom_and_latin1_cookie": (b"\xef\xbb\xbf# coding: latin-1\nraise ValueError('x')\n",
                              PARSE_FAILED, []),
    "unknown_encoding": (b"# coding: no-such-codec\nraise ValueError('x')\n", PARSE_FAILED, []),
    "null_byte": (b"x = 1\x00\nraise ValueError('after a null')\n", PARSE_FAILED, []),
    "null_in_string": (b"raise ValueError('a\\x00b')\n", None, ["a\x00b"]),
    "python2_print": (b"print 'hello'\nraise ValueError('py2')\n", PARSE_FAILED, []),
    "python2_raise": (b"def f():\n    raise ValueError, 'old style'\n", PARSE_FAILED, []),
    "tabs": (b"def f():\n\tif x:\n\t\traise ValueError('tabbed')\n", None, ["tabbed"]),
    "mixed_tabs_spaces": (b"def f():\n\tif x:\n        raise ValueError('mixed')\n", PARSE_FAILED, []),
    "empty": (b"", None, []),
    "only_newlines": (b"\n\n\r\n", None, []),
    "no_final_newline": (b"raise ValueError('no newline')", None, ["no newline"]),
    "form_feed": (b"\x0craise ValueError('ff')\n", None, ["ff"]),
    "crlf": (b"if x:\r\n    raise ValueError('crlf')\r\n", None, ["crlf"]),
    # UTF-8 cannot hold a lone surrogate: kept as the escape a traceback prints
    "lone_surrogate_escape": (b"raise ValueError('\\ud800')\n", None, ["\\ud800"]),
}


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(2, FAST) as shared:
        yield shared


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_bytes(name: str, pool: WorkerPool) -> None:
    data, reason, expected = HOSTILE[name]
    ((_, outcome),) = list(pool.run([(f"{name}.py", "b", data)]))
    if reason is None:
        assert outcome.failure is None, outcome.failure
    elif outcome.failure is not None:
        assert outcome.failure.reason == reason
        assert outcome.failure.detail
    else:  # LibCST reads more than Python does; then `ast` must also read it
        pytest.fail(f"{name} parsed: {messages(outcome)}")
    if expected is not None:
        assert messages(outcome) == [m.replace("{", "{{").replace("}", "}}") for m in expected]


def test_mixed_tabs_agree_with_python(pool: WorkerPool) -> None:
    """Inconsistent tabs: whatever LibCST says, a record is only made where Python reads the file."""
    data = HOSTILE["mixed_tabs_spaces"][0]
    ((_, outcome),) = list(pool.run([("m.py", "b", data, None)]))
    try:
        ast.parse(data)
    except SyntaxError:
        return
    assert messages(outcome) == ["mixed"]


def test_workers_give_the_same_outcomes_as_an_in_process_parse(pool: WorkerPool) -> None:
    """Workers skip LibCST's node validation and the cyclic GC; the records must not change."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    jobs = [(p.name, "0" * 40, p.read_bytes()) for p in sorted(stdlib.glob("*.py"))[:40]]
    got = dict(pool.run(jobs))
    assert sum(len(o.sites) for o in got.values()) > 200
    for index, job in enumerate(jobs):
        assert got[index] == visit_file(*job), job[0]


# ---------------------------------------------------------------- through the pipeline


class BlobStore:
    """Stands in for a PinnedRepo: `read_blobs` streams bytes by sha, in the order asked."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs
        self.read = 0

    def read_blobs(self, shas: list[str]) -> Iterator[tuple[str, bytes]]:
        for sha in shas:
            self.read += 1
            yield sha, self.blobs[sha]


@pytest.mark.parametrize("jobs", [1, 2])
def test_visit_files_keeps_file_order_with_a_crash_among_them(jobs: int) -> None:
    pytest.importorskip("crawler.git.pin")  # pipeline imports it; it lands on its own branch
    from crawler.pipeline import visit_files

    blobs = {f"{i:040x}": f"raise ValueError('m{i}')\n".encode() for i in range(30)}
    crash = f"{99:040x}"
    blobs[crash] = PARENS
    shas = list(blobs)
    shas.insert(7, shas.pop())  # the crasher among the others
    files = [SourceFile(f"p{n}.py", sha, "100644", len(blobs[sha])) for n, sha in enumerate(shas)]
    store = BlobStore(blobs)
    seen: list[tuple[int, int]] = []
    outcomes = visit_files(store, files,  # type: ignore[arg-type]
                           jobs, lambda done, total: seen.append((done, total)))
    assert [o.path for o in outcomes] == [f.path for f in files]
    assert outcomes[7].failure is not None and outcomes[7].failure.reason == PARSER_CRASHED
    assert [len(o.sites) for o in outcomes].count(1) == 30
    assert seen[-1] == (31, 31) and store.read == 31


def test_closing_the_pool_stops_every_worker() -> None:
    with WorkerPool(3, Limits(batch_files=2)) as pool:
        list(pool.run([good(f"f{i}") for i in range(9)]))
        processes = [w.process for w in pool._workers]
        assert len(processes) == 3
    assert not any(p.is_alive() for p in processes)


@pytest.mark.parametrize("workers", [1, 2])
def test_test_files_crash_and_time_out_alone_in_the_same_pool(workers: int) -> None:
    """A test file that kills the parser, or parses forever, costs only its own evidence."""
    # Each names pytest.raises: a test file that cannot hold an assertion is not parsed at all.
    slow = b"import pytest  # pytest.raises\n" + ("x = [" + "1, " * 400_000 + "]\n").encode()
    files = [("tests/test_a.py", "a", TEST_FILE),
             ("tests/test_crash.py", "c", b"import pytest  # pytest.raises\n" + PARENS),
             ("tests/test_slow.py", "s", slow), ("tests/test_b.py", "b", TEST_FILE)]
    with WorkerPool(workers, Limits(seconds=0.5)) as pool:
        found = dict(pool.read_tests(files))
    assert [len(found[i].assertions) for i in range(4)] == [1, 0, 0, 1]
    assert found[0].assertions[0].pattern == "x must be positive" and found[0].failure is None
    crash, slow_failure = found[1].failure, found[2].failure
    assert crash is not None and crash.reason == PARSER_CRASHED and "SIGSEGV" in str(crash.detail)
    assert slow_failure is not None and slow_failure.reason == TIMED_OUT
