"""The manifest of a repository folder, `manifest.yaml`: loading and writing it.

The manifest is derived from the records and written after them; an update reads it first of
all, so a `LoadCache` keeps its checked load (kind `manifest`, no annotation block).
"""

from __future__ import annotations

from pathlib import Path

from crawler.records import Manifest
from crawler.store import atomic, schemas
from crawler.store.cache import MANIFEST as MANIFEST_KIND
from crawler.store.cache import LoadCache
from crawler.store.documents import Unsure, as_read_back, manifest_data, manifest_from_data
from crawler.store.plain_files import lstat_or_none
from crawler.store.record_files import holds
from crawler.store.render import manifest_text
from crawler.store.safe_yaml import read_capped, safe_load_text, yaml_text

MANIFEST = "manifest.yaml"


def load_manifest(root: Path, loads: LoadCache | None = None) -> Manifest | None:
    """The manifest of a repository folder, or None when there is none yet.

    With `loads`, bytes that passed every check before (as the manifest a run wrote, see
    `prime_manifest`) are not checked again: a fifth of the time, for the first thing an update
    reads.
    """
    path = root / MANIFEST
    if lstat_or_none(path) is None:  # a link, even a dangling one, is there: refused by the read
        return None
    raw = read_capped(path)
    if loads is not None and (checked := loads.get(raw, MANIFEST_KIND)) is not None:
        try:
            return manifest_from_data(checked[0])
        except (KeyError, TypeError, ValueError, AttributeError):
            loads.spoiled()
    data = safe_load_text(yaml_text(raw, str(path)), str(path))
    if not schemas.quick_valid(data, "manifest"):
        schemas.validate(data, "manifest", str(path))
    manifest = manifest_from_data(data)
    if loads is not None:
        loads.put(raw, (data, None), kind=MANIFEST_KIND)
        loads.flush()
    return manifest


def prime_manifest(loads: LoadCache, manifest: Manifest, text: str) -> None:
    """Store what a checked load of `text`, the file `manifest_text(manifest)` made, finds."""
    try:
        data = as_read_back(manifest_data(manifest))
    except Unsure:
        return
    if schemas.quick_valid(data, "manifest"):
        loads.put(text.encode("utf-8"), (data, None), plain=True, kind=MANIFEST_KIND)
        loads.flush()


def read_back_manifest(manifest: Manifest) -> Manifest:
    """The manifest as a load of its file (`manifest_text(manifest)`) gives it back: what a
    walk hands to its next step (see `held_folder`)."""
    try:
        return manifest_from_data(as_read_back(manifest_data(manifest)))
    except Unsure:  # what cannot be vouched for is read back the long way
        return manifest_from_data(safe_load_text(manifest_text(manifest), MANIFEST))


def write_manifest(root: Path, manifest: Manifest | str, *, compared: bool = False) -> bool:
    """Write the manifest (or its text, made already) unless the file holds exactly that.

    With `compared`, the caller found the file to hold another text already: it is not read.
    """
    path = root / MANIFEST
    text = manifest if isinstance(manifest, str) else manifest_text(manifest)
    if not compared and holds(path, text):
        return False
    atomic.write_atomic(path, text)
    return True
