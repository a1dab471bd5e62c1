"""The record files of a repository folder, `errors/<id>.yaml`: which files are what, loading and
writing them.

A record's file is named by its id alone, checked to be 16 hex digits, never a path. Any other
file in `errors/` that claims a record (its `id` field, or else its name, holds a record id: a
`.yml`, `.bak`, `~` or `(copy)` of a record, or one with upper-case hex) is a renamed record:
it holds that id back like a broken record, never "not a record" (`other_file`). A load
runs every check (safe YAML, the schema, the kept annotation block, the id against the name);
with a `LoadCache`, bytes that passed the checks of their content before are not checked again.
A write writes only the files whose text changes, atomically, and primes the cache with what a
load of each text would find.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

from crawler.errors import CrawlerError, OutputError, RecordError
from crawler.records import SCHEMA_VERSION, BrokenFile, ErrorRecord
from crawler.store import atomic, schemas
from crawler.store.annotation_edits import edited_annotation
from crawler.store.cache import Checked, LoadCache, is_plain
from crawler.store.documents import (
    Unsure,
    as_read_back,
    extracted_data,
    history_data,
    record_from_data,
    versions_data,
)
from crawler.store.plain_files import refuse_links_below, signature, text_or_none
from crawler.store.render import (
    SiteBlocks,
    annotation_block,
    annotation_text,
    block_of,
    kept_annotation_block,
    record_text,
    split_at_annotation,
)
from crawler.store.safe_yaml import load_yaml_file, read_capped, safe_load_text, yaml_text

ERRORS_DIR = "errors"
ID_PATTERN = re.compile(r"[0-9a-f]{16}")  # always with fullmatch: `$` would let "…\n" through
_ID_IN_NAME = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{16}(?![0-9a-fA-F])")


@dataclass(frozen=True)
class RecordText:
    """A record and the text of its file, rendered once."""

    record: ErrorRecord
    text: str


def is_record_id(value: object) -> bool:
    """True for exactly 16 lowercase hex digits: the only names a record file may have."""
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


def record_path(root: Path, record_id: str) -> Path:
    """The file of a record, built from its id alone, after the id is checked."""
    if not is_record_id(record_id):
        raise OutputError(f"{root}: refused record id {record_id!r}: ids are 16 hex digits, "
                          "never a path")
    return root / ERRORS_DIR / f"{record_id}.yaml"


def iter_record_paths(root: Path) -> Iterator[Path]:
    """Record files of one repository folder (every *.yaml in errors/), sorted by name.

    An errors/ that is a symbolic link is refused, not followed out of the output tree.
    """
    errors = root / ERRORS_DIR
    refuse_links_below(root, errors)
    if errors.is_dir():
        yield from sorted(p for p in errors.glob("*.yaml") if not p.name.startswith("."))


# ---------------------------------------------------------------- files that are not <id>.yaml


def claimed_id(path: Path) -> str | None:
    """The record id a file not named `<id>.yaml` stands for: the `id` its YAML holds, else the
    one id its name holds (any case); None for a file that claims no record."""
    try:
        data = safe_load_text(yaml_text(read_capped(path), str(path)), str(path))
    except CrawlerError:
        data = None
    if isinstance(data, dict) and is_record_id(data.get("id")):
        return str(data["id"])
    found = _ID_IN_NAME.findall(path.name)
    return found[0].lower() if len(found) == 1 else None


def other_file(path: Path) -> BrokenFile:
    """A plain file in errors/ not named `<id>.yaml`: a renamed record, or a stray file.

    A renamed record holds its id (and so its site) back until a person puts it right: renamed
    to `<id>.yaml`, or deleted where `<id>.yaml` holds the same text.
    """
    record = claimed_id(path)
    if record is None:
        return BrokenFile(str(path), None, f"{path}: not a record (records are <16 hex>.yaml); "
                          "move it out of errors/, it was ignored")
    proper = path.with_name(f"{record}.yaml")
    if not proper.is_file():
        todo = f"rename it to {proper.name}"
    elif _same_bytes(path, proper):
        todo = f"{proper.name} holds the same text: delete this copy"
    else:
        todo = (f"{proper.name} holds other text: keep what you want in {proper.name} and "
                "delete this copy")
    return BrokenFile(str(path), record, f"{path}: a renamed copy of record {record}; {todo} "
                      "(its site is held back until then)")


def _same_bytes(one: Path, other: Path) -> bool:
    try:
        return read_capped(one) == read_capped(other)
    except CrawlerError:
        return False


# ---------------------------------------------------------------- loading


def load_record(path: Path, loads: LoadCache | None = None) -> ErrorRecord:
    """A record file, safely loaded and checked against the record schema and its file name.

    With `loads`, bytes that passed every check before are not checked again; the checks of
    the file's name run on every load, since the same bytes may sit under another name.
    """
    return load_keyed(path, loads)[0]


def load_keyed(path: Path, loads: LoadCache | None, listed: bool = False
               ) -> tuple[ErrorRecord, str | None]:
    """`load_record`, and the key of the bytes it loaded (`LoadCache.key`; None without
    `loads`). `listed`: the file was found by a listing of its folder, which the caller found
    a plain folder, not a link."""
    if not is_record_id(path.stem):
        raise RecordError("not a record file name (16 hex digits and .yaml); it was ignored",
                          path=str(path))
    if not listed and path.parent.is_symlink():  # a glob such as check's walks into a link
        raise RecordError("its folder is a symbolic link; records are read only from a plain "
                          f"{ERRORS_DIR}/ folder, it was left as it is", path=str(path))
    raw = read_capped(path)
    key = loads.key(raw) if loads is not None else None
    record = _cached_record(loads, key) if loads is not None and key is not None else None
    if record is None:
        data, block = _checked_load(raw, path, loads)
        record = record_from_data(data, block)
    if record.id != path.stem:
        text = raw.decode("utf-8")
        line = next((i for i, row in enumerate(text.splitlines(), 1) if row.startswith("id:")), None)
        raise RecordError(f"id {record.id!r} is not the file's name {path.stem!r}; rename the file "
                          "or fix the id, it was left as it is", path=str(path), line=line)
    return record, key


def record_of(loads: LoadCache, checked: Checked, claimed: str) -> ErrorRecord | None:
    """The record a checked load of the file named `claimed`.yaml found before
    (`LoadCache.get_many`); None where it makes no record, or one of another id: then the file
    is loaded in full."""
    try:
        record = record_from_data(*checked)
    except (KeyError, TypeError, ValueError, AttributeError):
        loads.spoiled()  # loaded in full, stored again
        return None
    return record if record.id == claimed else None


def read_record(path: Path) -> ErrorRecord:
    """A record file read quickly: safe YAML, the kept annotation block and the id against the
    name, not the schema (half the time of a load). For lookup, which only reads; a file that
    does not make a record is a `RecordError`, like any broken one."""
    data, text = load_yaml_file(path)
    try:
        block = kept_annotation_block(text, data, str(path)) if isinstance(data, dict) else None
        record = record_from_data(data, block)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise RecordError(f"not a record ({error!r} missing or wrong); run `crawler validate`",
                          path=str(path)) from error
    if record.id != path.stem:
        raise RecordError(f"id {record.id!r} is not the file's name {path.stem!r}; run "
                          "`crawler validate`", path=str(path))
    return record


def broken_record(where: str, record: str, error: CrawlerError) -> BrokenFile:
    """A record file that did not load, with its one line."""
    if isinstance(error, RecordError):
        return BrokenFile(where, record, str(error))
    return BrokenFile(where, record, f"{error}; fix the file by hand, it was left as it is")


# ---------------------------------------------------------------- verifying the files not loaded


@dataclass(frozen=True)
class Verified:
    """The record files an update did not load, checked: the broken ones, and the signatures
    of the good ones (`good_files`: what the last run found good)."""

    broken: tuple[BrokenFile, ...]
    good: dict[str, list[int]]
    known: dict[str, list[int]]


def verify_records(root: Path, loaded: Collection[str], loads: LoadCache | None) -> Verified:
    """Check every `<id>.yaml` in errors/ not named in `loaded` (file names) as a load would,
    so an update finds a broken record wherever an extract does. A file whose signature is the one a run found
    good is unchanged since; for the others, bytes that passed every check before cost a load
    cache hit (`verify_record`). Links, folders and other names are the listing's (`other_file`)."""
    errors = root / ERRORS_DIR
    known = loads.good_files(root) if loads is not None else {}
    broken: list[BrokenFile] = []
    good: dict[str, list[int]] = {}
    for entry in sorted(os.scandir(errors), key=lambda e: e.name) if errors.is_dir() else ():
        record = entry.name.removesuffix(".yaml")
        if not (entry.name.endswith(".yaml") and is_record_id(record)) or entry.name in loaded \
                or not entry.is_file(follow_symlinks=False):
            continue
        stamp = signature(entry.stat(follow_symlinks=False))
        try:
            if known.get(entry.name) != stamp:
                verify_record(Path(entry.path), loads)
            good[entry.name] = stamp
        except (RecordError, OutputError) as error:
            broken.append(broken_record(entry.path, record, error))
    return Verified(tuple(broken), good, known)


