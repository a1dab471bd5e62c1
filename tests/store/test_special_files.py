"""Links, FIFOs, devices and sockets in an output folder: named, never followed, opened or replaced.

Device nodes are made with `os.mknod` in the test's own folder (the zero device's numbers),
never taken from the machine's /dev; those cases run as root only. Anything that could hang
(a FIFO opened for reading) runs under a time limit, so a regression fails instead of stalling.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crawler.errors import OutputError, RecordError
from crawler.pipeline import apply
from crawler.store import atomic, plain_files, record_files, repo_output
from crawler.store.manifest_file import MANIFEST, load_manifest
from tests.helpers.outputkit import SHA_B, collected, folder_of, module, within

V1 = {"pkg/a.py": module("a", 3), "pkg/b.py": module("b", 2)}
V2 = {"pkg/a.py": module("a", 3, offset=2), "pkg/b.py": module("b", 2, offset=1)}
AS_ROOT = os.geteuid() == 0
ZERO = os.makedev(1, 5)  # /dev/zero's numbers: a file whose size reads 0 and that never ends
LIMIT = 20.0  # seconds; each case takes well under one


def state(folder: Path) -> dict[str, object]:
    """Every entry under `folder` by relative path: a plain file's bytes, else what it is.

    Nothing but plain files is opened (`outputkit.snapshot` would hang on a FIFO).
    """
    found: dict[str, object] = {}
    for dirpath, dirnames, names in os.walk(folder):
        for name in [*names, *dirnames]:
            path = Path(dirpath, name)
            rel = path.relative_to(folder).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                found[rel] = b"" if name == repo_output.LOCK_FILE else path.read_bytes()
            elif not stat.S_ISDIR(mode):
                found[rel] = (plain_files.kind_of(mode), path.lstat().st_rdev)
    return found


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    """An output root at V1, and its repository folder."""
    root = tmp_path / "out"
    apply(collected(V1), root)
    return root, folder_of(root)


def first_record(folder: Path) -> Path:
    return sorted((folder / record_files.ERRORS_DIR).glob("*.yaml"))[0]


def plant(kind: str, path: Path, outside: Path) -> None:
    """Put a special file of `kind` at `path`; `outside` is a folder beyond the output tree."""
    if kind == "link to a file outside":
        target = outside / "elsewhere.yaml"
        target.write_bytes(path.read_bytes() if path.exists() else b"x: 1\n")
        path.unlink(missing_ok=True)
        path.symlink_to(target)
        return
    path.unlink(missing_ok=True)
    if kind == "dangling link":
        path.symlink_to(outside / "nothing-here.yaml")
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "link to a FIFO":
        os.mkfifo(outside / "pipe")
        path.symlink_to(outside / "pipe")
    elif kind == "zero device":
        os.mknod(path, 0o600 | stat.S_IFCHR, ZERO)
    elif kind == "link to a zero device":
        os.mknod(outside / "zero", 0o600 | stat.S_IFCHR, ZERO)
        path.symlink_to(outside / "zero")
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:  # a relative name: paths here are long
            here = os.getcwd()
            os.chdir(path.parent)
            try:
                server.bind(path.name)
            finally:
                os.chdir(here)
    else:
        raise AssertionError(kind)


KINDS = ["link to a file outside", "dangling link", "FIFO", "link to a FIFO", "socket",
         pytest.param("zero device", marks=pytest.mark.skipif(not AS_ROOT, reason="mknod needs root")),
         pytest.param("link to a zero device",
                      marks=pytest.mark.skipif(not AS_ROOT, reason="mknod needs root"))]
WORDS = {"link to a file outside": "symbolic link", "dangling link": "symbolic link",
         "FIFO": "named pipe", "link to a FIFO": "symbolic link", "socket": "socket",
         "zero device": "character device", "link to a zero device": "symbolic link"}


# ---------------------------------------------------------------- records and manifests


@pytest.mark.parametrize("kind", KINDS)
def test_a_special_record_is_named_and_held_like_a_broken_one(built: tuple[Path, Path], kind: str,
                                                              tmp_path: Path) -> None:
    root, folder = built
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = first_record(folder)
    plant(kind, victim, outside)
    before, beyond = state(folder), state(outside)
    result = within(LIMIT, lambda: apply(collected(V2, SHA_B), root))
    named = [p for p in result.problems if p.startswith(f"{victim}: ")]
    assert len(named) == 1 and WORDS[kind] in named[0] and "\n" not in named[0], result.problems
    after = state(folder)
    assert after[f"errors/{victim.name}"] == before[f"errors/{victim.name}"]  # never replaced
    assert state(outside) == beyond  # never written through
    loaded = within(LIMIT, lambda: repo_output.load_folder(folder))
    assert [b.path for b in loaded.broken] == [str(victim)]
    assert victim.stem not in {r.id for r in loaded.records}


@pytest.mark.parametrize("kind", ["link to a file outside", "dangling link", "FIFO", "socket"])
def test_a_special_manifest_stops_the_run_before_anything_is_written(
        built: tuple[Path, Path], kind: str, tmp_path: Path) -> None:
    root, folder = built
    outside = tmp_path / "outside"
    outside.mkdir()
    plant(kind, folder / MANIFEST, outside)
    before, beyond = state(folder), state(outside)
    for dry_run in (True, False):
        with pytest.raises(OutputError) as caught:
            within(LIMIT, lambda dry_run=dry_run: apply(collected(V2, SHA_B), root, dry_run=dry_run))
        message = str(caught.value)
        assert message.startswith(f"{folder / MANIFEST}: ") and WORDS[kind] in message
        assert "nothing was written" in message and "\n" not in message
    assert state(folder) == before and state(outside) == beyond
    if kind != "dangling link":
        with pytest.raises(RecordError, match="not a plain file"):
            within(LIMIT, lambda: load_manifest(folder))


@pytest.mark.parametrize("part", ["github.com", "github.com/acme", "github.com/acme/widgets",
                                  "github.com/acme/widgets/errors"])
def test_a_link_on_the_way_to_the_folder_is_refused(built: tuple[Path, Path], part: str,
                                                    tmp_path: Path) -> None:
    """A link anywhere below the output root would send every write out of the output tree."""
    root, _ = built
    outside = tmp_path / "outside"
    outside.mkdir()
    moved = outside / "moved"
    shutil.move(root / part, moved)
    (root / part).symlink_to(moved, target_is_directory=True)
    beyond = state(outside)
    with pytest.raises(OutputError) as caught:
        apply(collected(V2, SHA_B), root)
    message = str(caught.value)
    assert message.startswith(f"{root / part}: a symbolic link") and "nothing was written" in message
    assert state(outside) == beyond


def test_a_first_run_writes_nothing_through_a_linked_errors_folder(tmp_path: Path) -> None:
    root, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    folder_of(root).mkdir(parents=True)
    (folder_of(root) / record_files.ERRORS_DIR).symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="a symbolic link where the output folder needs"):
        apply(collected(V1), root)
    assert list(outside.iterdir()) == [] and not (folder_of(root) / MANIFEST).exists()


def test_validate_names_a_linked_errors_folder_and_does_not_follow_it(built: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    _, folder = built
    moved = tmp_path / "moved"
    shutil.move(folder / record_files.ERRORS_DIR, moved)
    (folder / record_files.ERRORS_DIR).symlink_to(moved, target_is_directory=True)
    loaded = repo_output.load_folder(folder)
    assert loaded.records == ()
    assert [b.path for b in loaded.broken] == [str(folder / record_files.ERRORS_DIR)]
    with pytest.raises(OutputError, match="a symbolic link"):
        list(record_files.iter_record_paths(folder))


@pytest.mark.parametrize("kind", ["link to a file outside", "dangling link", "FIFO"])
def test_the_lock_file_must_be_a_plain_file(built: tuple[Path, Path], kind: str,
                                            tmp_path: Path) -> None:
    root, folder = built
    outside = tmp_path / "outside"
    outside.mkdir()
    plant(kind, folder / repo_output.LOCK_FILE, outside)
    beyond = state(outside)
    for shared in (True, False):  # a dry run's shared open of a FIFO would wait for a writer
        with pytest.raises(OutputError, match=r"\.crawler\.lock: a (symbolic link|named pipe)"):
            within(LIMIT, lambda shared=shared: repo_output.lock(folder, shared=shared).__enter__())
    assert state(outside) == beyond


def test_a_temp_named_link_is_not_removed_as_a_leftover(built: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    _, folder = built
    target = tmp_path / "kept"
    target.write_text("a person's file\n")
    link = folder / record_files.ERRORS_DIR / f".{'0' * 16}.yaml.abc{atomic.TEMP_SUFFIX}"
    link.symlink_to(target)
    assert repo_output.clean_temp_files(folder) == []
    assert link.is_symlink() and target.read_text() == "a person's file\n"


# ---------------------------------------------------------------- the one safe open and read


def test_a_special_file_is_refused_by_its_type_and_never_opened(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    for index, kind in enumerate(["dangling link", "FIFO", "link to a file outside", "socket"]):
        path = tmp_path / f"{index}.yaml"
        plant(kind, path, outside)
        with pytest.raises(RecordError) as caught:
            within(LIMIT, lambda path=path: plain_files.read_plain(path))
        assert str(caught.value).startswith(f"{path}: {plain_files.kind_of(path.lstat().st_mode)}")
        assert plain_files.read_head(path, 100) is None and plain_files.text_or_none(path) is None
    assert opened == []


def test_reads_are_capped_by_the_bytes_read_not_by_the_size(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe reports size 0 and never ends: the read stops one byte past the cap."""
    read_end, write_end = os.pipe()
    stop = threading.Event()

    def endless() -> None:
        try:
            while not stop.is_set():
                os.write(write_end, b"\0" * 65536)
        except OSError:
            pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    try:
        assert os.fstat(read_end).st_size == 0
        data = within(LIMIT, lambda: plain_files._read_upto(read_end, 3 * 2**20 + 1, 1))
        assert len(data) == 3 * 2**20 + 1
    finally:
        stop.set()
        os.close(read_end)
        writer.join(LIMIT)
        os.close(write_end)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 5000)
    real_fstat = os.fstat

    def size_zero(fd: int) -> os.stat_result:  # a file that says it is empty, as /dev/zero does
        found = list(real_fstat(fd))
        found[stat.ST_SIZE] = 0
        return os.stat_result(found)

    monkeypatch.setattr(os, "fstat", size_zero)
    with pytest.raises(RecordError, match="more than 4096 bytes"):
        plain_files.read_plain(big, cap=4096)
    assert plain_files.read_plain(big, cap=5000) == b"x" * 5000


