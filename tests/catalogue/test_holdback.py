"""Holding back: which source files a run leaves alone when record files cannot be loaded."""

from __future__ import annotations

from pathlib import Path

from crawler.catalogue.holdback import HELD_BACK, plan
from crawler.catalogue.identity import Ordinals
from crawler.records import BrokenFile
from crawler.store.repo_output import Loaded
from tests.catalogue.test_merge import OLD, first, site


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
