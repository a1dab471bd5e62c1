"""The annotation corpus, shared by tests/serve/review/test_annotation_fit.py and
scripts/annotation_fit_rates.py: hand-written annotations of click and attrs records
(click.yaml, attrs.yaml) with the catalogues they were written for (catalogues/*.tar.xz), and
the seeded derangement that deals each record another's annotation. Nothing here touches the
network.
"""

from __future__ import annotations

import random
import tarfile
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).parent
LIBRARIES = ("click", "attrs")


def unpack(library: str, where: Path) -> tuple[dict[str, Any], Path]:
    """The library's corpus, and the folder of its catalogue unpacked under `where`."""
    corpus = yaml.safe_load((CORPUS / f"{library}.yaml").read_text(encoding="utf-8"))
    with tarfile.open(CORPUS / corpus["catalogue"]) as packed:
        packed.extractall(where, filter="data")
    return corpus, next(path.parent for path in where.rglob("manifest.yaml"))


def derangement(ids: list[str], seed: int) -> dict[str, str]:
    """Each id to another's, seeded: no record keeps its own annotation."""
    shuffled = list(ids)
    chooser = random.Random(seed)
    while any(a == b for a, b in zip(ids, shuffled, strict=True)):
        chooser.shuffle(shuffled)
    return dict(zip(ids, shuffled, strict=True))
