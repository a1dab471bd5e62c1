"""`crawler history` on a real git history of tagged releases: versions, every wording, and the
annotations planted at the first release, byte for byte on their errors.

The history (tags in the order made; version order differs from name order):

    v0.9.0      pkg/a.py: load "negative size {x}", parse ValueError "odd gizmo value",
                check "empty input", drop "dropped feature"
    v0.10.0rc1  load reworded "size must be non-negative, got {x}"; extra "new error" added
                (also tagged `v-next`, which is no version, and `nightly`, outside the glob)
    v0.10.0     load reworded "size {x} is negative"; check moved to pkg/b.py; drop removed
    v0.11.0     drop back; parse raises TypeError "odd gizmo value"
    HEAD        pkg/c.py "unreleased error": in no release yet
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.batch._executors import LocalPool
from crawler.batch.driver import DONE, FAILED, run_batch
from crawler.batch.history_task import HistoryTask, run_history
from crawler.batch.reposfile import TagWalk, load_batch
from crawler.cli.commands import main
from crawler.errors import BatchError
from crawler.pipeline import extract
from crawler.pipeline.history_run import HistoryResult, walk_releases
from crawler.records import ACTIVE, NEEDS_REVIEW, REMOVED, ErrorRecord, Versions
from crawler.serve.export.writers import export
from crawler.serve.lookup.sources import LookupIndex, load_records
from crawler.store import manifest_file, record_files
from tests.helpers.gitrepo import GitRepo
from tests.helpers.history import TAGS, build_history, module_a
from tests.helpers.outputkit import annotate


@dataclass(frozen=True)
class Walked:
    """The repository, its output root and folder after the walk, and the planted blocks."""

    repo: GitRepo
    root: Path
    folder: Path
    cache: Path
    first: HistoryResult  # the walk to v0.9.0
    rest: HistoryResult  # the walk from there to HEAD
    planted: dict[str, str]  # record id -> the annotation block planted at v0.9.0

    def records(self) -> dict[str, ErrorRecord]:
        return {r.id: r for r in (record_files.load_record(p)
                                  for p in record_files.iter_record_paths(self.folder))}

    def by_template(self) -> dict[str, ErrorRecord]:
        return {r.site.message.template: r for r in self.records().values()}


def walk(repo: GitRepo, root: Path, cache: Path, ref: str = "HEAD") -> HistoryResult:
    return walk_releases(str(repo.path), tags=TAGS, ref=ref, output_root=root, cache_dir=cache,
                         jobs=1, evidence=False)


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Walked:
    """Walked to the first release, annotated there by hand, then walked to HEAD: shared."""
    base = tmp_path_factory.mktemp("history")
    repo = build_history(base / "repo")
    root, cache = base / "out", base / "cache"
    first = walk(repo, root, cache, ref="v0.9.0")
    planted = {}
    for path in record_files.iter_record_paths(first.folder):
        record = record_files.load_record(path)
        planted[record.id] = annotate(path, f"about {record.site.message.template}")
    rest = walk(repo, root, cache)
    return Walked(repo, root, first.folder, cache, first, rest, planted)


def spans(record: ErrorRecord) -> list[tuple[str, str | None, str | None, str, str]]:
    assert record.history is not None
    return [(s.template, s.first, s.last, s.exception, s.path) for s in record.history.templates]


def test_the_first_walk_stops_at_the_tag_asked_for(walked: Walked) -> None:
    assert [s.tag for s in walked.first.steps] == ["v0.9.0"]
    assert len(walked.planted) == 4


def test_tags_walk_in_version_order_and_tags_that_are_no_versions_are_left_out(
        walked: Walked) -> None:
    assert [s.tag for s in walked.rest.steps] == ["v0.10.0rc1", "v0.10.0", "v0.11.0", None]
    assert ("v-next", "not a version") in walked.rest.walk.ignored
    assert "nightly" not in dict(walked.rest.walk.ignored)  # outside the glob: never considered
    manifest = manifest_file.load_manifest(walked.folder)
    assert manifest is not None and manifest.releases is not None
    assert [r.tag for r in manifest.releases.walked] == ["v0.9.0", "v0.10.0rc1", "v0.10.0",
                                                         "v0.11.0"]
    assert manifest.pin.sha == walked.repo.head()


def test_a_message_reworded_twice_keeps_every_wording_with_its_releases(walked: Walked) -> None:
    record = walked.by_template()["size {x} is negative"]
    assert record.versions == Versions("v0.9.0", None)
    assert spans(record) == [
        ("negative size {x}", "v0.9.0", "v0.9.0", "ValueError", "pkg/a.py"),
        ("size must be non-negative, got {x}", "v0.10.0rc1", "v0.10.0rc1", "ValueError",
         "pkg/a.py"),
        ("size {x} is negative", "v0.10.0", None, "ValueError", "pkg/a.py")]
    assert record.status == NEEDS_REVIEW


def test_a_message_moved_to_another_file_keeps_its_record(walked: Walked) -> None:
    record = walked.by_template()["empty input"]
    assert record.site.path == "pkg/b.py" and record.versions == Versions("v0.9.0", None)
    assert spans(record) == [("empty input", "v0.9.0", "v0.10.0rc1", "TypeError", "pkg/a.py"),
                             ("empty input", "v0.10.0", None, "TypeError", "pkg/b.py")]


def test_a_message_removed_and_brought_back_has_a_gap(walked: Walked) -> None:
    record = walked.by_template()["dropped feature"]
    assert record.status == ACTIVE and record.versions == Versions("v0.9.0", None)
    assert spans(record) == [
        ("dropped feature", "v0.9.0", "v0.10.0rc1", "RuntimeError", "pkg/a.py"),
        ("dropped feature", "v0.11.0", None, "RuntimeError", "pkg/a.py")]


def test_an_exception_class_change_opens_a_span_with_the_new_class(walked: Walked) -> None:
    record = walked.by_template()["odd gizmo value"]
    assert record.site.exception == "TypeError" and record.status == NEEDS_REVIEW
    assert spans(record) == [("odd gizmo value", "v0.9.0", "v0.10.0", "ValueError", "pkg/a.py"),
                             ("odd gizmo value", "v0.11.0", None, "TypeError", "pkg/a.py")]


def test_a_site_added_at_a_release_and_one_after_the_last(walked: Walked) -> None:
    records = walked.by_template()
    assert records["new error"].versions == Versions("v0.10.0rc1", None)
    later = records["unreleased error"]
    assert later.versions == Versions(None, None)
    assert spans(later) == [("unreleased error", None, None, "ValueError", "pkg/c.py")]
    manifest = manifest_file.load_manifest(walked.folder)
    assert manifest is not None and manifest.releases is not None
    assert manifest.releases.unreleased == (later.id,)


def test_annotations_planted_at_the_first_release_stay_byte_for_byte_on_their_errors(
        walked: Walked) -> None:
    records = walked.records()
    for record_id, block in walked.planted.items():
        text = (walked.folder / "errors" / f"{record_id}.yaml").read_text(encoding="utf-8")
        assert text.count(block) == 1
        record = records[record_id]
        # on its error: the wording it was written for is the record's first
        assert record.annotation.data["what_it_means"] == f"about {spans(record)[0][0]}"
    others = [r for i, r in records.items() if i not in walked.planted]
    assert others and all(r.annotation.is_empty for r in others)


def test_a_new_release_is_walked_alone_and_untouched_records_keep_their_bytes(
        walked: Walked, tmp_path: Path) -> None:
    shutil.copytree(walked.repo.path, tmp_path / "repo", symlinks=True)
    shutil.copytree(walked.root, tmp_path / "out", symlinks=True)
    repo = GitRepo.__new__(GitRepo)  # the copy, as it is: no new `git init`
    repo.path, repo._tick = tmp_path / "repo", 100
    folder = tmp_path / "out" / walked.folder.relative_to(walked.root)
    before = {p.name: p.read_bytes() for p in (folder / "errors").iterdir()}
    repo.write("pkg/a.py", module_a("size {x} is negative", parse="TypeError", check=False))
    repo.commit("extra goes")
    repo.tag("v0.12.0")
    repo.write("README", "after v0.12.0\n")
    repo.commit("docs only")
    result = CliRunner().invoke(main, ["history", str(repo.path), "--tags", TAGS, "-o",
                                       str(tmp_path / "out"), "--cache-dir", str(walked.cache),
                                       "--no-evidence", "-j", "1"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("[")]
    # each tag with its date and the time left; the end commit, the last step, has neither
    assert len(lines) == 2 and lines[0].startswith("[1/2] v0.12.0 (2024-01-01) @ ")
    assert lines[0].endswith(" left") and "1 removed" in lines[0]
    assert lines[1].startswith("[2/2] HEAD (no release) @ ") and not lines[1].endswith(" left")
    records = {r.site.message.template: r for r in (
        record_files.load_record(p) for p in record_files.iter_record_paths(folder))}
    assert records["new error"].status == REMOVED
    assert records["new error"].versions == Versions("v0.10.0rc1", "v0.11.0")
    assert spans(records["new error"])[-1][1:3] == ("v0.10.0rc1", "v0.11.0")
    assert records["unreleased error"].versions == Versions("v0.12.0", None)
    assert spans(records["unreleased error"])[0][1] == "v0.12.0"
    after = {p.name: p.read_bytes() for p in (folder / "errors").iterdir()}
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {f"{records['new error'].id}.yaml", f"{records['unreleased error'].id}.yaml"}
    manifest = manifest_file.load_manifest(folder)
    assert manifest is not None and manifest.releases is not None
    assert manifest.releases.walked[-1].tag == "v0.12.0" and manifest.releases.unreleased == ()
    # a removed record is found by its message, marked with the release it was last in
    found = CliRunner().invoke(main, ["lookup", "OSError: new error", str(tmp_path / "out")])
    assert found.exit_code == 0, found.output
    assert found.output.splitlines()[0].startswith(f"= {records['new error'].id}  OSError")
    assert "    removed: last in v0.11.0; printed by v0.10.0rc1 to v0.11.0" \
        in found.output.splitlines()


def test_a_glob_that_matches_no_tag_is_one_line_and_exit_1(walked: Walked, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["history", str(walked.repo.path), "--tags", "release-*",
                                       "-o", str(tmp_path / "out"), "--no-evidence"])
    assert result.exit_code == 1
    assert "no tag matches 'release-*'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_message_an_old_release_printed_finds_its_record_first(walked: Walked) -> None:
    records, problems = load_records(walked.root)
    index = LookupIndex(records)
    [first, *_] = index.answer("ValueError: negative size -3").matches
    assert first.wording.past and first.wording.template == "negative size {x}"
    assert first.wording.today == "size {x} is negative" and first.captures == {"x": "-3"}
    assert (first.wording.first_release, first.wording.last_release) == ("v0.9.0", "v0.9.0")
    [middle, *_] = index.answer("size must be non-negative, got -1").matches
    assert middle.wording.record_id == first.wording.record_id and middle.wording.past
    assert middle.wording.first_release == middle.wording.last_release == "v0.10.0rc1"
    [today, *_] = index.answer("size -3 is negative").matches  # today's wording: no mark
    assert today.wording.record_id == first.wording.record_id and not today.wording.past
    assert problems == []


def test_lookup_prints_the_releases_that_printed_an_old_wording(walked: Walked) -> None:
    result = CliRunner().invoke(main, ["lookup", "negative size 7", str(walked.root)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1:3] == ["    negative size {x}", "    x = '7'"]
    assert lines[3] == ("    an old wording, printed by v0.9.0 to v0.9.0; today it reads: "
                        "size {x} is negative")


def test_the_sqlite_export_has_the_versions_and_every_wording(walked: Walked,
                                                              tmp_path: Path) -> None:
    target = tmp_path / "errors.sqlite"
    export(walked.root, "sqlite", target)
    with closing(sqlite3.connect(target)) as db:
        versions = dict(((i, (f, last)) for i, f, last in db.execute("SELECT * FROM versions")))
        wordings = db.execute("SELECT record_id, position, template, first_release, "
                              "last_release, exception, path FROM wordings "
                              "ORDER BY record_id, position").fetchall()
    records = walked.records()
    assert versions == {i: (r.versions.first, r.versions.last) for i, r in records.items()
                        if r.versions is not None}
    assert len(versions) == len(records) == 6
    expected = sorted((i, n, *span) for i, r in records.items()
                      for n, span in enumerate(spans(r)))
    assert wordings == expected and len(wordings) == 11


@pytest.fixture(scope="module")
def exported(walked: Walked, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The walked folder's SQLite export: shared."""
    target = tmp_path_factory.mktemp("export") / "errors.sqlite"
    export(walked.root, "sqlite", target)
    return target


