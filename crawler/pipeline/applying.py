"""What a run does with the sites it collected: merge them with the records on disk, run the
repository-wide passes (classes, evidence, entry points), and write records, manifest and
the lookup index."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from crawler.catalogue import callers, classes, factories, holdback, related, releases
from crawler.catalogue.manifest import build_manifest, check_same_repository
from crawler.catalogue.merge import MergeResult, SetAside, is_stale
from crawler.catalogue.regenerate import regenerate
from crawler.errors import OutputError
from crawler.git.diff import LineMap
from crawler.parse.outcomes import FileOutcome
from crawler.pipeline import cyclic_gc, entry_stage, evidence_stage
from crawler.pipeline.collecting import (
    Collected,
    earlier_local_folder,
    ids_in,
    ids_listed,
    ids_to_load,
    missing_ids,
    missing_notes,
    moves,
    output_folder,
    verify_rest,
)
from crawler.pipeline.stages import (
    CLASSES,
    MATCHING,
    WRITE_CHUNK,
    WRITING,
    Progress,
    RunResult,
    stage_callback,
)
from crawler.records import (
    REMOVED,
    ErrorRecord,
    Manifest,
    Pin,
    RaiseSite,
    Releases,
    Skipped,
)
from crawler.serve.lookup import index as lookup_index
from crawler.store import record_files, repo_output
from crawler.store.cache import LoadCache
from crawler.store.context import StoreContext
from crawler.store.held_folder import HeldFolder
from crawler.store.manifest_file import load_manifest, prime_manifest
from crawler.store.record_files import ERRORS_DIR
from crawler.store.render import SiteBlocks, manifest_text


def apply(collected: Collected, output_root: Path, *, dry_run: bool = False,
          previous: Manifest | None = None, wait: float = 0.0,
          store: StoreContext | None = None, progress: Progress | None = None,
          release: str | None = None) -> RunResult:
    """Merge what was collected into the repository's output folder: the driver's part.

    The whole read-merge-write runs under the folder's lock (shared for a dry run). A full run
    (nothing `kept`) loads every record; an update loads only the records the manifest lists for
    files that changed, went or came, and those in review, unless the repository's exception
    classes changed (a class default reaches into other files): then it merges everything.
    Records are the truth: leftovers of a killed run are removed, and a record file that cannot
    be loaded is left as it is, with its source file held back. The `store` context's loads keep
    the checked loads of record files across runs, and learn the files this run writes (see
    `load_cache`); its blocks hold the sites rendered ahead (see `collect`). `release` names
    the release tag the pin is, for `crawler history`; a folder that history built keeps its
    records' release history at every run (`releases.mark_step`).
    """
    started = time.perf_counter()
    store = store if store is not None else StoreContext()
    loads, held = store.loads, store.held  # held: a walk's records in memory, no file touched
    folder = output_folder(output_root, collected.pin)
    repo_output.check_folder(output_root, folder)  # no link or FIFO on the way to any write
    with repo_output.lock(folder, wait=wait, shared=dry_run):
        problem = None
        if previous is None and held is None:
            previous, problem = _manifest_or_note(folder, loads)
        check_same_repository(str(folder), previous, collected.pin)  # before anything is touched
        removed_temp = [] if dry_run or held else repo_output.clean_temp_files(folder)
        notes = [*collected.notes, *earlier_local_folder(output_root, collected.pin, previous)]
        notes.extend([f"{folder}: removed {len(removed_temp)} temp files left by an interrupted "
                      "run"] if removed_temp else [])
        notes.extend([problem] if problem else [])
        if previous is not None and previous.pin.sha == collected.pin.sha:
            # The same commit, maybe under another name or source spelling: nothing moved, so the
            # manifest keeps the pin it has (gaining the root an older one lacks, and taking
            # this run's web URL and permalink shape: the identity an older one lacked).
            collected = replace(collected, pin=replace(
                previous.pin, root=previous.pin.root or collected.pin.root,
                web_url=collected.pin.web_url, forge=collected.pin.forge))
        pinned = collected.pin
        resolved = class_pass(collected, previous, stage_callback(progress, CLASSES))
        notes.extend(f"{fault.path}: {fault.detail}" for fault in resolved.faults)
        cyclic_gc.settled()  # its sites live to the end, its call graph to the entry stage
        if collected.kept and collected.outcomes:
            collected = _reach_of_class_changes(collected, previous, resolved)
            collected = _reach_of_callee_changes(collected)
        full = not collected.kept
        visited = {o.path for o in collected.outcomes}
        sites = [s for s in resolved.sites if s.path in visited]
        missing = held.missing(previous) if held else missing_ids(folder, previous)
        if full or previous is None:
            loaded = (held.loaded() if held else
                      repo_output.load_folder(folder, manifest=previous, loads=loads))
            taken: set[str] = set()
        else:
            taken = (ids_listed(previous) | held.records.keys() if held else
                     ids_in(folder, previous)) - missing  # a deleted record's id may be remade
            # Records on disk that the manifest does not list were written by a run that stopped
            # before its manifest: they take part, so their sites do not get second records.
            orphans = taken - ids_listed(previous)
            wanted = ids_to_load(previous, collected) | orphans
            loaded = (held.loaded(wanted) if held else
                      repo_output.load_folder(folder, ids=wanted, manifest=previous, loads=loads))
        cyclic_gc.settled()  # the records loaded live to the end
        # Every other record file is checked as a full run would load it, so a broken one is
        # held back all the same: extract and update agree on every folder. (A held folder
        # loaded whole and whole, at the walk's start: nothing of it is on disk to check.)
        loaded, verified = (loaded, None) if held else verify_rest(folder, loaded, loads)
        plan = holdback.plan(loaded, pinned, sites)
        lines = _diff_from(collected, previous, notes, folder)
        merged = regenerate(pinned, plan, moves=moves(previous, collected), taken_ids=taken,
                            aside=_set_aside(collected, previous), full=full, assertions=None,
                            lines=lines)
        merged, walked = _release_step(merged, plan.existing, previous, pinned, release)
        unchanged = set() if full else set(merged.unchanged)
        matched, others = _match_tests(folder, collected, previous, merged, full, plan,
                                       loaded.records, loads, stage_callback(progress, MATCHING), held)
        # a record the merge left as it was whose evidence changed is written all the same
        unchanged -= {new.id for old, new in zip(merged.records, matched.records) if new is not old}
        merged = matched
        if not full:  # a full run's merge made every list (`regenerate`)
            records, others = related.refresh(
                merged.records, loaded.records, others, _kept_sites(resolved.sites, visited),
                {e.path: e.records for e in collected.kept if e.path not in plan.held},
                lambda ids: (held.loaded(ids) if held else repo_output.load_folder(
                    folder, ids=ids, manifest=previous, loads=loads)).records)
            unchanged -= {new.id for old, new in zip(merged.records, records) if new is not old}
            merged = replace(merged, records=tuple(records))
        records, others = entry_stage.refresh(
            collected.outcomes, collected.context, collected.previous_calls, full, previous,
            merged.records, others, lambda ids: (held.loaded(ids) if held else repo_output.load_folder(
                folder, ids=ids, manifest=previous, loads=loads)).records)
        unchanged -= {new.id for old, new in zip(merged.records, records) if new is not old}
        merged = replace(merged, records=tuple(records))
        manifest = build_manifest(collected, previous, [*merged.records, *plan.kept], resolved,
                                  loaded={r.id for r in loaded.records},
                                  extra_skipped=plan.skipped())
        manifest = _with_test_files(manifest, collected, previous, merged)
        if plan.held:
            manifest = replace(manifest, files=plan.files_with_held(manifest.files))
        manifest = replace(manifest, releases=walked)
        changes = [*(r for r in merged.records if r.id not in unchanged), *others]
        cyclic_gc.settled()  # the merge's records live to the end; the write makes many more
        if held is not None:  # a walk's step: kept for the next, written at its checkpoints
            written = held.keep(changes, manifest)
            pending = [f"{ERRORS_DIR}/{r.id}.yaml" for r in changes]
        else:
            written, pending = _write(folder, changes, manifest, merged, plan, loaded, verified,
                                      notes, store, dry_run, progress)
    notes.extend(missing_notes(folder, missing, merged.added, plan.reserved, dry_run))
    problems = [broken.problem for broken in loaded.broken]
    if plan.hold_all:
        problems.append(f"{folder}: a broken record could not be placed in a source file, so "
                        "nothing was written; fix it and run again")
    seconds = collected.seconds + time.perf_counter() - started
    return RunResult(pinned, folder, manifest, merged, written, seconds, tuple(problems),
                     tuple(notes), parsed=len(collected.outcomes), pending=tuple(pending),
                     stale=tuple(r for r in merged.records if is_stale(r) and r.status != REMOVED),
                     evidence=merged.evidence)


def _write(folder: Path, changes: Sequence[ErrorRecord], manifest: Manifest,
           merged: MergeResult, plan: holdback.Plan, loaded: repo_output.Loaded,
           verified: record_files.Verified | None, notes: list[str], store: StoreContext,
           dry_run: bool, progress: Progress | None) -> tuple[int, list[str]]:
    """`apply`'s writes: only the records whose text changes, each rendered once and its file
    read once, and the manifest; how many files were written, and the names pending."""
    loads = store.loads
    writes = _pending_writes(folder, changes, manifest_text(manifest), store.blocks,
                             stage_callback(progress, WRITING))
    written = 0
    if not dry_run and not plan.hold_all:
        written = repo_output.write_folder(folder, writes, plan.reserved, loads)
        if writes.manifest is not None and loads is not None:
            prime_manifest(loads, manifest, writes.manifest)  # the next update's first read
        notes.extend(refresh_lookup_index(folder, [*plan.kept, *merged.records]))
    if loads is not None and not dry_run and not plan.hold_all and verified is not None:
        record_files.remember_good_files(folder, loads, verified,
                                         {f"{r.id}.yaml" for r in loaded.records},
                                         {item.record.id for item in writes.records})
    return written, list(writes.names())


def refresh_lookup_index(folder: Path, records: Iterable[ErrorRecord]) -> list[str]:
    """The folder's lookup index, made or brought up to date with what was written (the
    records in memory stand for their files), so the first lookup reads no record: a note,
    never a failure, when it cannot be, since `lookup` builds it again. It is a cache whose
    bytes depend on the machine (file signatures): left out of git and of folder comparisons."""
    try:
        lookup_index.refresh(folder, {record.id: record for record in records})
    except (sqlite3.Error, OSError, OutputError) as error:  # OutputError: not the crawler's file
        return [f"{folder / lookup_index.INDEX_FILE}: the lookup index was not refreshed "
                f"({error}); `crawler lookup` rebuilds it"]
    return []


def _release_step(merged: MergeResult, existing: Iterable[ErrorRecord], previous: Manifest | None,
                  pinned: Pin, release: str | None) -> tuple[MergeResult, Releases | None]:
    """The records' release history moved on by this run, when it is a walk's step or the
    folder was built by one; records it changes are written even where the merge left them."""
    before = previous.releases if previous is not None else None
    if release is None and before is None:
        return merged, None
    step = releases.Step(release, pinned.sha, before or Releases())
    marked, walked = releases.mark_step(merged.records, {r.id: r for r in existing}, step)
    touched = {new.id for old, new in zip(merged.records, marked) if new is not old}
    return replace(merged, records=tuple(marked),
                   unchanged=tuple(i for i in merged.unchanged if i not in touched)), walked


def _kept_sites(sites: Iterable[RaiseSite], read: Collection[str]) -> dict[str, list[RaiseSite]]:
    """The class pass's sites of the files not read again, by path."""
    found: dict[str, list[RaiseSite]] = {}
    for site in sites:
        if site.path not in read:
            found.setdefault(site.path, []).append(site)
    return found


