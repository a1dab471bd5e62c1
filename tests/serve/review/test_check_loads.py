"""`crawler check`'s review through the load cache: warm, it reads no record file and lists what
a review without a cache lists; an annotation edited since is read and judged as it is now; the
rule's facts kept by the key of each file's bytes are those read from its record."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.serve.review import fact_cache
from crawler.serve.review.annotation_fit import Fit, Index, judged_records
from crawler.serve.review.checks import Review, review_output
from crawler.serve.review.fact_cache import FactCache
from crawler.store import repo_output
from crawler.store.cache import LoadCache
from tests.helpers.gitrepo import GitRepo
from tests.serve.review.test_annotation_fit import (
    RIGHT,
    WRONG,
    extracted,
    record_of,
    remat_repository,
    write_annotation,
)
from tests.store.test_load_stamps import HOUR, reads


def listed(review: Review) -> tuple[object, ...]:
    return (review.checked, review.problems, [m.describe() for m in review.mismatches],
            review.to_review)


def test_a_warm_check_lists_what_a_check_without_cache_lists_and_sees_an_edit(
        make_repo: Callable[[str], GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "out"
    folder = extracted(remat_repository(make_repo), root)
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    template = data["extracted"]["message"]["template"]
    write_annotation(remat, {"written_for": template, **WRONG})
    monkeypatch.setattr(repo_output, "clock", lambda: time.time_ns() + HOUR)  # files look old
    uncached = review_output(root, None, annotations_only=True)
    assert len(uncached.mismatches) == 1 and uncached.to_review
    cold = review_output(root, LoadCache(tmp_path / "cache"), annotations_only=True)
    seen = reads(monkeypatch)
    warm = review_output(root, LoadCache(tmp_path / "cache"), annotations_only=True)
    assert seen == []  # every record found by its stat
    assert listed(warm) == listed(cold) == listed(uncached)
    assert gc.isenabled()  # the collector, held off for the load and the index, is on again

    time.sleep(0.05)  # a tick of the file system's clock
    write_annotation(remat, {"written_for": template, **RIGHT})  # in place, as a person does
    now = review_output(root, LoadCache(tmp_path / "cache"), annotations_only=True)
    assert seen == [remat.name]
    assert now.mismatches == () and listed(now) == listed(review_output(root, None, True))


def test_facts_kept_by_the_key_of_each_files_bytes_are_those_read_from_its_record(
        make_repo: Callable[[str], GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept under the key of the file's bytes the load found (`Loaded.keys`): what an index
    without the cache reads; a second run reads no record's facts, and an edited annotation
    reads its own record's again, no other."""
    folder = extracted(remat_repository(make_repo), tmp_path / "out")
    monkeypatch.setattr(repo_output, "clock", lambda: time.time_ns() + HOUR)
    loaded = repo_output.load_folder(folder, loads=LoadCache(tmp_path / "cache"))
    records = list(loaded.records)
    assert set(loaded.keys) == {r.id for r in records} and len(records) == 3
    plain = Index(records, loaded.manifest)
    first = FactCache(LoadCache(tmp_path / "cache"), folder, files=loaded.keys)
    assert Index(records, loaded.manifest, first).facts == plain.facts
    first.close()
    assert first.computed == len(records)
    again = repo_output.load_folder(folder, loads=LoadCache(tmp_path / "cache"))
    assert again.keys == loaded.keys  # found by the files' stats, as they were
    second = FactCache(LoadCache(tmp_path / "cache"), folder, files=again.keys)
    assert Index(list(again.records), again.manifest, second).facts == plain.facts
    assert second.computed == 0

    remat, data = record_of(folder, "RematTraced._check_differentiable")
    time.sleep(0.05)
    write_annotation(remat, {"written_for": data["extracted"]["message"]["template"], **WRONG})
    edited = repo_output.load_folder(folder, loads=LoadCache(tmp_path / "cache"))
    assert {i for i in edited.keys if edited.keys[i] != loaded.keys[i]} == {data["id"]}
    third = FactCache(LoadCache(tmp_path / "cache"), folder, files=edited.keys)
    assert Index(list(edited.records), edited.manifest, third).facts == \
        Index(list(edited.records), edited.manifest).facts == plain.facts
    assert third.computed == 1


def test_no_collection_runs_while_the_review_holds_the_records(
        make_repo: Callable[[str], GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector is held off from the load to the judgements' end and turned on again once
    the records are gone: a collection in between rescanned every record (0.1 s on jax). With a
    collection due at every allocation, only the few at the return run (11 on this folder,
    against 1,346 with the collector on between the load and the index)."""
    root = tmp_path / "out"
    folder = extracted(remat_repository(make_repo), root)
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    write_annotation(remat, {"written_for": data["extracted"]["message"]["template"], **WRONG})
    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(count)
    try:
        review = review_output(root, LoadCache(tmp_path / "cache"))
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
    assert len(review.mismatches) == 1 and gc.isenabled()
    assert len(runs) <= 30, len(runs)


def test_what_an_annotation_names_is_kept_by_its_files_key_until_the_file_or_its_reader_changes(
        make_repo: Callable[[str], GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What each record's own annotation names (`Index.named`) is kept under the key of its
    file's bytes: a second run reads no annotation; one edited is read again, and so is every
    one when the code that reads a record of a file's bytes, or the folder's module names,
    change. Every run judges what an index without the cache judges."""
    folder = extracted(remat_repository(make_repo), tmp_path / "out")
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    template = data["extracted"]["message"]["template"]
    write_annotation(remat, {"written_for": template, **WRONG})
    monkeypatch.setattr(repo_output, "clock", lambda: time.time_ns() + HOUR)
    cache = tmp_path / "cache"

    def judged() -> tuple[list[Fit | None], FactCache]:
        loaded = repo_output.load_folder(folder, loads=LoadCache(cache))
        kept = FactCache(LoadCache(cache), folder, files=loaded.keys)
        index = Index(loaded.records, loaded.manifest, kept)
        fits = [index.judge(r) for r in judged_records(loaded.records)]
        kept.close()
        plain = Index(loaded.records, loaded.manifest)
        assert fits == [plain.judge(r) for r in judged_records(loaded.records)]
        return fits, kept

    wrong, first = judged()
    assert first.named_read == 1 and len(wrong) == 1 and wrong[0] is not None
    assert wrong[0].listed
    again, second = judged()
    assert second.named_read == 0 and again == wrong
    time.sleep(0.05)
    write_annotation(remat, {"written_for": template, **RIGHT})  # the file's bytes change
    right, third = judged()
    assert third.named_read == 1 and right[0] is not None and not right[0].listed
    monkeypatch.setattr(fact_cache, "_reader", lambda: "0" * 64)  # another reader of the bytes
    _, fourth = judged()
    assert fourth.named_read == 1
    _, fifth = judged()
    assert fifth.named_read == 0
    loaded = repo_output.load_folder(folder, loads=LoadCache(cache))
    modules = Index(loaded.records, loaded.manifest).modules
    for names, kept in ((modules, True), (modules | {"added"}, False)):  # a module added
        table = FactCache(LoadCache(cache), folder, files=loaded.keys)
        table.open(names, {})
        assert table.named(loaded.keys[data["id"]])[0] is kept
