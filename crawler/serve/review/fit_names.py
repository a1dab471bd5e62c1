"""The code names an annotation mentions, and the names of the language (annotation_fit's).

Only code names are judged: those in an annotation's fenced code blocks (read with `ast` where
they parse; `>>>` prompts dropped), in backticks, and prose tokens shaped like code (dotted
names, CamelCase, snake_case, `name()`). Prose in any language passes through. The names of the
language (keywords, builtins, builtin types' methods, stdlib modules) count for nothing.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import keyword
import re
import sys
import textwrap
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from crawler.parse.positions import parse_module
from crawler.records import ErrorRecord

# The slots that hold what a person wrote; written_for, fits and related are bookkeeping.
JUDGED_SLOTS = ("what_it_means", "solutions", "example_fix", "defensive_patterns", "prevention",
                "when_it_happens")
# Stdlib modules whose public names examples use bare (`Path`, `dataclass`, `partial`).
COMMON_STDLIB = ("os", "os.path", "sys", "re", "typing", "collections", "collections.abc",
                 "functools", "itertools", "pathlib", "io", "json", "dataclasses", "enum",
                 "contextlib", "inspect", "warnings", "types", "operator", "string", "textwrap",
                 "shutil", "subprocess", "tempfile", "logging", "math", "datetime", "copy", "abc",
                 "unittest", "importlib", "importlib.metadata")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_BACKTICK = re.compile(r"`([^`\n]+)`")
DOTTED_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
_CALL = r"[A-Za-z_][A-Za-z0-9_.]*\(\)?"
_CAMEL = r"[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+[A-Za-z0-9]*"
_SNAKE = r"_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*|__[A-Za-z0-9]+__"
_CODE_LIKE = re.compile(rf"(?<![\w.])(?:{DOTTED_NAME}|{_CALL}|{_SNAKE}|{_CAMEL})(?![\w])")
_PROSE_DOTTED_WORDS = {"e.g", "i.e", "etc", "vs", "cf"}
DOTTED = re.compile(DOTTED_NAME)
DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def key(name: str) -> str:
    """How names are compared: `_check_differentiable`, `check_differentiable` alike."""
    return name.strip("_").lower()


@lru_cache(maxsize=1)
def neutral_names() -> frozenset[str]:
    """Names of the language: keywords, builtins, builtin types' methods, stdlib modules.
    They count for nothing, whatever else defines them."""
    names = set(keyword.kwlist) | set(dir(builtins)) | set(sys.stdlib_module_names)
    names |= {"self", "cls", "args", "kwargs", "true", "false", "none"}
    for kind in (str, bytes, list, dict, set, tuple, int, float, object, BaseException):
        names |= set(dir(kind))
    return frozenset(key(name) for name in names)


@lru_cache(maxsize=1)
def stdlib_names() -> frozenset[str]:
    """Public names of common stdlib modules (`Path`, `chain`, `fields`): neutral unless the
    repository defines the name or the record's facts hold it, which come first."""
    return frozenset(key(n) for module in COMMON_STDLIB
                     for n in dir(importlib.import_module(module)) if not n.startswith("_"))


@dataclass(frozen=True)
class Mentions:
    """The code names an annotation mentions, as written, and the names its examples bind."""

    names: tuple[str, ...]  # dotted where written dotted: `PyTreeDef.Tuple`, `registry`
    bound: frozenset[str]  # keys of the names the annotation's own code defines or assigns


def annotation_text(data: Mapping[str, Any]) -> str:
    """Every string a person wrote in the judged slots, one after the other."""
    return "\n".join(_strings([data.get(slot) for slot in JUDGED_SLOTS]))


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
    """The code names of `text`: its fenced blocks, backticked spans and code-like prose."""
    names: list[str] = []
    bound: set[str] = set()
    for block in _FENCE.findall(text):
        names += _code_names(block, bound)
    prose = _FENCE.sub("\n", text)
    for span in _BACKTICK.findall(prose):  # `capture="fd"` names capture, binds nothing
        names += _code_names(span, set())
    prose = _BACKTICK.sub(" ", prose)
    for token in _CODE_LIKE.findall(prose):
        name = token.rstrip("()")
        if key(name) not in _PROSE_DOTTED_WORDS and "." not in name[-1:]:
            names.append(name)
    return Mentions(tuple(dict.fromkeys(names)), frozenset(bound))


