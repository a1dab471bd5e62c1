"""How much of a pasted message a template explains: loose matching, word scores, class kinship.

A record's regex says exactly what its raise prints; a paste is often less exact: hard-wrapped
(a line break where the template has a space, or inside a word), cut short (the tail, the
class's `See ...` line), or printed by a release whose class suffix carried another URL. So a
template is also matched *loosely* (`loose_match`): its literal pieces and placeholders against
the paste with all whitespace left out on both sides and every URL read as the same token. A
paste that runs to the template's end is `exact`; one that stops inside it is an `exact prefix`.
A template that matches neither way is scored by its literal words (`word_overlap`): the words
it shares with the paste, in order (difflib over word lists), so a clause deep in a long message
counts as much as its first line.

Both sides are read with plain characters where a browser, a tracker or a word processor puts
typographic ones (`plain`): curly quotes, a dash for `--`, an ellipsis, non-breaking and
zero-width spaces; so a paste whose quotes a tracker curled still matches the code's `'` and `"`.

A placeholder a template writes twice (`Error {e.args[0]} connecting to ... {e.args[0]}.`) prints
one value at both places: a fit, by the regex or loosely, holds only where the two texts agree
(`repeats_agree`), so a template cannot take a paste whose words differ there.

Every measure counts characters of literal text, whitespace left out:
- `explained`: the share of the paste the template's literal text accounts for;
- `coverage`: the share of the template's literal text the paste shows.
"""

from __future__ import annotations

import builtins
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

EXACT = "exact"
PREFIX = "exact prefix"
CLOSEST = "closest"
_SPACE = re.compile(r"\s+")
_URL = re.compile(r"https?://[^\s'\"<>()\[\]]+")
_URL_TOKEN = "\x00"
_WORD = re.compile(r"\w+")
# `{{`, `}}`, or a placeholder with one level of braces inside (`{d['k']}`, `{x:{width}}`)
_TEMPLATE_TOKEN = re.compile(r"(\{\{|\}\}|\{(?:[^{}]|\{[^{}]*\})*\})")
# typographic characters to the plain ones they stand for (None: left out)
_TYPOGRAPHY: dict[str, str | None] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),  # ‘ ’ ‚ ‛ ′
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),  # “ ” „ ‟ ″
    **dict.fromkeys("\u2013\u2014", "--"),  # – —: what `--` becomes in a typographer's hands
    "\u2026": "...",  # …
    **dict.fromkeys("\u00a0\u2007\u2009\u202f", " "),  # non-breaking and thin spaces
    **dict.fromkeys("\u200b\u200c\u2060\ufeff\u00ad", None),  # zero-width, soft hyphen
}
_PLAIN = str.maketrans(_TYPOGRAPHY)
_PLAIN_REGEX = str.maketrans({**_TYPOGRAPHY, "\u2026": r"\.\.\."})  # a regex's `…`: three dots


def plain(text: str) -> str:
    """`text` with plain characters for typographic ones, as both sides are compared."""
    return text.translate(_PLAIN) if not text.isascii() else text


def plain_regex(regex: str) -> str:
    """A record's regex read as `plain` reads the text it runs on."""
    return regex.translate(_PLAIN_REGEX) if not regex.isascii() else regex


@dataclass(frozen=True)
class Fit:
    """How a template fits a paste: the kind, and the literal characters on each side."""

    kind: str  # EXACT, PREFIX or CLOSEST
    literal: int  # the template's literal characters found in the paste
    paste: int  # the paste's characters (whitespace left out)
    template: int  # the template's literal characters (whitespace left out)

    @property
    def explained(self) -> float:
        return self.literal / self.paste if self.paste else 0.0

    @property
    def coverage(self) -> float:
        return self.literal / self.template if self.template else 0.0


def squash(text: str) -> str:
    """`text` as loose matching compares it: URLs one token, no whitespace."""
    return _SPACE.sub("", _URL.sub(_URL_TOKEN, text))


def template_pieces(template: str) -> list[str | None]:
    """A template's literal pieces (squashed) and placeholders (None), in order."""
    pieces: list[str | None] = []
    literal: list[str] = []
    for token in _TEMPLATE_TOKEN.split(template):
        if token in ("{{", "}}"):
            literal.append(token[0])
        elif token.startswith("{") and token.endswith("}") and len(token) > 1:
            pieces.extend([squash("".join(literal)), None])
            literal = []
        else:
            literal.append(token)
    pieces.append(squash("".join(literal)))
    return [piece for piece in pieces if piece != ""]


def repeated_placeholders(template: str) -> tuple[tuple[int, ...], ...]:
    """The placeholders a template writes more than once, each as the numbers (in the order the
    template has them, as `template_pieces` and its regex's groups do) of its places.

    >>> repeated_placeholders("Error {e.args[0]} connecting to {host}. {e.args[0]}.")
    ((0, 2),)
    """
    places: dict[str, list[int]] = {}
    number = 0
    for token in _TEMPLATE_TOKEN.split(template):
        if token not in ("{{", "}}") and token.startswith("{") and token.endswith("}") \
                and len(token) > 1:
            places.setdefault(token, []).append(number)
            number += 1
    return tuple(tuple(found) for found in places.values() if len(found) > 1)


