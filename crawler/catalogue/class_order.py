"""The order of a repository's exception classes (their MRO, by C3 over the classes the
repository defines) and a digest of all that composes one class's message, which the class pass
compares between runs; `composing` follows a raise through that order."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING

from crawler.records import ClassDef

if TYPE_CHECKING:
    from crawler.catalogue.classes import ClassIndex


def linearize(index: ClassIndex, qualname: str) -> list[str]:
    """The class's MRO over the repository's classes (C3); a class not ours ends its line."""
    memo: dict[str, list[str]] = {}

    def mro(name: str, depth: int) -> list[str]:
        if name in memo:
            return memo[name]
        cls = index.classes.get(name)
        if cls is None or depth > 32:
            return [name]
        memo[name] = [name]  # a cycle reads as a class without bases
        bases = [index.canonical(base) for base in cls.bases]
        merged = _merge([mro(base, depth + 1) for base in bases] + [bases])
        memo[name] = [name, *merged]
        return memo[name]

    return mro(qualname, 0)


def _merge(sequences: list[list[str]]) -> list[str]:
    """C3's merge; where it has no answer, the depth-first order, each name once."""
    pending = [list(s) for s in sequences if s]
    result: list[str] = []
    while pending:
        for sequence in pending:
            head = sequence[0]
            if not any(head in other[1:] for other in pending):
                break
        else:
            rest = [name for s in pending for name in s]
            return result + [n for i, n in enumerate(rest) if n not in rest[:i]]
        result.append(head)
        pending = [[n for n in s if n != head] for s in pending]
        pending = [s for s in pending if s]
    return result


def digest(index: ClassIndex, qualname: str, memo: dict[str, str] | None = None) -> str:
    """16 hex of all that `compose` reads of a class and its repository bases, in MRO order: the
    manifest keeps it, so that a change to a base reaches the files that raise a subclass.

    `memo`: each class's JSON by name, kept across the calls of one pass (a base is in the MRO
    of each of its subclasses); the list's JSON is its items' joined, as `json.dumps` writes it.
    """
    memo = {} if memo is None else memo
    texts = []
    for name in linearize(index, qualname):
        text = memo.get(name)
        if text is None:
            text = memo[name] = _json(_digest_part(index, name))
        texts.append(text)
    text = "[" + ",".join(texts) + "]"
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _digest_part(index: ClassIndex, name: str) -> object:
    """What `digest` reads of one class of the MRO (a class not ours: its name)."""
    cls = index.classes.get(name)
    if cls is None:
        return name
    return [cls.qualname, cls.name, cls.has_init, cls.params, cls.keywords, cls.init_target,
            place(cls), *(_data(slot) for slot in (*cls.init_args, *cls.self_attributes,
                                                    *cls.class_attributes, *cls.methods))]


def _data(value: object) -> object:
    """What JSON makes of `asdict(value)`, without `asdict`'s deep copy of every leaf (the
    digest only writes it): a record as a dict of its fields, tuples as lists, at every depth."""
    if isinstance(value, (tuple, list)):
        return [_data(item) for item in value]
    if isinstance(value, dict):
        return {key: _data(item) for key, item in value.items()}
    names = _FIELDS_OF.get(type(value))
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            return value
        names = _FIELDS_OF[type(value)] = tuple(f.name for f in fields(value))
    return {name: _data(getattr(value, name)) for name in names}


_FIELDS_OF: dict[type, tuple[str, ...]] = {}  # a record type -> its field names, in order


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def place(cls: ClassDef) -> str:
    return cls.templates[0].defined_at if cls.templates and cls.templates[0].defined_at \
        else f"{cls.path}:{cls.line}"