def _diff_from(collected: Collected, previous: Manifest | None, notes: list[str],
               folder: Path) -> LineMap | None:
    """Git's diff from the folder's commit, if it was made from that commit; else a note that
    the sites were paired by keys alone (the old commit was not at hand, or a batch worker)."""
    if previous is None or previous.pin.sha == collected.pin.sha or not collected.outcomes:
        return None
    lines = collected.lines
    if lines is not None and lines.old == previous.pin.sha:
        return lines
    notes.append(f"{folder}: " + (collected.no_diff or f"no git diff from {previous.pin.sha[:12]}: "
                                  "the sites whose lines did not change were paired by their keys"))
    return None


def _reach_of_class_changes(collected: Collected, previous: Manifest | None,
                            resolved: classes.Resolved) -> Collected:
    """Files not read again whose sites a changed exception class reaches, read as if changed.

    A class's entry holds what its raises take from it (its template, inherited through its
    bases, and its bases); a kept file that raises a class whose entry changed, by qualified or
    plain name (a re-export may spell it otherwise), is merged again with the changed files.
    """
    if previous is None:
        return replace(collected, outcomes=(*collected.outcomes, *collected.context), kept=(),
                       context=())
    before = {entry.get("qualname"): entry for entry in previous.exception_classes}
    after = {entry.get("qualname"): entry for entry in resolved.exception_classes}
    changed = {q for q in before.keys() | after.keys() if before.get(q) != after.get(q)}
    if not changed:
        return collected
    names = {str(q) for q in changed} | {str(q).rsplit(".", 1)[-1] for q in changed}

    def reached(outcome: FileOutcome) -> bool:
        for site in (*outcome.sites, *outcome.pending):
            written = site.exception_qualname or site.exception
            if written in names or written.rsplit(".", 1)[-1] in names:
                return True
        return False

    moved = [o for o in collected.context if reached(o)]
    if not moved:
        return collected
    paths = {o.path for o in moved}
    return replace(collected, outcomes=(*collected.outcomes, *moved),
                   kept=tuple(e for e in collected.kept if e.path not in paths),
                   context=tuple(o for o in collected.context if o.path not in paths))


