"""Release tags in order, and the release history a walk's step gives each record."""

from __future__ import annotations

from dataclasses import replace

import pytest
from packaging.version import Version

from crawler.catalogue.merge import merge
from crawler.catalogue.releases import Step, mark_step, order_tags, plan_walk, version_key
from crawler.records import (
    REMOVED,
    ErrorRecord,
    Release,
    Releases,
    ReleaseTag,
    TemplateSpan,
    Versions,
)
from tests.helpers.merge_sites import NEW, OLD, site

# The forms tags take, each with the version `packaging` reads in it.
VERSIONS = ["1.0", "1.0.0", "1.0.dev1", "1.0a1", "1.0a1.dev1", "1.0b2", "1.0rc1", "1.0c2",
            "1.0.post1", "1.0-1", "1.0.post1.dev2", "1.0+abc", "1.0+5", "1.0+abc.2", "0.4.33-rc",
            "0.4.33", "0.4.9", "0.10", "1.1.dev0", "2.0.0-beta.3", "2.0.0-alpha", "1.0_rc_2",
            "0.9.0.1", "3!1.0"]


@pytest.mark.parametrize("prefix", ["", "v", "jax-v", "release-", "py_lib-v"])
def test_versions_sort_as_packaging_sorts_them(prefix: str) -> None:
    keys = {v: version_key(prefix + v) for v in VERSIONS}
    assert keys == {v: Version(v) for v in VERSIONS}  # epochs (`3!1.0`) included


def test_a_version_written_with_underscores_is_read_with_dots() -> None:
    """SQLAlchemy, Mako and Alembic tag `rel_1_4_0`: walked in version order, not by date."""
    assert version_key("rel_1_4_0") == Version("1.4.0")
    assert version_key("rel_2_0_0b1") == Version("2.0.0b1")
    tags = [tag("rel_2_0_0", 1), tag("rel_1_4_10", 3), tag("rel_1_4_9", 2), tag("rel_1_3_24", 4)]
    assert [t.name for t in order_tags(tags).tags] == ["rel_1_3_24", "rel_1_4_9", "rel_1_4_10",
                                                        "rel_2_0_0"]
    assert version_key("rel_1_4") == Version("1.4")


@pytest.mark.parametrize("tag", ["nightly", "latest", "v", "1.0-", "1..0", "v1.0 x",
                                 "1.0rc1rc2", "2024-05-01"])
def test_tags_that_are_not_versions_have_no_key(tag: str) -> None:
    assert version_key(tag) is None


def tag(name: str, date: int = 0) -> ReleaseTag:
    return ReleaseTag(name, f"{abs(hash(name)) % 16 ** 8:040x}", date)


def test_tags_walk_in_version_order_and_the_others_are_left_out() -> None:
    walk = order_tags([tag("v0.10.0"), tag("v0.9.0"), tag("nightly"), tag("v0.10.0rc1"),
                       tag("v0.9.0.1")])
    assert [t.name for t in walk.tags] == ["v0.9.0", "v0.9.0.1", "v0.10.0rc1", "v0.10.0"]
    assert walk.ignored == (("nightly", "not a version"),)
    assert not walk.by_date


def test_tags_that_name_no_version_walk_by_date_then_name() -> None:
    walk = order_tags([tag("spring", 300), tag("winter", 100), tag("autumn", 300)])
    assert [t.name for t in walk.tags] == ["winter", "autumn", "spring"]
    assert walk.by_date and walk.ignored == ()


def test_a_new_run_walks_only_the_tags_after_the_last_walked() -> None:
    tags = [tag("v1.0"), tag("v1.1"), tag("v1.2"), tag("v1.1.1"), tag("v2.0")]
    walked = Releases(walked=(Release("v1.0", "a" * 40), Release("v1.2", "b" * 40)))
    walk = plan_walk(tags, walked)
    assert [t.name for t in walk.tags] == ["v2.0"]
    assert ("v1.1", "not after v1.2, the last release walked") in walk.ignored
    assert ("v1.1.1", "not after v1.2, the last release walked") in walk.ignored


def test_a_walk_starts_at_since_and_ends_at_the_tag_asked_for() -> None:
    tags = [tag("v1.0"), tag("v1.1"), tag("v1.2"), tag("v2.0")]
    walk = plan_walk(tags, None, stop_at="v1.2", since="v1.1")
    assert [t.name for t in walk.tags] == ["v1.1", "v1.2"]
    assert dict(walk.ignored) == {"v1.0": "before v1.1, where the walk starts",
                                  "v2.0": "after v1.2, where the walk ends"}


