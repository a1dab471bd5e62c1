"""A repository folder held in memory across the steps of a walk, written at checkpoints.

`crawler history` regenerates a folder once per release tag. Each step's merge hands its
records to the next (`HeldFolder`), so a step neither reads record files nor writes them; the
records that changed since the last checkpoint are written at checkpoints and at the walk's
end (`write_checkpoint`).

A checkpoint is one batch that a kill cannot leave half done: its texts are written to temp
files and fsynced, then a journal names each temp file and its target, then the renames run
(records first, the manifest last) and the journal goes. A run that finds a journal finishes
its renames first (`finish_checkpoint`): the folder is then the checkpoint's whole, never part
of one step and part of another. Temp files without a journal were never a checkpoint: the
run's usual cleaning removes them.

Between checkpoints the files are the last checkpoint's, and a person may edit one (or
another run write it). A checkpoint first checks that each file it would write is as the walk
last saw it (by its stat signature: a write always moves the ctime); where one is not, it
writes nothing and stops the walk, which, run again, goes on from the files as they are.

The visit results are held too (`HeldResults`): a file the walk left unchanged is read from
the result cache at every step (for the class pass), and a changed one's previous version
(for its skeleton read); each is decoded once a walk, not once a step.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from crawler.errors import OutputError
from crawler.parse.outcomes import FileOutcome
from crawler.records import ErrorRecord, Manifest
from crawler.store import atomic, record_files
from crawler.store.cache import LoadCache
from crawler.store.manifest_file import MANIFEST, prime_manifest, read_back_manifest
from crawler.store.parse_cache import ResultCache
from crawler.store.plain_files import lstat_or_none, signature
from crawler.store.record_files import ERRORS_DIR, read_back, record_path
from crawler.store.render import SiteBlocks, manifest_text
from crawler.store.repo_output import Loaded, load_folder, pending_writes

JOURNAL = ".walk-checkpoint.json"  # hidden and no temp file: a run's cleaning leaves it
_TARGET = re.compile(rf"{re.escape(MANIFEST)}|{ERRORS_DIR}/[0-9a-f]{{16}}\.yaml")


class HeldFolder:
    """Every record of one folder by id, and its manifest, as the last step left them; the
    ids of records changed since the last checkpoint are in `dirty`."""

    def __init__(self, records: Iterable[ErrorRecord], manifest: Manifest | None) -> None:
        self.records = {record.id: record for record in records}
        self.manifest = manifest
        self.dirty: set[str] = set()
        self.manifest_dirty = False
        # each file's stat signature as the walk last saw it, by its name in the folder
        self.seen: dict[str, list[int] | None] = {}

    def loaded(self, ids: Collection[str] | None = None) -> Loaded:
        """What `repo_output.load_folder` gives for these ids (all: None), in its order (by id)."""
        chosen = sorted(self.records) if ids is None else sorted(i for i in ids if i in self.records)
        return Loaded(tuple(self.records[i] for i in chosen), (), self.manifest, None)

    def missing(self, manifest: Manifest | None) -> set[str]:
        """Ids the manifest lists under a source file that no held record has."""
        if manifest is None:
            return set()
        return {i for entry in manifest.files for i in entry.records} - self.records.keys()

    def keep(self, records: Sequence[ErrorRecord], manifest: Manifest) -> int:
        """A step's changed records and its manifest, held for the next step as their files
        would give them back (what a file does not hold is not held either: a step then sees
        what it would see had the last one written and it loaded); how many records."""
        for record in records:
            self.records[record.id] = read_back(record)
            self.dirty.add(record.id)
        self.manifest = read_back_manifest(manifest)
        self.manifest_dirty = True
        return len(records)


class HeldResults(ResultCache):
    """The result cache, with each outcome it gave kept decoded for the walk's next step.

    What it gives is always what the cache holds: an outcome stored again is decoded from the
    cache at its next read, as a fresh cache would give it. Only what the last step and this
    one read is kept (`next_step`), so the walk holds about one repository's outcomes, however
    many tags it walks.
    """

    def __init__(self, root: Path | None) -> None:
        super().__init__(root)
        self._decoded: dict[tuple[str, str], FileOutcome] = {}  # read by this step
        self._before: dict[tuple[str, str], FileOutcome] = {}  # read by the step before

    def next_step(self) -> None:
        """A step begins: what the step before last read and no step since is let go."""
        self._before, self._decoded = self._decoded, {}

    def get(self, path: str, blob: str) -> FileOutcome | None:
        key = (path, blob)
        found = self._decoded.get(key) or self._before.pop(key, None)
        if found is not None:
            self.hits += 1
        else:
            found = super().get(path, blob)
        if found is not None:
            self._decoded[key] = found
        return found

    def put(self, outcome: FileOutcome) -> None:
        self._decoded.pop((outcome.path, outcome.blob), None)
        self._before.pop((outcome.path, outcome.blob), None)
        super().put(outcome)


def hold(folder: Path, loads: LoadCache | None) -> HeldFolder | None:
    """The folder's records and manifest, loaded whole once; None where it cannot be held
    exactly (a record file that does not load, a manifest that does not, or a record it lists
    missing): the walk then goes step by step on disk, which holds such files back."""
    seen = _signatures(folder)  # before the loads: a file changed meanwhile is caught
    loaded = load_folder(folder, loads=loads)
    if loaded.broken or loaded.manifest_problem is not None:
        return None
    held = HeldFolder(loaded.records, loaded.manifest)
    held.seen = seen
    return None if held.missing(loaded.manifest) else held


def _signatures(folder: Path) -> dict[str, list[int] | None]:
    """The stat signature of the manifest and of each record file, by name in the folder."""
    seen = {MANIFEST: _signature(folder / MANIFEST)}
    errors = folder / ERRORS_DIR
    if errors.is_dir():
        with os.scandir(errors) as entries:
            for entry in entries:
                seen[f"{ERRORS_DIR}/{entry.name}"] = signature(entry.stat(follow_symlinks=False))
    return seen


def _signature(path: Path) -> list[int] | None:
    found = lstat_or_none(path)
    return signature(found) if found is not None else None


def _check_unchanged(folder: Path, held: HeldFolder) -> None:
    """Refuse to write over a file the walk did not leave as it is."""
    names = [MANIFEST, *(f"{ERRORS_DIR}/{i}.yaml" for i in sorted(held.dirty))]
    for name in names:
        if _signature(folder / name) != held.seen.get(name):
            raise OutputError(f"{folder / name}: changed while the walk held the folder in "
                              "memory; nothing was written since the last checkpoint, the "
                              "folder is as it left it: run `crawler history` again to go on "
                              "from there")


def write_checkpoint(folder: Path, held: HeldFolder, blocks: SiteBlocks | None,
                     loads: LoadCache | None) -> int:
    """Write the records changed since the last checkpoint whose text differs from their files',
    and the manifest, as one journalled batch (see the module's docstring); how many files."""
    if held.manifest is None or not (held.dirty or held.manifest_dirty):
        return 0
    _check_unchanged(folder, held)
    changed = [held.records[i] for i in sorted(held.dirty)]
    writes = pending_writes(folder, changed, manifest_text(held.manifest), blocks)
    files = [(record_path(folder, item.record.id), item.text) for item in writes.records]
    if writes.manifest is not None:
        files.append((folder / MANIFEST, writes.manifest))  # last: it names the checkpoint
    if files:
        (folder / ERRORS_DIR).mkdir(parents=True, exist_ok=True)
        try:
            staged = atomic.stage_batch(files)
            journal = [[os.path.relpath(tmp, folder), str(path.relative_to(folder))]
                       for tmp, (path, _) in zip(staged, files)]
            atomic.write_atomic(folder / JOURNAL, json.dumps({"renames": journal}))
        except OSError as error:
            atomic.raise_output_error(error, error.filename or folder,
                                      "the folder is as the last checkpoint left it")
        _finish(folder, journal)
        for path, _ in files:
            held.seen[str(path.relative_to(folder))] = _signature(path)
    if loads is not None:
        record_files.prime(loads, writes.records, folder)  # the next run's loads need not check them
        if writes.manifest is not None:
            prime_manifest(loads, held.manifest, writes.manifest)
    held.dirty.clear()
    held.manifest_dirty = False
    return len(files)


def finish_checkpoint(folder: Path) -> bool:
    """Finish the renames of a checkpoint a kill interrupted; whether there was one.

    Call it holding the folder's lock, before anything reads the folder. A journal whose temp
    files are gone (a run without a walk cleaned them) has nothing left to finish.
    """
    path = folder / JOURNAL
    if not path.is_file() or path.is_symlink():
        return False
    try:
        renames = json.loads(path.read_text(encoding="utf-8"))["renames"]
        if not all(_journalled(folder, tmp, target) for tmp, target in renames):
            raise ValueError("a rename outside the folder's records")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise OutputError(f"{path}: not a checkpoint journal this crawler wrote ({error}); remove "
                          "it and run again") from error
    _finish(folder, renames)
    return True


def _journalled(folder: Path, tmp: object, target: object) -> bool:
    """A journal's pair: a record file or the manifest, and a temp file beside it."""
    if not (isinstance(tmp, str) and isinstance(target, str) and _TARGET.fullmatch(target)):
        return False
    where, name = os.path.split(target)
    tmp_where, tmp_name = os.path.split(tmp)
    return (tmp_where == where and tmp_name.startswith(f".{name}.")
            and tmp_name.endswith(atomic.TEMP_SUFFIX))


def _finish(folder: Path, renames: Sequence[Sequence[str]]) -> None:
    """Each temp file still there renamed over its target, the folders fsynced, the journal gone."""
    left = [(folder / tmp, folder / target) for tmp, target in renames
            if os.path.isfile(folder / tmp) and not os.path.islink(folder / tmp)]
    try:
        atomic.replace_all([pair for pair in left if pair[1].name != MANIFEST])
        atomic.replace_all([pair for pair in left if pair[1].name == MANIFEST])  # last
        atomic.sync_folder(folder / ERRORS_DIR)
        (folder / JOURNAL).unlink(missing_ok=True)
        atomic.sync_folder(folder)
    except OSError as error:
        atomic.raise_output_error(error, error.filename or folder, "run again to finish the "
                                  "checkpoint's renames")