@pytest.mark.parametrize("message", [
    "ValueError: negative size -3",  # v0.9.0's wording of a live record
    "size must be non-negative, got -1",  # v0.10.0rc1's
    "size -3 is negative",  # today's
    "ValueError: odd gizmo value",  # a class that changed: the old class named
    "dropped feature",  # removed and back
    "OSError: new error",
])
def test_lookup_in_the_sqlite_export_tries_past_wordings_as_the_folder_does(
        walked: Walked, exported: Path, message: str) -> None:
    target = exported
    from_db = CliRunner().invoke(main, ["lookup", message, "--db", str(target), "--json"])
    from_folder = CliRunner().invoke(main, ["lookup", message, str(walked.root), "--json"])
    # the same answer either way; found (exit 0), or listed only (exit 1) where the words are
    # phrases every library prints (`size -3 is negative`: `rarity`)
    assert from_db.exit_code == from_folder.exit_code, from_db.output
    assert from_db.exit_code == (1 if message == "size -3 is negative" else 0), from_db.output
    assert from_db.output == from_folder.output
    found = json.loads(from_db.output)["matches"]
    assert found and found[0]["exact"]
    if "negative size" in message or "non-negative" in message:
        first = found[0]
        assert first["template"] in ("negative size {x}", "size must be non-negative, got {x}")
        assert first["past_wording"]["today"] == "size {x} is negative"