def _reach_of_callee_changes(collected: Collected) -> Collected:
    """A kept file whose raise calls a function of a file read again is merged again with it:
    the function's new text is its template too (`factories.reached`)."""
    paths = factories.reached(collected.outcomes, collected.context) \
        | callers.reached(collected.outcomes, collected.context)
    if not paths:
        return collected
    return replace(collected,
                   outcomes=(*collected.outcomes, *(o for o in collected.context if o.path in paths)),
                   kept=tuple(e for e in collected.kept if e.path not in paths),
                   context=tuple(o for o in collected.context if o.path not in paths))


def class_pass(collected: Collected, previous: Manifest | None,
               progress: Callable[[int, int], None] | None = None) -> classes.Resolved:
    """The repository-wide class pass; with nothing read again, what the manifest says of it."""
    if collected.outcomes or not collected.kept or previous is None:
        files = [o for o in (*collected.outcomes, *collected.context) if o.failure is None]
        if progress is not None and files:
            progress(0, len(files))
        everything = [*collected.outcomes, *collected.context]  # the entry stage's graph too
        resolved = classes.resolve(callers.followed_files(
            factories.settled_files(files),
            lambda: entry_stage.graph_of(entry_stage.calls_in_order(everything))))
        if progress is not None and files:
            progress(len(files), len(files))
        passed = {o.path for o in files}  # a fault of a file the pass did not read stays listed
        resolved.faults.extend(_faults(previous, lambda s: s.path not in passed))
        return resolved
    raw = sum(entry.raises.without_message for entry in previous.files)
    return classes.Resolved(sites=[], exception_classes=list(previous.exception_classes),
                            from_pending=raw - previous.counts.raises.without_message,
                            faults=_faults(previous, lambda s: True))


