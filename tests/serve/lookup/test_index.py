"""The lookup index beside the records: built by the first lookup, kept by extract and update,
brought up to date by lookup, rebuilt when it is missing or not one; and the same answer from a
folder, an export and memory."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.records import REMOVED
from crawler.serve.export.writers import export
from crawler.serve.lookup import index as lookup_index
from crawler.serve.lookup import ranking
from crawler.serve.lookup.sources import (
    FolderAnswer,
    LookupIndex,
    describe,
    load_records,
    lookup_database,
    lookup_output,
    repository_folders,
)
from crawler.store import manifest_file, record_files
from tests.helpers.gitrepo import GitRepo
from tests.helpers.lookup_index import SOURCE, extract, extracted
from tests.helpers.processes import child_env


@pytest.fixture
def small(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("small")
    for path, text in SOURCE.items():
        repo.write(path, text)
    repo.commit()
    return repo


def rows(folder: Path) -> dict[str, tuple[int, str]]:
    """Each errors/ file's entry: its rowid (new when the row is written again) and template."""
    with closing(sqlite3.connect(folder / lookup_index.INDEX_FILE)) as connection:
        return {file: (rowid, template) for file, rowid, template in connection.execute(
            "SELECT file, rowid, template FROM entries")}


def test_update_refreshes_the_changed_record_only(small: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    folder = extract(small, out)
    index = folder / lookup_index.INDEX_FILE
    assert index.exists()  # an extract leaves the index ready for the first lookup
    assert lookup_output(out, "bad shape 3").answer.found
    before, inode = rows(folder), index.stat().st_ino
    assert sorted(t for _, t in before.values()) == [
        "bad shape {shape}", "expected {n} items", "missing column {key}"]
    small.write("c.py", "def c(n):\n    raise TypeError('expected %d things' % n)\n")
    small.commit()
    result = CliRunner().invoke(main, ["update", str(small.path), "-o", str(out),
                                       "-q"])
    assert result.exit_code == 0, result.output
    after = rows(folder)
    assert index.stat().st_ino == inode  # the same file, not built again
    changed = {f for f in after if after[f] != before[f]}
    assert len(changed) == 1 and after[changed.pop()][1] == "expected {n} things"
    assert lookup_index.refresh(folder) == 0  # nothing left for the next lookup to read
    (match,) = lookup_output(out, "TypeError: expected 3 things").answer.matches
    assert match.exact and match.wording.status == "needs_review"


def test_a_missing_empty_damaged_or_old_index_is_built_again(out: Path, tmp_path: Path) -> None:
    """Only what the crawler wrote is replaced: its index of another version (or of the version
    before the mark), an index it marked that is damaged, an empty file, nothing at all."""
    (folder,) = repository_folders(out)
    index = folder / lookup_index.INDEX_FILE
    expected = _found(lookup_output(folder, "bad shape 3"))
    for spoil in (index.unlink, lambda: index.write_bytes(b""), lambda: _set_version(index, "0"),
                  lambda: _truncate(index, 100), lambda: _unmarked_version_2(index)):
        spoil()
        found = lookup_output(folder, "bad shape 3")
        assert _found(found) == expected and expected and found.problems == ()
        assert index.is_file() and rows(folder) and _mark(index) == lookup_index.APPLICATION_ID


def _found(found: FolderAnswer) -> list[tuple[str, bool, str]]:
    return [(m.wording.record_id, m.exact, m.wording.template) for m in found.answer.matches]


def _set_version(index: Path, version: str) -> None:
    with closing(sqlite3.connect(index)) as connection, connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'version'", (version,))


def _truncate(index: Path, size: int) -> None:
    with index.open("r+b") as handle:
        handle.truncate(size)


def _unmarked_version_2(index: Path) -> None:
    """An index as version 2 wrote it: no application_id, its files table without digests."""
    with closing(sqlite3.connect(index)) as connection, connection:
        connection.execute("PRAGMA application_id = 0")
        connection.execute("ALTER TABLE files DROP COLUMN digest")
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'version'")


def _mark(index: Path) -> int:
    return int.from_bytes(index.read_bytes()[68:72], "big")


def test_a_record_file_replaced_by_a_person_is_seen(out: Path, tmp_path: Path) -> None:
    (folder,) = repository_folders(out)
    (path,) = [p for p in (folder / "errors").iterdir() if "bad shape" in p.read_text()]
    replacement = path.with_name(".edit.tmp")
    replacement.write_text(path.read_text().replace("status: active", "status: removed", 1))
    os.replace(replacement, path)
    (match,) = [m for m in lookup_output(folder, "bad shape 3").answer.matches if m.exact]
    assert match.wording.status == REMOVED


def test_an_unchanged_folder_reads_no_file_and_writes_nothing(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # files just copied are racy for a moment, and one settled later is written down: however
    # long the steps take on a loaded machine, none is racy here (that is the next test's)
    for name in ("RACY_NS", "FINE_RACY_NS"):
        monkeypatch.setattr(lookup_index, name, 0)
    (folder,) = repository_folders(out)
    lookup_index.refresh(folder)
    index = folder / lookup_index.INDEX_FILE
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert lookup_index.refresh(folder) == 0
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_a_racy_file_is_told_by_its_bytes_until_old_enough(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file read within RACY_NS of its last change keeps a digest: a change in the same clock
    tick (its signature unchanged, set here in the index as such a change leaves it) is read
    again; once the file is old enough, its digest is dropped and its signature trusted."""
    (folder,) = repository_folders(out)
    (path,) = [p for p in (folder / "errors").iterdir() if "bad shape" in p.read_text()]
    monkeypatch.setattr(lookup_index, "FINE_RACY_NS", 10**12)  # however long the steps take
    os.utime(path)  # just changed: racy when the index reads it
    lookup_index.refresh(folder)
    assert _digests(folder)[path.name] is not None
    text = path.read_text()
    with path.open("r+") as handle:  # in place, the same length
        handle.truncate(0)
        handle.write(text.replace("bad shape", "bad shope"))
    with closing(sqlite3.connect(folder / lookup_index.INDEX_FILE)) as connection, connection:
        connection.execute("UPDATE files SET ino = ?, size = ?, mtime_ns = ?, ctime_ns = ? "
                           "WHERE name = ?", (*lookup_index.signature_of(os.lstat(path)), path.name))
    assert lookup_index.refresh(folder) == 1
    assert [m.exact for m in lookup_output(folder, "bad shope 3").answer.matches][:1] == [True]
    for name in ("RACY_NS", "FINE_RACY_NS"):
        monkeypatch.setattr(lookup_index, name, 0)
    assert lookup_index.refresh(folder) == 0
    assert set(_digests(folder).values()) == {None}


def test_a_settled_folder_is_checked_by_its_listing_and_every_change_is_still_seen(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once no file is racy the index keeps the digest of errors/'s listing (names and
    signatures): the same listing, and no row is read; an edit in place (same name, same
    size), a rename and a deletion each change it, and the next lookup reads what changed."""
    (folder,) = repository_folders(out)
    for name in ("RACY_NS", "FINE_RACY_NS"):
        monkeypatch.setattr(lookup_index, name, 0)
    lookup_index.refresh(folder)
    assert _listing_kept(folder) == lookup_index._packed_listing(folder)
    (path,) = [p for p in (folder / "errors").iterdir() if "bad shape" in p.read_text()]
    text = path.read_text()
    with path.open("r+") as handle:  # in place, the same length: only its times change
        handle.write(text.replace("bad shape", "bad shope"))
    assert lookup_index.refresh(folder) == 1
    assert [m.exact for m in lookup_output(folder, "bad shope 3").answer.matches][:1] == [True]
    renamed = path.with_name("renamed.yaml")
    os.rename(path, renamed)
    found = lookup_output(folder, "bad shope 3")
    assert any(str(renamed) in problem for problem in found.problems)
    assert not [m for m in found.answer.matches if m.exact]
    renamed.unlink()
    found = lookup_output(folder, "bad shope 3")
    assert found.problems == () and not [m for m in found.answer.matches if m.exact]
    assert _listing_kept(folder) == lookup_index._packed_listing(folder)


def test_the_stored_index_finds_every_wording_whose_run_a_text_holds(out: Path) -> None:
    """The index looks only at rows whose anchor is a word of the text, yet finds what a scan
    of every row finds: the anchor is a word whole within the run, never one at its edge, which
    the paste may glue to its neighbours (`notbad shape`)."""
    assert lookup_index.anchor_of("bad shape ") == "shape"
    assert lookup_index.anchor_of(" is wrong") == "is"
    assert lookup_index.anchor_of("shape") == lookup_index.anchor_of("") == ""
    (folder,) = repository_folders(out)
    memory = LookupIndex(load_records(out)[0])
    with closing(lookup_index.open_index(folder)) as stored:
        for texts in (["notbad shape 3!"], ["a missing column x", "z"], ["expected 3 itemsx"],
                      ["bad shape"], [""]):
            assert sorted(w.record_id for w in stored.containing(texts)) == \
                sorted(w.record_id for w in memory.containing(texts)), texts
            assert texts[0] == "" or "bad shape" in texts[0] or \
                list(stored.containing(texts)), texts


def _listing_kept(folder: Path) -> bytes | None:
    with closing(sqlite3.connect(folder / lookup_index.INDEX_FILE)) as connection:
        row = connection.execute("SELECT value FROM meta WHERE key = 'listing'").fetchone()
    return None if row is None else bytes(row[0])


def _digests(folder: Path) -> dict[str, str | None]:
    with closing(sqlite3.connect(folder / lookup_index.INDEX_FILE)) as connection:
        return dict(connection.execute("SELECT name, digest FROM files").fetchall())


def test_a_broken_record_file_is_named_and_the_others_served(out: Path, tmp_path: Path) -> None:
    (folder,) = repository_folders(out)
    broken = next(iter(sorted((folder / "errors").iterdir())))
    broken.write_text("id: [unclosed\n")
    found = lookup_output(out, "KeyError: 'missing column x'")
    assert any(str(broken) in problem for problem in found.problems)
    others = len(SOURCE) - 1
    assert len(load_records(out)[0]) == others
    result = CliRunner().invoke(main, ["lookup", "bad shape 3", str(out)])
    assert result.exit_code == 1 and f"skipped: {broken}" in result.output


def test_the_same_answer_from_a_folder_an_export_and_records(out: Path, tmp_path: Path) -> None:
    (folder,) = repository_folders(out)
    db = tmp_path / "errors.db"
    export(out, "sqlite", db)
    records, _ = load_records(folder)
    for message in ("ValueError: bad shape (3, 4)", "KeyError: 'missing column x'",
                    "expected 2 items", "nothing like it at all", "shape items column"):
        answers = [lookup_output(out, message, 2).answer,
                   lookup_database(db, message, 2), LookupIndex(records).answer(message, 2)]
        first, *others = (describe(a) for a in answers)
        assert all(other == first for other in others), message


def test_every_hit_names_its_repository(small: GitRepo, make_repo: Callable[[str], GitRepo],
                                        tmp_path: Path) -> None:
    other = make_repo("other")
    other.write("a.py", "def a(shape):\n    raise ValueError(f'bad shape {shape}!')\n")
    other.commit()
    out = tmp_path / "out"
    (small_folder, small_repo), (other_folder, other_repo) = (extracted(small, out),
                                                              extracted(other, out))
    assert small_repo != other_repo
    assert repository_folders(out) == sorted([small_folder, other_folder])
    # "bad shape {shape}" matches too, with less of the message as literal text
    matches = lookup_output(out, "ValueError: bad shape 3!").answer.matches
    assert [(m.wording.repo, m.exact) for m in matches] == [(other_repo, True), (small_repo, True)]
    result = CliRunner().invoke(main, ["lookup", "bad shape 3!", str(out), "--json"])
    assert [hit["repo"] for hit in json.loads(result.output)["matches"]] == [other_repo, small_repo]
    result = CliRunner().invoke(main, ["lookup", "bad shape 3!", str(out)])
    for repo in (other_repo, small_repo):
        assert f"{repo} a.py:2" in result.output


def test_the_store_names_lookup_does_not_import() -> None:
    """lookup_index spells the store's names itself, to spare a lookup loading the parser."""
    assert lookup_index.ERRORS_DIR == record_files.ERRORS_DIR
    assert lookup_index.MANIFEST == manifest_file.MANIFEST
    assert ranking.REMOVED == REMOVED


# What a warm lookup from a folder must not import: the YAML reader, the records' types, the
# parser, the terminal renderer (a lookup's time is mostly the interpreter's start and imports).
HEAVY = ("yaml", "crawler.records", "crawler.store.documents", "crawler.serve.export.data",
         "libcst", "rich", "git", "jsonschema", "regex")
SHOW_IMPORTS = (
    "import sys\n"
    "from crawler.cli.commands import main\n"
    "try:\n"
    "    main(['lookup', 'bad shape 3!', sys.argv[1]])\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
)


def test_a_warm_lookup_imports_nothing_it_does_not_use(out: Path) -> None:
    def imported() -> list[str]:
        done = subprocess.run([sys.executable, "-c", SHOW_IMPORTS, str(out)], env=child_env(),
                              capture_output=True, text=True, timeout=120, check=True)
        return json.loads(done.stdout.splitlines()[-1].replace("'", '"'))

    imported()  # the first lookup builds the folder's index
    assert imported() == []
