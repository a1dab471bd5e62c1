"""The output folder of one repository: its lock, loading what it holds, and writing it back.

The records are the truth and the manifest is derived from them: records are written first and
the manifest last, so a run killed in between leaves records that the next run reads as they are
and a manifest that it rebuilds. A record that cannot be loaded is never written; the source
files it may belong to are held back for the run (`catalogue.holdback`), so that its annotation is neither
dropped nor shadowed by a new record for the same site.
"""

from __future__ import annotations

import fcntl
import gc
import os
import stat
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from crawler.errors import OutputError, RecordError
from crawler.records import (
    BrokenFile,
    ErrorRecord,
    Manifest,
)
from crawler.store import atomic
from crawler.store.cache import LoadCache
from crawler.store.manifest_file import MANIFEST, load_manifest, write_manifest
from crawler.store.plain_files import (
    kind_of,
    lstat_or_none,
    open_plain,
    read_head,
    refuse_links_below,
    refuse_replacing,
    signature,
    text_or_none,
)
from crawler.store.record_files import (
    ERRORS_DIR,
    RecordText,
    broken_record,
    is_record_id,
    load_keyed,
    load_record,
    other_file,
    read_record,
    record_of,
    record_path,
    write_texts,
)
from crawler.store.render import SiteBlocks, record_text

LOCK_FILE = ".crawler.lock"
REBUILT = "; it will be rebuilt from the records"  # ends the note on a broken manifest


# ---------------------------------------------------------------- the lock

_HELD: set[int] = set()  # lock file descriptors this process holds open


def _close_held_in_child() -> None:
    """A forked child (a worker pool) must not keep the parent's lock alive after it dies."""
    for fd in list(_HELD):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


@contextmanager
def lock(folder: Path, *, wait: float = 0.0, shared: bool = False, poll: float = 0.05
         ) -> Iterator[None]:
    """Hold the folder's lock: exclusive to write, shared to read (a dry run).

    `flock` on a lock file that is never removed: the kernel drops the lock when its holder
    exits, however it dies, so there is no stale lock to detect. A refused run names the
    holder's pid as the kernel lists it (a writer also notes its pid in the file). The file
    is opened close-on-exec, and a forked child closes its copy at once, so a worker process
    that outlives a killed run does not keep the lock. A second run waits up to `wait`
    seconds, then stops with one line. A reader (a dry run) creates nothing: where no run has
    made the lock file yet, it takes no lock.
    """
    fd = _open_lock_file(folder / LOCK_FILE, shared)
    if fd is None:  # a reader of a folder no run has written yet: nothing to wait for
        yield
        return
    opener = os.getpid()
    try:
        deadline = time.monotonic() + max(wait, 0.0)
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise OutputError(_busy_message(folder, fd, wait)) from None
                time.sleep(min(poll, left))
        if not shared:
            _note_holder(fd, os.getpid())
        _HELD.add(fd)
        yield
    finally:
        if os.getpid() == opener:  # a forked child closed its copy at the fork already
            if fd in _HELD:
                _HELD.discard(fd)
                if not shared:
                    _note_holder(fd, None)  # empty between runs: a committed folder does not churn
            os.close(fd)  # releases the lock


def _open_lock_file(path: Path, shared: bool) -> int | None:
    """The lock file, a plain file only: a link or a FIFO in its place is refused unopened."""
    try:
        if shared:
            return open_plain(path, os.O_RDONLY)
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_plain(path, os.O_RDWR | os.O_CREAT, 0o644)
    except RecordError as error:
        raise OutputError(f"{error} (the lock file)") from None
    except FileNotFoundError:
        if shared:
            return None
        raise OutputError(f"{path}: cannot open the lock file (its folder went away)") from None
    except OSError as error:
        raise OutputError(f"{path}: cannot open the lock file ({error.strerror})") from error


def _busy_message(folder: Path, fd: int, wait: float) -> str:
    pids = _lock_holders(fd) or _noted_holder(fd)
    holder = f" (pid {', '.join(pids)})" if pids else ""
    waited = f" after waiting {wait:g}s" if wait > 0 else ""
    return (f"{folder}: another crawler run{holder} is using this output folder{waited}; "
            "let it finish, or pass --wait SECONDS")


