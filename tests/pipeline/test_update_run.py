"""Regeneration on real git histories: ids, statuses, and every annotation byte for byte where it belongs.

Annotations are written into the record files by hand, with comments, as a person would; after
each update every annotated record must hold exactly its block, and every other record none.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.parse.outcomes import FileOutcome
from crawler.parse.skeleton import Region
from crawler.records import (
    ACTIVE,
    NEEDS_REVIEW,
    REMOVED,
    RaiseCounts,
    RaiseSite,
    Template,
)
from crawler.serve.review.checks import check_output
from crawler.store import manifest_file, record_files, render, repo_output
from crawler.store.cache import DATABASE
from crawler.store.parse_cache import ResultCache
from tests.helpers.gitrepo import GitRepo
from tests.helpers.update_output import BASE, OTHER, POSITIVE, UNTOUCHED, Output


@pytest.fixture
def out(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> Output:
    repo = make_repo("lib")
    repo.write("lib/m.py", BASE)
    repo.write("lib/other.py", OTHER)
    repo.write("README.md", "lib\n")
    repo.commit("first")
    output = Output(repo, tmp_path / "out", tmp_path / "cache")
    output.extract()
    return output


NO_PATH = "no path given"
CANNOT = "cannot load {path}"


def annotate_all(out: Output) -> tuple[dict[str, str], dict[str, str]]:
    """Annotate every record; (template -> id, id -> block)."""
    ids = {t: out.find(t).id for t in (POSITIVE, NO_PATH, CANNOT, UNTOUCHED)}
    blocks = {ids[t]: out.annotate(ids[t], f"meaning of {t}") for t in ids}
    return ids, blocks


def test_lines_inserted_above_move_only_the_line(out: Output) -> None:
    ids, blocks = annotate_all(out)
    before = out.records()
    untouched = out.snapshot()[f"{ids[UNTOUCHED]}.yaml"]
    out.repo.write("lib/m.py", "import os\nimport sys\n\n\n" + BASE)
    out.repo.commit("imports")
    result = out.update()
    after = out.records()
    assert set(after) == set(before) and result.parsed == 1
    for template in (POSITIVE, NO_PATH, CANNOT):
        old, new = before[ids[template]], after[ids[template]]
        assert new.status == ACTIVE and new.site.line == old.site.line + 4
        assert new.commit == out.repo.head() and old.commit != new.commit
    assert sorted(result.merged.moved) == sorted(ids[t] for t in (POSITIVE, NO_PATH, CANNOT))
    out.assert_annotations(blocks)
    assert out.snapshot()[f"{ids[UNTOUCHED]}.yaml"] == untouched  # not rewritten at all


def test_function_renamed(out: Output) -> None:
    ids, blocks = annotate_all(out)
    out.repo.write("lib/m.py", BASE.replace("def check(", "def validate("))
    out.repo.commit("rename")
    result = out.update()
    record = out.records()[ids[POSITIVE]]
    assert record.site.qualname == "validate" and record.status == ACTIVE
    # issue 15: git's diff left the raise's lines untouched (step 0, before the keys' step 3)
    assert result.merged.matched_by[ids[POSITIVE]] == 0 and not result.merged.added
    out.assert_annotations(blocks)


def test_class_moved_to_another_file(out: Output) -> None:
    ids, blocks = annotate_all(out)
    head, _, cls = BASE.partition("class Loader:")
    out.repo.write("lib/m.py", head)
    out.repo.write("lib/loaders.py", "import os\n\n\nclass Loader:" + cls)
    out.repo.commit("move class")
    result = out.update()
    records = out.records()
    for template in (NO_PATH, CANNOT):
        record = records[ids[template]]
        assert record.site.path == "lib/loaders.py" and record.status == ACTIVE
        assert record.site.qualname == "Loader.load"
    assert not result.merged.added and not result.merged.removed
    out.assert_annotations(blocks)


def test_file_renamed(out: Output) -> None:
    ids, blocks = annotate_all(out)
    out.repo.move("lib/m.py", "lib/core/checks.py")
    out.repo.commit("rename file")
    result = out.update()
    records = out.records()
    assert set(records) == set(ids.values())
    for template in (POSITIVE, NO_PATH, CANNOT):
        assert records[ids[template]].site.path == "lib/core/checks.py"
        assert result.merged.matched_by[ids[template]] == 0  # issue 15: git's rename, lines untouched
    out.assert_annotations(blocks)


def test_file_renamed_and_edited(out: Output) -> None:
    ids, blocks = annotate_all(out)
    out.repo.move("lib/m.py", "lib/checks.py")
    out.repo.write("lib/checks.py", "# moved\n" + BASE)
    out.repo.commit("rename and edit")
    out.update()
    assert out.records()[ids[NO_PATH]].site.path == "lib/checks.py"
    out.assert_annotations(blocks)


def test_message_reworded_slightly_then_reviewed(out: Output) -> None:
    ids, blocks = annotate_all(out)
    reworded = "x must be strictly positive, got {x}"
    out.repo.write("lib/m.py", BASE.replace(POSITIVE, reworded))
    out.repo.commit("reword")
    result = out.update()
    record = out.records()[ids[POSITIVE]]
    assert record.status == NEEDS_REVIEW and record.site.message.template == reworded
    assert record.history is not None and record.history.previous_template == POSITIVE
    assert result.merged.changed == (ids[POSITIVE],) and [r.id for r in result.stale] == [ids[POSITIVE]]
    out.assert_annotations(blocks)
    _, findings, _ = check_output(out.root)
    assert [f.record.id for f in findings] == [ids[POSITIVE]]

    # A person checks the annotation and says so; the next update (no upstream change) clears it.
    blocks[ids[POSITIVE]] = out.annotate(ids[POSITIVE], "checked again", written_for=reworded)
    result = out.update()
    record = out.records()[ids[POSITIVE]]
    assert record.status == ACTIVE and record.history and record.history.previous_template is None
    assert result.merged.cleared == (ids[POSITIVE],) and result.parsed == 0
    out.assert_annotations(blocks)
    assert check_output(out.root)[1] == []


def test_message_reworded_heavily(out: Output) -> None:
    # Issue 15: reworded in place (the same function, the same guard), however far the words
    # went, the record follows it and waits for review; before, it was removed and a new one made.
    ids, blocks = annotate_all(out)
    out.repo.write("lib/m.py", BASE.replace(NO_PATH, "loading needs a location on disk"))
    out.repo.commit("reword heavily")
    result = out.update()
    record = out.records()[ids[NO_PATH]]
    assert record.status == NEEDS_REVIEW and record.history is not None
    assert record.site.message.template == "loading needs a location on disk"
    assert record.history.previous_template == NO_PATH and not result.merged.added
    assert record.history.paired_by and record.history.paired_by.startswith("reworded_in_place")
    assert result.merged.paired_by[ids[NO_PATH]] == record.history.paired_by
    out.assert_annotations(blocks)


def test_raise_deleted_and_restored(out: Output) -> None:
    ids, blocks = annotate_all(out)
    gone = BASE.replace('        raise ValueError(f"x must be positive, got {x}")\n',
                        "        return 0\n")
    out.repo.write("lib/m.py", gone)
    first = out.repo.commit("delete")
    out.update()
    record = out.records()[ids[POSITIVE]]
    assert record.status == REMOVED and record.history and record.history.removed_in == first
    out.assert_annotations(blocks)
    out.repo.write("lib/m.py", "# back\n" + BASE)
    out.repo.commit("restore")
    result = out.update()
    record = out.records()[ids[POSITIVE]]
    assert record.status == ACTIVE and result.merged.revived == (ids[POSITIVE],)
    assert record.history and record.history.removed_in is None and not result.merged.added
    out.assert_annotations(blocks)


TWINS = '''\
def parse(text):
    if not text:
        raise ValueError("bad input")
    if text.startswith("#"):
        raise ValueError("bad input")
    return text
'''


def test_two_identical_raises_one_removed(out: Output) -> None:
    out.repo.write("lib/twins.py", TWINS)
    out.repo.commit("twins")
    out.update()
    twins = sorted((r for r in out.records().values() if r.site.path == "lib/twins.py"),
                   key=lambda r: r.site.line)
    first, second = (r.id for r in twins)
    blocks = {first: out.annotate(first, "empty text"), second: out.annotate(second, "a comment")}
    out.repo.write("lib/twins.py", TWINS.replace('    if not text:\n        raise ValueError("bad input")\n',
                                                 ""))
    out.repo.commit("drop the first")
    result = out.update()
    records = out.records()
    assert records[first].status == REMOVED and records[second].status == ACTIVE
    assert records[second].site.condition == 'text.startswith("#")'
    assert result.merged.removed == (first,) and not result.merged.added
    out.assert_annotations(blocks)


COPIES = ("\n\ndef check_a(x):\n    raise ValueError(f\"x must be positive, got {x}\")\n"
          "\n\ndef check_b(x):\n    raise ValueError(f\"x must be positive, got {x}\")\n")


def test_template_duplicated_into_two_new_places(out: Output) -> None:
    ids, blocks = annotate_all(out)
    out.repo.write("lib/m.py", BASE + COPIES)
    out.repo.commit("copies")
    result = out.update()
    assert len(result.merged.added) == 2 and out.records()[ids[POSITIVE]].site.qualname == "check"
    out.assert_annotations(blocks)  # the two copies have empty annotations


def test_template_moved_into_two_new_places(out: Output) -> None:
    ids, blocks = annotate_all(out)
    # The original goes and two copies come: one takes the record, the other is new and empty.
    out.repo.write("lib/m.py", BASE.replace('        raise ValueError(f"x must be positive, got {x}")\n',
                                            "        return 0\n") + COPIES)
    out.repo.commit("split")
    result = out.update()
    records = out.records()
    assert records[ids[POSITIVE]].status == ACTIVE
    assert records[ids[POSITIVE]].site.qualname == "check_a"  # deterministic: source order
    live = [r for r in records.values() if r.site.message.template == POSITIVE]
    assert len(live) == 2 and len(result.merged.added) == 1 and not result.merged.removed
    out.assert_annotations(blocks)


def test_no_change_rewrites_nothing_and_reads_nothing(out: Output) -> None:
    _, blocks = annotate_all(out)
    before = out.snapshot()
    assert out.folder is not None
    manifest = (out.folder / manifest_file.MANIFEST).read_bytes()
    result = out.update()
    assert result.files_written == 0 and result.pending == () and result.parsed == 0
    assert out.snapshot() == before and (out.folder / manifest_file.MANIFEST).read_bytes() == manifest
    out.repo.write("README.md", "changed\n")
    out.repo.commit("docs only")
    result = out.update()
    assert result.parsed == 0 and result.pending == (manifest_file.MANIFEST,) and out.snapshot() == before
    out.assert_annotations(blocks)


def test_only_changed_files_are_read_and_only_their_records_loaded(
        out: Output, monkeypatch: pytest.MonkeyPatch) -> None:
    ids, _ = annotate_all(out)
    out.repo.write("lib/other.py", OTHER + "\n# edited\n")
    out.repo.commit("edit other")
    loaded: list[str] = []
    # a load through the cache: a file read in full, or one found by its stat
    full, by_stat = record_files.load_keyed, record_files.record_of
    monkeypatch.setattr(repo_output, "load_keyed", lambda p, loads, listed=False:
                        loaded.append(p.stem) or full(p, loads, listed))
    monkeypatch.setattr(repo_output, "record_of", lambda loads, checked, claimed:
                        loaded.append(claimed) or by_stat(loads, checked, claimed))
    result = out.update()
    assert result.parsed == 1 and loaded == [ids[UNTOUCHED]]


def test_a_run_stopped_before_its_manifest_leaves_no_duplicates(out: Output) -> None:
    assert out.folder is not None
    manifest = out.folder / manifest_file.MANIFEST
    old_manifest = manifest.read_bytes()
    out.repo.write("lib/m.py", BASE + "\n\ndef more():\n    raise KeyError(\"a new one\")\n")
    out.repo.commit("add")
    [added] = out.update().merged.added
    blocks = {added: out.annotate(added, "written right after")}
    manifest.write_bytes(old_manifest)  # as if the run had stopped before writing it
    result = out.update()
    assert not result.merged.added and out.find("a new one").id == added
    assert added in {i for entry in manifest_file.load_manifest(out.folder).files for i in entry.records}
    out.assert_annotations(blocks)


def test_hand_edits_are_kept_and_a_broken_record_is_refused(out: Output) -> None:
    ids, blocks = annotate_all(out)
    out.repo.write("lib/m.py", "\n" + BASE)
    out.repo.commit("shift")
    broken = out.path(ids[NO_PATH])
    broken_text = broken.read_text(encoding="utf-8").replace("status: active", "status: [active")
    broken.write_text(broken_text, encoding="utf-8")
    result = out.update()
    # The broken file is named with its line and left as it is; its source file is held back,
    # so no second record takes its site; every other annotation is where it was.
    assert result.problems and result.problems[0].startswith(f"{broken}:")
    assert broken.read_text(encoding="utf-8") == broken_text
    for record_id, block in blocks.items():
        if record_id != ids[NO_PATH]:
            assert render.annotation_block(out.path(record_id).read_text(encoding="utf-8")) == block
    runner = CliRunner()
    run = runner.invoke(main, ["update", str(out.repo.path), "-o", str(out.root),
                               "--cache-dir", str(out.cache), "-j", "1"])
    assert run.exit_code == 1 and f"{broken}:" in run.output


def test_corrupt_cache_entry_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    site = RaiseSite("a.py", 1, 1, 0, None, None, "<module>", "E", None,
                     Template("literal", "m", (), "^m$"), None, None, "raise E('m')", 1)
    region = Region("def", ("C",), "f", "d" * 40, 1, 3, "def f(self):", RaiseCounts(1),
                    ((("E",), "pkg.E"),))
    value = FileOutcome("a.py", "f" * 40, (site,), RaiseCounts(raise_statements=1),
                        regions=(region,), context="c" * 40)
    cache.put(value)
    cache.close()
    assert cache.get("a.py", "f" * 40) == value
    assert cache.get("b.py", "f" * 40) is None  # the path is part of the key
    with sqlite3.connect(tmp_path / DATABASE) as connection:
        assert connection.execute("UPDATE entries SET entry = ?", ('{"key": "trunc',)).rowcount == 1
    assert cache.get("a.py", "f" * 40) is None and cache.corrupt == 1
    cache.put(value)
    assert cache.get("a.py", "f" * 40) is not None


def test_an_edited_parser_never_reuses_what_the_old_one_read(tmp_path: Path) -> None:
    """The result key holds a digest of crawler/parse's sources, not only the version number."""
    package = Path(__file__).resolve().parents[2] / "crawler"
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "crawler", ignore=shutil.ignore_patterns("__pycache__"))

    def key_in(root: Path) -> str:
        code = ("from crawler.store.parse_cache import ResultCache; "
                "print(ResultCache(None).key('a.py', 'f' * 40))")
        return subprocess.run([sys.executable, "-c", code], cwd=root, check=True, text=True,
                              capture_output=True, env={**os.environ, "PYTHONPATH": str(root)}
                              ).stdout.strip()

    before = key_in(copy)
    assert before == ResultCache(None).key("a.py", "f" * 40)
    with (copy / "crawler" / "parse" / "messages.py").open("a") as source:
        source.write("\n# an edit that changes no version number\n")
    assert key_in(copy) != before


