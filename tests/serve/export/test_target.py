"""`crawler export --to PATH`: what is at PATH decides how it is written, or whether at all.

Every command-level case runs the real `python -m crawler` in a process with a time limit (a
pipe nobody reads would make a wrong export wait forever). Device nodes are made with
`os.mknod` in the test's folder with the null (1,3) and full (1,7) devices' numbers, never
taken from the machine's /dev; those cases run as root only.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.errors import OutputError
from crawler.serve.export import target as export_target
from crawler.serve.export import writers as export
from tests.helpers.processes import ROOT, child_env, crawler_as_user, folder_for_another_user

AS_ROOT = os.geteuid() == 0
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)
LIMIT = 60  # seconds for one command; each takes about one
NOTES = b"# my notes\n\nweeks of work, not an export\n"
needs_root = pytest.mark.skipif(not AS_ROOT, reason="os.mknod of a device node needs root")


def crawler(*args: str | Path, user: int | None = None,
            shared: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m crawler ARGS` in a real process, stopped (by its id) if it overruns; as
    `user`, a forked child with that user's ids, its TMPDIR in `shared` (`shared_folder`)."""
    if user is not None:
        assert shared is not None
        return crawler_as_user(user, args, shared / "tmp", LIMIT)
    return subprocess.run([sys.executable, "-m", "crawler", *map(str, args)], cwd=ROOT,
                          env=child_env(), capture_output=True, text=True, timeout=LIMIT)


def export_to(root: Path, fmt: str, target: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return crawler("export", root, "--format", fmt, "--to", target, "-q", *extra)


def one_line(process: subprocess.CompletedProcess[str]) -> str:
    """The single error line of a failed command (exit 1, no traceback)."""
    assert process.returncode == 1, (process.stdout, process.stderr)
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in process.stderr, process.stderr
    return lines[0]


def in_process(root: Path, fmt: str, target: Path) -> str:
    """The one error line of `crawler export` run in this process (for the cases that need no
    real process: nothing there can hang or be replaced behind the command line's back)."""
    result = CliRunner().invoke(main, ["export", str(root), "--format", fmt, "--to", str(target)])
    assert result.exit_code == 1 and result.exception is not None, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def clean(output_root: Path, tmp_path: Path) -> dict[str, bytes]:  # noqa: F811
    """What each one-file format writes to a fresh file: the bytes any other target must get."""
    found = {}
    for fmt in ("jsonl", "sqlite"):
        target = tmp_path / f"clean.{fmt}"
        export.export(output_root, fmt, target)
        found[fmt] = target.read_bytes()
    return found


# ---------------------------------------------------------------- plain files


def test_a_persons_file_is_refused_and_kept_byte_for_byte(output_root: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(NOTES)
    expected = (f"Error: {notes}: a file the crawler did not write; it was left as it is; "
                "give another --to, or pass --force to replace it")
    assert one_line(export_to(output_root, "jsonl", notes)) == expected
    assert in_process(output_root, "sqlite", notes) == expected
    assert notes.read_bytes() == NOTES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md", "output"]  # no temp file


def test_force_replaces_a_persons_file(output_root: Path, tmp_path: Path,  # noqa: F811
                                       clean: dict[str, bytes]) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(NOTES)
    process = export_to(output_root, "jsonl", notes, "--force")
    assert process.returncode == 0, process.stderr
    assert notes.read_bytes() == clean["jsonl"]


def test_the_crawlers_own_exports_and_empty_files_are_replaced(output_root: Path,  # noqa: F811
                                                               tmp_path: Path,
                                                               clean: dict[str, bytes]) -> None:
    for fmt in ("jsonl", "sqlite"):
        target = tmp_path / f"again.{fmt}"
        target.write_bytes(b"")  # as `mktemp` leaves it: nothing to lose
        export.export(output_root, fmt, target)
        export.export(output_root, fmt, target)  # its own export, recognised
        assert target.read_bytes() == clean[fmt]
    old = tmp_path / "old.db"  # written before exports carried the application id
    old.write_bytes(clean["sqlite"])
    with sqlite3.connect(old) as db:
        db.execute("PRAGMA application_id = 0")
    db.close()
    assert export_target.written_by_crawler(old)
    export.export(output_root, "sqlite", old)
    assert old.read_bytes() == clean["sqlite"]


def test_what_the_crawler_wrote_is_told_by_its_first_bytes(tmp_path: Path,
                                                           clean: dict[str, bytes]) -> None:
    other_db = tmp_path / "other.db"
    with sqlite3.connect(other_db) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    db.close()
    cases = {
        "records.jsonl": (clean["jsonl"][:300], True),
        "index.json": (b'{\n  "schema_version": 1,\n  "record_schema_version": 1,\n', True),
        "crawler.db": (clean["sqlite"], True),
        "empty": (b"", True),
        "notes.md": (NOTES, False),
        "data.json": (b'{"schema_version":1,"name":"someone else\'s"}\n', False),
        "lines.jsonl": (b'{"id":"0123456789abcdef","status":"active"}\n', False),
    }
    for name, (data, ours) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert export_target.written_by_crawler(tmp_path / name) is ours, name
    assert export_target.written_by_crawler(other_db) is False
    assert export_target.written_by_crawler(tmp_path / "absent") is False


@pytest.mark.parametrize("fmt", ["jsonl", "sqlite"])
def test_a_folder_is_refused_for_a_one_file_format(output_root: Path,  # noqa: F811
                                                   tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "kept.txt").write_bytes(NOTES)
    line = in_process(output_root, fmt, folder)
    assert line.startswith(f"Error: {folder}: a folder, where --format {fmt} writes one file")
    assert [p.name for p in folder.iterdir()] == ["kept.txt"]


def test_a_json_export_keeps_out_of_a_persons_files(output_root: Path,  # noqa: F811
                                                    tmp_path: Path) -> None:
    target = tmp_path / "site"
    target.mkdir()
    (target / "index.json").write_bytes(b'{"title": "my site"}\n')
    line = in_process(output_root, "json", target)
    assert "index.json: a file the crawler did not write" in line and "--force" in line
    assert (target / "index.json").read_bytes() == b'{"title": "my site"}\n'
    file_target = tmp_path / "notes.md"
    file_target.write_bytes(NOTES)
    assert "where --format json writes a folder" in in_process(output_root, "json", file_target)
    assert file_target.read_bytes() == NOTES
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "errors").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="errors: a symbolic link"):
        export.export(output_root, "json", linked)
    assert list(outside.iterdir()) == []
    assert export.export(output_root, "json", target, force=True) == 5
    assert export.export(output_root, "json", target) == 5  # its own index, recognised