def _lock_holders(fd: int) -> list[str]:
    """The pids the kernel lists as holding a flock on the file open at `fd` (Linux's
    /proc/locks): a dry run's shared lock too, which writes no pid, and never a stale pid."""
    try:
        found = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            rows = [row.split() for row in locks]
    except OSError:
        return []
    inode = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
    # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:2498929 0 EOF"; a waiter's row has "->" second
    pids = {row[4] for row in rows if len(row) > 5 and row[1] == "FLOCK" and row[5] == inode}
    return sorted(pids - {str(os.getpid())}, key=int)


def _noted_holder(fd: int) -> list[str]:
    """The pid the holder wrote into the lock file (`_note_holder`), where /proc/locks is not."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return []
    return [text] if text.isdigit() else []


def _note_holder(fd: int, pid: int | None) -> None:
    """The holder's pid, for the busy message only; the lock itself is the flock."""
    try:
        os.ftruncate(fd, 0)
        if pid is not None:
            os.pwrite(fd, f"{pid}\n".encode("ascii"), 0)
    except OSError:
        pass  # a full disk must not stop a run that holds the lock


# ---------------------------------------------------------------- what the folder may be


def check_folder(output_root: Path, folder: Path) -> None:
    """Refuse, before anything is read for writing or written, a folder the crawler must not use.

    Every folder from below the output root down to errors/ must be a plain folder (or not
    there yet), and the manifest and the lock file plain files (or not there yet): a link
    would send the writes out of the output tree, and a FIFO would stall the run.
    """
    refuse_links_below(output_root, folder / ERRORS_DIR)
    for name in (MANIFEST, LOCK_FILE):
        refuse_replacing(folder / name)


# ---------------------------------------------------------------- reading the folder


@dataclass(frozen=True)
class Loaded:
    """What a repository folder holds: the records that load, the files that do not."""

    records: tuple[ErrorRecord, ...]
    broken: tuple[BrokenFile, ...]
    manifest: Manifest | None
    manifest_problem: str | None  # the manifest is rebuilt from the records, so only a note
    # each record's id: the load cache's key of the bytes its file held (`LoadCache.key`),
    # where a load through the cache read or noted it
    keys: Mapping[str, str] = field(default_factory=dict)


def clean_temp_files(folder: Path) -> list[str]:
    """Remove temp files that a killed run left; call it only while holding the lock."""
    removed = []
    for where in (folder, folder / ERRORS_DIR):
        if not where.is_dir() or where.is_symlink():
            continue
        # named first, and only those sorted: a stat, or a comparison of paths, for each of
        # thousands of records cost an update
        for path in sorted(p for p in where.iterdir()
                           if p.name.startswith(".") and p.name.endswith(atomic.TEMP_SUFFIX)):
            found = lstat_or_none(path)  # the crawler's own temp files are plain files, never links
            if found is not None and stat.S_ISREG(found.st_mode):
                try:
                    path.unlink()
                    removed.append(str(path))
                except OSError:
                    pass  # left for the next run; no reader ever looks at it
    return removed


