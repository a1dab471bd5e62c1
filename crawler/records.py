"""The record types that the pipeline stages pass to each other: frozen, typed, no loose dicts."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1

# Files over this many bytes are not parsed (`ExtractOptions.max_file_bytes`), so a fetch leaves
# their blobs out too.
MAX_FILE_BYTES = 5_000_000

# Record statuses: the crawler owns them, people read them.
ACTIVE = "active"
NEEDS_REVIEW = "needs_review"
REMOVED = "removed"
STATUSES = (ACTIVE, NEEDS_REVIEW, REMOVED)

# Message kinds, from the most to the least exact.
MESSAGE_KINDS = (
    "literal",
    "fstring",
    "format",
    "percent",
    "concat",
    "variable",
    "class_default",
    "dynamic",
)


@dataclass(frozen=True)
class Pin:
    """A repository pinned at one commit, with the human ref kept beside the sha."""

    source: str  # as the user gave it
    host: str  # "github.com", or "local" for a repository with no network remote
    owner: str  # may hold "/" for nested groups (GitLab)
    name: str
    ref: str  # what the user asked for: HEAD, v1.2.0, a branch, a short sha
    sha: str  # full 40-hex commit sha
    web_url: str | None = None  # https://host/owner/name, None without a network remote
    reachable: bool = True  # False: the commit is on no branch or tag (maybe a fork's object)
    root: str | None = None  # first commit of the pinned history (first parents); None: unknown
    forge: str | None = None  # permalinks' shape where the web URL's host does not say it

    @property
    def slug(self) -> str:
        """The repository's folder under the output root: host/owner/name."""
        return f"{self.host}/{self.owner}/{self.name}"

    @property
    def repo(self) -> str:
        """How records name the repository: its web URL, else local/owner/name."""
        return self.web_url or self.slug

    @property
    def public_source(self) -> str:
        """The source as written to files: a network address as given (without credentials),
        else the repository's identity; a path of the extracting machine is never written."""
        return self.source if is_network_address(self.source) else self.repo


def is_network_address(source: str) -> bool:
    """A URL a server answers (https, ssh, git), an scp-like `user@host:path`, or `github:O/N`."""
    if "://" in source:
        return source.split("://", 1)[0].lower() in ("https", "http", "ssh", "git", "git+ssh", "ssh+git")
    if source.lower().startswith(("github:", "gh:")):
        return True
    before, colon, _ = source.partition(":")
    return bool(colon) and "/" not in before and ("@" in before or "." in before)


@dataclass(frozen=True)
class SourceFile:
    """One tree entry at the pinned commit."""

    path: str  # posix, relative to the repository root
    blob: str  # 40-hex object sha
    mode: str  # git mode: 100644, 100755, 120000 (symlink), 160000 (submodule)
    size: int  # bytes; -1 when git did not report it


@dataclass(frozen=True)
class Template:
    """An exception message as the source builds it: literal text and named placeholders."""

    kind: str  # one of MESSAGE_KINDS
    template: str  # literal text with {placeholder} parts, literal braces doubled
    placeholders: tuple[str, ...]  # exact expression source, in order of appearance
    regex: str  # anchored; matches the runtime message
    argument: str | None = None  # which call argument holds it: "0", "1", "message", ...
    defined_at: str | None = None  # path:line of the template, when it is not at the raise
    # how str(exc) shows it: str, repr (KeyError), args (the tuple), errno (OSError),
    # varargs (E(msg, *args)), group (ExceptionGroup), syntax (SyntaxError), codec (Unicode*Error)
    display: str = "str"
    composed_by: str | None = None  # the class method whose text str(exc) shows: "pkg.E.__init__"
    not_followed: str | None = None  # the class method whose transform could not be read exactly
    # the module's functions and constants the text was read through: "pkg.mod._shape_error"
    via: str | None = None
    reason: str | None = None  # why the text or the exception was not followed, when it was not


@dataclass(frozen=True)
class TextSlot:
    """A named place of a class that holds text: an argument it hands on, an attribute, a return."""

    name: str  # "0", "message" (an argument); "message" (self.message); "__str__" (a method)
    templates: tuple[Template, ...]  # its alternatives; a `dynamic` one when it cannot be read
    verbatim: tuple[str, ...] = ()  # placeholders every alternative shows as given: str(), no spec
    aliases: tuple[tuple[str, str], ...] = ()  # placeholders that are locals bound to `self.x`
    # A parameter (default None) that `if P is None: P = ...` fills before the slot reads it:
    # the `{P}` template runs where a call gives P, the others where it leaves P None.
    if_none: str | None = None


