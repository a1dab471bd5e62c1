"""`crawler adopt`: a person moves an annotation from one record to another, on purpose.

The crawler pairs a new site with an old record only where it can tell; where it could not (a
message reworded past recognition, moved and reworded at once), the annotation waits on a
`removed` record until a person moves it. Adopting is one-to-one: the annotation block moves
byte for byte into the new record, the old record's slots are emptied, and each record points
at the other (`history.adopted_by`, `history.adopted_from`).

The order of the writes is what makes a kill harmless: the new record is written first (the
annotation now stands in both), then the old one is emptied, then the manifest, each atomically
and all under the folder's lock. A kill at any moment leaves the annotation in one place or in
two, never in none; where it stands in two, `crawler check` names the adoption as unfinished,
and the same `crawler adopt OLD NEW` finishes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from crawler.errors import OutputError
from crawler.records import (
    ACTIVE,
    NEEDS_REVIEW,
    REMOVED,
    ErrorRecord,
    History,
    Manifest,
    empty_annotation,
)
from crawler.store import repo_output
from crawler.store.atomic import TEMP_SUFFIX
from crawler.store.manifest_file import MANIFEST, load_manifest, write_manifest
from crawler.store.record_files import ERRORS_DIR, RecordText, is_record_id, load_record, write_texts
from crawler.store.render import annotation_text, manifest_text, record_text


class AdoptError(OutputError):
    """An adoption that was refused; nothing was written."""


@dataclass(frozen=True)
class Adoption:
    """What moving OLD's annotation into NEW changes: both records before and after."""

    folder: Path
    old: ErrorRecord  # as it was
    new: ErrorRecord
    old_after: ErrorRecord
    new_after: ErrorRecord
    replaced: str | None  # the annotation block of NEW that --force replaced, as it stood
    state: str  # "adopted", "finished" (an interrupted adoption completed) or "done already"
    files: tuple[str, ...]  # the files written (or, in a dry run, to write), folder-relative


def adopt(root: Path, old_id: str, new_id: str, *, repo: str | None = None, force: bool = False,
          reviewed: bool = False, dry_run: bool = False, wait: float = 0.0) -> Adoption:
    """Move the annotation of record `old_id` into record `new_id`, in the repository folder
    under `root` that holds them (`repo`, HOST/OWNER/NAME, where an id is in several)."""
    for value in (old_id, new_id):
        if not is_record_id(value):
            raise AdoptError(f"{value!r}: not a record id (16 hex digits, as in errors/<id>.yaml)")
    if old_id == new_id:
        raise AdoptError(f"{old_id}: OLD and NEW are the same record; name the record the "
                         "annotation should move to")
    folder = find_folder(root, old_id, new_id, repo)
    with repo_output.lock(folder, wait=wait, shared=dry_run):
        _refuse_strays(folder, old_id)
        old, new = _load(folder, old_id), _load(folder, new_id)
        adoption = plan(folder, old, new, force=force, reviewed=reviewed)
        manifest = _manifest_text(folder, adoption)
        files = _pending(folder, adoption, manifest)
        if not dry_run:
            _write(folder, adoption, manifest)
    return replace(adoption, files=files)


def find_folder(root: Path, old_id: str, new_id: str, repo: str | None) -> Path:
    """The repository folder under `root` that holds record `old_id` (and must hold `new_id`)."""
    holding = _folders_with(root, old_id)
    if repo is not None:
        holding = [f for f in holding if _names(f.relative_to(root).as_posix(), repo)]
    where = f" in {repo}" if repo is not None else ""
    if not holding:
        raise AdoptError(f"{root}: no record {old_id}{where} under this folder; `crawler check "
                         f"{root}` lists the removed records that carry annotations")
    if len(holding) > 1:
        names = ", ".join(f.relative_to(root).as_posix() for f in holding)
        raise AdoptError(f"{root}: record {old_id} is in {len(holding)} repository folders "
                         f"({names}); pass --repo HOST/OWNER/NAME")
    folder = holding[0]
    if not _record_file(folder, new_id).exists() and not _record_file(folder, new_id).is_symlink():
        elsewhere = [f.relative_to(root).as_posix() for f in _folders_with(root, new_id)]
        if elsewhere:
            raise AdoptError(f"{_record_file(folder, old_id)}: record {new_id} is in another "
                             f"repository ({', '.join(elsewhere)}); an annotation moves only "
                             "within one repository")
        raise AdoptError(f"{folder / ERRORS_DIR}: no record {new_id}; `crawler lookup` finds a "
                         "record by its message")
    return folder


def _folders_with(root: Path, record_id: str) -> list[Path]:
    name = f"{record_id}.yaml"
    direct = [root] if (root / ERRORS_DIR / name).is_file() else []
    return direct + sorted(p.parent.parent for p in root.rglob(f"{ERRORS_DIR}/{name}")
                           if p.parent.parent != root)


def _names(relative: str, repo: str) -> bool:
    """`repo` (HOST/OWNER/NAME, or its tail OWNER/NAME) names the folder at `relative`."""
    repo = repo.strip("/")
    return relative == "." or relative == repo or relative.endswith("/" + repo)


def _record_file(folder: Path, record_id: str) -> Path:
    return folder / ERRORS_DIR / f"{record_id}.yaml"


def _refuse_strays(folder: Path, old_id: str) -> None:
    """Refuse while errors/ holds anything but record files and the crawler's temp files: a
    `<id> (copy).yaml` or an editor's swap file may hold the annotation too, and after the
    move it would stand in two places, or be saved back over it."""
    errors = folder / ERRORS_DIR
    strays = sorted(entry.name for entry in os.scandir(errors) if not _record_or_temp(entry))
    if strays:
        more = f" (and {len(strays) - 1} more)" if len(strays) > 1 else ""
        raise AdoptError(f"{errors / strays[0]}{more}: not a record file, beside {old_id}.yaml; "
                         "move it out of errors/ (or delete it) first, nothing was written")


