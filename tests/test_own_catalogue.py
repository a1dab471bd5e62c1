"""output/ holds this repository's own records; they must match the code they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.cli.config import default_map
from crawler.pipeline import class_pass, collect, output_folder
from crawler.records import REMOVED, ExtractOptions
from crawler.store import record_files, safe_yaml, schemas

ROOT = Path(__file__).resolve().parent.parent
OWN_NAME = "raise-site-crawler"  # the README's regeneration command uses the same --name
REGENERATE = f"run `crawler extract . --name {OWN_NAME}` and commit output/"


def facts(site: object) -> tuple[object, ...]:
    s = site  # RaiseSite
    return (s.path, s.line, s.end_line, s.qualname, s.exception, s.message.kind,  # type: ignore[attr-defined]
            s.message.template, s.message.regex)  # type: ignore[attr-defined]


def test_committed_records_match_the_code_at_head() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    # the options the README's command takes from [tool.crawler] in pyproject.toml
    configured = default_map(ROOT).get("extract", {})
    options = ExtractOptions(exclude=tuple(configured.get("exclude", ())))
    collected = collect(str(ROOT), options=options, name=OWN_NAME, jobs=1, evidence=False)
    folder = output_folder(ROOT / "output", collected.pin)
    committed = [record_files.load_record(p) for p in record_files.iter_record_paths(folder)]
    assert committed, f"no records in {folder}: {REGENERATE}"
    live = sorted(facts(r.site) for r in committed if r.status != REMOVED)
    resolved = class_pass(collected, None)  # as extract runs it: factories, then classes
    fresh = sorted(facts(site) for site in resolved.sites)
    assert live == fresh, REGENERATE
    for record in committed:
        data, _ = safe_yaml.load_yaml_file(folder / record_files.ERRORS_DIR / f"{record.id}.yaml")
        assert schemas.schema_problems(data, "record") == []
