"""The output folder under hostile edits and faults: broken records, hostile ids, a full disk."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler.catalogue.holdback import HELD_BACK
from crawler.errors import OutputError, RecordError
from crawler.pipeline import apply, output_folder
from crawler.records import Pin
from crawler.store import (
    atomic,
    documents,
    manifest_file,
    record_files,
    render,
    repo_output,
    safe_yaml,
    schemas,
)
from crawler.store.record_files import RecordText
from tests.helpers.output_faults import BREAKS, _break
from tests.helpers.outputkit import SHA_B, annotate, collected, folder_of, make_pin, module, snapshot

V1 = {"pkg/a.py": module("a", 3), "pkg/b.py": module("b", 3)}
V2 = {"pkg/a.py": module("a", 4, offset=2), "pkg/b.py": module("b", 3, offset=1)}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """An output folder at V1 with one annotated record per file, and the clean result at V2."""
    root = tmp_path / "out"
    apply(collected(V1), root)
    folder = folder_of(root)
    for path in sorted((folder / "errors").iterdir()):
        record = record_files.load_record(path)
        if record.site.function in ("a_0", "b_0"):
            annotate(path, f"written for {record.site.function}")
    reference = tmp_path / "reference"
    shutil.copytree(root, reference)
    result = apply(collected(V2, SHA_B), reference)
    assert result.problems == ()
    return root, folder, snapshot(folder_of(reference))


def record_of_id(folder: Path, record_id: str):  # type: ignore[no-untyped-def]
    return record_files.load_record(folder / "errors" / f"{record_id}.yaml")


def record_of(folder: Path, function: str) -> Path:
    for path in sorted((folder / "errors").glob("*.yaml")):
        if record_files.load_record(path).site.function == function:
            return path
    raise AssertionError(function)


# ---------------------------------------------------------------- broken records


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_broken_record_is_left_alone_and_the_rest_goes_on(built: tuple[Path, Path, dict[str, bytes]],
                                                           name: str, tmp_path: Path) -> None:
    root, folder, reference = built
    marker = tmp_path / "marker"
    victim = record_of(folder, "a_0")  # annotated, in pkg/a.py
    b_records = {p.name for p in (folder / "errors").iterdir()
                 if record_files.load_record(p).site.path == "pkg/b.py"}
    a_before = {p.name: p.read_bytes() for p in (folder / "errors").iterdir()
                if p.name not in b_records}
    _break(victim, name, marker)
    before = victim.read_bytes()
    a_manifest = (folder / "manifest.yaml").read_text(encoding="utf-8")

    started = time.monotonic()
    result = apply(collected(V2, SHA_B), root)
    assert time.monotonic() - started < 20

    assert not marker.exists()
    assert victim.read_bytes() == before  # never overwritten
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert problem.startswith(str(victim))
    needle = BREAKS[name][1]
    if needle is not None:
        lines = before.decode("utf-8", "replace").splitlines()
        line = next(i for i, row in enumerate(lines, 1) if row.startswith(needle))  # type: ignore[arg-type]
        assert problem.startswith(f"{victim}:{line}:"), problem
    assert "\n" not in problem
    # the file the broken record belongs to is held back, whole; the other file is updated
    assert HELD_BACK in {s.reason for s in result.manifest.skipped}
    after = snapshot(folder)
    for name_b in b_records:
        assert after[f"errors/{name_b}"] == reference[f"errors/{name_b}"]
    # pkg/a.py is held back: its records are byte for byte as they were, and none was added
    a_after = {rel[len("errors/"):]: data for rel, data in after.items()
               if rel.startswith("errors/") and rel[len("errors/"):] not in b_records}
    a_before[victim.name] = before
    assert a_after == a_before
    assert all(record_of_id(folder, i).site.path == "pkg/b.py" for i in result.merged.added)
    # the manifest keeps pkg/a.py's old entry: old blob (read again next time), the broken id in it
    old_entry = next(e for e in documents.manifest_from_data(yaml.safe_load(a_manifest)
                                                        ).files if e.path == "pkg/a.py")
    new_entry = next(e for e in result.manifest.files if e.path == "pkg/a.py")
    assert new_entry == old_entry and victim.stem in new_entry.records
    assert manifest_file.load_manifest(folder) == result.manifest
    # once the person fixes the file, the next run completes to the clean result
    fixed = tmp_path / "fixed"
    shutil.copytree(root, fixed)
    fixed_victim = folder_of(fixed) / "errors" / victim.name
    ref_victim = reference[f"errors/{victim.name}"]
    fixed_victim.write_bytes(_restored(ref_victim))
    result = apply(collected(V2, SHA_B), fixed)
    assert result.problems == ()
    assert snapshot(folder_of(fixed)) == reference


def _restored(reference_text: bytes) -> bytes:
    """The record as it stood before the break, which a person restores from version control."""
    # The reference is the record after the V2 run; going back to V1 facts is not needed: a
    # restored V1 file merges to the same V2 text, and so does the V2 text itself.
    return reference_text


def test_stray_files_in_errors_are_named_and_ignored(built: tuple[Path, Path, dict[str, bytes]]) -> None:
    root, folder, reference = built
    (folder / "errors" / "notes.yaml").write_text("remember: !!python/name:os.system\n")
    (folder / "errors" / "README.txt").write_text("hello\n")
    (folder / "errors" / "subfolder").mkdir()
    result = apply(collected(V2, SHA_B), root)
    assert len(result.problems) == 3
    assert all("errors/" in p for p in result.problems)
    after = snapshot(folder)
    assert after.pop("errors/notes.yaml") and after.pop("errors/README.txt")
    assert after == reference  # strays hold nothing back


def test_symlinked_record_is_not_followed_or_replaced(built: tuple[Path, Path, dict[str, bytes]],
                                                      tmp_path: Path) -> None:
    root, folder, _ = built
    victim = record_of(folder, "b_1")
    outside = tmp_path / "outside.yaml"
    outside.write_bytes(victim.read_bytes())
    victim.unlink()
    victim.symlink_to(outside)
    result = apply(collected(V2, SHA_B), root)
    assert victim.is_symlink() and outside.read_bytes() == outside.read_bytes()
    assert result.problems and "symbolic link" in result.problems[0]


def test_load_only_some_ids_still_lists_strays(built: tuple[Path, Path, dict[str, bytes]]) -> None:
    _, folder, _ = built
    wanted = record_of(folder, "b_1").stem
    broken = record_of(folder, "a_1")
    broken.write_text("")
    (folder / "errors" / "notes.yaml").write_text("x: 1\n")
    loaded = repo_output.load_folder(folder, ids={wanted})
    assert [r.id for r in loaded.records] == [wanted]
    assert [b.id for b in loaded.broken] == [None]  # the stray; the unread broken file is not seen
    loaded = repo_output.load_folder(folder)
    assert {b.id for b in loaded.broken} == {None, broken.stem}


def test_unplaceable_broken_record_writes_nothing(built: tuple[Path, Path, dict[str, bytes]]) -> None:
    root, folder, _ = built
    # a record no site of this run would be given, no manifest entry, no readable path line
    (folder / "errors" / "ffffffffffffffff.yaml").write_bytes(b"\xff\xfe garbage\n")
    before = snapshot(folder)
    result = apply(collected(V2, SHA_B), root)
    assert result.files_written == 0
    assert snapshot(folder) == before
    assert any("nothing was written" in p for p in result.problems)


def test_broken_manifest_is_rebuilt(built: tuple[Path, Path, dict[str, bytes]]) -> None:
    root, folder, reference = built
    (folder / "manifest.yaml").write_text("files: {'../../x': {blob: 1, records: ['../../x']}}\n")
    result = apply(collected(V2, SHA_B), root)
    assert result.problems == ()
    assert any("manifest.yaml" in note for note in result.notes)
    assert snapshot(folder) == reference


def test_hostile_manifest_ids_are_never_paths(built: tuple[Path, Path, dict[str, bytes]],
                                             tmp_path: Path) -> None:
    root, folder, reference = built
    manifest = (folder / "manifest.yaml").read_text()
    some_id = record_of(folder, "a_2").stem
    (folder / "manifest.yaml").write_text(manifest.replace(some_id, "../../../escape"))
    apply(collected(V2, SHA_B), root)
    assert not list(tmp_path.rglob("escape*"))
    assert snapshot(folder) == reference


# ---------------------------------------------------------------- ids and folder names


@pytest.mark.parametrize("bad", ["../../x", "0123456789abcdef\n", "0123456789ABCDEF", "/etc/passwd",
                                 "0123456789abcde", "0123456789abcdef0", "", "0123456789abcdef/..",
                                 "..\\..\\x", "0123456789abcde\x00"])
def test_record_paths_only_from_checked_ids(tmp_path: Path, bad: str) -> None:
    with pytest.raises(OutputError, match="refused record id"):
        record_files.record_path(tmp_path, bad)


def test_hostile_record_id_is_not_written(tmp_path: Path) -> None:
    from dataclasses import replace

    from crawler.catalogue.merge import merge

    run = collected({"a.py": module("a", 1)})
    record = merge(run.pin, [], [s for o in run.outcomes for s in o.sites]).records[0]
    with pytest.raises(OutputError, match="refused record id"):
        repo_output.write_folder(tmp_path, repo_output.PendingWrites(
            (RecordText(replace(record, id="../../x"), "x: 1\n"),), None))
    with pytest.raises(OutputError, match="refused record id"):
        repo_output.pending_writes(tmp_path, [replace(record, id="../../x")], "")
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("owner", ["..", "../..", ".", "a/../../b", "a b", "x;rm", ""])
def test_output_folder_refuses_path_like_names(tmp_path: Path, owner: str) -> None:
    pinned = Pin(source="s", host="github.com", owner=owner, name="n", ref="r", sha="a" * 40)
    with pytest.raises(OutputError, match="refused output folder name"):
        output_folder(tmp_path, pinned)


def test_output_folder_accepts_real_names(tmp_path: Path) -> None:
    pinned = make_pin()
    assert output_folder(tmp_path, pinned) == tmp_path / "github.com" / "acme" / "widgets"
    dotted = Pin(source="s", host="github.com", owner="org", name=".github", ref="r", sha="a" * 40)
    assert output_folder(tmp_path, dotted).name == ".github"


# ---------------------------------------------------------------- disk full


class _Full:
    """Raise ENOSPC from the Nth call of a function, as a full disk does at write or fsync."""

    def __init__(self, real: object, nth: int) -> None:
        self.real, self.nth, self.calls = real, nth, 0

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        if self.calls >= self.nth:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.real(*args, **kwargs)  # type: ignore[operator]


# Every record's temp file is written and fsynced before the first rename, and the manifest is
# fsynced on its own: so a full disk shows at a temp file, a write, or an fsync.
@pytest.mark.parametrize(("target", "nth"), [*((t, n) for t in ("create_temp", "write")
                                               for n in (1, 2, 4, 7, 8)), ("fsync", 1)])
def test_disk_full_loses_nothing(built: tuple[Path, Path, dict[str, bytes]],
                                 monkeypatch: pytest.MonkeyPatch, target: str, nth: int) -> None:
    root, folder, reference = built
    before = snapshot(folder)
    if target == "fsync":
        monkeypatch.setattr(atomic.os, "fsync", _Full(os.fsync, nth))
    elif target == "create_temp":  # the temp file's creation (0666 less the umask)
        monkeypatch.setattr(atomic, "create_temp", _Full(atomic.create_temp, nth))
    else:
        monkeypatch.setattr(atomic.os, "write", _Full(os.write, nth))  # a temp file's bytes
    with pytest.raises(OutputError) as caught:
        apply(collected(V2, SHA_B), root)
    message = str(caught.value)
    assert "disk full" in message and "\n" not in message
    monkeypatch.undo()
    after = snapshot(folder)
    assert not [rel for rel in after if rel.endswith(atomic.TEMP_SUFFIX)]
    for rel, data in after.items():
        assert data in (before.get(rel), reference.get(rel)), rel
        if rel.startswith("errors/"):
            record_files.load_record(folder / rel)
        else:
            manifest_file.load_manifest(folder)
    apply(collected(V2, SHA_B), root)  # space freed: the next run finishes the job
    assert snapshot(folder) == reference


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    """A real 512 KiB tmpfs: only when this process may mount (root in a container or VM)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_real_disk_full(small_disk: Path, tmp_path: Path) -> None:
    root = small_disk / "out"
    first = {"pkg/a.py": module("a", 20)}
    apply(collected(first), root)
    folder = folder_of(root)
    annotated = record_of(folder, "a_3")
    block = annotate(annotated, "kept through a full disk")
    before = snapshot(folder)
    ballast = small_disk / "ballast"
    free = shutil.disk_usage(small_disk).free
    ballast.write_bytes(b"x" * max(free - 8 * 1024, 0))
    bigger = {"pkg/a.py": module("a", 20, offset=5, extra="x = 1\n" * 50),
              "pkg/c.py": module("c", 40)}
    with pytest.raises(OutputError, match="disk full"):
        apply(collected(bigger, SHA_B), root)
    after = snapshot(folder)
    assert not [rel for rel in after if rel.endswith(atomic.TEMP_SUFFIX)]
    for rel, data in after.items():
        if rel in before and data != before[rel]:
            record_files.load_record(folder / rel)  # a rewritten file is whole
        if rel.startswith("errors/"):
            record_files.load_record(folder / rel)
    assert block in annotated.read_text(encoding="utf-8")
    ballast.unlink()
    result = apply(collected(bigger, SHA_B), root)
    assert result.problems == ()
    assert block in annotated.read_text(encoding="utf-8")
    reference = tmp_path / "reference"
    apply(collected(first), reference)
    shutil.copyfile(annotated, folder_of(reference) / "errors" / annotated.name)
    apply(collected(bigger, SHA_B), reference)
    assert snapshot(folder) == snapshot(folder_of(reference))


