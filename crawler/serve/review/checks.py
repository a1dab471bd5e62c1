"""What `crawler check` and `crawler validate` read off a finished output folder.

`check_output` lists the records whose annotation may not fit their message any more. An
annotation is bound to the template it was written for (`annotation.written_for`); a record is
listed when that binding is broken (stale), missing while the annotation holds text, or when the
record waits in `needs_review` for a person to look again at its annotation (one without an
annotation has nothing to look at). `review_output` lists these too, and
every annotation left on a `removed` record (an `Orphan`), with the live records of its
repository most like it that carry no annotation (`catalogue.successors`), for a person to
`crawler adopt`; and each adoption a kill left half done (`Unfinished`); and each annotation
whose names fit another record better than its own (`annotation_fit`: a `Mismatch`, sure or
suspect, surest first).
`validate_output` checks every record and manifest against the schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.errors import OutputError
from crawler.records import NEEDS_REVIEW, REMOVED, ErrorRecord
from crawler.serve.review.annotation_fit import Fit, Index, folder_fits, judged_records
from crawler.serve.review.fact_cache import FactCache
from crawler.store import repo_output
from crawler.store.cache import LoadCache
from crawler.store.dismissals import DISMISSED, load_dismissals, write_dismissals
from crawler.store.manifest_file import MANIFEST
from crawler.store.record_files import ERRORS_DIR, record_path

if TYPE_CHECKING:
    from crawler.catalogue.successors import Successor


@dataclass(frozen=True)
class Finding:
    """A record whose annotation may not fit its message any more."""

    path: Path
    record: ErrorRecord

    def describe(self) -> str:
        from crawler.catalogue.merge import is_stale  # see `review_output`

        record = self.record
        template = record.site.message.template
        if is_stale(record):
            return (f"{self.path}: {record.status}: annotation written for "
                    f"{record.annotation.written_for!r}, the message is now {template!r}")
        if record.status != NEEDS_REVIEW:
            return (f"{self.path}: annotation.written_for is empty: set it to the message the "
                    f"annotation was written for (now {template!r})")
        previous = record.history.previous_template if record.history else None
        if previous is None:
            return (f"{self.path}: needs_review: check the annotation against the message "
                    f"{template!r}, then set annotation.written_for to it")
        return (f"{self.path}: needs_review: the message changed from {previous!r} to {template!r}; "
                "check the annotation, then set annotation.written_for to the new message")


@dataclass(frozen=True)
class Orphan:
    """A removed record that carries an annotation, and the live records most like it."""

    path: Path
    record: ErrorRecord
    successors: tuple[Successor, ...]  # best first; none scored `SUCCESSOR_FLOOR` or more

    def describe(self) -> str:
        from crawler.catalogue.successors import SUCCESSOR_FLOOR  # see `review_output`

        head = (f"{self.path}: removed, with an annotation (written for "
                f"{self.record.annotation.written_for or self.record.site.message.template!r})")
        if not self.successors:
            return f"{head}; no candidate (none scores {SUCCESSOR_FLOOR} or more)"
        best = self.successors[0]
        site = best.record.site
        return (f"{head}; likeliest successor {best.record.id} at {site.path}:{site.line} "
                f"{site.message.template!r}, score {best.score:.2f} ({best.resemblance.why()}); "
                f"move it with `crawler adopt {self.record.id} {best.record.id}`")


@dataclass(frozen=True)
class Unfinished:
    """An adoption a kill stopped between its writes: the annotation stands in both records."""

    path: Path  # the old record's file
    old: ErrorRecord
    new: ErrorRecord

    def describe(self) -> str:
        return (f"{self.path}: its annotation was copied to {self.new.id} by an adopt that did not "
                f"finish; run `crawler adopt {self.old.id} {self.new.id}` to finish it")


@dataclass(frozen=True)
class Mismatch:
    """An annotation that fits another record better than its own (`annotation_fit`)."""

    path: Path
    fit: Fit

    @property
    def level(self) -> str:
        """"sure" (`crawler check` exits 1) or "suspect" (listed only)."""
        return "sure" if self.fit.sure else "suspect"

    def describe(self) -> str:
        fit = self.fit
        best = fit.better[0]
        where = "a raise of the same function" if best.sibling else "a record"
        names = ", ".join(name.removeprefix("w:") for name in best.names) or "-"
        return (f"{self.path}: annotation-mismatch ({self.level}, margin {fit.margin:.2f}): "
                f"{where} fits it better, {best.id} {best.qualname} in {best.path} "
                f"(score {best.score:.2f} against {best.score * (1 - best.margin):.2f} here, by "
                f"{names}); rewrite it for {fit.record.site.message.template!r}, or dismiss it "
                f"with `crawler check --dismiss {fit.record.id}`")


@dataclass(frozen=True)
class Review:
    """What `crawler check` found under an output folder."""

    checked: int
    findings: tuple[Finding, ...]
    orphans: tuple[Orphan, ...]
    unfinished: tuple[Unfinished, ...]
    problems: tuple[str, ...]
    mismatches: tuple[Mismatch, ...] = ()
    dismissed: tuple[Mismatch, ...] = ()  # listed, but dismissed by a person for these digests

    @property
    def to_review(self) -> bool:
        """Something needs a person: `crawler check` exits 1. An annotation-mismatch counts
        when it is sure; a suspect is listed only."""
        return bool(self.findings or self.orphans or self.unfinished or self.problems
                    or any(m.fit.sure for m in self.mismatches))


def repository_folders(root: Path) -> list[Path]:
    """Every repository folder under `root` (one with errors/ or a manifest), `root` too."""
    found = {path.parent for path in root.rglob(ERRORS_DIR) if path.is_dir()}
    found |= {path.parent for path in root.rglob(MANIFEST)}
    return sorted(found)


def load_output_folders(root: Path, quick: bool = False, loads: LoadCache | None = None
                        ) -> list[tuple[Path, repo_output.Loaded]]:
    """Every repository folder under `root` as loaded: its records, and each file in errors/
    that is not one (broken, renamed, stray), named with what to do. One bad file costs itself
    only: every other record of every repository is there. `quick`: without the schema;
    `loads`: a file whose exact bytes passed every check before is not checked again."""
    return [(folder, repo_output.load_folder(folder, quick=quick, loads=loads))
            for folder in repository_folders(root)]


def check_output(root: Path) -> tuple[int, list[Finding], list[str]]:
    """Every record under `root`: how many, those to look at again, and the unreadable files."""
    review = review_output(root)
    return review.checked, list(review.findings), list(review.problems)


def review_output(root: Path, loads: LoadCache | None = None,
                  annotations_only: bool = False) -> Review:
    """Every record under `root`, one repository folder at a time: what a person should look at.

    Listed: live records whose annotation names another template than theirs, or names none
    while holding text, and annotated records in review; removed records that carry an annotation, each
    with its likeliest successors; and adoptions left half done. Every file in errors/ that is
    not a record is a problem: a broken record, a renamed copy of one (which holds its site
    back), a stray. With `loads`, record files whose bytes were checked before are not again.
    Every annotation that does not fit its record is listed too; `annotations_only`: only those.
    """
    # the collector held off for the whole review, not only the load and the index: the records,
    # the index and the judgements are many small objects in no cycle, and a collection between
    # the load and the index rescanned every record (0.1 s of CPU on jax's 5,482); on again once
    # `_review` has returned, when all but the findings are gone
    with repo_output.collector_paused():
        return _review(root, loads, annotations_only)


def _review(root: Path, loads: LoadCache | None, annotations_only: bool) -> Review:
    checked = 0
    findings: list[Finding] = []
    found_orphans: list[Orphan] = []
    unfinished: list[Unfinished] = []
    problems: list[str] = []
    mismatches: list[Mismatch] = []
    dismissed: list[Mismatch] = []
    for folder, loaded in load_output_folders(root, loads=loads):
        checked += len(loaded.records) + len(loaded.broken)
        problems.extend(broken.problem for broken in loaded.broken)
        facts = FactCache(loads, folder, files=loaded.keys)
        fits = folder_fits(loaded.records, loaded.manifest, facts=facts, listed_only=True)
        try:
            kept = load_dismissals(folder) if fits else {}
        except OutputError as error:  # said, and every finding listed: none is lost
            problems.append(str(error))
            kept = {}
        for fit in sorted(fits, key=lambda f: (-f.margin, f.record.id)):
            found = Mismatch(record_path(folder, fit.record.id), fit)
            (dismissed if kept.get(fit.record.id) == fit.digests else mismatches).append(found)
        if annotations_only:
            continue
        # imported here: the catalogue's modules and their own imports are a tenth of `check
        # --annotations`'s CPU, which never reads them
        from crawler.catalogue.merge import is_stale
        from crawler.catalogue.successors import has_annotation

        # a record's path is made for what is listed only (a Path for each of jax's 5,482
        # records was 0.03 s of CPU)
        records = loaded.records
        for record in records:
            if record.status == REMOVED:
                continue
            unbound = record.annotation.written_for is None and not record.annotation.is_empty
            in_review = record.status == NEEDS_REVIEW and has_annotation(record)  # else: nothing to read
            if is_stale(record) or unbound or in_review:
                findings.append(Finding(record_path(folder, record.id), record))
        half_done = _unfinished(folder, records)
        unfinished += half_done
        found_orphans += _orphans(folder, records, {u.old.id for u in half_done})
    return Review(checked, tuple(findings), tuple(found_orphans), tuple(unfinished), tuple(problems),
                  tuple(mismatches), tuple(dismissed))


def dismiss(root: Path, ids: Sequence[str]) -> list[str]:
    """Dismiss the annotation-mismatch findings of the records `ids` under `root`: each stays
    dismissed while its annotation's judged text and its record's facts are what they are now
    (`crawler.store.dismissals`). One line for each dismissal written. Raises OutputError for
    an id no repository folder holds as a live, annotated record, before writing anything."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, tuple[Path, ErrorRecord]] = {}
    by_folder: dict[Path, dict[str, tuple[str, str]]] = {}
    for folder, loaded in load_output_folders(root, quick=True):
        here = [r for r in judged_records(loaded.records) if r.id in wanted]
        if here:
            index = Index(loaded.records, loaded.manifest)
            by_folder[folder] = {r.id: index.digests(r) for r in here}
            found.update((r.id, (folder, r)) for r in here)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise OutputError(f"{missing[0]}: no live record with an annotation under {root} has this "
                          "id; `crawler check` lists the findings with their ids")
    lines = []
    for folder, digests in by_folder.items():
        entries = load_dismissals(folder)
        entries.update(digests)
        write_dismissals(folder, entries)
        lines += [f"{record_path(folder, i)}: annotation-mismatch dismissed while its annotation "
                  f"and its record's facts stay as they are ({folder / DISMISSED})"
                  for i in digests]
    return lines


