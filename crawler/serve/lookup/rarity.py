"""How much a template's words say: evidence by rarity, not by the share of the paste they explain.

A message's run-time part (a value's repr, a path, another program's report) can be any length,
so the share of a paste a template's literal text explains says little of whether the template
printed it: `Can't retry {name}[{id}] args:{args} kwargs:{kwargs}` explains a fifth of a paste
whose arguments are long, and it is still the only raise of the catalogue that prints those
words. The other way round, `{obj!r} object has no attribute {name!r}` explains most of
`'str' object has no attribute 'decode'`, which Python itself prints.

So lookup weighs a template's *phrases*: the words of each literal part of it (the text between
two placeholders), in order. A phrase is

- *common* when the templates of at least COMMON_LIBRARIES libraries of a background corpus hold
  it, within one literal part (`common_phrases.txt`, made by `scripts/common_phrases.py` from
  the catalogues of the standard library and of the libraries lookup's corpus was collected
  for; it lists every run of up to LONGEST words that is common): Python's own wordings
  (`object has no attribute`), "must be", "got", "expected", "is not a valid"; it weighs little
  wherever it is;
- *rare*, said of a template: a phrase of it has two words at least and is not common, and at
  most RARE_RECORDS records of the catalogues searched hold all the template's words, any of
  their wordings counted (two records that print the same words are told as a tie; where more
  print them, as networkx's four `remove_edge`, a stray period decides between them, and that
  is not trusted).

`ranking._fit` trusts a template that fits the whole paste when one of its phrases is rare,
however long the run-time part around it, and does not trust a share of the paste explained by
common phrases alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib import resources

COMMON_LIBRARIES = 3  # libraries of the background whose templates hold a common phrase
RARE_RECORDS = 2  # records of the catalogues searched that may hold a rare phrase's words
LONGEST = 6  # words of the longest common run listed; a longer phrase is never common
BACKGROUND = "common_phrases.txt"

_WORD = re.compile(r"\w+")
# `{{`, `}}`, or a placeholder with one level of braces inside (as `matching` reads templates)
_TEMPLATE_TOKEN = re.compile(r"(\{\{|\}\}|\{(?:[^{}]|\{[^{}]*\})*\})")


def literal_parts(template: str) -> list[str]:
    """The template's literal text between its placeholders, each part whole (`{{` read as
    `{`)."""
    parts: list[str] = [""]
    for token in _TEMPLATE_TOKEN.split(template):
        if token in ("{{", "}}"):
            parts[-1] += token[0]
        elif token.startswith("{") and token.endswith("}") and len(token) > 1:
            parts.append("")
        else:
            parts[-1] += token
    return [part for part in parts if part.strip()]


def phrases(template: str) -> frozenset[str]:
    """The words of each literal part of the template (lower case, one space between).

    >>> sorted(phrases("Can't retry {name}[{id}] args:{args}"))
    ['args', 'can t retry']
    """
    found = (" ".join(word.lower() for word in _WORD.findall(part)) for part in literal_parts(template))
    return frozenset(phrase for phrase in found if phrase)


def runs(phrase: str, longest: int) -> set[str]:
    """Every run of one to `longest` words in a row of a phrase: what the background lists."""
    words = phrase.split()
    return {" ".join(words[start:start + size]) for size in range(1, longest + 1)
            for start in range(len(words) - size + 1)}


@cache
def common_phrases() -> frozenset[str]:
    """The background's common phrases (`BACKGROUND`, shipped with the package)."""
    text = resources.files(__package__).joinpath(BACKGROUND).read_text(encoding="utf-8")
    return frozenset(line.split("\t", 1)[0] for line in text.splitlines()
                     if line and not line.startswith("#"))


class Rarity:
    """What one lookup knows of its phrases: the background's common ones, and how many records
    of the catalogues searched hold a template's words (`holding`, asked once a set of words)."""

    def __init__(self, holding: Callable[[frozenset[str]], int],
                 common: frozenset[str] | None = None) -> None:
        self._holding = holding
        self._common = common_phrases() if common is None else common
        self._counts: dict[frozenset[str], int] = {}

    def is_common(self, phrase: str) -> bool:
        return phrase in self._common

    def has_uncommon(self, template: str) -> bool:
        """Whether some phrase of the template is not one every library prints."""
        return any(not self.is_common(phrase) for phrase in phrases(template))

    def has_rare(self, template: str) -> bool:
        """Whether the template's words are rare (module docstring): a phrase of two words or
        more that is not common, and no more than RARE_RECORDS records holding all its words."""
        found = phrases(template)
        if not any(" " in phrase and not self.is_common(phrase) for phrase in found):
            return False
        words = frozenset(word for phrase in found for word in phrase.split())
        if words not in self._counts:
            self._counts[words] = self._holding(words)
        return self._counts[words] <= RARE_RECORDS