def load_folder(folder: Path, ids: Collection[str] | None = None,
                manifest: Manifest | None = None, loads: LoadCache | None = None,
                quick: bool = False) -> Loaded:
    """Every record in the folder that loads safely, and every file in errors/ that does not.

    With `ids`, only those records are read (an update that knows which files changed); the
    folder is still listed, so stray files and links are reported all the same (an update checks
    the other record files with `record_files.verify_records`). `quick` reads records without
    the schema (`record_files.read_record`: lookup's). With `loads`,
    a file whose exact bytes passed every check before is not checked again (see
    `record_files.load_record`); a user's own check (`crawler validate`) passes none.
    """
    with collector_paused():
        records, broken, keys = _load_records(folder, ids, loads, quick)
    broken = [_with_head(b) for b in broken]
    if loads is not None:
        loads.flush()  # what was loaded in full this time is a hit the next
    problem = None
    if manifest is None:  # an update has read it already
        try:
            manifest = load_manifest(folder, loads)
        except OutputError as error:
            problem = f"{error}{REBUILT}"
    return Loaded(tuple(records), tuple(broken), manifest, problem, keys)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector held off while a folder's records are built: thousands of
    small objects, none in a cycle, that each full collection rescans as they pile up (0.25 s of
    the 0.8 s of jax's 5,482 records). On again after, if it was on; a cycle made meanwhile
    (a file's failed load) is collected then. `crawler check` holds it off for its whole
    review (`serve.review.checks.review_output`): load, index and judgements."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _with_head(broken: BrokenFile) -> BrokenFile:
    """A broken record with its first MiB as text, for the hint of the source file it belongs to."""
    if broken.id is None or broken.head is not None:
        return broken
    head = read_head(broken.path, 1 << 20)
    return broken if head is None else replace(broken, head=head.decode("utf-8", "replace"))


def _load_records(folder: Path, ids: Collection[str] | None, loads: LoadCache | None,
                  quick: bool = False
                  ) -> tuple[list[ErrorRecord], list[BrokenFile], dict[str, str]]:
    records: list[ErrorRecord] = []
    broken: list[BrokenFile] = []
    errors = folder / ERRORS_DIR
    if errors.is_symlink():
        return [], [BrokenFile(str(errors), None, f"{errors}: a symbolic link; records live in a "
                               "plain errors/ folder and a link is never followed; replace it "
                               "with a folder, it was left as it is")], {}
    # Listed by name, with the kinds the listing gives: no stat for each of thousands of files.
    entries = sorted(os.scandir(errors), key=lambda e: e.name) if errors.is_dir() else []
    found: list[BrokenFile | os.DirEntry[str]] = []  # in name order: what is wrong, what to load
    for entry in entries:
        if entry.name.startswith("."):
            continue  # temp files and the like
        where = entry.path  # the same text as str(errors / entry.name)
        stem = entry.name[:-len(".yaml")] if entry.name.endswith(".yaml") else None
        claimed = stem if is_record_id(stem) else None
        if entry.is_symlink() or not entry.is_file():
            kind = kind_of(entry.stat(follow_symlinks=False).st_mode)
            found.append(BrokenFile(where, claimed, f"{where}: {kind}; records are plain files, "
                                    "never followed or opened; it was left as it is"))
        elif claimed is None:  # a renamed record holds its id back; a stray file, nothing
            found.append(other_file(Path(where)))
        elif ids is None or claimed in ids:
            found.append(entry)
    stamps = _Stamps(folder, loads, [e for e in found if not isinstance(e, BrokenFile)]) \
        if loads is not None and not quick else None
    for item in found:
        if isinstance(item, BrokenFile):
            broken.append(item)
            continue
        try:
            records.append(read_record(Path(item.path)) if quick else
                           stamps.load(item) if stamps is not None else
                           load_record(Path(item.path), loads))
        except (RecordError, OutputError) as error:
            broken.append(broken_record(item.path, item.name.removesuffix(".yaml"), error))
    if stamps is None:
        return records, broken, {}
    stamps.store({entry.name for entry in entries})
    return records, broken, stamps.keys_of


# A file's stat stands for its bytes only when its ctime is this much older than the moment
# before the stat: a write within one tick of a coarse clock (a file system's: FAT's is 2 s)
# may leave its size, mtime and ctime as they were.
STAMP_MARGIN_NS = 2_000_000_000
clock = time.time_ns  # tests move it


class _Stamps:
    """The record files of a folder by their stat (`LoadCache.stamps`): a file whose inode,
    size, mtime and ctime are those noted when it last loaded, its ctime older than
    `STAMP_MARGIN_NS`, is not read: its checked load is found under the key of the bytes it
    held then. Any write or rename sets a new ctime, which no one can set back; a file whose
    stat is not so noted is read and its bytes' key looked up, as `load_record` does."""

    def __init__(self, folder: Path, loads: LoadCache, entries: list[os.DirEntry[str]]) -> None:
        self.loads = loads
        self.folder = os.path.abspath(folder)
        self.noted = loads.stamps(self.folder)
        self.now = clock()  # before every stat: a file changed after it has a ctime after it
        self.stats: dict[str, list[int]] = {}
        self.keys: dict[str, str] = {}  # the files whose stat is noted: the key of their bytes
        for entry in entries:
            try:
                stamp = signature(entry.stat(follow_symlinks=False))
            except OSError:
                continue  # gone: its load says so
            self.stats[entry.name] = stamp
            noted = self.noted.get(entry.name)
            if isinstance(noted, list) and noted[:4] == stamp and self.old(stamp) \
                    and len(noted) == 5 and isinstance(noted[4], str):
                self.keys[entry.name] = noted[4]
        self.found = loads.get_many(list(self.keys.values()))
        self.loaded: dict[str, list[int | str]] = {}
        self.keys_of: dict[str, str] = {}  # each record loaded: the key of its file's bytes

    def old(self, stamp: list[int]) -> bool:
        return stamp[3] + STAMP_MARGIN_NS < self.now

    def load(self, entry: os.DirEntry[str]) -> ErrorRecord:
        key = self.keys.get(entry.name)
        checked = self.found.get(key) if key is not None else None
        # the id its name claims (the name ends in .yaml: `_load_records`); a Path only for a
        # file read in full (one for each of jax's 5,482 files was 0.03 s of CPU)
        record = record_of(self.loads, checked, entry.name[:-len(".yaml")]) \
            if checked is not None else None
        if record is None:
            record, key = load_keyed(Path(entry.path), self.loads, listed=True)
        if key is not None:
            self.keys_of[record.id] = key
        stamp = self.stats.get(entry.name)  # taken before the file was read
        if stamp is not None and key is not None and self.old(stamp):
            self.loaded[entry.name] = [*stamp, key]
        return record

    def store(self, listed: set[str]) -> None:
        """Note the stamps of the files loaded; a file not loaded this run (an update's `ids`)
        keeps its own while it is listed (its stat is compared all the same)."""
        files = {name: stamp for name, stamp in self.noted.items()
                 if name in listed and name not in self.stats}
        files.update(self.loaded)
        if files != self.noted:
            self.loads.put_stamps(self.folder, dict(sorted(files.items())))


# ---------------------------------------------------------------- writing the folder


@dataclass(frozen=True)
class PendingWrites:
    """What writing a folder would change: each text here differs from its file's."""

    records: tuple[RecordText, ...]
    manifest: str | None  # the manifest's new text, or None where the file holds it already

    def names(self) -> list[str]:
        """The files to be written, relative to the folder, records first."""
        names = [f"{ERRORS_DIR}/{item.record.id}.yaml" for item in self.records]
        return [*names, MANIFEST] if self.manifest is not None else names


def pending_writes(folder: Path, records: Sequence[ErrorRecord], manifest_text: str,
                   blocks: SiteBlocks | None = None) -> PendingWrites:
    """The records and manifest whose text differs from their files', each rendered once."""
    changed = []
    for record in records:
        text = record_text(record, blocks)
        if text_or_none(record_path(folder, record.id)) != text:
            changed.append(RecordText(record, text))
    manifest = manifest_text if text_or_none(folder / MANIFEST) != manifest_text else None
    return PendingWrites(tuple(changed), manifest)


def write_folder(folder: Path, writes: PendingWrites, protected: frozenset[str] = frozenset(),
                 loads: LoadCache | None = None) -> int:
    """Write the pending records, then the manifest last; how many files were written.

    A record id in `protected` (a broken file's, or a held-back record's) is never written.
    `loads` is primed with the records written (see `record_files.write_texts`).
    """
    written = 0
    try:
        for item in writes.records:
            if item.record.id in protected:
                raise OutputError(f"{folder}: record {item.record.id} is protected this run (its "
                                  "file could not be loaded)")
        written += write_texts(folder, writes.records, loads=loads)
        if writes.manifest is not None:
            written += write_manifest(folder, writes.manifest, compared=True)
        atomic.sync_folder(folder)
    except OutputError as error:
        raise OutputError(f"{error} ({written} files written before it are complete, the rest "
                          "untouched; the next run finishes the job)") from error
    return written