def _unfinished(folder: Path, records: Sequence[ErrorRecord]) -> list[Unfinished]:
    """Records whose annotation an adopt copied into another and did not empty afterwards."""
    from crawler.catalogue.successors import has_annotation  # see `review_output`

    by_id = {record.id: record for record in records}
    half_done = []
    for new in records:
        source = new.history.adopted_from if new.history else None
        if source is None or source not in by_id:
            continue
        old = by_id[source]
        adopted_by = old.history.adopted_by if old.history else None
        if has_annotation(old) and adopted_by != new.id and old.annotation == new.annotation:
            half_done.append(Unfinished(record_path(folder, old.id), old, new))
    return half_done


def _orphans(folder: Path, records: Sequence[ErrorRecord], skip: set[str]) -> list[Orphan]:
    """The folder's removed records with an annotation, each with its likeliest successors."""
    from crawler.catalogue.successors import SuccessorIndex, candidates, orphans

    found = [r for r in orphans(records) if r.id not in skip]
    if not found:
        return []
    index = SuccessorIndex(candidates(records))
    return [Orphan(record_path(folder, r.id), r, index.likeliest(r)) for r in found]


def validate_output(root: Path) -> tuple[int, list[str]]:
    """Every repository folder under `root`, its records and manifest against the schemas:
    how many files were checked, and one line for each that is wrong."""
    checked = 0
    problems: list[str] = []
    for repository, loaded in load_output_folders(root):
        checked += len(loaded.records) + len(loaded.broken)
        problems.extend(broken.problem for broken in loaded.broken)
        if (repository / MANIFEST).exists():
            checked += 1
            if loaded.manifest_problem:
                problems.append(loaded.manifest_problem)
        problems.extend(_missing(repository, loaded))
    return checked, problems


def _missing(folder: Path, loaded: repo_output.Loaded) -> list[str]:
    """A line for each record the manifest lists under a source file that has no file."""
    if loaded.manifest is None:
        return []
    present = {r.id for r in loaded.records} | {b.id for b in loaded.broken if b.id is not None}
    return [f"{record_path(folder, i)}: missing, but {MANIFEST} lists it under {entry.path}; "
            "`crawler update` remakes it (restore it from version control to keep an annotation)"
            for entry in loaded.manifest.files for i in entry.records if i not in present]
