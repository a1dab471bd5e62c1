"""The names and words an annotation mentions, its code read as code (annotation_fit's).

An annotation is read in three ways: its fenced code blocks with `ast` where they parse (`>>>`
prompts dropped), its backticked spans as code too, and its prose, whose tokens shaped like code
(dotted names, CamelCase, snake_case, `name()`) are names and whose other words are words.
Code is read as code:

- a name the example binds itself (`def`, assignment, parameter, `as`, `for`) is the user's,
  not the library's, and so is the variable a dotted name starts from (`env.filters`,
  `x.shape`): `user_names` holds them, and `annotation_fit` drops a dotted mention's first
  part when it is a plain lower-case name that is no module of the library;
- a call's keyword (`timeout=` in `requests.get(url, timeout=10)`) is an argument's name, as
  written: it is never read as another spelling (`Timeout`); it is kept with the call it is
  passed to (`timeout@requests.get`), as it names a parameter of that call;
- a backticked span binds nothing (`allow_int=True` names the argument `allow_int`);
- strings in code, and the words of a web address anywhere, are no names;
- what an example imports from the standard library is the standard library's, as a dotted
  name from one of its modules is (`from datetime import timezone`, `timezone.utc`; `from
  pathlib import Path`): no name of the library;
- what does not parse as Python is no code this reads: a message quoted in backticks
  (`expected token 'in', got 'items'`, `[Errno 111] Connection refused`), a template's tags
  (`{% for item items %}`), a shell line. It is read as prose: its tokens shaped like code are
  names, its other words are words.

Names keep their case (`command` is not `Command`); words are lower-cased.
"""

from __future__ import annotations

import ast
import keyword
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from crawler.parse.python_ast import parse_module

# The slots that hold what a person wrote; written_for, fits and related are bookkeeping.
JUDGED_SLOTS = ("what_it_means", "solutions", "example_fix", "defensive_patterns", "prevention",
                "when_it_happens")

STDLIB = frozenset(sys.stdlib_module_names)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WORD = re.compile(r"[A-Za-z]+")
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_BACKTICK = re.compile(r"`([^`\n]+)`")
# a web address, up to where a string, a call or a sentence around it goes on
_URL = re.compile(r"\b(?:(?:https?|ftp|file)://|www\.)[^\s\"'`<>()\[\]{}]*")
DOTTED_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
_CALL = r"[A-Za-z_][A-Za-z0-9_.]*\(\)?"
_CAMEL = r"[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+[A-Za-z0-9]*"
_SNAKE = r"_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*|__[A-Za-z0-9]+__"
_CODE_LIKE = re.compile(rf"(?<![\w.])(?:{DOTTED_NAME}|{_CALL}|{_SNAKE}|{_CAMEL})(?![\w])")
_PLAIN = re.compile(rf"{DOTTED_NAME}|[A-Za-z_][A-Za-z0-9_]*")
_PROSE_DOTTED_WORDS = {"e.g", "i.e", "etc", "vs", "cf"}
# between a keyword and the call it is passed to, in a mention (`algorithms@jwt.decode`)
KEYWORD_OF = "@"
# the names every piece of Python code writes: a fact of every record, telling none apart
LANGUAGE = frozenset(keyword.kwlist) | {"self", "cls", "args", "kwargs"}


@dataclass(frozen=True)
class Mentions:
    """What an annotation mentions: code names as written (dotted where written dotted), the
    names its own examples bind (a user's), and the words of its prose, lower-cased."""

    names: tuple[str, ...]
    user_names: frozenset[str]
    words: frozenset[str]


# The slot that holds code (a fixed example): read as a code block when it is not fenced itself.
CODE_SLOTS = ("example_fix",)