# ---------------------------------------------------------------- links


def test_a_link_is_followed_and_never_replaced(output_root: Path, tmp_path: Path,  # noqa: F811
                                               clean: dict[str, bytes]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    old_export, notes = elsewhere / "records.jsonl", elsewhere / "notes.md"
    old_export.write_bytes(clean["jsonl"].replace(b'"status":"active"', b'"status":"removed"', 1))
    notes.write_bytes(NOTES)
    to_export, to_notes, dangling = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    to_export.symlink_to(old_export)
    to_notes.symlink_to(notes)
    dangling.symlink_to(elsewhere / "new.jsonl")
    assert export_to(output_root, "jsonl", to_export).returncode == 0
    assert to_export.is_symlink() and old_export.read_bytes() == clean["jsonl"]
    assert "a file the crawler did not write" in in_process(output_root, "jsonl", to_notes)
    assert to_notes.is_symlink() and notes.read_bytes() == NOTES
    assert export.export(output_root, "jsonl", dangling) == 5
    assert dangling.is_symlink() and (elsewhere / "new.jsonl").read_bytes() == clean["jsonl"]


# ---------------------------------------------------------------- devices and pipes


class Reader:
    """Reads a FIFO to its end in a thread, as `cat` on the other side of a pipe would."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.fifo, "rb") as handle:  # waits for a writer
            self.data = handle.read()

    def finish(self) -> bytes:
        """The bytes read; a reader still waiting for a writer is released (nothing came)."""
        if self.thread.is_alive():
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # the reader had gone already
        self.thread.join(LIMIT)
        assert not self.thread.is_alive()
        return self.data


@pytest.mark.parametrize("fmt", ["jsonl", "sqlite"])
def test_a_pipe_is_written_through(output_root: Path, tmp_path: Path,  # noqa: F811
                                   clean: dict[str, bytes], fmt: str) -> None:
    """A SQLite export is built in a private temp folder, then its very bytes go down the pipe."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "to-pipe"
    link.symlink_to(fifo)
    reader = Reader(fifo)
    process = export_to(output_root, fmt, fifo if fmt == "jsonl" else link)
    assert process.returncode == 0, process.stderr
    assert reader.finish() == clean[fmt]
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and link.is_symlink()


@needs_root
@pytest.mark.parametrize("fmt", ["jsonl", "sqlite"])
@pytest.mark.parametrize("device", ["null", "full"])
def test_a_device_is_written_through_and_a_full_one_is_an_error(output_root: Path,  # noqa: F811
                                                                tmp_path: Path, fmt: str,
                                                                device: str) -> None:
    """Like /dev/null, the export succeeds; like /dev/full (ENOSPC), it fails: never a success."""
    node, numbers = tmp_path / device, NULL if device == "null" else FULL
    os.mknod(node, 0o666 | stat.S_IFCHR, numbers)
    process = export_to(output_root, fmt, node)
    if device == "null":
        assert process.returncode == 0 and process.stderr == "", process.stderr
    else:
        assert one_line(process).startswith(f"Error: {node}: disk full (No space left on device)")
    assert stat.S_ISCHR(node.lstat().st_mode) and node.lstat().st_rdev == numbers  # not replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == [device, "output"]


def test_a_block_device_or_socket_is_refused(output_root: Path, tmp_path: Path,  # noqa: F811
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.chdir(tmp_path)  # a socket's name must be short
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        with pytest.raises(OutputError, match="a socket, where --format jsonl writes one file"):
            export.export(output_root, "jsonl", tmp_path / "sock")


# ---------------------------------------------------------------- as a user


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A temporary folder that another user may enter (the test's own is private to root, and
    so is the folder of the run that TMPDIR names), with a `tmp` that user may write."""
    with folder_for_another_user() as folder:
        yield folder


def demoted(root: Path, tmp_path: Path) -> int:
    """A user id to run commands as (in a forked child, `crawler_as_user`), after one export of
    each format as root has imported what they need; skips the test where it runs as a user."""
    if not AS_ROOT:
        pytest.skip("running as a user already: the cases above are the user's")
    for fmt in ("jsonl", "sqlite"):
        assert export_to(root, fmt, tmp_path / f"primer.{fmt}").returncode == 0
        CliRunner().invoke(main, ["export", str(root), "--format", fmt, "-q",
                                  "--to", str(tmp_path / f"in-process.{fmt}")])
    return 65534


def readable_copy(source: Path, root: Path) -> Path:
    """A copy of the output folder that every user may read (and only its owner write)."""
    shutil.copytree(source, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def test_as_a_user_the_same_rules_hold_and_permissions_are_one_line(
        output_root: Path, shared_folder: Path, tmp_path: Path) -> None:  # noqa: F811
    """Where permissions differ: a user cannot write into a folder that is not theirs."""
    user = demoted(output_root, tmp_path)
    root = readable_copy(output_root, shared_folder / "output")
    mine = shared_folder / "mine"
    mine.mkdir()
    os.chown(mine, user, user)
    notes = mine / "notes.md"
    notes.write_bytes(NOTES)
    os.chown(notes, user, user)
    null = mine / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, NULL)
    null.chmod(0o666)  # as /dev/null is, whatever the umask made of mknod's mode
    refused = crawler("export", root, "--format", "jsonl", "--to", notes, user=user,
                      shared=shared_folder)
    assert "a file the crawler did not write" in one_line(refused) and notes.read_bytes() == NOTES
    assert crawler("export", root, "--format", "sqlite", "--to", null, user=user,
                   shared=shared_folder).returncode == 0
    closed = shared_folder / "closed"
    closed.mkdir(mode=0o755)  # root's: root may write here, the user may not
    line = one_line(crawler("export", root, "--format", "jsonl", "--to", closed / "r.jsonl",
                            user=user, shared=shared_folder))
    assert "Permission denied" in line and list(closed.iterdir()) == []


def test_as_a_user_a_node_that_cannot_be_opened_says_it_cannot_be_written(
        output_root: Path, shared_folder: Path, tmp_path: Path) -> None:  # noqa: F811
    """A device the user may not open is a write refused, said as one: never 'not readable'."""
    user = demoted(output_root, tmp_path)
    root = readable_copy(output_root, shared_folder / "output")
    node = shared_folder / "null"
    os.mknod(node, 0o600 | stat.S_IFCHR, NULL)
    node.chmod(0o600)  # root's alone
    for fmt in ("jsonl", "sqlite"):
        line = one_line(crawler("export", root, "--format", fmt, "--to", node, user=user,
                                shared=shared_folder))
        assert f"{node}: cannot write (Permission denied); nothing was written" in line, line
        assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_database_with_a_recursive_view_at_the_target_is_refused_at_once(
        output_root: Path, tmp_path: Path) -> None:  # noqa: F811
    """Telling an old export by its `meta` table reads a plain table only: a recursive view
    there is not followed (it would run forever), and the file is not the crawler's."""
    target = tmp_path / "theirs.db"
    with closing(sqlite3.connect(target)) as connection, connection:
        connection.execute("CREATE VIEW meta(key, value) AS WITH RECURSIVE n(i) AS (SELECT 1 "
                           "UNION ALL SELECT i + 1 FROM n) SELECT 'crawler_version', i FROM n")
    before = target.read_bytes()
    assert "a file the crawler did not write" in one_line(export_to(output_root, "sqlite", target))
    assert target.read_bytes() == before
