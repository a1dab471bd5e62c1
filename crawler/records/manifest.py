"""What a folder's manifest holds: the files read and skipped, their counts, the options of
the run, and the releases a history walk went through."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crawler.records.sites import MAX_FILE_BYTES, Pin


@dataclass(frozen=True)
class RaiseCounts:
    """Raise statements, and those among them that do not become records, by why."""

    raise_statements: int = 0
    bare_raise: int = 0  # `raise`
    reraise: int = 0  # `raise e`, `raise self.error`: a name, no call
    without_message: int = 0  # `raise E`, `raise E()`

    def __add__(self, other: RaiseCounts) -> RaiseCounts:
        return RaiseCounts(self.raise_statements + other.raise_statements,
                           self.bare_raise + other.bare_raise, self.reraise + other.reraise,
                           self.without_message + other.without_message)

    def as_list(self) -> list[int]:
        """The four counts in field order, as a manifest's file entry and a cache write them."""
        return [self.raise_statements, self.bare_raise, self.reraise, self.without_message]

    @classmethod
    def from_list(cls, values: Sequence[int]) -> RaiseCounts:
        """The counts `as_list` wrote; an empty list (an older manifest) is all zeros."""
        return cls(*values)


@dataclass(frozen=True)
class Skipped:
    """A file that was not catalogued, and why."""

    path: str
    reason: str  # test_file, excluded, not_included, symlink, submodule, too_large, parse_failed, ...
    detail: str | None = None


@dataclass(frozen=True)
class FileEntry:
    """A catalogued file: its blob at the pin, and the ids of its records."""

    path: str
    blob: str
    records: tuple[str, ...]  # ids of the file's live (active and needs_review) records
    raises: RaiseCounts = RaiseCounts()


@dataclass(frozen=True)
class Counts:
    """How many of each kind of thing one run saw."""

    files: int = 0  # .py files at the commit
    parsed: int = 0
    skipped: int = 0
    records: int = 0  # active and needs_review records
    removed: int = 0
    raises: RaiseCounts = RaiseCounts()
    test_patterns_cut: int = 0  # test patterns the evidence rule cut by their step bound


@dataclass(frozen=True)
class ExtractOptions:
    """What a run was asked to catalogue; stored in the manifest so an update repeats it."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_tests: bool = False
    max_file_bytes: int = MAX_FILE_BYTES


@dataclass(frozen=True)
class Manifest:
    """One repository's catalogue at one pin: what was read, skipped and counted."""

    pin: Pin
    crawler_version: str
    options: ExtractOptions
    counts: Counts
    files: tuple[FileEntry, ...]
    skipped: tuple[Skipped, ...]
    exception_classes: tuple[dict[str, Any], ...] = ()
    removed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # path -> removed ids
    needs_review: tuple[str, ...] = ()  # ids, wherever they are
    evidence_digest: str | None = None  # of the test assertions the records' evidence came from
    releases: Releases | None = None  # the release tags walked, for `crawler history`


@dataclass(frozen=True)
class Release:
    """A release tag walked by `crawler history`, and the commit it named then."""

    tag: str
    commit: str


@dataclass(frozen=True)
class ReleaseTag:
    """A tag of the repository that `crawler history` may walk."""

    name: str  # without refs/tags/
    commit: str  # the commit it names (an annotated tag peeled)
    date: int  # unix seconds: the tagger's date of an annotated tag, else the commit's


@dataclass(frozen=True)
class TagMove:
    """A release tag walked before that names another commit now, or no longer exists."""

    tag: str
    walked: str  # the commit it named when it was walked
    now: str | None  # the commit it names now; None: the tag is gone


@dataclass(frozen=True)
class Releases:
    """What `crawler history` walked, so that a new run walks only the tags after these."""

    walked: tuple[Release, ...] = ()  # in the order walked: version order, else tag date
    # live records whose current wording appeared after the last release walked: the next
    # release step loads them to set where that wording began
    unreleased: tuple[str, ...] = ()
    # walked tags that moved or went since they were walked, found by the last walk: the
    # records' releases were read at the commits in `walked`, not at these
    moved: tuple[TagMove, ...] = ()

    @property
    def last(self) -> str | None:
        """The last release walked."""
        return self.walked[-1].tag if self.walked else None