# what a value may carry at one place and not at another, the conversion and format spec being
# no part of a template's placeholder (`{url!r}` and `{url}` are both `{url}`): a str's repr
# (quotes, escapes, a `b` or `u`), an object's repr around a string (`PosixPath('/a')`)
_REPR = re.compile(r"^(?P<call>[A-Za-z_][\w.]*\()?[bBuU]?(?P<quote>['\"])(?P<body>.*)(?P=quote)"
                   r"(?(call)\))$", re.DOTALL)
_NUMBER = re.compile(r"^[-+]?\d+(?:\.(?P<decimals>\d+))?$")


def repeats_agree(texts: Sequence[str]) -> bool:
    """Whether the texts a fit gives one placeholder's places can be one value printed at each:
    the same, but for a str's repr at one place (`'x'` and `x`) and a number's decimals (a
    format spec's precision, `0.50` and `0.5`)."""
    bare = {_bare(text) for text in texts}
    if len(bare) <= 1:
        return True
    numbers = [_NUMBER.match(text) for text in bare]
    if all(numbers):
        fewest = min(len(found["decimals"] or "") for found in numbers if found)
        values = [float(found[0]) for found in numbers if found]
        return max(values) - min(values) <= 10 ** -fewest
    return False


def _bare(text: str) -> str:
    text = text.strip()
    found = _REPR.match(text)
    if found is None:
        return text
    return found["body"].replace("\\\\", "\\").replace("\\" + found["quote"], found["quote"])


def template_beginning(template: str, literal: int) -> str:
    """The template as far as its first `literal` characters of literal text (squashed, as a
    fit counts them) go: what a paste that is the template's beginning shows of it.

    >>> template_beginning("Failed to parse: {target} is not a valid request URI", 13)
    'Failed to parse'
    """
    shown: list[str] = []
    for token in _TEMPLATE_TOKEN.split(template):
        if token not in ("{{", "}}") and token.startswith("{") and token.endswith("}") \
                and len(token) > 1:  # a placeholder: shows no literal text
            shown.append(token)
            continue
        for character in token[0] if token in ("{{", "}}") else token:
            if literal <= 0:
                return "".join(shown)
            shown.append(character)
            literal -= len(squash(character))
    return "".join(shown)


_SENTENCE_END = re.compile(r"[.!?:](?=\s)|\n")


def sentence_heads(template: str) -> list[str]:
    """The template's beginnings that end a sentence or a line (a `.`, `!`, `?` or `:` before
    a space, or a line break) outside its placeholders: what a title or a first line quotes.

    >>> sentence_heads("Unable to build {obj}. Set `x=True`.\\nSee {url}")
    ['Unable to build {obj}.', 'Unable to build {obj}. Set `x=True`.']
    """
    heads: list[str] = []
    offset = 0
    for token in _TEMPLATE_TOKEN.split(template):
        if token in ("{{", "}}") or not (token.startswith("{") and token.endswith("}")):
            heads.extend(template[:offset + end.end()].rstrip("\n")
                         for end in _SENTENCE_END.finditer(token))
        offset += len(token)
    return list(dict.fromkeys(heads))


def template_regex(template: str) -> str:
    """A template's text as a regex of the crawler's linear shape (`crawler.regexes`): its
    literal text, each placeholder any text (lazily): what it prints, whatever the values."""
    parts = ["^"]
    for token in _TEMPLATE_TOKEN.split(template):
        if token in ("{{", "}}"):
            parts.append(re.escape(token[0]))
        elif token.startswith("{") and token.endswith("}") and len(token) > 1:
            parts.append(r"([\s\S]*?)")
        else:
            parts.append(re.escape(token))
    return "".join([*parts, "$"])


