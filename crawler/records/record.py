"""One error record and its parts: history, evidence, related records, entry points, the
annotation people write; and a record's id."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from crawler.records.sites import RaiseSite


@dataclass(frozen=True)
class History:
    """Where a record came from; the crawler owns it."""

    first_seen: str  # sha of the commit at which the site was first extracted
    removed_in: str | None = None  # sha of the first commit without the site, while removed
    previous_template: str | None = None  # the template an annotation may have been written for
    # `crawler adopt` moved an annotation by hand: the record it went to, and the one it came from
    adopted_by: str | None = None
    adopted_from: str | None = None
    # Set while a pair that was not exact waits for review (written only when set):
    previous_exception: str | None = None  # the exception class the site raised before
    previous_path: str | None = None  # where the site was, when the pair crossed files
    previous_qualname: str | None = None  # the function it was in, when that changed
    paired_by: str | None = None  # why the pair was made: the signal and the score
    # Every wording the site had across the releases walked (`crawler history`), oldest first
    templates: tuple[TemplateSpan, ...] = ()


@dataclass(frozen=True)
class TemplateSpan:
    """One wording of a site, with the releases that printed it (`crawler history`).

    A span runs over consecutive releases: a new one starts where the template, the exception
    class or the file changed, or where the site came back after it was removed.
    """

    template: str
    first: str | None  # the first release with it; None: only after the last release walked
    last: str | None = None  # the last release with it; None while the site still has it
    exception: str = ""  # the class raised in those releases
    path: str = ""  # the file it was in


@dataclass(frozen=True)
class Versions:
    """The first and last release that contain a site (`crawler history`)."""

    first: str | None  # None: in no release walked yet, only after the last one
    last: str | None = None  # None while the site is there at the folder's commit


@dataclass(frozen=True)
class Annotation:
    """The people-owned part of a record; the crawler never changes its contents.

    `data` is what was loaded; `text` is the block exactly as it stood in the file, so that a
    rewrite of the crawler's parts can keep a person's formatting and comments byte for byte.
    """

    data: dict[str, Any]
    text: str | None = None

    @property
    def written_for(self) -> str | None:
        value = self.data.get("written_for")
        return value if isinstance(value, str) else None

    @property
    def is_empty(self) -> bool:
        """True when nobody has written anything in any slot."""
        return all(value in (None, "", [], {}) for value in self.data.values())


def empty_annotation() -> Annotation:
    """The empty slots a new record starts with."""
    return Annotation(
        data={
            "written_for": None,
            "what_it_means": None,
            "solutions": [],
            "example_fix": None,
            "defensive_patterns": [],
            "prevention": [],
            "when_it_happens": None,
            "related": [],
        }
    )


@dataclass(frozen=True)
class TestAssertion:
    """A test that expects an exception and checks its message, read off a test file."""

    __test__ = False  # not a test class, whatever pytest makes of its name

    path: str
    line: int  # one-indexed, the line of the assertion call, at the pin the tests were read at
    test: str  # qualname of the enclosing test function: "ApiTest.test_jit_bad_input"
    form: str  # "pytest.raises", "assertRaisesRegex", "assertRaises", "assertRaisesWithLiteralMatch"
    check: str  # "match" (regex searched), "contains" or "equals" (literal text)
    exceptions: tuple[str, ...]  # as the test writes them: ("ValueError",), ("jax.errors.X",)
    pattern: str  # a regex searched in the message; literal checks escaped (equals anchored)


@dataclass(frozen=True)
class Evidence:
    """A test assertion that fits a record, and how many records it fits in all (1: unambiguous)."""

    path: str
    line: int  # at the manifest's commit (the run's pin), not the record's `commit`
    test: str
    form: str
    check: str
    exception: str  # as the test writes it
    pattern: str
    fits: int


@dataclass(frozen=True)
class Related:
    """Another record worth reading beside this one, and why."""

    id: str
    reason: str  # "same_scope": same exception in the same class or module; "same_shape": same text


@dataclass(frozen=True)
class EntryPoint:
    """A public call that reaches a raise: the name users import, one shortest call chain."""

    name: str  # "click.Context.invoke"
    chain: tuple[str, ...]  # qualified names, from the entry point's definition to the raise's function
    stops: str | None = None  # the call a static reader cannot follow that the chain crosses
    caught_by: str | None = None  # the library's function that catches it on this chain


@dataclass(frozen=True)
class EntryPoints:
    items: tuple[EntryPoint, ...] = ()  # at most `entry_points.MAX_ENTRIES`, most public first
    left_out: int = 0


@dataclass(frozen=True)
class ErrorRecord:
    """One raise site's record: crawler-owned `site` and `history`, people-owned `annotation`."""

    id: str  # 16 hex, assigned once and kept for life
    status: str  # one of STATUSES
    repo: str  # Pin.repo
    commit: str  # the commit at which `site` was read (changes only when the site does)
    url: str | None  # permalink pinned to `commit`
    site: RaiseSite
    annotation: Annotation = field(default_factory=empty_annotation)
    history: History | None = None
    evidence: tuple[Evidence, ...] = ()  # derived from the tests at each run; crawler-owned
    related: tuple[Related, ...] = ()  # derived from the other records at each run; crawler-owned
    versions: Versions | None = None  # None: the folder was not built by `crawler history`
    entry_points: EntryPoints | None = None  # None: not computed (written only when it was)


def record_id(repo: str, key: tuple[str, str, str, str], ordinal: int, salt: int = 0) -> str:
    """16 hex of a hash of the identity key: stable across runs, never from the line."""
    parts = (repo, *key, str(ordinal)) + ((str(salt),) if salt else ())
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class BrokenFile:
    """A file in a repository's errors/ folder that could not be loaded; it is never written."""

    path: str  # the file, as found under the output folder
    id: str | None  # the record id its name claims, or None for a stray file
    problem: str  # one line, `path:line: what is wrong; what to do`
    head: str | None = None  # its first MiB as text, read by the store; None: not a plain file
