"""The export tests' fixture: an output root with one repository, as extract leaves it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crawler.catalogue.evidence import match_evidence
from crawler.catalogue.merge import merge
from crawler.catalogue.related import related_records, with_derived
from crawler.parse.assertions import find_assertions
from crawler.parse.visitor import find_raise_sites
from crawler.records import Annotation, Counts, ExtractOptions, FileEntry, Manifest, empty_annotation
from crawler.store import manifest_file, record_files
from tests.helpers.export import PIN, SOURCE, TESTS


@pytest.fixture
def output_root(tmp_path: Path) -> Path:
    """An output root with one repository, as `crawler extract` leaves it (one record annotated)."""
    sites = find_raise_sites("lib/shape.py", SOURCE, "lib.shape").sites
    records = merge(PIN, [], sites).records
    assertions = find_assertions("tests/test_shape.py", TESTS).assertions
    records = with_derived(records, related_records(records), match_evidence(records, assertions))
    annotated = next(r for r in records if "sparse" in r.site.message.template)
    note = {**empty_annotation().data, "written_for": annotated.site.message.template,
            "what_it_means": "Sparse shapes cannot be reshaped in place; densify first."}
    records = [replace(r, annotation=Annotation(note)) if r is annotated else r for r in records]
    folder = tmp_path / "output" / "github.com" / "example" / "lib"
    for record in records:
        record_files.write_record(folder, record)
    files = (FileEntry("lib/shape.py", "2" * 40, tuple(sorted(r.id for r in records))),)
    manifest_file.write_manifest(folder, Manifest(PIN, "0.1.0", ExtractOptions(),
                                         Counts(files=1, parsed=1, records=len(records)), files, ()))
    return tmp_path / "output"
