"""The lookup index beside the records: built by the first lookup, kept by extract and update,
brought up to date by lookup, rebuilt when it is missing or not one; and the same answer from a
folder, an export and memory."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import main
from crawler.records import REMOVED
from crawler.serve import lookup_index, ranking
from crawler.serve.export import export
from crawler.serve.lookup import (
    LookupIndex,
    describe,
    load_records,
    lookup_database,
    lookup_output,
    repository_folders,
)
from crawler.store import manifest_file, record_files
from tests.gitrepo import GitRepo

SOURCE = {
    "a.py": "def a(shape):\n    raise ValueError(f'bad shape {shape}')\n",
    "b.py": "def b(key):\n    raise KeyError(f'missing column {key}')\n",
    "c.py": "def c(n):\n    raise TypeError('expected %d items' % n)\n",
}


def extract(repo: GitRepo, out: Path, *more: str) -> Path:
    return extracted(repo, out, *more)[0]


def extracted(repo: GitRepo, out: Path, *more: str) -> tuple[Path, str]:
    """`crawler extract`: the repository's folder and name."""
    result = CliRunner().invoke(main, ["extract", str(repo.path), "-o", str(out), "--json",
                                       "--no-evidence", *more])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    return Path(summary["folder"]), summary["repo"]


@pytest.fixture
def small(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("small")
    for path, text in SOURCE.items():
        repo.write(path, text)
    repo.commit()
    return repo


@pytest.fixture(scope="module")
def _extracted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = GitRepo(tmp_path_factory.mktemp("repo") / "small")
    for path, text in SOURCE.items():
        repo.write(path, text)
    repo.commit()
    out = tmp_path_factory.mktemp("once") / "out"
    extract(repo, out)
    return out


@pytest.fixture
def out(_extracted_once: Path, tmp_path: Path) -> Path:
    """An output root holding the small repository's folder, extracted once per module."""
    return Path(shutil.copytree(_extracted_once, tmp_path / "out"))


def rows(folder: Path) -> dict[str, tuple[int, str]]:
    """Each errors/ file's entry: its rowid (new when the row is written again) and template."""
    with closing(sqlite3.connect(folder / lookup_index.INDEX_FILE)) as connection:
        return {file: (rowid, template) for file, rowid, template in connection.execute(
            "SELECT file, rowid, template FROM entries")}


def test_update_refreshes_the_changed_record_only(small: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    folder = extract(small, out)
    index = folder / lookup_index.INDEX_FILE
    assert not index.exists()  # an extract leaves the folder as records and manifest make it
    assert lookup_output(out, "bad shape 3").answer.found  # the first lookup builds the index
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


def test_a_missing_or_broken_index_is_built_again(out: Path, tmp_path: Path) -> None:
    (folder,) = repository_folders(out)
    index = folder / lookup_index.INDEX_FILE
    expected = describe(lookup_output(folder, "bad shape 3").answer.matches)
    for spoil in (index.unlink, lambda: index.write_bytes(b"not a database" * 100),
                  lambda: _set_version(index, "0")):
        spoil()
        assert describe(lookup_output(folder, "bad shape 3").answer.matches) == expected
        assert index.is_file() and rows(folder)


def _set_version(index: Path, version: str) -> None:
    with closing(sqlite3.connect(index)) as connection, connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'version'", (version,))


def test_a_record_file_replaced_by_a_person_is_seen(out: Path, tmp_path: Path) -> None:
    (folder,) = repository_folders(out)
    (path,) = [p for p in (folder / "errors").iterdir() if "bad shape" in p.read_text()]
    replacement = path.with_name(".edit.tmp")
    replacement.write_text(path.read_text().replace("status: active", "status: removed", 1))
    os.replace(replacement, path)
    (match,) = [m for m in lookup_output(folder, "bad shape 3").answer.matches if m.exact]
    assert match.wording.status == REMOVED


def test_an_unchanged_listing_is_trusted_without_a_stat_per_file(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every crawler write renames a file into errors/, which changes the folder's own
    signature: while that stays, no file is looked at. A listing changed within the last
    RACY_NS is checked file by file (a change in the same clock tick would not show)."""
    (folder,) = repository_folders(out)
    monkeypatch.setattr(lookup_index, "RACY_NS", 0)
    lookup_index.refresh(folder)  # the listing's signature is stored now
    calls: list[Path] = []
    real = lookup_index.errors_signatures
    monkeypatch.setattr(lookup_index, "errors_signatures", lambda f: calls.append(f) or real(f))
    assert lookup_index.refresh(folder) == 0 and calls == []
    time.sleep(0.05)  # past the file system's clock tick
    (path,) = [p for p in (folder / "errors").iterdir() if "missing column" in p.read_text()]
    replacement = path.with_name(".edit.tmp")
    replacement.write_text(path.read_text().replace("status: active", "status: removed", 1))
    os.replace(replacement, path)
    assert lookup_index.refresh(folder) == 1 and calls == [folder]


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
        first, *others = (describe(a.matches) for a in answers)
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
    assert [hit["repo"] for hit in json.loads(result.output)] == [other_repo, small_repo]
    result = CliRunner().invoke(main, ["lookup", "bad shape 3!", str(out)])
    for repo in (other_repo, small_repo):
        assert f"{repo} a.py:2" in result.output


def test_the_store_names_lookup_does_not_import() -> None:
    """lookup_index spells the store's names itself, to spare a lookup loading the parser."""
    assert lookup_index.ERRORS_DIR == record_files.ERRORS_DIR
    assert lookup_index.MANIFEST == manifest_file.MANIFEST
    assert ranking.REMOVED == REMOVED
