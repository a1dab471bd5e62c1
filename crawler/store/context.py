"""What a run shares with the store, made by the caller and passed down, never held globally.

As LibCST passes a `CodemodContext`: one `StoreContext` for one run of one repository (the batch
driver makes one for each, sharing its `LoadCache`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.store.cache import LoadCache
from crawler.store.held_folder import HeldFolder
from crawler.store.render import SiteBlocks


@dataclass(frozen=True)
class StoreContext:
    """The checked loads kept across runs (None: every load in full) and the site blocks
    rendered ahead while the workers parse. With `held`, a walk's step reads and keeps its
    records in memory instead of the folder's files (see `held_folder`)."""

    loads: LoadCache | None = None
    blocks: SiteBlocks = field(default_factory=SiteBlocks)
    held: HeldFolder | None = None