def test_a_walk_runs_whole_in_a_batch_worker_process(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("m.py", 'def f():\n    raise ValueError("one")\n')
    repo.commit()
    repo.tag("2.0")
    repo.write("m.py", 'def f():\n    raise ValueError("one, reworded")\n')
    repo.commit()
    repo.tag("10.0")
    task = HistoryTask(str(repo.path), "*", str(tmp_path / "out"), cache_dir=str(tmp_path / "c"),
                       jobs=1, evidence=False)
    pool = LocalPool(1)
    try:
        outcome = pool.executor.submit(run_history, task).result(timeout=120)
    finally:
        pool.executor.shutdown(wait=True)
    assert outcome.error is None and outcome.walked == ("2.0", "10.0") and outcome.records == 1
    failed = run_history(replace(task, tags="v*"))
    assert failed.error is not None and "no tag matches 'v*'" in failed.error


def test_a_repos_yaml_entry_with_history_walks_its_releases_in_a_batch(walked: Walked,
                                                                       tmp_path: Path) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text(f"repos:\n  - source: {walked.repo.path}\n    evidence: false\n"
                    "    history: {tags: 'v*', since: v0.10.0rc1}\n", encoding="utf-8")
    [entry] = load_batch(path, tmp_path / "out")
    assert entry.history == TagWalk("v*", "v0.10.0rc1")
    batch = run_batch([entry], jobs=1, cache_dir=walked.cache)
    [result] = batch.results
    assert result.status == DONE and result.error is None, result.error
    assert result.folder is not None and result.records == 6
    alone = walk_releases(str(walked.repo.path), tags=TAGS, output_root=tmp_path / "alone",
                          cache_dir=walked.cache, jobs=1, evidence=False, since="v0.10.0rc1")
    manifest = manifest_file.load_manifest(result.folder)
    assert manifest is not None and manifest.releases is not None
    assert [r.tag for r in manifest.releases.walked] == ["v0.10.0rc1", "v0.10.0", "v0.11.0"]

    def histories(folder: Path) -> dict[str, tuple[Versions | None, list[tuple[str, ...]]]]:
        return {r.site.message.template: (r.versions, spans(r)) for r in (
            record_files.load_record(p) for p in record_files.iter_record_paths(folder))}

    assert histories(result.folder) == histories(alone.folder)
    again = run_batch(load_batch(path, tmp_path / "out"), jobs=1, cache_dir=walked.cache)
    assert again.results[0].status == DONE and again.results[0].records == 6
    dry = run_batch([entry], jobs=1, cache_dir=walked.cache, dry_run=True)
    assert dry.results[0].status == FAILED and "no dry run" in (dry.results[0].error or "")


@pytest.mark.parametrize(("history", "expected"), [
    ("{tags: 3}", "repos.yaml:3: repos[0] (source './r'): history.tags: 3 is not of type 'string'"),
    ("{since: v1}", "repos.yaml:3: repos[0] (source './r'): history: 'tags' is a required"),
    ("{tags: 'v*', from: v1}", "repos.yaml:3: repos[0] (source './r'): history: Additional"),
    ("'v*'", "repos.yaml:3: repos[0] (source './r'): history: 'v*' is not of type 'object'"),
    ("{tags: 'v*'}\n    web_url: https://forge.example/o/r",
     "repos.yaml:3: repos[0] (source './r'): history: a release walk takes no `web_url` yet"),
])
def test_a_bad_history_key_is_one_line_naming_file_line_and_field(tmp_path: Path, history: str,
                                                                  expected: str) -> None:
    path = tmp_path / "repos.yaml"
    path.write_text(f"repos:\n  - source: ./r\n    history: {history}\n", encoding="utf-8")
    with pytest.raises(BatchError) as caught:
        load_batch(path)
    assert str(caught.value).startswith(f"{tmp_path / expected}"), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_walk_reads_the_tests_at_its_end_and_gives_the_evidence_an_extract_gives(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    test = ("import pytest\nfrom pkg.m import f, g\n\n\ndef test_f():\n"
            "    with pytest.raises(ValueError, match='{}'):\n        f()\n")
    repo.write("pkg/m.py", 'def f():\n    raise ValueError("bad one")\n')
    repo.write("tests/test_m.py", test.format("bad one"))
    repo.commit()
    repo.tag("v1.0")
    repo.write("pkg/m.py", 'def f():\n    raise ValueError("bad two")\n\n\n'
               'def g():\n    raise KeyError("no key")\n')
    repo.write("tests/test_m.py", test.format("bad two") + "\n\ndef test_g():\n"
               "    with pytest.raises(KeyError, match='no key'):\n        g()\n")
    repo.commit()
    repo.tag("v2.0")
    repo.write("pkg/m.py", 'def f():\n    raise ValueError("bad three")\n\n\n'
               'def g():\n    raise KeyError("no key")\n')
    repo.commit()
    cache = tmp_path / "cache"
    walked = walk_releases(str(repo.path), tags=TAGS, output_root=tmp_path / "walk",
                           cache_dir=cache, jobs=1)
    assert [s.result.evidence is not None for s in walked.steps] == [False, False, True]
    extracted = extract(str(repo.path), output_root=tmp_path / "extract", cache_dir=cache, jobs=1)

    def evidence(folder: Path) -> dict[str, tuple[object, ...]]:
        return {r.site.message.template: r.evidence for r in (
            record_files.load_record(p) for p in record_files.iter_record_paths(folder))}

    found = evidence(walked.folder)
    assert found == evidence(extracted.folder)
    assert found["no key"] and not found["bad three"]  # the test still matches "bad two"
