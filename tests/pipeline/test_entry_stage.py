"""`crawler update` keeps entry points current without reading unchanged files again.

A commit that changes only `pkg/api.py` (no raise in it) gives one raise of an unchanged file a
new public caller: the update reads that one file, rewrites that one record, and leaves every
other record file as it was, byte for byte and with its mtime. Run as users type it: the
installed `crawler`, in a child process.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.entry_points import FILES, crawler, first_extract, records
from tests.helpers.gitrepo import GitRepo

OPEN_FILE = """

def open_file(path, mode):
    return _checks.check_path(path), mode
"""


def test_a_changed_file_rewrites_only_the_record_whose_chains_moved(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("répo with space")
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    common = ["-o", str(out), "--cache-dir", str(cache)]
    first = crawler("extract", str(repo.path), *common)
    folder = Path(str(first["folder"]))
    before = records(folder)
    assert before["check_path"][3]["entry_points"] == [
        {"name": "pkg.load", "chain": ["pkg.api.load", "pkg._checks.check_path"]}]

    repo.write("pkg/api.py", FILES["pkg/api.py"] + OPEN_FILE)
    repo.commit("open_file")
    second = crawler("update", str(repo.path), *common)
    after = records(folder)

    assert second["files"] == 4 and second["files_read_again"] == 1  # pkg/api.py alone
    assert after["check_path"][3]["entry_points"] == [  # as short: the package's own name first
        {"name": "pkg.load", "chain": ["pkg.api.load", "pkg._checks.check_path"]},
        {"name": "pkg.api.open_file", "chain": ["pkg.api.open_file", "pkg._checks.check_path"]}]
    assert after["check_path"][1] != before["check_path"][1]
    for function in ("check_mode", "other"):  # same chains: the very bytes, never written
        assert after[function] == before[function]
    assert before["check_mode"][3]["entry_points"] == [
        {"name": "pkg.save", "chain": ["pkg.api.save", "pkg._checks.check_mode"]}]
    assert second["files_to_write"] == [after["check_path"][0], "manifest.yaml"]


def test_an_update_that_moves_no_chain_rewrites_no_record(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo, common, folder = first_extract(make_repo, tmp_path, FILES)
    before = records(folder)

    repo.write("pkg/api.py", FILES["pkg/api.py"] + "\n\nLIMIT = 3  # no call, no raise\n")
    repo.commit("a constant")
    second = crawler("update", str(repo.path), *common)

    assert second["files_read_again"] == 1 and records(folder) == before
    assert second["files_to_write"] == ["manifest.yaml"]  # for the new commit


def test_the_sqlite_export_lists_entry_points_and_pages_show_the_first(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("repo")
    for path, text in {**FILES, "pkg/api.py": FILES["pkg/api.py"] + OPEN_FILE}.items():
        repo.write(path, text)
    repo.commit("first")
    out = tmp_path / "out"
    crawler("extract", str(repo.path), "-o", str(out), "--cache-dir", str(tmp_path / "cache"))
    database = tmp_path / "errors.db"
    done = subprocess.run([str(shutil.which("crawler")), "export", str(out), "-o", str(database)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(database)
    try:
        rows = db.execute("SELECT r.function, e.position, e.name, e.chain, e.depth, e.stops, "
                          "e.caught_by FROM entry_points AS e JOIN records AS r ON r.id = e.record_id "
                          "ORDER BY r.function, e.position").fetchall()
        pages = dict(db.execute("SELECT r.function, p.entry_points FROM pages AS p "
                                "JOIN records AS r ON r.id = p.id").fetchall())
    finally:
        db.close()
    assert rows == [
        ("check_mode", 0, "pkg.save", '["pkg.api.save","pkg._checks.check_mode"]', 1, None, None),
        ("check_path", 0, "pkg.load", '["pkg.api.load","pkg._checks.check_path"]', 1, None, None),
        ("check_path", 1, "pkg.api.open_file", '["pkg.api.open_file","pkg._checks.check_path"]', 1,
         None, None),
        ("other", 0, "pkg.other.other", '["pkg.other.other"]', 0, None, None)]
    assert pages == {
        "check_mode": "pkg.save: pkg.api.save -> pkg._checks.check_mode",
        "check_path": "pkg.load: pkg.api.load -> pkg._checks.check_path\n"
                      "pkg.api.open_file: pkg.api.open_file -> pkg._checks.check_path",
        "other": "pkg.other.other: pkg.other.other"}


HELPERS = {
    "pkg/__init__.py": "",
    "pkg/_text.py": "def one_line(text):\n    return ' '.join(text.split())\n",
    "pkg/cli.py": """\
from pkg._text import one_line


def run(error):
    raise SystemExit(one_line(str(error)))
""",
    "pkg/other.py": "def unrelated():\n    return 1\n",
}


@pytest.mark.parametrize("command", ["extract", "update"])
def test_a_message_built_by_another_modules_function_is_not_rewritten_for_a_new_commit(
        make_repo: Callable[[str], GitRepo], tmp_path: Path, command: str) -> None:
    """The raise of `pkg/cli.py` follows `one_line` into `pkg/_text.py` (the calls it follows
    are the site's working facts, never written): a commit that changes neither file leaves its
    record's bytes, its `commit` included."""
    repo, common, folder = first_extract(make_repo, tmp_path, HELPERS)
    before = records(folder)
    assert before["run"][1].count(b"one_line") >= 1

    repo.write("pkg/other.py", HELPERS["pkg/other.py"] + "\n\ndef more():\n    return 2\n")
    repo.commit("another module")
    second = crawler(command, str(repo.path), *common)

    assert records(folder)["run"] == before["run"]  # bytes and mtime
    if command == "update":
        assert second["files_to_write"] == ["manifest.yaml"]