def verify_record(path: Path, loads: LoadCache | None = None) -> None:
    """Raise what `load_record` would raise, building no record for bytes that passed before."""
    checked = loads.get(read_capped(path)) if loads is not None else None
    if checked is None or checked[0].get("id") != path.stem:
        load_record(path, loads)  # every check; its errors, and what passes is stored


def remember_good_files(root: Path, loads: LoadCache, verified: Verified,
                        loaded: Collection[str], written: Collection[str]) -> None:
    """Note the signature of each record file a run leaves good, so that the next update
    checks only what changed since: those `verified` found good, and those it `loaded` (file
    names) or wrote (ids), stated again."""
    good = dict(verified.good)
    for name in {*loaded, *(f"{record}.yaml" for record in written)}:
        try:
            found = os.lstat(root / ERRORS_DIR / name)
        except OSError:
            good.pop(name, None)
            continue
        if S_ISREG(found.st_mode):
            good[name] = signature(found)
    if good != verified.known:
        loads.put_good_files(root, good)


def _checked_load(raw: bytes, path: Path, loads: LoadCache | None) -> Checked:
    """`check_record_bytes`, stored in `loads`; bytes whose annotation block alone differs
    from a file that passed have that block loaded alone (`annotation_edits`)."""
    if loads is None:
        return check_record_bytes(raw, path)
    text = yaml_text(raw, str(path))
    checked = edited_annotation(loads, text, path)
    if checked is None:
        checked = check_record_bytes(raw, path)
    loads.note_file(path, loads.put(raw, checked))
    return checked