def test_a_last_walked_tag_that_is_gone_is_placed_by_its_version() -> None:
    walked = Releases(walked=(Release("v1.1", "a" * 40),))
    walk = plan_walk([tag("v1.0"), tag("v1.2")], walked)
    assert [t.name for t in walk.tags] == ["v1.2"]


# ---------------------------------------------------------------- one step's bookkeeping


def step(records: list[ErrorRecord], existing: list[ErrorRecord], tag: str | None,
         before: Releases) -> tuple[dict[str, ErrorRecord], Releases]:
    marked, after = mark_step(records, {r.id: r for r in existing},
                              Step(tag, "c" * 40, before))
    return {r.id: r for r in marked}, after


def test_a_site_seen_first_at_a_release_opens_its_versions_and_its_wording() -> None:
    records = merge(OLD, [], [site("bad value")]).records
    marked, after = step(list(records), [], "v1.0", Releases())
    [record] = marked.values()
    assert record.versions == Versions("v1.0", None)
    assert record.history is not None
    assert record.history.templates == (TemplateSpan("bad value", "v1.0", None, "ValueError",
                                                     "m.py"),)
    assert after.walked == (Release("v1.0", "c" * 40),) and after.unreleased == ()


def test_an_unchanged_record_is_the_same_object_so_it_is_not_written_again() -> None:
    first, walked = step(list(merge(OLD, [], [site("bad")]).records), [], "v1", Releases())
    records = list(first.values())
    again = merge(NEW, records, [site("bad", line=12)]).records
    marked, _ = step(list(again), records, "v2", walked)
    [record] = marked.values()
    assert record is again[0]
    assert record.versions == Versions("v1", None)


def test_a_reword_closes_the_wording_at_the_release_before() -> None:
    first, walked = step(list(merge(OLD, [], [site("bad size")]).records), [], "v1", Releases())
    records = list(first.values())
    again = merge(NEW, records, [site("bad size given")]).records
    marked, _ = step(list(again), records, "v2", walked)
    [record] = marked.values()
    assert record.history is not None
    assert [(s.template, s.first, s.last) for s in record.history.templates] == [
        ("bad size", "v1", "v1"), ("bad size given", "v2", None)]


def test_a_removed_site_keeps_the_last_release_that_had_it() -> None:
    first, walked = step(list(merge(OLD, [], [site("bad")]).records), [], "v1", Releases())
    records = list(first.values())
    gone = merge(NEW, records, []).records
    marked, _ = step(list(gone), records, "v2", walked)
    [record] = marked.values()
    assert record.status == REMOVED and record.versions == Versions("v1", "v1")
    assert record.history is not None and record.history.templates[-1].last == "v1"


def test_a_wording_between_releases_waits_for_the_next_one() -> None:
    first, walked = step(list(merge(OLD, [], [site("a")]).records), [], "v1", Releases())
    records = list(first.values())
    later = list(merge(NEW, records, [site("a"), site("b", qualname="g")]).records)
    marked, after = step(later, records, None, walked)
    new = next(r for r in marked.values() if r.site.message.template == "b")
    assert new.versions == Versions(None, None) and after.unreleased == (new.id,)
    assert after.walked == walked.walked  # the end commit is no release
    released, final = step(list(marked.values()), list(marked.values()), "v2", after)
    assert released[new.id].versions == Versions("v2", None)
    assert released[new.id].history is not None
    assert released[new.id].history.templates[0].first == "v2"
    assert final.unreleased == ()


def test_a_wording_no_release_printed_is_dropped_when_it_changes() -> None:
    first, walked = step(list(merge(OLD, [], [site("the size is bad")]).records), [], "v1",
                         Releases())
    records = list(first.values())
    between = list(merge(NEW, records, [site("the size given is bad")]).records)
    marked, after = step(between, records, None, walked)
    again = list(merge(replace(NEW, sha="d" * 40), list(marked.values()),
                       [site("the size given here is bad")]).records)
    final, _ = step(again, list(marked.values()), "v2", after)
    [record] = final.values()
    assert record.history is not None
    assert [(s.template, s.first, s.last) for s in record.history.templates] == [
        ("the size is bad", "v1", "v1"), ("the size given here is bad", "v2", None)]


def test_records_never_walked_stay_without_versions_when_removed() -> None:
    records = list(merge(OLD, [], [site("bad")]).records)
    gone = list(merge(NEW, records, []).records)
    marked, _ = step(gone, records, "v1", Releases())
    [record] = marked.values()
    assert record.versions is None and record is gone[0]
