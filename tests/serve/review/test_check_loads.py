"""`crawler check`'s review through the load cache: warm, it reads no record file and lists what
a review without a cache lists; an annotation edited since is read and judged as it is now."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.serve.review.checks import Review, review_output
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
