"""The JSON export: a folder a static site reads without a database.

    TARGET/index.json                    the repositories, each with where its listing is
    TARGET/repos/<host>/<owner>/<name>.json   one repository's records: id, url, kind, annotated...
    TARGET/errors/<id>.json              each record's whole document (schemas/record.schema.json)

The index is split by repository so that a site's page for one library loads that library's
listing only (jax-ml/jax alone lists 5,400 records). Files whose content is already right are
not rewritten; files of an earlier export that no longer belong are removed, and only those.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crawler.errors import OutputError
from crawler.records import SCHEMA_VERSION, ErrorRecord
from crawler.serve.export import target as export_target
from crawler.serve.export.data import (
    EXPORT_SCHEMA_VERSION,
    Repository,
    json_file,
    record_document,
    records_of,
)
from crawler.store.atomic import sync_folder, write_atomic
from crawler.store.plain_files import refuse_links_below, text_or_none

REPOS_DIR = "repos"
_ID_FILE = re.compile(r"[0-9a-f]{16}\.json\Z")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+\Z")


def listing_path(repository: Repository) -> str:
    """Where a repository's listing goes, relative to the export: repos/<host>/<owner>/<name>.json.

    Built from the manifest's names, each checked to be a plain name (a manifest edited by hand
    must not send a write out of the folder).
    """
    pin = repository.manifest.pin
    parts = [pin.host, *pin.owner.split("/"), pin.name]
    for part in parts:
        if not _PLAIN_NAME.match(part) or part in (".", ".."):
            raise OutputError(f"{repository.folder / 'manifest.yaml'}: names the repository "
                              f"{pin.slug!r}, which is no folder name an export can use; run "
                              "`crawler extract` again to rebuild the manifest")
    return "/".join([REPOS_DIR, *parts[:-1], f"{parts[-1]}.json"])


def index_entry(record: ErrorRecord, repository: Repository) -> dict[str, Any]:
    """A record as a repository's listing names it."""
    site = record.site
    return {"id": record.id, "url": record.url, "kind": site.message.kind,
            "annotated": not record.annotation.is_empty, "exception": site.exception,
            "exception_class": site.exception_qualname or site.exception,
            "template": site.message.template, "status": record.status, "path": site.path,
            "line": site.line, "repo": repository.repo}


def _header() -> dict[str, Any]:
    return {"schema_version": EXPORT_SCHEMA_VERSION, "record_schema_version": SCHEMA_VERSION}


def repository_listing(repository: Repository) -> dict[str, Any]:
    """One repository's listing: its pin and every record's entry, in id order."""
    pin = repository.manifest.pin
    return {**_header(), "repo": repository.repo, "web_url": pin.web_url, "commit": pin.sha,
            "ref": pin.ref, "records": [index_entry(r, repository) for r in repository.records]}


def index_document(repositories: Sequence[Repository]) -> dict[str, Any]:
    """The listing of the repositories, with where each one's records are listed."""
    return {**_header(), "repositories": [
        {"repo": r.repo, "web_url": r.manifest.pin.web_url, "forge": r.manifest.pin.forge,
         "commit": r.manifest.pin.sha, "ref": r.manifest.pin.ref,
         "records": r.manifest.counts.records, "removed": r.manifest.counts.removed,
         "annotated": sum(not x.annotation.is_empty for x in r.records),
         "listing": listing_path(r)}
        for r in repositories]}


def export_json(repositories: Sequence[Repository], target: Path) -> int:
    """Write the folder; returns how many records."""
    errors, repos = target / "errors", target / REPOS_DIR
    refuse_links_below(target, errors)  # its writes stay in the folder given
    listings = {listing_path(r): r for r in repositories}
    for relative in listings:
        refuse_links_below(target, (target / relative).parent)
    errors.mkdir(parents=True, exist_ok=True)
    wanted: set[str] = set()
    for _, record in records_of(repositories):
        wanted.add(f"{record.id}.json")
        _write_if_changed(errors / f"{record.id}.json", json_file(record_document(record)))
    for stale in sorted(errors.iterdir()):
        if _ID_FILE.match(stale.name) and stale.name not in wanted:
            stale.unlink()
    for relative, repository in listings.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        _write_if_changed(target / relative, json_file(repository_listing(repository)))
    _remove_stale_listings(target, repos, set(listings))
    _write_if_changed(target / "index.json", json_file(index_document(repositories)))
    sync_folder(errors)
    return len(wanted)


def _remove_stale_listings(target: Path, repos: Path, wanted: set[str]) -> None:
    """Listings an earlier export wrote for repositories no longer exported (ours only)."""
    if not repos.is_dir() or repos.is_symlink():
        return
    for folder, folders, files in os.walk(repos):
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(folder, f))]
        for name in files:
            path = Path(folder, name)
            relative = path.relative_to(target).as_posix()
            if (name.endswith(".json") and relative not in wanted and not path.is_symlink()
                    and export_target.written_by_crawler(path)):
                path.unlink()


def _write_if_changed(path: Path, text: str) -> None:
    if text_or_none(path) != text:  # a link or a FIFO is never read, and refused by the write
        write_atomic(path, text)
