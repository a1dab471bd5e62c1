"""One run's regeneration of a repository's records, whole: the merge, then what derives from it.

The plan's records and sites are merged (`merge`); on a full run, every record is there, so
related errors and (when the tests were read) test evidence are set over all of them. An update
that reads only the changed files sets them after the merge, over the records they can concern
(`crawler.pipeline.applying`: `related.refresh`, `evidence_stage`, `entry_stage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from crawler.catalogue.evidence import EvidenceStats, match_evidence
from crawler.catalogue.holdback import Plan
from crawler.catalogue.merge import MergeResult, PathMoves, SetAside, merge
from crawler.catalogue.related import related_records, with_derived
from crawler.git.diff import LineMap
from crawler.records import Pin, TestAssertion


def regenerate(pin: Pin, plan: Plan, *, moves: PathMoves, taken_ids: Iterable[str],
               aside: SetAside, full: bool, assertions: Sequence[TestAssertion] | None,
               lines: LineMap | None = None) -> MergeResult:
    """The next records of the plan's files; `assertions` None: the tests were not read.

    `taken_ids` are the ids in use in the output folder; the plan's reserved ones are added.
    `lines`: git's diff from the previous pin, when the old commit was at hand.
    """
    merged = merge(pin, plan.existing, plan.sites, moves=moves,
                   taken_ids={*taken_ids, *plan.reserved}, aside=aside, lines=lines)
    if not full:
        return merged
    stats = EvidenceStats() if assertions is not None else None
    evidence = match_evidence(merged.records, assertions, stats) if assertions is not None else None
    records = with_derived(merged.records, related_records(merged.records), evidence)
    return replace(merged, records=tuple(records), evidence=stats)
