"""What a function's records take from the functions and constants of its module they follow.

A raise whose message is read through a helper, a factory or a constant of the module (`calls`)
depends on that definition's text as much as on its own. A region's lookups name each of them as
`(FOLLOWED, qualname)`, and the answer recorded is `dependency`: a digest of the definition's exact
source (a function's lines as the file has them, its decorators written out) and its line counted
from the region's first line (a record's `defined_at` names it). A skeleton keeps a stub only when
every such answer is the same in the new version, so the records it carries are the ones a whole
read makes. A function followed into is stubbed only where no text the read sees names it
(`named_in_read`), so a fresh function's read follows its real text; its digest is then taken
from the file's lines, which the stub stands for.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from crawler.parse import _source
from crawler.parse.message import flow
from crawler.parse.message.calls import Follower
from crawler.parse.site_records import FOLLOWED
from crawler.parse.skeleton import FUNCTION, Region

# A `global` statement hides in a stub's body: stubbed, it would make a name look bound once.
# The keyword where a statement may start (a line, after `;` or a header's `:`); the word in a
# docstring or a comment mid-line does not keep the function whole.
_GLOBAL = re.compile(r"(?:^|[;:])[ \t\f]*global(?!\w)", re.MULTILINE)

Definition = tuple[cst.CSTNode | flow.Position, cst.CSTNode]  # (where it is, what its text is)


def region_qualname(region: Region, module_name: str | None) -> str:
    """The qualified name the follower gives a region's function (`Follower.function_qualname`)."""
    name = ".".join((*region.classes, region.name))
    return f"{module_name}.{name}" if module_name else name


def targets(regions: Iterable[Region]) -> set[str]:
    """Every function and constant some region's records were followed into."""
    return {parts[1] for region in regions for parts, _ in region.lookups
            if len(parts) == 2 and parts[0] == FOLLOWED}


def stubbable(region: Region, module_name: str | None, followed_into: set[str],
              lines: Sequence[str]) -> bool:
    """Whether a placed region may be stubbed: no `global` within, and, if some function
    follows into it, undecorated now as before. A stub has no decorator: the stub of a decorated
    function would be refused (`misplaced`), or would start at the decorator's line, not at the
    `def` line a followed function's line is counted from, and refuse its callers' stubs; either
    way the skeleton is parsed again."""
    if region.kind != FUNCTION:
        return True
    if region_qualname(region, module_name) in followed_into and any(
            lines[n].lstrip().startswith("@") for n in (region.line - 2, region.line - 1) if n >= 0):
        return False
    text = "".join(lines[region.line - 1 : region.end_line])
    # the plain substring test first: the pattern has no literal prefix to search by, so alone
    # it is tried at every character of every function
    return "global" not in text or _GLOBAL.search(text) is None


def named_in_read(placed: Sequence[Region], module_name: str | None, followed_into: set[str],
                  lines: Sequence[str]) -> list[Region]:
    """`placed` without the functions followed into whose name the text left unstubbed shows.

    A read follows a name it meets in the text it reads, so a function no such text names is
    never followed into, and its stub is kept. One that is named would have its stub refused
    after the read (`touched_stubs`) and the skeleton parsed again, so it is kept whole at once.
    """
    targets = {region for region in placed if region.kind == FUNCTION
               and region_qualname(region, module_name) in followed_into}
    stubbed = set(placed)
    shown = _unstubbed_text(lines, stubbed)
    while targets:
        found = _names_in(shown, {region.name for region in targets})
        named = {region for region in targets if region.name in found}
        if not named:
            break
        stubbed -= named
        targets -= named
        # only the text just put back can name what is left: the rest was searched
        shown = "".join("".join(lines[region.line - 1 : region.end_line]) for region in named)
    return [region for region in placed if region in stubbed]


def _names_in(text: str, names: Iterable[str]) -> set[str]:
    """The `names` that `text` holds as whole words (as `\\b` bounds them)."""
    return {name for name in names if _holds_word(text, name)}