def loose_match(pieces: Sequence[str | None], text: str,
                repeats: Sequence[Sequence[int]] = ()) -> Fit | None:
    """`text` (squashed) against a template's pieces: EXACT when it runs to the template's end,
    PREFIX when it stops inside it, None when it goes another way. Literal pieces are found
    leftmost (right for placeholders that take any text); the last one is held to the end.
    `repeats`: the places of each placeholder written more than once (`repeated_placeholders`),
    whose texts must agree (`repeats_agree`; a place the paste does not reach, or next to
    another placeholder, is not known and not held to it).
    Nothing of `text` is copied but what a piece can overlap: the cost is a search a piece."""
    total = sum(len(piece) for piece in pieces if piece is not None)
    size = len(text)
    position = found = 0
    gap = False
    spans: list[tuple[int, int] | None] = []  # each placeholder's text, where it is known
    waiting: list[int] = []  # the placeholders before the next literal piece
    for number, piece in enumerate(pieces):
        if piece is None:
            gap = True
            waiting.append(len(spans))
            spans.append(None)
            continue
        last = number == len(pieces) - 1
        if not gap:
            if not text.startswith(piece, position):
                left = size - position
                if left <= len(piece) and piece.startswith(text[position:]):
                    # the paste stops inside it
                    return _held(Fit(PREFIX, found + left, size, total), text, spans, repeats)
                return None
            at = position
        elif last and text.endswith(piece) and size - len(piece) >= position:
            at = size - len(piece)
        else:
            at = text.find(piece, position)
            if at < 0:  # the paste stops in a placeholder, or inside this piece
                tail = text[max(position, size - len(piece)):]
                return _held(Fit(PREFIX, found + _overlap(tail, piece), size, total), text,
                             spans, repeats)
        if len(waiting) == 1:
            spans[waiting[0]] = (position, at)
        waiting = []
        position = at + len(piece)
        found += len(piece)
        gap = False
    if gap or position == size:
        if len(waiting) == 1:
            spans[waiting[0]] = (position, size)
        return _held(Fit(EXACT, found, size, total), text, spans, repeats)
    return None


def _held(fit: Fit, text: str, spans: Sequence[tuple[int, int] | None],
          repeats: Sequence[Sequence[int]]) -> Fit | None:
    """The fit, unless a placeholder written more than once took texts that disagree."""
    for places in repeats:
        shown = [text[span[0]:span[1]] for place in places
                 if place < len(spans) and (span := spans[place]) is not None]
        if len(shown) > 1 and not repeats_agree(shown):
            return None
    return fit


def _overlap(rest: str, piece: str) -> int:
    """The longest end of `rest` that begins `piece` (a paste cut inside a literal piece)."""
    for size in range(min(len(rest), len(piece)), 0, -1):
        if piece.startswith(rest[-size:]):
            return size
    return 0


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(_URL.sub(" ", text))]


MAX_WORDS = 500  # a paste's words a template's are looked for in: its first ones


@dataclass
class PasteWords:
    """A paste's words made ready once for `word_overlap` with many templates: its first
    MAX_WORDS, where a message's own words are (difflib's cost grows with the words of the
    paste a template's words are met at), and the characters of all of them."""

    words: Sequence[str]
    chars: int
    matcher: difflib.SequenceMatcher[str]


def paste_matcher(paste_words: Sequence[str]) -> PasteWords:
    """A paste's words made ready once for `word_overlap` with many templates."""
    return PasteWords(paste_words, sum(map(len, paste_words)),
                      difflib.SequenceMatcher(None, (), paste_words[:MAX_WORDS], autojunk=False))


def word_overlap(template_words: Sequence[str], paste_words: Sequence[str],
                 matcher: PasteWords | None = None) -> Fit:
    """The template's literal words found in the paste in the same order, in characters;
    `matcher`: `paste_matcher(paste_words)`, the paste's side worked out once."""
    if matcher is None:
        matcher = paste_matcher(paste_words)
    matcher.matcher.set_seq1(template_words)
    found = sum(len(word) for block in matcher.matcher.get_matching_blocks()
                for word in template_words[block.a:block.a + block.size])
    return Fit(CLOSEST, found, matcher.chars, sum(map(len, template_words)))


# ------------------------------------------------------------------ exception classes' kinship

SAME = "same"
SUBCLASS = "subclass"  # the record raises a subclass of the class pasted
SUPERCLASS = "superclass"  # the record raises a base of the class pasted
OTHER = "other"
VARIABLE = "variable"  # the record raises a class held in a variable (`raise mapped_exc(msg)`)


def kinship(pasted: str | None, raised: str, bases: Mapping[str, Sequence[str]]) -> str | None:
    """How the class a record raises stands to the class a paste names (None: none named).
    `bases`: each class the repositories define (by qualified and by short name) to its bases;
    builtins' hierarchy comes from Python itself."""
    if pasted is None:
        return None
    wanted = pasted.rpartition(".")[2]
    name = raised.rpartition(".")[2]
    if wanted == name:
        return SAME
    if name[:1].islower() and raised not in bases and name not in bases:
        return VARIABLE  # a class's name is capitalised; a variable's, here, is not
    if wanted in _ancestors(raised, bases):
        return SUBCLASS
    if name in _ancestors(pasted, bases):
        return SUPERCLASS
    return OTHER


def _ancestors(name: str, bases: Mapping[str, Sequence[str]]) -> set[str]:
    """Every base of `name`, by short name, through the repositories' classes and builtins."""
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        short = current.rpartition(".")[2]
        found = bases.get(current) or bases.get(short)
        if found is None:
            value = getattr(builtins, short, None)
            if isinstance(value, type):
                seen.update(base.__name__ for base in value.__mro__[1:])
            continue
        for base in found:
            base_short = base.rpartition(".")[2]
            if base_short not in seen:
                seen.add(base_short)
                pending.append(base)
    return seen