def annotation_text(data: Mapping[str, Any]) -> str:
    """Every string a person wrote in the judged slots, one after the other; a code slot's
    text fenced, so that its code is read as code."""
    texts = []
    for slot in JUDGED_SLOTS:
        for text in _strings(data.get(slot)):
            texts.append(f"```\n{text}\n```" if slot in CODE_SLOTS and "```" not in text
                         else text)
    return "\n".join(texts)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def code_mentions(text: str) -> Mentions:
    """The code names of `text` (its fenced blocks, backticked spans and code-like prose), the
    names its code binds, and its prose's words."""
    text = _URL.sub(" ", text)
    names: list[str] = []
    bound: set[str] = set()
    foreign: set[str] = set()  # the names the examples import from the standard library

    def block(match: re.Match[str]) -> str:  # Python read as code; any other text, as prose
        tree = _parsed(match.group(1))
        if tree is None:
            return f"\n{match.group(1)}\n"
        names.extend(_code_names(tree, bound, foreign))
        return "\n"

    def span(match: re.Match[str]) -> str:  # a plain (dotted) name as it is, other code parsed
        code = match.group(1)
        if _PLAIN.fullmatch(code):
            names.append(code)
            return " "
        tree = _parsed(code)
        if tree is None:
            return f" {code} "
        names.extend(_code_names(tree, set(), foreign, binds=False))
        return " "

    prose = _BACKTICK.sub(span, _FENCE.sub(block, text))
    for token in _CODE_LIKE.findall(prose):
        name = token.rstrip("()")
        if name.lower() not in _PROSE_DOTTED_WORDS and "." not in name[-1:]:
            names.append(name)
    words = frozenset(w.lower() for w in WORD.findall(_CODE_LIKE.sub(" ", prose)))
    kept = [n for n in dict.fromkeys(names) if _root(n) not in LANGUAGE | foreign]
    return Mentions(tuple(kept), frozenset(bound), words)


def _code_names(tree: ast.Module, bound: set[str], foreign: set[str],
                binds: bool = True) -> list[str]:
    """Names a piece of code references (dotted chains whole, keywords of calls as written),
    adding to `bound` those it binds (`binds`: a block; a backticked span binds nothing) and to
    `foreign` those it imports from the standard library."""
    names: list[str] = []
    inner: set[int] = set()  # the parts of a chain already read whole: `env` of `env.filters`
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store) and binds:
                bound.add(node.id)
            else:
                names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(_dotted(node, inner))
        elif isinstance(node, ast.keyword) and node.arg:
            names.append(node.arg)  # a keyword of a call whose callee has no name
        elif isinstance(node, ast.Call) and (callee := _callee(node.func)):
            for argument in node.keywords:
                if argument.arg:
                    inner.add(id(argument))
                    names.append(f"{argument.arg}{KEYWORD_OF}{callee}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if _from_stdlib(node, alias):
                    foreign.add((alias.asname or alias.name).split(".")[0])
                elif alias.name != "*":
                    names.append(alias.name)
                    if alias.asname:
                        bound.add(alias.asname)
            if isinstance(node, ast.ImportFrom) and node.module and not _from_stdlib(node):
                names.append(node.module)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return names


def _callee(func: ast.expr) -> str | None:
    """The name a call is made by, dotted as written (`jwt.decode`, `URL.build`, `client.get`);
    None for a call of a call or a subscript."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return _dotted(func, set())
    return None


def _from_stdlib(node: ast.Import | ast.ImportFrom, alias: ast.alias | None = None) -> bool:
    """The import (or its `alias`) names a module of the standard library (`import asyncio`,
    `from datetime import timezone`); a relative import is the example's own."""
    if isinstance(node, ast.ImportFrom):
        return not node.level and (node.module or "").split(".")[0] in STDLIB
    return alias is not None and alias.name.split(".")[0] in STDLIB


def _root(mention: str) -> str:
    """The name a mention starts from: its first part, or its call's (`tz@datetime.now`)."""
    keyword, of, callee = mention.partition(KEYWORD_OF)
    return (callee if of else keyword).split(".")[0]


def _parsed(code: str) -> ast.Module | None:
    code = textwrap.dedent(code)
    for attempt in (code, re.sub(r"(?m)^(>>>|\.\.\.) ?", "", code)):
        try:
            return parse_module(attempt)
        except (SyntaxError, ValueError):
            continue
    return None


def _dotted(node: ast.Attribute, inner: set[int]) -> str:
    """`a.b.c` for an attribute chain on a name, else the attributes alone: `x().c` gives `c`;
    the chain's inner nodes go into `inner`, read already."""
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        inner.add(id(value))
        parts.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name):
        inner.add(id(value))
        parts.append(value.id)
    return ".".join(reversed(parts))