def _holds_word(text: str, word: str) -> bool:
    """`word` stands in `text` with no word character on either side. By `str.find`, which
    skips ahead by the word's letters: a pattern of alternatives would be tried at every
    character of the text."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if not (start and _word_character(text[start - 1])) \
                and not (end < len(text) and _word_character(text[end])):
            return True
        start = text.find(word, start + 1)
    return False


def _word_character(char: str) -> bool:
    return char.isalnum() or char == "_"  # what `\w` matches in a str pattern


def _unstubbed_text(lines: Sequence[str], stubbed: Iterable[Region]) -> str:
    pieces, number = [], 1
    for region in sorted(stubbed, key=lambda r: r.line):
        pieces.append("".join(lines[number - 1 : region.line - 1]))
        number = region.end_line + 1
    pieces.append("".join(lines[number - 1 :]))
    return "".join(pieces)


def apart(placed: Sequence[Region], known: Sequence[Region], module_name: str | None
          ) -> set[Region]:
    """Placed functions that followed into a function no longer found unchanged at the same
    distance: their stubs would be refused after the read (`Dependencies.changed`), so they are
    read at once. Only a function with a region of its own is looked at here; a constant, or a
    function on one line, is checked after the read."""
    old, new = _by_qualname(known, module_name), _by_qualname(placed, module_name)
    twins: dict[tuple[object, ...], list[Region]] = {}
    for region in known:
        twins.setdefault(region.key, []).append(region)
    found = set()
    for region in placed:
        names = [parts[1] for parts, _ in region.lookups if len(parts) == 2
                 and parts[0] == FOLLOWED and parts[1] in old]
        if not names or len(twins.get(region.key, ())) != 1:
            continue
        was = twins[region.key][0]
        for name in names:
            helper = new.get(name)
            if helper is None or helper.key != old[name].key \
                    or helper.line - region.line != old[name].line - was.line:
                found.add(region)
                break
    return found


def _by_qualname(regions: Iterable[Region], module_name: str | None) -> dict[str, Region]:
    """Each function region by its qualified name, when no other region has that name."""
    named: dict[str, list[Region]] = {}
    for region in regions:
        if region.kind == FUNCTION:
            named.setdefault(region_qualname(region, module_name), []).append(region)
    return {name: found[0] for name, found in named.items() if len(found) == 1}


def touched_stubs(follower: Follower, stubbed: Iterable[Region], module_name: str | None
                  ) -> set[Region]:
    """The stubs a read tried to follow into: their real text is needed."""
    touched = set(follower.touched)
    return {region for region in stubbed if region.kind == FUNCTION
            and region_qualname(region, module_name) in touched}


class Dependencies:
    """The answers of a read's `(FOLLOWED, qualname)` lookups, each definition's text digested once."""

    def __init__(self, follower: Follower, line_of: Callable[[object], int | None],
                 text_of: Callable[[cst.CSTNode], str | None] = lambda node: None) -> None:
        self.follower = follower
        self.line_of = line_of  # a definition's line in the file, as a record's `defined_at` says
        self.text_of = text_of  # a definition's text as the file has it, where the read knows it
        self._digests: dict[str, tuple[str, int | None] | None] = {}

    def answer(self, qualname: str, region_line: int) -> str | None:
        """The definition's digest and its line counted from `region_line`; None if none is."""
        if qualname not in self._digests:
            self._digests[qualname] = self._digest(qualname)
        found = self._digests[qualname]
        if found is None:
            return None
        text, line = found
        return f"{text}@{line - region_line if line is not None else '-'}"

    def changed(self, region: Region) -> bool:
        """Whether any function or constant a stubbed region followed into is no longer as it was."""
        return any(parts[0] == FOLLOWED and self.answer(parts[1], region.line) != answer
                   for parts, answer in region.lookups if len(parts) == 2)

    def _digest(self, qualname: str) -> tuple[str, int | None] | None:
        found = definition(self.follower, qualname)
        if found is None:
            return None
        where, node = found
        code = self.text_of(node)
        if code is None:  # LibCST writes it out: a whole function costs as much as its parse
            code = _source.node_code(self.follower.module, node)
        text = hashlib.sha1(code.encode("utf-8", "surrogatepass")).hexdigest()
        return text, self.line_of(where)


def definition(follower: Follower, qualname: str) -> Definition | None:
    """The function or constant `qualname` names in the module, as the follower finds it."""
    index = follower.index
    prefix = f"{index.module_name}." if index.module_name else ""
    if not qualname.startswith(prefix):
        return None
    name = qualname[len(prefix):]
    if not follower.bound_once_at_top(name.partition(".")[0]):
        return None
    if "." in name:
        owner, _, attr = name.rpartition(".")
        method = index.methods.get((owner, attr))
        return (method.node, method.node) if method is not None and method.node else None
    function = index.functions.get(name)
    if function is not None and function.node is not None:
        return function.node, function.node
    constant = index.constants.get(name)
    return (constant[1], constant[0]) if constant is not None else None