def _record_or_temp(entry: os.DirEntry[str]) -> bool:
    """A plain `<16 hex>.yaml`, or a temp file of the crawler's own writes."""
    if not entry.is_file(follow_symlinks=False):
        return False
    name = entry.name
    return (name.endswith(".yaml") and is_record_id(name[:-len(".yaml")])) or (
        name.startswith(".") and name.endswith(TEMP_SUFFIX))


def _load(folder: Path, record_id: str) -> ErrorRecord:
    path = _record_file(folder, record_id)
    if path.is_symlink() or not path.is_file():
        raise AdoptError(f"{path}: not a plain file; records are plain files, nothing was written")
    try:
        return load_record(path)
    except OutputError as error:
        raise AdoptError(f"{error}; fix it first (`crawler validate`), nothing was written") from error


def plan(folder: Path, old: ErrorRecord, new: ErrorRecord, *, force: bool = False,
         reviewed: bool = False) -> Adoption:
    """The two records after the move, or an `AdoptError` saying why it is refused."""
    old_path, new_path = _record_file(folder, old.id), _record_file(folder, new.id)
    if old.repo != new.repo:
        raise AdoptError(f"{new_path}: record {new.id} is of {new.repo}, record {old.id} of "
                         f"{old.repo}; an annotation moves only within one repository")
    if new.status == REMOVED:
        raise AdoptError(f"{new_path}: record {new.id} is removed; adopt into a live record "
                         "(`crawler check` suggests one)")
    history_old = old.history or History(first_seen=old.commit)
    history_new = new.history or History(first_seen=new.commit)
    if not old.annotation.is_empty and old.annotation.text is None:  # bytes move, data never
        raise AdoptError(f"{old_path}: record {old.id}'s annotation block was not read as it "
                         "stands; run `crawler validate`, nothing was written")
    if old.annotation.is_empty:
        if history_old.adopted_by == new.id and history_new.adopted_from == old.id:
            return Adoption(folder, old, new, old, new, None, "done already", ())
        raise AdoptError(f"{old_path}: record {old.id} has no annotation to move"
                         + (f" (it went to {history_old.adopted_by})" if history_old.adopted_by else ""))
    if history_new.adopted_from == old.id and annotation_text(new) == annotation_text(old):
        state = "finished"  # an adoption killed between its writes: NEW holds the copy already
        new_after, replaced = new, None
    else:
        state = "adopted"
        replaced = None if new.annotation.is_empty else annotation_text(new)
        if replaced is not None and not force:
            raise AdoptError(f"{new_path}: record {new.id} already carries an annotation; "
                             "pass --force to replace it (what it held is printed)")
        new_after = _adopted_into(new, old, history_new, reviewed)
    old_after = replace(old, annotation=empty_annotation(),
                        history=replace(history_old, adopted_by=new.id))
    if old.status == NEEDS_REVIEW:  # nothing left to review on it
        old_after = replace(old_after, status=ACTIVE,
                            history=replace(old_after.history or history_old, previous_template=None))
    return Adoption(folder, old, new, old_after, new_after, replaced, state, ())


def _adopted_into(new: ErrorRecord, old: ErrorRecord, history: History, reviewed: bool
                  ) -> ErrorRecord:
    """NEW with OLD's annotation, exactly as its block stands, and a pointer back."""
    history = replace(history, adopted_from=old.id)
    if reviewed:
        status, history = ACTIVE, replace(history, previous_template=None)
    else:  # the template the annotation was written for, for the person who reviews it
        status = NEEDS_REVIEW
        written_for = (old.annotation.written_for
                       or (old.history.previous_template if old.history else None)
                       or old.site.message.template)
        history = replace(history, previous_template=(
            None if written_for == new.site.message.template else written_for))
    return replace(new, status=status, annotation=old.annotation, history=history)


def _manifest_text(folder: Path, adoption: Adoption) -> str | None:
    """The manifest with the two records' statuses, or None where it lists nothing that changed
    (or cannot be read: the next `crawler update` rebuilds it from the records)."""
    try:
        manifest = load_manifest(folder)
    except OutputError:
        return None
    if manifest is None:
        return None
    review = set(manifest.needs_review)
    for record in (adoption.old_after, adoption.new_after):
        review.discard(record.id)
        if record.status == NEEDS_REVIEW:
            review.add(record.id)
    updated: Manifest = replace(manifest, needs_review=tuple(sorted(review)))
    return None if updated == manifest else manifest_text(updated)


def _pending(folder: Path, adoption: Adoption, manifest: str | None) -> tuple[str, ...]:
    names = [f"{ERRORS_DIR}/{after.id}.yaml" for after in (adoption.new_after, adoption.old_after)
             if record_text(after) != _text(_record_file(folder, after.id))]
    if manifest is not None and manifest != _text(folder / MANIFEST):
        names.append(MANIFEST)
    return tuple(names)


def _write(folder: Path, adoption: Adoption, manifest: str | None) -> None:
    """NEW first, then OLD, then the manifest: each step atomic, a kill loses no annotation."""
    for record in (adoption.new_after, adoption.old_after):
        text = record_text(record)
        if text != _text(_record_file(folder, record.id)):
            write_texts(folder, [RecordText(record, text)])
    if manifest is not None:
        write_manifest(folder, manifest)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