def check_record_bytes(raw: bytes, path: Path) -> Checked:
    """Every check of a record file that depends on its bytes alone: its data and kept block."""
    text = yaml_text(raw, str(path))
    data = safe_load_text(text, str(path))
    schemas.check_schema(data, "record", path, text)
    return data, kept_annotation_block(text, data, str(path))


def _cached_record(loads: LoadCache, key: str) -> ErrorRecord | None:
    checked = loads.get_by_key(key, counted=True)
    if checked is None:
        return None
    try:
        return record_from_data(*checked)
    except (KeyError, TypeError, ValueError, AttributeError):
        loads.spoiled()  # an entry that does not make a record: loaded in full, stored again
        return None


# ---------------------------------------------------------------- writing


def write_record(root: Path, record: ErrorRecord) -> bool:
    """Write a record unless the file already holds exactly this text; True if written."""
    return write_records(root, [record]) == 1


def write_records(root: Path, records: Iterable[ErrorRecord], *, loads: LoadCache | None = None,
                  blocks: SiteBlocks | None = None) -> int:
    """Write every record whose file text changes, atomically each; how many were written."""
    changed = []
    for record in records:
        path = record_path(root, record.id)  # ids only, checked
        text = record_text(record, blocks)
        if not holds(path, text):
            changed.append(RecordText(record, text))
    return write_texts(root, changed, loads=loads)