@dataclass(frozen=True)
class ClassDef:
    """A class defined in the repository: its bases, and the message its instances build."""

    qualname: str  # module and __qualname__: "pkg.errors.BadThing"
    name: str
    bases: tuple[str, ...]  # qualified where the imports tell, else as written
    path: str
    line: int  # one-indexed, the `class` line
    templates: tuple[Template, ...] = ()  # from __init__'s super().__init__(...) or an attribute
    template_from: str | None = None  # "init" or "attribute"
    has_init: bool = False  # defines __init__ (then no template is inherited through it)
    passes: int | None = None  # __init__ hands its positional parameter n (0: after self) on alone
    params: tuple[str, ...] = ()  # __init__'s positional parameters after self
    keywords: tuple[str, ...] = ()  # and its keyword-only ones
    verbatim: tuple[str, ...] = ()  # parameters the template shows as given: str(), no spec
    # What the class does to its message (`crawler.parse.class_text`), for the class pass:
    init_target: str | None = None  # whose __init__ its own calls: "super", or a base's qualname
    init_args: tuple[TextSlot, ...] = ()  # what that call hands on, by position or keyword
    self_attributes: tuple[TextSlot, ...] = ()  # `self.name = ...` in __init__
    class_attributes: tuple[TextSlot, ...] = ()  # `name = "text"` in the class body
    methods: tuple[TextSlot, ...] = ()  # returns of __str__ and message methods (`MESSAGE_METHODS`)


@dataclass(frozen=True)
class TextRun:
    """One run of text another module's function builds: literal, or a placeholder's source."""

    text: str
    placeholder: bool = False
    plain: bool = True  # a placeholder shown as str() of its value: no conversion, no spec


@dataclass(frozen=True)
class TextReading:
    """One alternative of such text: its kind (`fstring`, `concat`, ...) and its runs."""

    kind: str
    runs: tuple[TextRun, ...]


@dataclass(frozen=True)
class ArgumentText:
    """An argument a call passes (by position, or by `keyword`): its source, and its text if any."""

    keyword: str | None
    source: str
    readings: tuple[TextReading, ...] | None  # None: not text read off the source


@dataclass(frozen=True)
class CallArgument:
    """One argument of the call a raise makes, as written: the class pass binds it to `__init__`."""

    keyword: str | None  # None: by position; "*" or "**": unpacked, binding what cannot be told
    source: str
    literal: bool = False  # a constant: text, a number, None, True, False


@dataclass(frozen=True)
class CrossCall:
    """A call, in a raise's message or as the raised exception, of a name another module binds."""

    source: str  # the call's source at the raise: "msgs.too_many(n)"
    callee: str  # the qualified name the caller's imports give: "pkg.msgs.too_many"
    args: tuple[ArgumentText, ...]


@dataclass(frozen=True)
class BuiltException:
    """One exception a factory returns: its class and its message's readings (parameters open)."""

    exception_qualname: str
    readings: tuple[TextReading, ...]
    argument: str  # which argument of the class holds the message: "0", "message", ...


@dataclass(frozen=True)
class ExposedFunction:
    """A module-level function as another module's raise can follow it: parameters and returns.

    `texts` are the readings of what it returns when it returns text, `built` the exceptions
    when it is a factory; `reason` says why neither could be read exactly."""

    qualname: str
    defined_at: str  # path:line of the `def`
    params: tuple[str, ...]  # positional, in order
    keywords: tuple[str, ...] = ()  # keyword-only
    defaults: tuple[tuple[str, ArgumentText], ...] = ()  # parameter: its default
    texts: tuple[TextReading, ...] = ()
    built: tuple[BuiltException, ...] = ()
    via: tuple[str, ...] = ()  # the functions and constants of its module it was read through
    reason: str | None = None


@dataclass(frozen=True)
class RaiseSite:
    """One `raise` that carries a message, read off one file."""

    path: str
    line: int  # one-indexed, the first line of the raise statement
    end_line: int  # one-indexed, inclusive
    column: int  # zero-indexed, in characters
    class_name: str | None  # enclosing classes joined with "."
    function: str | None  # innermost enclosing function
    qualname: str  # "<module>" at module level
    exception: str  # as written: "ValueError", "errors.BadThing", "self._error"
    exception_qualname: str | None  # "builtins.ValueError", "pkg.errors.BadThing"
    message: Template
    cause: str | None  # the `from` expression source
    condition: str | None  # the guarding `if` test, when the raise sits directly under one
    snippet: str  # source of the enclosing function (or of the statement at module level)
    snippet_line: int  # line number of the snippet's first line
    factory: bool = False  # the exception is built by a call that is not a class: raise make_error(...)
    # Calls of another module's functions, followed by `crawler.catalogue.factories`: the
    # factory raised, or the helpers in `deferred`, templates with each call as a placeholder.
    cross_calls: tuple[CrossCall, ...] = ()
    deferred: tuple[Template, ...] = ()
    # The raised class's call arguments (None: not a call of the class), for the class pass to
    # pick the branch of its `__init__` that runs; never written, so no part of a site's equality.
    arguments: tuple[CallArgument, ...] | None = field(default=None, compare=False)

    def key(self) -> tuple[str, str, str, str]:
        """The identity of a site, without its ordinal: never the line."""
        return (self.path, self.qualname, self.exception, self.message.template)


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
    items: tuple[EntryPoint, ...] = ()  # at most `entry_points.MAX_ENTRIES`, shortest first
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
class Releases:
    """What `crawler history` walked, so that a new run walks only the tags after these."""

    walked: tuple[Release, ...] = ()  # in the order walked: version order, else tag date
    # live records whose current wording appeared after the last release walked: the next
    # release step loads them to set where that wording began
    unreleased: tuple[str, ...] = ()

    @property
    def last(self) -> str | None:
        """The last release walked."""
        return self.walked[-1].tag if self.walked else None


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