def test_a_cache_of_the_old_format_is_ignored(tmp_path: Path) -> None:
    """Format 5 kept results as files under results/, and checked loads in loads.sqlite3."""
    key = "ab" + "0" * 62
    (tmp_path / "results" / "ab").mkdir(parents=True)
    (tmp_path / "results" / "ab" / f"{key}.json").write_text(json.dumps({"key": key}))
    with sqlite3.connect(tmp_path / "loads.sqlite3") as connection:
        connection.execute("CREATE TABLE checked (key TEXT PRIMARY KEY, entry TEXT NOT NULL)")
    (tmp_path / DATABASE).write_bytes(b"")  # an empty file: SQLite makes it a database
    cache = ResultCache(tmp_path)
    assert cache.get("a.py", "f" * 40) is None and (cache.misses, cache.corrupt) == (1, 0)
    with sqlite3.connect(tmp_path / DATABASE) as connection:  # a future layout: moved aside
        connection.execute("DROP TABLE entries")
        connection.execute("CREATE TABLE entries (other TEXT)")
    other = ResultCache(tmp_path)
    assert other.get("a.py", "f" * 40) is None and other.corrupt == 1
    assert (tmp_path / f"{DATABASE}.broken").is_file()


def test_cli_update_check_dry_run_and_check(out: Output) -> None:
    ids, _ = annotate_all(out)
    runner = CliRunner()
    base = ["update", str(out.repo.path), "-o", str(out.root), "--cache-dir", str(out.cache), "-j", "1"]
    assert runner.invoke(main, [*base, "--check"]).exit_code == 0
    out.repo.write("lib/m.py", BASE.replace(POSITIVE, "x must be strictly positive, got {x}"))
    out.repo.commit("reword")
    before = out.snapshot()
    run = runner.invoke(main, [*base, "--check"])
    assert run.exit_code == 1 and "stale" in run.output and out.snapshot() == before
    run = runner.invoke(main, [*base, "--dry-run", "--json"])
    summary = json.loads(run.output)
    assert run.exit_code == 0 and summary["changed"] == [ids[POSITIVE]] and out.snapshot() == before
    assert summary["stale_annotations"][0]["id"] == ids[POSITIVE]
    run = runner.invoke(main, base)
    assert run.exit_code == 0 and "changed" in run.output and "stale annotation" in run.output
    assert runner.invoke(main, [*base, "--check"]).exit_code == 0
    run = runner.invoke(main, ["check", str(out.root)])
    assert run.exit_code == 1 and ids[POSITIVE] in run.output and "1 to review" in run.output
    assert runner.invoke(main, ["validate", str(out.root)]).exit_code == 0