def write_texts(root: Path, texts: Sequence[RecordText], *, loads: LoadCache | None = None
                ) -> int:
    """Write these texts, each known to differ from its file, as one atomic batch; how many.

    A crash leaves each file as it was or as it should be (see `atomic.write_all`). With
    `loads`, each file written primes it with what a checked load of its text finds, so the
    next run need not check what this one wrote. The priming runs while the writes wait on the
    disk (their fsyncs and renames): what it stores is keyed by the texts' bytes and true of
    them, written or not.
    """
    files = [(record_path(root, item.record.id), item.text) for item in texts]
    if not files:
        return 0
    folder = root / ERRORS_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(1) as writer:
            writing = writer.submit(atomic.write_all, files)
            if loads is not None:
                prime(loads, texts, root)
            writing.result()
    except OSError as error:
        atomic.raise_output_error(error, error.filename or folder, "every record there is either "
                                  "as it was or fully written")
    return len(files)


def holds(path: Path, text: str) -> bool:
    """Whether the plain file holds exactly `text` (a file that cannot be read does not)."""
    return text_or_none(path) == text


# ---------------------------------------------------------------- priming the load cache


def prime(loads: LoadCache, written: Iterable[RecordText], root: Path) -> None:
    """Store what a checked load of each record's file text finds, found without loading it,
    and note it as the text of its file under `root`."""
    for item in written:
        checked = _checked_of_parts(item.record, split_at_annotation(item.text))
        if checked is not None:
            key = loads.put(item.text.encode("utf-8"), checked, plain=True)  # by `as_read_back`
            loads.note_file(record_path(root, item.record.id), key)
    loads.flush()


def checked_of_written(record: ErrorRecord, text: str) -> Checked | None:
    """What `check_record_bytes` finds in `text`, the file `record_text(record)` made, unread.

    The data is the record's, as the YAML reads back (lists for tuples, a lone surrogate as
    its escape); a kept annotation block's data is the one loaded with it (see `Annotation`).
    The block is the annotation text the file holds, since a full load keeps it (it was kept
    when read, or it was dumped from the data). None where that cannot be told for sure: an
    annotation block the text does not hold as such, or data the schema refuses.
    """
    return _checked_of_parts(record, split_at_annotation(text))


def _checked_of_parts(record: ErrorRecord, parts: tuple[str, str, str] | None
                      ) -> Checked | None:
    """`checked_of_written`, the text given as `split_at_annotation` made it."""
    data = _read_back_data(record)
    if data is None:
        return None
    block = annotation_text(record)
    if block_of(parts) != block or not schemas.passes(data, "record"):
        return None
    return data, block


def read_back(record: ErrorRecord) -> ErrorRecord:
    """The record as a load of its file (`record_text(record)`) gives it back: what the file
    does not hold (a site's calls across modules, its deferred templates) is gone. A walk
    hands this to its next step, so that a step sees what it would see had the record been
    written and loaded again."""
    data = _read_back_data(record)
    if data is not None:
        return record_from_data(data, annotation_text(record))
    text = record_text(record)  # what cannot be vouched for is read back the long way
    return record_from_data(safe_load_text(text, record.id), annotation_block(text))


def _read_back_data(record: ErrorRecord) -> dict[str, Any] | None:
    """The data a YAML load of the record's file finds; None where the trip cannot be vouched for."""
    annotation = record.annotation
    try:
        data: dict[str, Any] = as_read_back({
            "schema_version": SCHEMA_VERSION, "id": record.id, "status": record.status,
            "extracted": extracted_data(record),
            "annotation": {} if annotation.text is not None else annotation.data,
            "history": history_data(record.history),
            **versions_data(record.versions),
        })
    except Unsure:
        return None
    if annotation.text is not None:  # read from this very block, not dumped: no trip to make
        if not is_plain(annotation.data):
            return None
        data["annotation"] = annotation.data
    return data