@pytest.mark.skipif(not AS_ROOT, reason="mknod needs root")
def test_a_zero_device_behind_a_record_name_is_not_read(tmp_path: Path) -> None:
    device = tmp_path / f"{'a' * 16}.yaml"
    os.mknod(device, 0o600 | stat.S_IFCHR, ZERO)
    with pytest.raises(RecordError, match="a character device, not a plain file"):
        within(LIMIT, lambda: record_files.load_record(device))


def test_atomic_writes_never_replace_or_write_through_a_special_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "elsewhere.yaml"
    target.write_text("kept\n")
    link, fifo, fresh = tmp_path / "link.yaml", tmp_path / "fifo.yaml", tmp_path / "fresh.yaml"
    link.symlink_to(target)
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="a symbolic link, not a plain file"):
        atomic.write_atomic(link, "new\n")
    with pytest.raises(OutputError, match="a named pipe"):
        within(LIMIT, lambda: atomic.write_all([(fresh, "new\n"), (fifo, "new\n")]))
    assert link.is_symlink() and target.read_text() == "kept\n"
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and not fresh.exists()  # nothing of the batch
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(atomic.TEMP_SUFFIX)] == []


# ---------------------------------------------------------------- every command, as a real process

COMMANDS = {  # the writers wait for each other's lock; batch, which cannot, runs after them
    "extract": ["extract", "{repo}", "-o", "{out}", "-q", "-j", "1", "--wait", "120"],
    "update": ["update", "{repo}", "-o", "{out}", "-q", "-j", "1", "--wait", "120"],
    "check": ["check", "{out}"],
    "validate": ["validate", "{out}"],
    "lookup": ["lookup", "ValueError: widget 1 is broken", "{out}"],
    "export": ["export", "{out}", "--format", "jsonl", "--to", "{tmp}/records.jsonl"],
    "batch": ["batch", "{tmp}/repos.yaml", "-o", "{out}", "-q", "-j", "1", "--force"],
}


