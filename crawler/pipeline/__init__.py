"""The stages in order: pin, select files, visit them (in worker processes), merge, store.

This package owns a run's flow, and only the flow: `extract`, `update` and `history` as
sequences of the other packages' stages, with the stages that belong to no other package
(which files a run reads, when test evidence and entry points are refreshed, how a run is
stopped). It prints nothing: progress goes to the callback the caller gives, and what a run did
comes back as a `RunResult` (the folder, the manifest, and the merge's ids by what happened).
Reading (`collecting`, in worker processes) is kept apart from merging and writing (`applying`,
in the one process that holds the folder's lock), so a batch can read on a cluster and write
on its driver.

The contract, in one example (a script, not a doctest: it needs a git repository and starts
worker processes). A repository `lib` whose `pkg/mod.py` raises three messages is extracted;
then a commit swaps two checks, rewords one message and drops one, and `update` moves the
folder to it:

    from pathlib import Path
    from crawler.pipeline import extract, update

    first = extract("lib", output_root=Path("out"), name="acme/lib", jobs=1)
    first.folder, first.merged.added, first.files_written
    # (PosixPath('out/local/acme/lib'),
    #  ('90467943a1b39c99', '4ca6959e74317970', '6c11530da22d271d'), 4)
    ...  # commit v2
    second = update("lib", ref="HEAD", output_root=Path("out"), name="acme/lib", jobs=1)
    second.parsed, second.merged.moved, second.merged.changed, second.merged.removed
    # (1, ('4ca6959e74317970',), ('90467943a1b39c99',), ('6c11530da22d271d',))
    dict(second.merged.matched_by)
    # {'4ca6959e74317970': 0, '90467943a1b39c99': 4}

The moved message kept its record through git's diff (step 0), the reworded one through the
best assignment (step 4, now `needs_review`), the dropped one is `removed` with its annotation;
three record files and the manifest were written (4). docs/design.md gives the stages in order.

One module a flow:

- `stages`: the stages a run reports progress on, and what a run returns (`RunResult`);
- `selection`: which of a commit's files a run reads, which it passes over and why, which are
  tests;
- `collecting`: a repository read into sites (the whole checkout, or the files changed since
  the folder's commit), with the tests read for evidence, and which existing records a run
  loads and what it says of the missing (`ids_to_load`, `missing_notes`);
- `applying`: the sites merged with the records on disk, the repository-wide passes, and the
  writes (records, manifest, lookup index);
- `evidence_stage` and `entry_stage`: when test evidence and entry points are read and set;
- `identity`: the identity `update` and `history` go on with, from the folder's manifest;
- `extract_run`, `update_run` and `history_run`: the `extract`, `update` and `history`
  commands' flows; `walk_steps`: a history walk's steps on a folder held in memory;
- `cyclic_gc`: the collector off during a run, and frozen over what lived before it. (SIGINT
  and SIGTERM end every run the same way through `crawler.errors.sigterm_raises`.)

May import: `crawler.records`, `crawler.errors`, `crawler.regexes`, `crawler.git`,
`crawler.parse`, `crawler.store`, `crawler.callgraph`, `crawler.catalogue`, and
`crawler.serve` for the lookup index a run writes beside its records (built from lookup's
own wordings, so that a wording has one definition).
Line budget: 2,500 lines.
"""

from __future__ import annotations

from crawler.pipeline.applying import apply, class_pass
from crawler.pipeline.collecting import (
    Collected,
    collect,
    collect_changes,
    load_cache,
    load_existing,
    output_folder,
    read_tests,
    result_cache,
    visit_files,
)
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
