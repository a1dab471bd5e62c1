"""What a walk holds between its steps is what its files would give back; its journal is its own."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from crawler.errors import OutputError
from crawler.parse.file_tasks import visit_file
from crawler.pipeline import extract
from crawler.records import ArgumentText, CrossCall, Template
from crawler.store import manifest_file, record_files
from crawler.store.held_folder import JOURNAL, HeldResults, finish_checkpoint
from crawler.store.parse_cache import ResultCache
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import annotate
from tests.helpers.records import a_record


def test_a_record_read_back_is_the_record_its_file_loads(tmp_path: Path) -> None:
    record = a_record()
    site = replace(record.site, cross_calls=(CrossCall("msgs.bad(x)", "pkg.msgs.bad",
                                                       (ArgumentText(None, "x", None),)),),
                   deferred=(Template("variable", "{msgs.bad(x)}", ("msgs.bad(x)",), "^(.*)$"),))
    record = replace(record, site=site)
    record_files.write_record(tmp_path, record)
    path = tmp_path / record_files.ERRORS_DIR / f"{record.id}.yaml"
    annotate(path, "written by a person")
    loaded = record_files.load_record(path)
    assert (loaded.site.cross_calls, loaded.site.deferred) == ((), ())  # the file has neither
    assert record_files.read_back(record) != record
    assert record_files.read_back(loaded) == loaded
    assert record_files.read_back(replace(loaded, site=site)) == loaded


def test_a_manifest_read_back_is_the_manifest_its_file_loads(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/a.py", 'def f(x):\n    if x:\n        raise ValueError(f"bad {x}")\n')
    repo.commit("first")
    result = extract(str(repo.path), output_root=tmp_path / "out", cache_dir=tmp_path / "cache",
                     jobs=1, evidence=False)
    loaded = manifest_file.load_manifest(result.folder)
    assert loaded is not None
    assert manifest_file.read_back_manifest(result.manifest) == loaded


@pytest.mark.parametrize("renames", [
    [[".x.tmp", "../elsewhere.yaml"]],
    [["../.manifest.yaml.1.tmp", "manifest.yaml"]],
    [["errors/.0123456789abcdef.yaml.1.tmp", "manifest.yaml"]],
    "not a list",
])
def test_a_journal_this_crawler_did_not_write_is_refused_in_one_line(
        tmp_path: Path, renames: object) -> None:
    (tmp_path / JOURNAL).write_text(json.dumps({"renames": renames}), encoding="utf-8")
    with pytest.raises(OutputError) as refused:
        finish_checkpoint(tmp_path)
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / JOURNAL}: not a checkpoint journal")
    assert "remove it and run again" in message and "\n" not in message
    assert (tmp_path / JOURNAL).is_file()


def test_a_journal_whose_temp_files_are_gone_finishes_nothing_and_goes(tmp_path: Path) -> None:
    (tmp_path / "manifest.yaml").write_text("kept\n", encoding="utf-8")
    renames = [["errors/.0123456789abcdef.yaml.ab12.tmp", "errors/0123456789abcdef.yaml"],
               [".manifest.yaml.cd34.tmp", "manifest.yaml"]]
    (tmp_path / JOURNAL).write_text(json.dumps({"renames": renames}), encoding="utf-8")
    assert finish_checkpoint(tmp_path)
    assert not (tmp_path / JOURNAL).exists()
    assert (tmp_path / "manifest.yaml").read_text(encoding="utf-8") == "kept\n"
    assert not finish_checkpoint(tmp_path)


def test_held_results_decode_an_outcome_once_and_give_what_the_cache_holds(tmp_path: Path) -> None:
    source = b'def f(x):\n    raise ValueError(f"bad {x}")\n'
    first = visit_file("pkg/a.py", "a" * 40, source)
    held = HeldResults(tmp_path)
    assert held.get("pkg/a.py", "a" * 40) is None
    held.put(first)
    held.flush()
    got = held.get("pkg/a.py", "a" * 40)
    assert got == ResultCache(tmp_path).get("pkg/a.py", "a" * 40) == first
    assert held.get("pkg/a.py", "a" * 40) is got  # decoded once, kept for the next step
    # an outcome stored again under the same key is what the next read gives, from the cache
    again = visit_file("pkg/a.py", "a" * 40, source.replace(b"bad", b"worse"))
    held.put(again)
    held.flush()
    assert held.get("pkg/a.py", "a" * 40) == again != got


def test_held_results_let_go_of_what_two_steps_did_not_read(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    for name in ("a", "b"):
        cache.put(visit_file(f"pkg/{name}.py", name * 40, b'raise ValueError("x")\n'))
    cache.flush()
    held = HeldResults(tmp_path)
    a, b = held.get("pkg/a.py", "a" * 40), held.get("pkg/b.py", "b" * 40)
    held.next_step()
    assert held.get("pkg/a.py", "a" * 40) is a  # read by the step before: kept
    held.next_step()
    assert held.get("pkg/a.py", "a" * 40) is a  # read again by the last step: still kept
    assert held.get("pkg/b.py", "b" * 40) == b and held.get("pkg/b.py", "b" * 40) is not b
