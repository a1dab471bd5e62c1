"""The annotation corpora, shared by tests/serve/review/ and scripts/annotation_fit_rates.py:

- the own corpus: hand-written annotations of click and attrs records (click.yaml, attrs.yaml)
  with the catalogues they were written for (catalogues/*.tar.xz), which the check was built on;
- issue 50's real corpus (real/working/*.yaml, real/sealed/*.yaml, real/sealed2/*.yaml,
  catalogues in real/catalogues/): libraries the check was never fitted to, split in
  docs/corpus.md before any change to the check (the second sealed set, fixed once the first was
  spent, before further changes); each annotation written from the source as a page writer
  would, with the program that raises the error and the fixed one, both run at the pinned commit;

and the two ways an annotation is dealt to a record it was not written for: a seeded derangement
over a library's annotated records (moved onto another record), and one within each function that
raises several of them (moved within one function). Nothing here touches the network.
"""

from __future__ import annotations

import random
import tarfile
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).parent
LIBRARIES = ("click", "attrs")


REAL = CORPUS / "real"
PARTS = ("working", "sealed", "sealed2", "sealed3", "sealed4", "sealed5", "sealed6")


def unpack(library: str, where: Path) -> tuple[dict[str, Any], Path]:
    """The own corpus's library, and the folder of its catalogue unpacked under `where`."""
    return unpack_file(CORPUS / f"{library}.yaml", where)


def unpack_file(corpus_file: Path, where: Path) -> tuple[dict[str, Any], Path]:
    """A corpus file, and the folder of its catalogue (named relative to the file) unpacked
    under `where`."""
    corpus = yaml.safe_load(corpus_file.read_text(encoding="utf-8"))
    with tarfile.open(corpus_file.parent / corpus["catalogue"]) as packed:
        packed.extractall(where, filter="data")
    return corpus, next(path.parent for path in where.rglob("manifest.yaml"))


def real_files(part: str) -> list[Path]:
    """Issue 50's corpus files of one part, `working` or a sealed set (`sealed` to `sealed6`), by
    library name."""
    if part not in PARTS:
        raise ValueError(f"no such half: {part}")
    return sorted((REAL / part).glob("*.yaml"))


def sibling_groups(items: list[dict[str, Any]]) -> list[list[str]]:
    """The ids of the annotated records raised by one function, for each function that raises
    more than one of them (by file and qualified name), in corpus order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        groups.setdefault((item["path"], item["qualname"]), []).append(item["id"])
    return [ids for ids in groups.values() if len(ids) > 1]


def within_functions(items: list[dict[str, Any]], seed: int) -> dict[str, str]:
    """Each record of a sibling group to another's of its group, seeded (`derangement` within
    each group): the annotations moved within one function."""
    deal: dict[str, str] = {}
    for number, ids in enumerate(sibling_groups(items)):
        deal.update(derangement(ids, seed * 1000 + number))
    return deal


def derangement(ids: list[str], seed: int) -> dict[str, str]:
    """Each id to another's, seeded: no record keeps its own annotation."""
    shuffled = list(ids)
    chooser = random.Random(seed)
    while any(a == b for a, b in zip(ids, shuffled, strict=True)):
        chooser.shuffle(shuffled)
    return dict(zip(ids, shuffled, strict=True))