def test_load_errors_are_record_errors(tmp_path: Path) -> None:
    bad = tmp_path / "0123456789abcdef.yaml"
    bad.write_text("a: [\n")
    with pytest.raises(RecordError) as caught:
        record_files.load_record(bad)
    assert caught.value.path == str(bad) and caught.value.line == 2


# ---------------------------------------------------------------- mutated records, at random

_RECORD_TEXT: list[bytes] = []


def _a_record_text() -> bytes:
    if not _RECORD_TEXT:
        with tempfile.TemporaryDirectory() as scratch:
            apply(collected({"pkg/a.py": module("a", 1)}), Path(scratch))
            path = next(record_files.iter_record_paths(folder_of(Path(scratch))))
            annotate(path, "words")
            _RECORD_TEXT.append(path.read_bytes())
    return _RECORD_TEXT[0]


_YAML_BITS = [b"&a ", b"*a", b"!!python/object/apply:os.system ['x']", b"[", b"]", b"{", b"}",
              b"- ", b": ", b"? ", b"|", b">", b"'", b'"', b"#", b"\t", b"\x00", b"\xff", b"\xef\xbb\xbf",
              b"%YAML 1.1\n", b"---\n", b"...\n", b"!!binary ", b"!!set ", b"!!timestamp ", b"<<: *a\n",
              b"\n", b"  ", b"~", b"0x1F", b".inf", b"2024-01-01", b"\xe2\x80\xa8"]


@given(edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(_YAML_BITS)),
                      min_size=1, max_size=6))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_mutated_records_load_or_fail_cleanly(tmp_path: Path, edits: list[tuple[float, int, bytes]]
                                              ) -> None:
    """Any edit of a record file either loads to a valid record or gives a RecordError."""
    data = bytearray(_a_record_text())
    for where, cut, bit in edits:
        at = int(where * len(data))
        data[at:at + cut] = bit
    path = tmp_path / (_a_record_text().split(b"\n")[1].split(b": ")[1].decode() + ".yaml")
    path.write_bytes(bytes(data))
    try:
        record = record_files.load_record(path)
    except RecordError as error:
        assert str(error).startswith(str(path)) and "\n" not in str(error).strip()
        return
    assert schemas.schema_problems(safe_yaml.safe_load_text(render.record_text(record), "x"), "record") == []