@pytest.mark.parametrize("where", ["record", "manifest"])
def test_no_command_stalls_on_a_fifo_in_the_output(make_repo: Callable[[str], Any], tmp_path: Path,
                                                   where: str) -> None:
    """Each command that reads the folder finishes (a FIFO opened for reading would wait for a
    writer forever, holding the lock) and names the FIFO in one line where it reads it."""
    from crawler.pipeline import extract
    from tests.helpers.processes import ROOT, child_env

    repo = make_repo("widgets")
    repo.write("widgets/core.py", "def f(x):\n    raise ValueError(f'widget {x} is broken')\n"
                                  "def g(x):\n    raise KeyError(f'no widget {x}')\n")
    repo.commit()
    out = tmp_path / "out"
    folder = extract(str(repo.path), output_root=out, jobs=1).folder
    (tmp_path / "repos.yaml").write_text(f"repos:\n  - source: '{repo.path}'\n", encoding="utf-8")
    fifo = first_record(folder) if where == "record" else folder / MANIFEST
    fifo.unlink()
    os.mkfifo(fifo)
    names = {"repo": repo.path, "out": out, "tmp": tmp_path}
    started: dict[str, subprocess.Popen[str]] = {}
    finished = {}

    def run(commands: list[str]) -> None:
        for name in commands:
            started[name] = subprocess.Popen(
                [sys.executable, "-m", "crawler", *(a.format(**names) for a in COMMANDS[name])],
                cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in commands:
            finished[name] = started[name].communicate(timeout=120)

    try:
        run([name for name in COMMANDS if name != "batch"])
        run(["batch"])
    finally:
        for process in started.values():
            if process.poll() is None:
                process.kill()  # this process, by its id
                process.wait()
    readers = set(COMMANDS) - ({"check", "lookup"} if where == "manifest" else set())
    for name, (stdout, stderr) in finished.items():
        assert "Traceback" not in stderr, (name, stderr)
        if name in readers:
            assert started[name].returncode == 1, (name, stdout, stderr)
            assert f"{fifo}: a named pipe (FIFO)" in stdout + stderr, (name, stdout, stderr)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_check_names_records_in_a_linked_errors_folder_instead_of_reading_them(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    from crawler.serve.review.checks import check_output

    root, folder = built
    moved = tmp_path / "moved"
    shutil.move(folder / record_files.ERRORS_DIR, moved)
    (folder / record_files.ERRORS_DIR).symlink_to(moved, target_is_directory=True)
    checked, findings, problems = check_output(root)
    # One line for the linked folder, as `validate` gives, not one per file behind it.
    assert findings == [] and len(problems) == checked == 1
    assert "a symbolic link" in problems[0] and str(moved) not in problems[0]
