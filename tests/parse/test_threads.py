"""Python source parsed in two threads of one process at once, as a Dask worker's tasks parse it.

CPython 3.11 counts the depth of `ast.parse`'s tree building per interpreter: when a collection
inside one thread's parse runs a finaliser that hands the interpreter to another thread, which
parses from a different stack depth, the first parse fails with "SystemError: AST constructor
recursion depth mismatch" (python/cpython#106905; a batch on a one-worker cluster crashed so).
The crawler parses one thread at a time (`parse_module`, `parse_expression`).
"""

from __future__ import annotations

import ast
import gc
import threading
import time
from collections.abc import Callable
from pathlib import Path

import crawler
from crawler.parse.python_ast import parse_module

SOURCE = "\n".join(f"def f{i}(a, b):\n    return [x for x in (a + b * {i}, (a, (b, (a, (b,)))))]"
                   for i in range(300))


class Litter:
    """A cycle whose finaliser gives up the interpreter, as a socket's or a future's may."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        time.sleep(0.002)


def deeper(levels: int, call: Callable[[], object]) -> object:
    return deeper(levels - 1, call) if levels else call()


def test_two_threads_parsing_at_once_get_the_tree_one_thread_gets() -> None:
    alone = ast.dump(parse_module(SOURCE))
    got: list[str] = []
    failed: list[BaseException] = []

    def keep(call: Callable[[], object]) -> None:
        try:
            tree = call()
        except SystemError as error:
            failed.append(error)
        else:
            assert isinstance(tree, ast.Module)
            got.append(ast.dump(tree))

    def with_litter() -> None:
        for _ in range(5):
            gc.disable()  # litter for the first collection inside the parse
            for _ in range(20):
                Litter()
            gc.enable()
            keep(lambda: parse_module(SOURCE))

    def from_deeper() -> None:
        for _ in range(60):
            keep(lambda: deeper(30, lambda: parse_module(SOURCE)))

    threshold = gc.get_threshold()
    gc.set_threshold(100)
    try:
        threads = [threading.Thread(target=with_litter), threading.Thread(target=from_deeper)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
    assert failed == []
    assert len(got) == 65 and set(got) == {alone}


def test_the_package_parses_python_only_through_the_lock() -> None:
    package = Path(crawler.__file__).parent
    calls = [f"{path.relative_to(package)}:{node.lineno}"
             for path in sorted(package.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_bytes()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "parse" and isinstance(node.func.value, ast.Name)
             and node.func.value.id == "ast"]
    # the parse module's own two (the benchmark, which times `ast.parse` itself, is no part of
    # the package)
    assert [c.partition(":")[0] for c in calls] == ["parse/python_ast.py", "parse/python_ast.py"], calls
