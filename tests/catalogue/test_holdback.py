"""Holding back: which source files a run leaves alone when record files cannot be loaded."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.catalogue.holdback import _PATH_LINE, HELD_BACK, _path_hint, plan
from crawler.catalogue.identity import Ordinals
from crawler.records import BrokenFile
from crawler.store.repo_output import Loaded
from tests.helpers.merge_sites import OLD, first, site


def test_nothing_broken_holds_nothing_back() -> None:
    records = tuple(first([site("bad")]))
    sites = (site("bad", line=12),)
    held = plan(Loaded(records, (), None, None), OLD, sites)
    assert held.existing == records and held.sites == sites and not held.held and not held.hold_all


def test_a_broken_record_holds_back_the_file_its_natural_id_names(tmp_path: Path) -> None:
    sites = (site("bad", path="a.py"), site("bad", path="a.py", line=20), site("ok", path="b.py"))
    natural = Ordinals.of(sites).natural_id(OLD.repo, sites[1])
    unreadable = tmp_path / f"{natural}.yaml"
    unreadable.write_text("{{ not yaml", encoding="utf-8")  # no `  path:` line to go by
    kept = {r.site.path: r for r in first(list(sites)) if r.id != natural}  # the broken one aside
    loaded = Loaded(tuple(kept.values()), (BrokenFile(str(unreadable), natural, "broken"),), None, None)
    held = plan(loaded, OLD, sites)
    assert held.held == {"a.py"} and not held.hold_all
    assert held.sites == (sites[2],) and [r.site.path for r in held.existing] == ["b.py"]
    assert natural in held.reserved and kept["a.py"].id in held.reserved
    assert [(s.path, s.reason) for s in held.skipped()] == [("a.py", HELD_BACK)]


def test_a_broken_record_placed_nowhere_holds_everything(tmp_path: Path) -> None:
    stray = tmp_path / ("f" * 16 + ".yaml")
    stray.write_text("garbage", encoding="utf-8")
    loaded = Loaded(tuple(first([site("bad")])), (BrokenFile(str(stray), "f" * 16, "broken"),), None, None)
    held = plan(loaded, OLD, (site("bad"),))
    assert held.hold_all and held.sites == () and held.existing == ()


def test_the_path_hint_of_a_long_line_is_read_in_linear_time() -> None:
    """A lazy `path:` pattern took 2.5 s on 8,000 spaces; a 1 MiB line would take hours."""
    head = "extracted:\n  path: a" + " " * ((1 << 20) - 100) + "x#\n  path: lib/m.py  \n"
    started = time.perf_counter()
    assert _path_hint(head) == "lib/m.py"
    assert time.perf_counter() - started < 0.5


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet="ab #/\t\u00a0.'\n", max_size=20))
def test_the_path_hint_is_what_the_lazy_pattern_found(tail: str) -> None:
    lazy = re.compile(r"^  path: ([^\s\"'#{\[&*!|>][^#\n]*?)\s*$", re.MULTILINE)
    text = "id: x\n  path: " + tail
    found = lazy.search(text)
    match = _PATH_LINE.search(text)
    assert (match.group(1).rstrip() if match else None) == (found.group(1) if found else None)
