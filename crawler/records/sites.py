"""What a repository and its files give: the pin, source files, templates, exception classes,
the texts a visit reads, and raise sites; with the constants every stage shares."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    # A parameter (default None) that `if P is not None:` tests around this `self.x = ...` (an
    # `__init__`'s own statement, no `else`): the attribute is set only where a call gives P, and
    # where it leaves P None `self.x` is the class attribute (werkzeug's HTTPException
    # `description`, aiohttp's HttpProcessingError `code`).
    if_given: str | None = None
    # A message method's: for each template, the `if` tests its path through the method
    # decides, as (the test's source, the outcome the path needs); empty where none is known
    # (`()` for a slot of another kind). The class pass drops a template whose tests a raise
    # decides otherwise (pyyaml's MarkedYAMLError.__str__, pydantic's PydanticErrorMixin).
    guards: tuple[tuple[tuple[str, bool], ...], ...] = ()


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
    # What the class does to its message (`crawler.parse.message.class_text`), for the class pass:
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
    group: int = 0  # a repeated (or optional) group of runs, as `crawler.parse.message.pieces.Piece`'s
    choice: int = 0


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
class TextCall:
    """A call that passes text: where it is, the name called, and its arguments as written."""

    line: int  # the call's first line, as `ast` and the call graph count it
    name: str  # the last part of the name called: `fail` for `ctx.fail(...)`
    receiver: str | None  # `ctx` in `ctx.fail(...)`, as written; None for a plain name
    args: tuple[ArgumentText, ...]  # by position (keyword None), then by keyword; `*`/`**` unpacked


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
    builds: tuple[str, ...] = ()  # the classes it builds where their messages are not read exactly


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
    # Never written: no part of a site's equality, or a site read back from its record would
    # differ from the same site read again, and its record be rewritten at every new commit.
    cross_calls: tuple[CrossCall, ...] = field(default=(), compare=False)
    deferred: tuple[Template, ...] = field(default=(), compare=False)
    # The raised class's call arguments (None: not a call of the class), for the class pass to
    # pick the branch of its `__init__` that runs; never written, so no part of a site's equality.
    arguments: tuple[CallArgument, ...] | None = field(default=None, compare=False)

    def key(self) -> tuple[str, str, str, str]:
        """The identity of a site, without its ordinal: never the line."""
        return (self.path, self.qualname, self.exception, self.message.template)