def _faults(previous: Manifest | None, kept: Callable[[Skipped], bool]) -> list[Skipped]:
    """The class pass's faults a previous run listed, those `kept` says."""
    return [s for s in previous.skipped if s.reason == classes.ANALYSIS_FAILED and kept(s)] \
        if previous is not None else []


def _match_tests(folder: Path, collected: Collected, previous: Manifest | None,
                 merged: MergeResult, full: bool, plan: holdback.Plan, loaded: Sequence[ErrorRecord],
                 loads: LoadCache | None, progress: Callable[[int, int], None] | None,
                 held: HeldFolder | None = None) -> tuple[MergeResult, tuple[ErrorRecord, ...]]:
    """The merge with each record's test evidence matched, and the records outside the merge
    whose evidence changed (an update's). With the tests not read, or an update whose tests and
    sources did not change (`evidence_stage.needs_refresh`), nothing is matched. An update
    loads the folder's other records only when they can be concerned: the tests changed, or an
    assertion names the exception of a record the merge changed (`loaded` are their old forms).
    """
    digest = collected.evidence_digest
    if not collected.tests_read or digest is None or not (
            full or evidence_stage.needs_refresh(previous, digest, bool(collected.outcomes))):
        return merged, ()
    others: list[ErrorRecord] = []
    if not full and previous is not None and (
            evidence_stage.tests_changed(previous, digest) or evidence_stage.names_tested(
                collected.assertions, [*merged.records, *loaded])):
        # the folder's other records take part in the fits
        inside = {r.id for r in merged.records} | plan.reserved
        ids = {i for entry in previous.files if entry.path not in plan.held
               for i in entry.records} - inside
        others = list((held.loaded(ids) if held else repo_output.load_folder(
            folder, ids=ids, manifest=previous, loads=loads)).records)
    refreshed = evidence_stage.refresh_evidence(merged.records, others, collected.assertions,
                                                progress)
    return replace(merged, records=refreshed.records, evidence=refreshed.stats), refreshed.others


