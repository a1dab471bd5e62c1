"""What `crawler check` and `crawler validate` read off a finished output folder.

`check_output` lists the records whose annotation may not fit their message any more. An
annotation is bound to the template it was written for (`annotation.written_for`); a record is
listed when that binding is broken (stale), missing while the annotation holds text, or when the
record waits in `needs_review` for a person to look again. `validate_output` checks every record
and manifest against the schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crawler.catalogue.merge import is_stale
from crawler.errors import CrawlerError
from crawler.records import NEEDS_REVIEW, REMOVED, ErrorRecord
from crawler.store import repo_output
from crawler.store.manifest_file import MANIFEST
from crawler.store.record_files import ERRORS_DIR, load_record


@dataclass(frozen=True)
class Finding:
    """A record whose annotation may not fit its message any more."""

    path: Path
    record: ErrorRecord

    def describe(self) -> str:
        record = self.record
        template = record.site.message.template
        if is_stale(record):
            return (f"{self.path}: {record.status}: annotation written for "
                    f"{record.annotation.written_for!r}, the message is now {template!r}")
        if record.status != NEEDS_REVIEW:
            return (f"{self.path}: annotation.written_for is empty: set it to the message the "
                    f"annotation was written for (now {template!r})")
        previous = record.history.previous_template if record.history else None
        return (f"{self.path}: needs_review: the message changed from {previous!r} to {template!r}; "
                "check the annotation, then set annotation.written_for to the new message")


def check_output(root: Path) -> tuple[int, list[Finding], list[str]]:
    """Every record under `root`: how many, those to look at again, and the unreadable files.

    Listed: live records whose annotation names another template than theirs, or names none
    while holding text, and records in review.
    """
    checked, findings, problems = 0, [], []
    for path in sorted(root.rglob(f"{ERRORS_DIR}/*.yaml")):
        checked += 1
        try:
            record = load_record(path)
        except CrawlerError as error:
            problems.append(str(error))
            continue
        if record.status == REMOVED:
            continue
        unbound = record.annotation.written_for is None and not record.annotation.is_empty
        if is_stale(record) or unbound or record.status == NEEDS_REVIEW:
            findings.append(Finding(path, record))
    return checked, findings, problems


def validate_output(root: Path) -> tuple[int, list[str]]:
    """Every repository folder under `root`, its records and manifest against the schemas:
    how many files were checked, and one line for each that is wrong."""
    checked = 0
    problems: list[str] = []
    repositories = {path.parent for path in root.rglob(ERRORS_DIR) if path.is_dir()}
    repositories |= {path.parent for path in root.rglob(MANIFEST)}
    for repository in sorted(repositories):
        loaded = repo_output.load_folder(repository)
        checked += len(loaded.records) + len(loaded.broken)
        problems.extend(broken.problem for broken in loaded.broken)
        if (repository / MANIFEST).exists():
            checked += 1
            if loaded.manifest_problem:
                problems.append(loaded.manifest_problem)
    return checked, problems
