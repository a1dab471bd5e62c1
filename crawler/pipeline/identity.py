"""The identity `update` and `history` go on with: the one a folder's manifest holds.

`extract --name` or `--web-url` gives a repository an identity its source alone does not: the
folder it writes (HOST/OWNER/NAME) and the records' permalinks. A later run given the source
alone would look for another folder. When that folder holds no manifest, the manifests under
the output root say where this repository's records are: one of this repository (its first
commit, else its web page) is the identity to go on with. An option
given that names another identity than that manifest's is refused in one line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from crawler.errors import CrawlerError, OutputError
from crawler.records import Manifest, Pin
from crawler.store.cache import LoadCache
from crawler.store.manifest_file import MANIFEST, load_manifest


def same_repository(held: Pin, pin: Pin) -> bool:
    """Do the records of a folder pinned as `held` belong to `pin`'s repository, for sure? Its
    first commit says so, else its web page; a source as typed (`.`) or a manifest older than
    the first commit's field cannot tell, and is not taken."""
    if held.root and pin.root:
        return held.root == pin.root
    return bool(held.web_url and pin.web_url and held.web_url.lower() == pin.web_url.lower())


def known_folders(output_root: Path, pinned: Pin,
                  loads: LoadCache | None = None) -> list[tuple[Path, Manifest]]:
    """The repository folders under `output_root` whose manifest is `pinned`'s repository's,
    in path order. A manifest that cannot be read is passed over: `validate` names it."""
    found = []
    for path in sorted(output_root.rglob(MANIFEST)):
        try:
            manifest = load_manifest(path.parent, loads)
        except CrawlerError:
            continue
        if manifest is not None and same_repository(manifest.pin, pinned):
            found.append((path.parent, manifest))
    return found


def with_identity(pinned: Pin, held: Pin) -> Pin:
    """`pinned` under the identity a manifest holds: its folder, web page and permalinks."""
    return replace(pinned, host=held.host, owner=held.owner, name=held.name,
                   web_url=held.web_url, forge=held.forge)


def from_manifests(output_root: Path, folder: Path, pinned: Pin, *, given: bool,
                   loads: LoadCache | None = None) -> tuple[Pin, Path, Manifest] | None:
    """Where `folder` (the identity from the source, and the options `given` or not) holds no
    manifest: this repository's one folder under `output_root` and its identity; None when
    there is none. Refused in one line when the options given name another identity than the
    one the repository's records have, or when several folders hold its records."""
    found = known_folders(output_root, pinned, loads)
    if not found:
        return None
    if len(found) > 1:
        listed = ", ".join(str(path) for path, _ in found)
        raise OutputError(f"[{pinned.repo}] no records in {folder}, and this repository's are in "
                          f"{len(found)} folders ({listed}): give --name (or --web-url) of the "
                          "one to update")
    path, manifest = found[0]
    if given:
        held = manifest.pin
        raise OutputError(f"[{pinned.repo}] --name/--web-url name {pinned.slug}, but this "
                          f"repository's records are in {path} (identity {held.slug}"
                          f"{', ' + held.web_url if held.web_url else ''}): leave the options "
                          "out to update them there, or give the ones `extract` was given")
    return with_identity(pinned, manifest.pin), path, manifest
