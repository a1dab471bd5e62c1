"""The matching order of merge.py on hand-made sites: each step, one-to-one, deterministic."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest

from crawler.catalogue import best_pairs
from crawler.catalogue.identity import Ordinals
from crawler.catalogue.merge import PathMoves, SetAside, clear_review, is_stale, merge
from crawler.catalogue.pairing import FUZZY_THRESHOLD, similarity
from crawler.records import (
    ACTIVE,
    NEEDS_REVIEW,
    REMOVED,
    Annotation,
    Counts,
    ErrorRecord,
    ExtractOptions,
    FileEntry,
    Manifest,
    empty_annotation,
)
from tests.helpers.merge_sites import NEW, OLD, first, site

LATER = replace(OLD, sha="c" * 40)


def annotate(record: ErrorRecord, text: str) -> ErrorRecord:
    data = dict(empty_annotation().data, what_it_means=text,
                written_for=record.site.message.template)
    return replace(record, annotation=Annotation(data))


def by_id(records: list[ErrorRecord]) -> dict[str, ErrorRecord]:
    return {r.id: r for r in records}


def test_lines_inserted_above_change_only_the_line() -> None:
    [old] = first([site("bad")])
    result = merge(NEW, [old], [site("bad", line=15)])
    [new] = result.records
    assert new.id == old.id and new.status == ACTIVE and new.site.line == 15
    assert new.commit == NEW.sha and result.moved == (old.id,) and result.matched_by[old.id] == 1


def test_untouched_record_is_the_same_object() -> None:
    [old] = first([site("bad")])
    result = merge(NEW, [old], [site("bad")])
    assert result.records[0] is old and result.unchanged == (old.id,)


def test_equal_keys_pair_by_ordinal() -> None:
    old = first([site("bad", line=10), site("bad", line=20)])
    ids = [r.id for r in sorted(old, key=lambda r: r.site.line)]
    new = merge(NEW, old, [site("bad", line=12), site("bad", line=22)]).records
    assert [r.id for r in sorted(new, key=lambda r: r.site.line)] == ids


def test_one_of_two_identical_raises_removed_keeps_the_right_one() -> None:
    old = first([site("bad", line=10, condition="x < 0"), site("bad", line=20, condition="x > 9")])
    second = next(r for r in old if r.site.line == 20)
    result = merge(NEW, old, [site("bad", line=16, condition="x > 9")])
    records = by_id(result.records)
    assert records[second.id].status == ACTIVE and records[second.id].site.line == 16
    [gone] = result.removed
    assert gone != second.id and records[gone].status == REMOVED


def test_renamed_file_keeps_ids() -> None:
    [old] = first([site("bad", path="a.py")])
    moves = PathMoves(renames={"a.py": "b.py"})
    result = merge(NEW, [old], [site("bad", path="b.py")], moves=moves)
    assert [r.id for r in result.records] == [old.id] and result.matched_by[old.id] == 2


def test_identical_blob_at_two_paths_gives_the_record_to_one() -> None:
    [old] = first([site("bad", path="a.py")])
    moves = PathMoves(same_blob={"a.py": ("c.py", "b.py")})
    result = merge(NEW, [old], [site("bad", path="b.py"), site("bad", path="c.py")], moves=moves)
    records = by_id(result.records)
    assert records[old.id].site.path == "b.py"  # sorted: deterministic
    assert len(result.added) == 1 and records[result.added[0]].site.path == "c.py"


def test_function_renamed() -> None:
    [old] = first([site("bad", qualname="f")])
    result = merge(NEW, [old], [site("bad", qualname="g")])
    [new] = result.records
    assert new.id == old.id and new.site.qualname == "g" and result.matched_by[old.id] == 3
    assert new.status == ACTIVE


def test_class_moved_to_another_file() -> None:
    [old] = first([site("bad", path="a.py", qualname="C.f")])
    result = merge(NEW, [old], [site("bad", path="b.py", qualname="C.f")])
    [new] = result.records
    assert new.id == old.id and new.site.path == "b.py" and result.matched_by[old.id] == 3


def test_slight_reword_needs_review_heavy_reword_does_not_match() -> None:
    [old] = first([site("x must be positive, got {x}")])
    old = annotate(old, "x is negative")
    result = merge(NEW, [old], [site("x must be strictly positive, got {x}")])
    [new] = result.records
    assert new.id == old.id and new.status == NEEDS_REVIEW and result.changed == (old.id,)
    assert new.history is not None and new.history.previous_template == "x must be positive, got {x}"
    assert new.annotation == old.annotation and is_stale(new)

    result = merge(NEW, [old], [site("cannot frobnicate the widget")])
    records = by_id(result.records)
    assert records[old.id].status == REMOVED and len(result.added) == 1
    assert records[result.added[0]].annotation.is_empty


def test_words_not_letters() -> None:
    assert similarity("invalid shape", "invalid dtype") < FUZZY_THRESHOLD
    assert similarity("x must be positive, got {x}", "x must be strictly positive, got {x}") > 0.9


def test_a_message_extended_by_a_clause_is_close_a_short_one_is_not() -> None:
    extended = "get not supported yet for block shape {b}"
    assert similarity("get not supported yet", extended) == FUZZY_THRESHOLD
    assert similarity("not supported", "not supported for this dtype or shape") < FUZZY_THRESHOLD
    assert similarity("{msg}", "{msg} and a very long explanation follows here") < FUZZY_THRESHOLD


def test_fuzzy_is_one_to_one_best_first() -> None:
    old = first([site("invalid shape {s} for array", line=10)])
    old = [annotate(old[0], "shape")]
    sites = [site("invalid shape {s} for the array", line=10),
             site("invalid shape {s} for array of {n}", line=20)]
    result = merge(NEW, old, sites)
    records = by_id(result.records)
    assert records[old[0].id].site.message.template == "invalid shape {s} for the array"
    assert len(result.added) == 1 and records[result.added[0]].annotation.is_empty


def test_a_close_pair_across_exception_or_file_is_flagged_with_what_changed() -> None:
    # Issue 15: the exception and the file are parts of the score, no longer conditions; a pair
    # that changed them waits for review, saying what they were.
    [old] = first([site("x must be positive")])
    [retyped] = merge(NEW, [old], [site("x must be strictly positive", exception="TypeError")]).records
    assert retyped.id == old.id and retyped.status == NEEDS_REVIEW and retyped.history
    assert retyped.history.previous_exception == "ValueError"
    assert retyped.history.previous_template == "x must be positive"
    [moved] = merge(NEW, [old], [site("x must be strictly positive", path="b.py")]).records
    assert moved.id == old.id and moved.history and moved.history.previous_path == "m.py"
    assert moved.history.paired_by and moved.history.paired_by.startswith("function_moved")
    # another file, another function, no code in common: no signal, no pair
    assert merge(NEW, [old], [site("x must be strictly positive", path="b.py", qualname="g")]).added


def test_removed_then_revived_with_same_id_and_annotation() -> None:
    [old] = first([site("bad")])
    old = annotate(old, "kept")
    gone = merge(NEW, [old], [])
    [removed] = gone.records
    assert removed.status == REMOVED and removed.history and removed.history.removed_in == NEW.sha
    back = merge(LATER, [removed], [site("bad", line=30)])
    [revived] = back.records
    assert revived.id == old.id and revived.status == ACTIVE and back.revived == (old.id,)
    assert revived.annotation == old.annotation and revived.history
    assert revived.history.removed_in is None


def test_removed_record_is_not_revived_by_a_fuzzy_match() -> None:
    [old] = first([site("x must be positive")])
    [removed] = merge(NEW, [old], []).records
    result = merge(LATER, [removed], [site("x must be strictly positive")])
    assert result.added and not result.revived


def test_new_id_never_reuses_a_taken_one() -> None:
    [old] = first([site("bad")])
    result = merge(NEW, [], [site("bad")], taken_ids=[old.id])
    assert result.records[0].id != old.id


def test_a_duplicated_template_gets_one_record_for_each_new_place() -> None:
    [old] = first([site("bad", qualname="f")])
    old = annotate(old, "only one")
    result = merge(NEW, [old], [site("bad", qualname="g", line=5), site("bad", qualname="h", line=9)])
    annotated = [r for r in result.records if not r.annotation.is_empty]
    assert [r.id for r in annotated] == [old.id] and len(result.added) == 1


@pytest.mark.parametrize("written_for, cleared", [("x must be strictly positive", True),
                                                  ("x must be positive", False)])
def test_review_is_cleared_when_written_for_is_the_current_template(
        written_for: str, cleared: bool) -> None:
    [old] = first([site("x must be positive")])
    old = annotate(old, "text")
    [changed] = merge(NEW, [old], [site("x must be strictly positive")]).records
    data = dict(changed.annotation.data, written_for=written_for)
    edited = replace(changed, annotation=Annotation(data))
    after = clear_review(edited)
    assert (after.status == ACTIVE) is cleared
    if cleared:
        assert after.history is not None and after.history.previous_template is None
    # a second reword before any review keeps the first template as the one annotated
    [twice] = merge(LATER, [changed], [site("x must be strictly positive now")]).records
    assert twice.history is not None and twice.history.previous_template == "x must be positive"


def test_function_renamed_and_moved_to_another_file_when_unambiguous() -> None:
    [old] = first([site("a rare message", path="a.py", qualname="f")])
    result = merge(NEW, [old], [site("a rare message", path="b.py", qualname="g")])
    assert [r.id for r in result.records] == [old.id] and result.matched_by[old.id] == 3
    two = [site("a rare message", path="b.py", qualname="g"),
           site("a rare message", path="c.py", qualname="h")]
    assert len(merge(NEW, [old], two).added) == 2  # ambiguous: no guess


def test_exception_class_changed_same_message_keeps_the_record_in_review() -> None:
    # Issue 15: `except ValueError` no longer catches it, so the record waits for review.
    [old] = first([site("bad tiling", exception="ValueError")])
    old = annotate(old, "tiling")
    result = merge(NEW, [old], [site("bad tiling", exception="TilingError")])
    [new] = result.records
    assert new.id == old.id and new.status == NEEDS_REVIEW and new.site.exception == "TilingError"
    assert result.moved == (old.id,) and new.history and new.history.previous_exception == "ValueError"
    assert new.history.previous_template is None and new.annotation == old.annotation
    # written_for already names the template: the review is done when the class is named too
    assert clear_review(new) is new
    data = dict(new.annotation.data, written_for_exception="TilingError")
    cleared = clear_review(replace(new, annotation=Annotation(data)))
    assert cleared.status == ACTIVE and cleared.history == replace(new.history, previous_exception=None,
                                                                   paired_by=None)


def test_ordinals_follow_the_sites_not_the_objects_that_carry_them() -> None:
    sites = [site("bad", line=30), site("bad", line=10), site("other", line=20)]
    ordinals = Ordinals.of(sites)
    assert [ordinals[s] for s in sites] == [1, 0, 0]  # counted in source order, per key
    copies = [replace(s) for s in sites]  # equal values, other objects
    assert [ordinals[s] for s in copies] == [1, 0, 0]
    assert [r.id for r in first(sites)] == [r.id for r in first(copies)]
    # a new record takes the id its site's ordinal names, the one holding back checks against
    assert {r.id for r in first(sites)} == {ordinals.natural_id(OLD.repo, s) for s in sites}


def test_records_set_aside_come_out_as_they_were_or_cleared() -> None:
    made = {r.site.path: r for r in first([site("in a.py", path="a.py"), site("in b.py", path="b.py"),
                                            site("in c.py", path="c.py")])}
    broken_file, unread, other = made["a.py"], made["b.py"], made["c.py"]
    reviewed = replace(annotate(unread, "checked"), status=NEEDS_REVIEW)
    aside = SetAside(failed_paths=frozenset({"a.py"}), unread_paths=frozenset({"b.py"}),
                     in_review=frozenset({unread.id}))
    result = merge(NEW, [broken_file, reviewed, other], [site("in c.py", path="c.py", line=11)],
                   aside=aside)
    by = by_id(list(result.records))
    assert by[broken_file.id] is broken_file and by[broken_file.id].status == ACTIVE
    assert by[unread.id].status == ACTIVE and by[unread.id].annotation == reviewed.annotation
    assert result.unchanged == (broken_file.id,) and result.cleared == (unread.id,)
    assert result.moved == (other.id,) and not result.added and not result.removed
    assert [r.id for r in result.records] == sorted(by)
    with pytest.raises(FrozenInstanceError):
        result.records = ()  # type: ignore[misc]


def test_path_moves_between_two_manifests() -> None:
    pin = OLD
    options = ExtractOptions()
    files = (FileEntry("a.py", "1" * 40, (), (0, 0, 0, 0)), FileEntry("b.py", "2" * 40, (), (0, 0, 0, 0)))
    previous = Manifest(pin, "0", options, Counts(), files, ())
    moves = PathMoves.between(previous, {"c.py": "1" * 40, "d.py": "1" * 40, "b.py": "2" * 40},
                              {"b.py": "e.py"})
    assert moves.targets("a.py") == ["c.py", "d.py"] and moves.targets("b.py") == ["e.py"]
    assert PathMoves.between(None, {"c.py": "1" * 40}, {}) == PathMoves()


def test_a_first_extract_builds_no_pairing_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no record left to pair, the last step returns at once: the index of every new site
    by the lines around its raise is built only when a record can use it."""
    def refused(sites: object) -> None:
        raise AssertionError("the sites' index was built with nothing to pair")

    monkeypatch.setattr(best_pairs, "_SiteIndex", refused)
    sites = [site("bad value"), site("bad other", path="n.py", qualname="g")]
    records = first(sites)
    assert [r.site.message.template for r in records] == ["bad value", "bad other"]
    assert best_pairs.pair_best(sites, [], lambda path: ()) == []
    removed = [replace(r, status=REMOVED) for r in records]
    assert best_pairs.pair_best(sites, removed, lambda path: ()) == []
