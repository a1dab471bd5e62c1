"""A Ctrl-C that lands where Python cannot raise it stops the run all the same (issue 44).

Two places turn a KeyboardInterrupt into something else: a finalizer (`__del__`), whose
exception Python prints as "Exception ignored in" and drops, so that `update` went on and ended
0 after a Traceback; and, in Python 3.11, a descriptor's `__set_name__` as a class is made
(LibCST's nodes, while `check` imported LibCST), whose exception comes out as a RuntimeError,
so that the command ended 1 with a Traceback. Each is made here for real, in a process of its own.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers.processes import ROOT, child_env, ctrl_c_default

IN_A_FINALIZER = """
import gc, sys, time
from crawler.errors import keep_interrupts

class Reader:
    def __del__(self):
        raise KeyboardInterrupt

keep_interrupts()
try:
    Reader()  # freed at once: its finalizer raises
    for _ in range(500):
        time.sleep(0.002)
except KeyboardInterrupt:
    print("stopped")
    sys.exit(0)
print("went on")
"""

IN_SET_NAME = """
from crawler.errors import stopped_by

class Field:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt

try:
    class Node:
        field = Field()
except BaseException as error:
    print(type(error).__name__, stopped_by(error).__name__)
try:
    raise ValueError("the run's own")
except ValueError as error:
    print(stopped_by(error))
"""


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          env=child_env(), capture_output=True, text=True, timeout=60,
                          preexec_fn=ctrl_c_default)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_ctrl_c_raised_in_a_finalizer_stops_the_run() -> None:
    assert run(IN_A_FINALIZER) == "stopped\n"


def test_a_ctrl_c_wrapped_as_a_class_is_made_is_known() -> None:
    wrapped = "RuntimeError" if sys.version_info < (3, 12) else "KeyboardInterrupt"
    assert run(IN_SET_NAME) == f"{wrapped} KeyboardInterrupt\nNone\n"
