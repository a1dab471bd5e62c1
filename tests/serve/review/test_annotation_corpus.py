"""Issue 50's real annotation corpus is well formed (tests/serve/review/annotations/real/): every
item is a record of its library's catalogue, as the catalogue has it, with the program that raised
its error and the fixed one that ran; each library has enough functions raising several annotated
records to deal annotations within one function. What the check makes of them is measured by
`scripts/annotation_fit_rates.py --part working|sealed`, not here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.serve.review.annotations.corpus import (
    PARTS,
    real_files,
    sibling_groups,
    unpack_file,
    within_functions,
)

HEADER = ("library", "source", "tag", "commit", "catalogue", "records")
ITEM = ("id", "path", "qualname", "exception", "template", "annotation", "reproduce", "raises",
        "fixed", "fixed_runs")
# sqlparse has 27 raise sites, 21 of them in one function (`validate_options`): its corpus has two
# functions with several annotated records, where the others have three to seven
MIN_ITEMS, MIN_GROUPS = 20, 2


def test_annotations_are_dealt_within_a_function_only_to_its_other_records() -> None:
    items = [{"id": name, "path": path, "qualname": function} for name, path, function in (
        ("a1", "pkg/a.py", "load"), ("a2", "pkg/a.py", "load"), ("a3", "pkg/a.py", "load"),
        ("b1", "pkg/b.py", "load"), ("b2", "pkg/b.py", "load"),
        ("c1", "pkg/a.py", "dump"), ("d1", "pkg/c.py", "load"))]
    assert sibling_groups(items) == [["a1", "a2", "a3"], ["b1", "b2"]]
    for seed in range(1, 6):
        deal = within_functions(items, seed)
        assert sorted(deal) == ["a1", "a2", "a3", "b1", "b2"]  # lone records are not dealt
        assert all(deal[i] != i and deal[i][0] == i[0] for i in deal)
        assert within_functions(items, seed) == deal  # seeded: the same every run
    assert sorted(within_functions(items, 1).values()) == ["a1", "a2", "a3", "b1", "b2"]


def test_there_is_no_third_half() -> None:
    with pytest.raises(ValueError, match="no such half"):
        real_files("both")


CORPUS_FILES = [path for part in PARTS for path in real_files(part)]


@pytest.mark.parametrize("corpus_file", CORPUS_FILES, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_each_item_is_its_catalogues_record_with_its_error_run(corpus_file: Path,
                                                               tmp_path: Path) -> None:
    corpus, folder = unpack_file(corpus_file, tmp_path)
    assert all(corpus.get(key) for key in HEADER), corpus_file
    items = corpus["records"]
    records = {}  # the items' records only: networkx's catalogue holds a thousand
    for item in items:
        record_file = folder / "errors" / f"{item['id']}.yaml"
        if record_file.is_file():
            record = yaml.safe_load(record_file.read_text(encoding="utf-8"))
            records[record["id"]] = record["extracted"]
    assert len(items) >= MIN_ITEMS
    assert len({item["id"] for item in items}) == len(items)
    wrong = []
    for item in items:
        missing = [key for key in ITEM if item.get(key) in (None, "", [])]
        site = records.get(item["id"])
        if missing or site is None or item["fixed_runs"] is not True or any(
                site[key] != item[key] for key in ("path", "qualname", "exception")) or \
                site["message"]["template"] != item["template"]:
            wrong.append((item["id"], missing, site is not None))
    assert wrong == []
    assert len(sibling_groups(items)) >= MIN_GROUPS