def _code_names(code: str, bound: set[str]) -> list[str]:
    """Names a piece of code references (dotted chains whole), adding to `bound` those it binds;
    code that does not parse gives its identifiers."""
    tree = _parsed(code)
    if tree is None:
        return [m.group(0) for m in re.finditer(rf"{DOTTED_NAME}|[A-Za-z_][A-Za-z0-9_]*", code)
                if not m.group(0)[0].isdigit()]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(key(node.name))
        elif isinstance(node, ast.arg):
            bound.add(key(node.arg))
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(key(node.id))
            else:
                names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(_dotted(node))
        elif isinstance(node, ast.keyword) and node.arg:
            names.append(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [alias.name for alias in node.names if alias.name != "*"]
            bound.update(key(alias.asname) for alias in node.names if alias.asname)
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(key(node.name))
    return names


def _parsed(code: str) -> ast.Module | None:
    code = textwrap.dedent(code)
    for attempt in (code, re.sub(r"(?m)^(>>>|\.\.\.) ?", "", code)):
        try:
            return parse_module(attempt)
        except (SyntaxError, ValueError):
            continue
    return None


def _dotted(node: ast.Attribute) -> str:
    """`a.b.c` for an attribute chain on a name, else the attribute alone: `x().c` gives `c`."""
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name):
        parts.append(value.id)
    return ".".join(reversed(parts))


def identifiers(text: str | None) -> set[str]:
    """The keys of every identifier in `text`."""
    return {key(m) for m in _IDENTIFIER.findall(text or "")} - {""}


def module_parts(path: str) -> list[str]:
    """`src/click/core.py` gives src, click, core."""
    return [part.removesuffix(".py") for part in path.split("/") if part]



@lru_cache(maxsize=1)
def exception_names() -> frozenset[str]:
    """Builtin exception names: neutral in an annotation, but a record's own when it raises one."""
    return frozenset(key(n) for n, v in vars(builtins).items()
                     if isinstance(v, type) and issubclass(v, BaseException))


def own_key_names(record: ErrorRecord, code: Collection[str] = ()) -> list[str]:
    """What an annotation of this record is expected to name: function (and a nested def's
    maker), class, exception, the
    template's code words (backticked, snake_case, CamelCase), and the template's words that the
    site's `code` writes as names (`chain` in "A group in chain mode ..." raised by a `chain`
    parameter's check)."""
    site = record.site
    names = [site.function or "", maker(record), (site.class_name or "").split(".")[-1],
             site.exception.split(".")[-1]]
    template = re.sub(r"\{[^{}]*\}", " ", site.message.template)
    names += template_code_words(template)
    names += [word for word in _IDENTIFIER.findall(template) if word.strip("_") in code]
    own = []
    for name in names:
        for part in _IDENTIFIER.findall(name):
            if len(key(part)) >= 3 and part not in own and not part.startswith("<"):
                own.append(part)
    return own



def maker(record: ErrorRecord) -> str:
    """The function that makes a nested def (`command` of `command.<locals>.decorator`), by
    whose name users know it; "" for a function that is not nested."""
    qualname = record.site.qualname
    return qualname.split(".<locals>.")[0].split(".")[-1] if ".<locals>." in qualname else ""


def template_code_words(template: str) -> list[str]:
    """The code words of a message's template: backticked, dotted, snake_case, CamelCase."""
    template = re.sub(r"\{[^{}]*\}", " ", template)
    return [*_BACKTICK.findall(template),
            *(m.group(0) for m in _CODE_LIKE.finditer(_BACKTICK.sub(" ", template)))]


_STRING_OR_COMMENT = re.compile(  # triple-quoted, quoted (prefixed or not), or a comment
    r'[rRbBuUfF]{0,2}(?:"""[\s\S]*?"""' r"|'''[\s\S]*?'''"
    r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*')|#[^\n]*")


def code_identifiers(code: str | None) -> set[str]:
    """The identifiers of a piece of code as written, underscores stripped, without its strings,
    docstrings and comments: `Command` and `command` stay apart, and prose does not count."""
    return {m.strip("_") for m in _IDENTIFIER.findall(_STRING_OR_COMMENT.sub(" ", code or ""))
            } - {""}