def _with_test_files(manifest: Manifest, collected: Collected, previous: Manifest | None,
                     merged: MergeResult) -> Manifest:
    """The manifest with the test files that crashed and the digest of the evidence; a run that
    did not read the tests keeps the previous ones (the digest only while no record changed)."""
    cut = evidence_stage.patterns_cut(merged.evidence, previous)
    if collected.tests_read:
        return evidence_stage.with_test_files(manifest, collected.tests_crashed,
                                              collected.evidence_digest, cut)
    changed = merged.added or merged.moved or merged.changed or merged.removed or merged.revived
    digest = previous.evidence_digest if previous is not None and not changed else None
    return evidence_stage.with_test_files(manifest, evidence_stage.previous_crashed(previous),
                                          digest, cut)


def _pending_writes(folder: Path, records: Sequence[ErrorRecord], manifest: str,
                    blocks: SiteBlocks | None, progress: Callable[[int, int], None] | None
                    ) -> repo_output.PendingWrites:
    """`repo_output.pending_writes`, a chunk of records at a time, reported as it goes."""
    if progress is None or len(records) <= WRITE_CHUNK:
        return repo_output.pending_writes(folder, records, manifest, blocks)
    texts: list[repo_output.RecordText] = []
    for start in range(0, len(records), WRITE_CHUNK):
        chunk = repo_output.pending_writes(folder, records[start:start + WRITE_CHUNK], manifest,
                                           blocks)
        texts.extend(chunk.records)
        progress(min(start + WRITE_CHUNK, len(records)), len(records))
    return replace(chunk, records=tuple(texts))


def _manifest_or_note(folder: Path, loads: LoadCache | None = None
                      ) -> tuple[Manifest | None, str | None]:
    """The folder's manifest; a broken one is only a note, since records are the truth."""
    try:
        return load_manifest(folder, loads), None
    except OutputError as error:
        return None, f"{error}; it will be rebuilt from the records"


def _set_aside(collected: Collected, previous: Manifest | None) -> SetAside:
    """Records the merge carries as they are: of files that failed, and in review unread."""
    return SetAside(failed_paths=frozenset(o.path for o in collected.outcomes if o.failure is not None),
                    unread_paths=frozenset(entry.path for entry in collected.kept),
                    in_review=frozenset(previous.needs_review if previous is not None else ()))
