"""The stages in order: pin, select files, visit them (in worker processes), merge, store.

This package only wires the stages together; each stage lives in its own package. It prints
nothing: progress goes to the callback the caller gives. One module a flow:

- `stages`: the stages a run reports progress on, and what a run returns (`RunResult`);
- `collecting`: a repository read into sites (the whole checkout, or the files changed since
  the folder's commit), with the tests read for evidence;
- `applying`: the sites merged with the records on disk, the repository-wide passes, and the
  writes (records, manifest, lookup index);
- `existing`: which existing records a run loads, and what it says of the missing;
- `extract_run` and `update_run`: the `extract` and `update` commands' flows;
- `walk_steps`: the steps of a `crawler history` walk on a folder held in memory.
"""

from __future__ import annotations

from crawler.pipeline.applying import apply, class_pass
from crawler.pipeline.collecting import (
    Collected,
    collect,
    collect_changes,
    load_cache,
    output_folder,
    read_tests,
    result_cache,
    visit_files,
)
from crawler.pipeline.existing import load_existing
from crawler.pipeline.extract_run import extract
from crawler.pipeline.stages import (
    CLASSES,
    EVIDENCE,
    MATCHING,
    PARSING,
    STAGES,
    WRITE_CHUNK,
    WRITING,
    Progress,
    RunResult,
)
from crawler.pipeline.update_run import update
from crawler.pipeline.walk_steps import collect_held, write_held

__all__ = ["CLASSES", "EVIDENCE", "MATCHING", "PARSING", "STAGES", "WRITE_CHUNK", "WRITING",
           "Collected", "Progress", "RunResult", "apply", "class_pass", "collect",
           "collect_changes", "collect_held", "extract", "load_cache", "load_existing",
           "output_folder", "read_tests", "result_cache", "update", "visit_files", "write_held"]
