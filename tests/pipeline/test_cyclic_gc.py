"""The cyclic collector during a run: off and frozen while it lasts, on and thawed after, cycles
still freed (by an explicit collection, or by the first one after the run)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crawler.pipeline import applying, cyclic_gc, extract, update
from tests.helpers.gitrepo import GitRepo


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A cycle of two objects that nothing else holds, watched by a weak reference."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    yield
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_run_freezes_what_lives_and_thaws_at_its_end() -> None:
    before = Node()
    with cyclic_gc.frozen_during_run():
        assert gc.get_freeze_count() > 0
        assert not any(o is before for o in gc.get_objects())  # what lived is frozen
        made = Node()
        assert any(o is made for o in gc.get_objects())  # new objects are collected as before
        cyclic_gc.settled()
        assert not any(o is made for o in gc.get_objects())  # ... until a step settles them
    assert any(o is before for o in gc.get_objects())
    assert any(o is made for o in gc.get_objects())


def test_a_run_turns_the_collector_off_and_on_again() -> None:
    with cyclic_gc.frozen_during_run():
        assert not gc.isenabled()
        gone = cycle()
        assert gone() is not None  # no collection runs by itself
    gc.collect()
    assert gone() is None


def test_cycles_made_during_a_run_are_still_freed() -> None:
    with cyclic_gc.frozen_during_run():
        gone = cycle()
        gc.collect()
        assert gone() is None


def test_a_cycle_frozen_by_a_step_is_freed_after_the_thaw() -> None:
    with cyclic_gc.frozen_during_run():
        held = [cycle()]
        node = held[0]()
        cyclic_gc.settled()
        del node
        gc.collect()
        assert held[0]() is not None  # frozen: the collector does not look at it
    gc.collect()
    assert held[0]() is None


def test_a_nested_run_leaves_the_outer_freeze() -> None:
    with cyclic_gc.frozen_during_run():
        frozen = gc.get_freeze_count()
        with cyclic_gc.frozen_during_run():
            pass
        assert gc.get_freeze_count() == frozen


def test_a_run_in_another_thread_neither_settles_nor_thaws() -> None:
    """Counted by objects, not by `gc.get_freeze_count()`: a frozen object freed by its last
    reference leaves the count (the suite saw it fall by two while the other thread ran)."""
    seen: list[bool] = []
    before = Node()

    def beside() -> None:
        with cyclic_gc.frozen_during_run():
            made = Node()
            cyclic_gc.settled()  # not the owner: no freeze
            seen.append(any(o is made for o in gc.get_objects()))

    with cyclic_gc.frozen_during_run():
        thread = threading.Thread(target=beside)
        thread.start()
        thread.join()
        assert not gc.isenabled()  # the owner's run holds the collector still
        assert seen == [True]  # what the other thread made is collected as before
        assert not any(o is before for o in gc.get_objects())  # the owner's freeze holds


def test_a_caller_that_manages_the_collector_is_left_alone() -> None:
    gc.disable()
    try:
        with cyclic_gc.frozen_during_run():
            cyclic_gc.settled()
            assert gc.get_freeze_count() == 0
        assert not gc.isenabled()  # the caller's: not turned on by the run
    finally:
        gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with cyclic_gc.frozen_during_run():
            Node()
            cyclic_gc.settled()
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_run_thaws_when_it_fails() -> None:
    with pytest.raises(KeyError), cyclic_gc.frozen_during_run():
        raise KeyError("stop")  # the fixture: the collector on and nothing frozen after


def test_extract_and_update_write_frozen_and_leave_the_collector_thawed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo("lib")
    repo.write("pkg/core.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit("first")
    frozen_at_write: list[int] = []
    real_write = applying._write

    def write(*args: object, **kwargs: object) -> tuple[int, list[str]]:
        assert not gc.isenabled()
        frozen_at_write.append(gc.get_freeze_count())
        return real_write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(applying, "_write", write)
    first = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    repo.write("pkg/core.py", "def f(x):\n    raise ValueError(f'bad value {x}')\n")
    repo.commit("second")
    second = update(str(repo.path), output_root=tmp_path / "out", jobs=1)
    assert len(first.merged.records) == len(second.merged.records) == 1
    assert len(frozen_at_write) == 2 and all(count > 0 for count in frozen_at_write)


def test_a_worker_collects_between_batches_without_its_modules() -> None:
    # in a process of its own: the worker's set-up turns the collector off for good
    code = """if True:
        import gc, weakref
        from crawler.parse import workers
        alive = len(gc.get_objects())
        workers._collect_between_batches()
        assert not gc.isenabled()
        assert gc.get_freeze_count() >= alive and len(gc.get_objects()) < 100
        class Node: pass
        a, b = Node(), Node()
        a.b, b.a = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
        print("ok")
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_the_class_pass_graph_is_frozen_until_the_entry_stage_lets_it_go(
        make_repo: Callable[[str], GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call graph the class pass builds (for a raise of a parameter) lives through the load,
    the merge and the evidence stage: no full collection rescans it from the load on. It holds
    no cycle, so the entry stage's letting it go frees it at once, frozen as it is."""
    from crawler.pipeline import entry_stage
    from crawler.store import repo_output
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "from pkg.core import run\n__all__ = ['run']\n")
    repo.write("pkg/core.py", "def check(msg):\n    raise ValueError(msg)\n"
                              "def run(x):\n    if x < 0:\n        check(f'negative: {x}')\n")
    repo.commit("first")
    seen: list[object] = []
    real_load, real_refresh = repo_output.load_folder, entry_stage.refresh

    def frozen() -> bool:
        graph = entry_stage._LAST.value[1]
        return not any(o is graph for o in gc.get_objects())

    def load_folder(*args: object, **kwargs: object) -> object:
        seen.append(("load", frozen()))
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    def refresh(*args: object, **kwargs: object) -> object:
        seen.append(("stage", frozen()))
        watched = weakref.ref(entry_stage._LAST.value[1])
        found = real_refresh(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(("after", watched() is None))
        return found

    monkeypatch.setattr(repo_output, "load_folder", load_folder)
    monkeypatch.setattr(entry_stage, "refresh", refresh)
    result = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    assert [[e.name for e in r.entry_points.items] for r in result.merged.records] == [
        ["pkg.run", "pkg.core.check"]]  # the package's own name first
    assert seen == [("load", True), ("stage", True), ("after", True)]