def test_update_needs_an_extracted_folder(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("fresh")
    repo.write("a.py", "raise ValueError('x')\n")
    repo.commit()
    run = CliRunner().invoke(main, ["update", str(repo.path), "-o", str(tmp_path / "none")])
    # a missing output folder exits 2 on every command since issue 18 (it was 1 here)
    assert run.exit_code == 2 and "crawler extract" in run.output


def test_check_lists_annotations_bound_to_no_message(out: Output) -> None:
    record = out.find(NO_PATH)
    path = out.path(record.id)
    text = path.read_text(encoding="utf-8")
    block = render.annotation_block(text)
    assert block is not None
    path.write_text(text.replace(block, "annotation:\n  what_it_means: text without written_for\n"),
                    encoding="utf-8")
    run = CliRunner().invoke(main, ["check", str(out.root), "--json"])
    found = json.loads(run.output)["findings"]
    assert run.exit_code == 1 and [f["id"] for f in found] == [record.id]


def test_every_command_has_help_with_an_example() -> None:
    for name, command in main.commands.items():
        assert command.help and "Example" in command.help, name


def test_check_reads_a_record_file_in_full_only_when_its_bytes_are_new(
        out: Output, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` uses the load cache update fills: unchanged bytes skip the schema; an edited
    file is checked in full, so a file the schema refuses is named all the same."""
    from crawler.store import schemas

    path = out.path(out.find(NO_PATH).id)
    full_checks: list[Path] = []
    real = schemas.check_schema
    monkeypatch.setattr(schemas, "check_schema",
                        lambda data, name, where, text: (full_checks.append(Path(where)),
                                                         real(data, name, where, text))[1])
    base = ["check", str(out.root), "--cache-dir", str(out.cache), "--json"]
    first = CliRunner().invoke(main, base)
    full_checks.clear()
    again = CliRunner().invoke(main, base)
    assert again.output == first.output and full_checks == []
    path.write_text(path.read_text(encoding="utf-8").replace("status: active", "status: finished"),
                    encoding="utf-8")
    run = CliRunner().invoke(main, base)
    assert full_checks == [path] and run.exit_code == 1 and f"{path}:" in run.output
