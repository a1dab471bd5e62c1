"""What each command reports: one frozen summary type per command, built from the library's results.

Each gives its JSON form (`to_json`) and its human lines (`lines`: text, or a rich table); the
command line alone prints them. Keys and wording here are the command line's output contract.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from crawler.cli.terminal import one_line

if TYPE_CHECKING:  # the stages and rich load when a command runs: `crawler lookup` stays quick
    from rich.table import Table

    from crawler.batch.driver import BatchResult, RepoResult
    from crawler.pipeline import RunResult
    from crawler.pipeline.history_run import HistoryResult, TagStep
    from crawler.records import TagMove
    from crawler.serve.review.checks import Mismatch, Review
    from crawler.store.adoption import Adoption

Line: TypeAlias = "str | Table"  # a text line, or a table printed through rich

CHANGES = (  # MergeResult's lists of ids, in the order the summaries give them
    ("added", "new raise sites"),
    ("moved", "same message, new line, place or code around it"),
    ("changed", "message reworded: needs_review"),
    ("removed", "site gone; kept with its annotation"),
    ("revived", "site back; same id and annotation"),
    ("cleared", "review done: written_for is the current message"),
)


def _dumps(data: Any, ascii_only: bool = True) -> str:
    return json.dumps(data, indent=2, ensure_ascii=ascii_only)


def _run_fields(result: RunResult, dry_run: bool, middle: Mapping[str, Any]) -> dict[str, Any]:
    """The keys extract and update share, around the ones that are theirs."""
    return {
        "repo": result.pin.repo,
        "ref": result.pin.ref,
        "commit": result.pin.sha,
        "folder": str(result.folder),
        "files": result.manifest.counts.files,
        **middle,
        "seconds": round(result.seconds, 3),
        "dry_run": dry_run,
        "problems": list(result.problems),
        "notes": list(result.notes),
    }


def _crashed(result: RunResult) -> int:
    """Test files whose read for evidence crashed its worker or timed out (manifest entries)."""
    return sum(1 for s in result.manifest.skipped if s.reason == "evidence_crashed")


def _evidence_trouble(result: RunResult) -> Iterator[str]:
    """What the tests cost the evidence, said only when something was lost."""
    cut = result.evidence.cut if result.evidence else 0
    crashed = _crashed(result)
    if cut:
        yield (f"{cut} test patterns cut by their step bound (no evidence from them): a match= or "
               "assertRaisesRegex pattern that can backtrack without end (the manifest counts them)")
    if crashed:
        yield (f"{crashed} test files crashed the parser or ran out of time; their evidence is "
               "missing: the manifest lists them as evidence_crashed")


@dataclass(frozen=True)
class ExtractSummary:
    """`extract`: the pin, the files read, and how many records each kind of change touched."""

    result: RunResult
    dry_run: bool

    def to_json(self) -> str:
        result, counts = self.result, self.result.manifest.counts
        evidence = result.evidence
        return _dumps(_run_fields(result, self.dry_run, {
            "parsed": counts.parsed,
            "skipped": counts.skipped,
            "records": counts.records,
            **{key: len(getattr(result.merged, key)) for key, _ in CHANGES[:5]},
            "files_written": result.files_written,
            "test_assertions": evidence.assertions if evidence else None,
            "records_with_evidence": evidence.records if evidence else None,
            "test_patterns_cut": evidence.cut if evidence else None,
            "test_files_crashed": _crashed(result),
        }))

    def lines(self) -> Iterator[Line]:
        result, counts = self.result, self.result.manifest.counts
        changed = ", ".join(f"{len(getattr(result.merged, key))} {key}" for key, _ in CHANGES[:5])
        written = ("nothing written (dry run)" if self.dry_run
                   else f"{result.files_written} files written to {result.folder}")
        yield (f"{result.pin.repo} @ {result.pin.sha[:12]} ({result.pin.ref}): "
               f"{counts.records} records ({changed}) from {counts.parsed} of {counts.files} files, "
               f"{counts.skipped} skipped; {written} in {result.seconds:.1f}s")
        yield from _evidence_trouble(result)


@dataclass(frozen=True)
class UpdateSummary:
    """`update`: the ids each kind of change touched, stale annotations, the files to write."""

    result: RunResult
    dry_run: bool  # true with --check too: nothing is written
    check_only: bool

    def to_json(self) -> str:
        result = self.result
        return _dumps(_run_fields(result, self.dry_run, {
            "files_read_again": result.parsed,
            "records": result.manifest.counts.records,
            **{key: sorted(getattr(result.merged, key)) for key, _ in CHANGES},
            "stale_annotations": [{"id": r.id, "written_for": r.annotation.written_for,
                                   "template": r.site.message.template} for r in result.stale],
            "files_to_write": list(result.pending),
            "files_written": result.files_written,
            "paired_by": dict(result.merged.paired_by),  # why each record that moved was paired
            "git_diff": result.merged.diff_used,
            "records_with_evidence": result.evidence.records if result.evidence else None,
            "test_patterns_cut": result.evidence.cut if result.evidence else None,
            "test_files_crashed": _crashed(result),
        }))

    def findings(self) -> Iterator[Line]:
        """What `-q` still prints: the stale annotations, and with --check a stale folder."""
        yield from self._stale_annotations()
        if self.check_only and self.result.pending:
            yield f"stale: {len(self.result.pending)} files would change"

    def _stale_annotations(self) -> Iterator[str]:
        for stale in self.result.stale:
            yield (f"stale annotation {stale.id}: written for {stale.annotation.written_for!r}, "
                   f"the message is now {stale.site.message.template!r}")

    def lines(self) -> Iterator[Line]:
        result, pending = self.result, self.result.pending
        yield (f"{result.pin.repo} @ {result.pin.sha[:12]} ({result.pin.ref}): "
               f"{result.manifest.counts.records} records; {result.parsed} of "
               f"{result.manifest.counts.files} files read again in {round(result.seconds, 3):.2f}s")
        from rich.table import Table

        table = Table("change", "records", "ids", "meaning")
        for key, meaning in CHANGES:
            ids = sorted(getattr(result.merged, key))
            shown = " ".join(ids[:4]) + (f" (+{len(ids) - 4})" if len(ids) > 4 else "")
            table.add_row(key, str(len(ids)), shown, meaning)
        yield table
        yield from self._stale_annotations()
        by_id = {r.id: r for r in result.merged.records}
        for record_id, why in result.merged.paired_by.items():
            if by_id[record_id].status == "needs_review":  # a pair a person must look at
                yield f"paired {record_id}: {why}"
        yield from _evidence_trouble(result)
        if self.check_only:
            yield f"stale: {len(pending)} files would change" if pending else "up to date"
        elif self.dry_run:
            yield f"dry run: {len(pending)} files would change, nothing written"
        else:
            yield f"{result.files_written} files written to {result.folder}"


@dataclass(frozen=True)
class BatchSummary:
    """`batch`: one line per repository, in the order of the batch file."""

    result: BatchResult

    def to_json(self) -> str:
        repos = [{
            "index": r.entry.index, "source": r.entry.source, "ref": r.entry.ref,
            "repo": r.pin.repo if r.pin else None, "commit": r.pin.sha if r.pin else None,
            "folder": str(r.folder) if r.folder else None, "status": r.status,
            "records": r.records, "added": r.added, "changed": r.changed, "removed": r.removed,
            "files": r.files, "files_written": r.files_written, "seconds": round(r.seconds, 3),
            "error": r.error, "tasks": r.tasks, "workers_lost": r.workers_lost,
            "retries": r.retries, "seconds_lost": round(r.seconds_lost, 3),
        } for r in self.result.results]
        return _dumps({"scheduler": self.result.scheduler, "seconds": round(self.result.seconds, 3),
                       "failed": len(self.result.failed), "files": self.result.files,
                       "workers_lost": sum(r.workers_lost for r in self.result.results),
                       "repos": repos})

    def lines(self) -> Iterator[Line]:
        result = self.result
        from rich.table import Table
        from rich.text import Text

        # tasks (and lost workers) only when some repository was split or lost one: 80 columns
        split = any(r.tasks > 1 or r.workers_lost for r in result.results)
        lost = any(r.workers_lost for r in result.results)
        table = Table(title=f"{len(result.results)} repositories on {result.scheduler}, "
                            f"{result.files} files parsed in {result.seconds:.1f}s",
                      title_justify="left", caption="changes: +added ~changed -removed records"
                      + ("; tasks, N lost Ts: N workers died under them after T s of work"
                         if lost else ""),
                      caption_justify="left")
        table.add_column("repository", overflow="fold", min_width=10 if split else 16)
        table.add_column("sha", no_wrap=True)
        for column in ("records", "changes", *("tasks",) * split, "time"):
            table.add_column(column, justify="right", no_wrap=column != "tasks")
        table.add_column("status", no_wrap=not split)
        style = {"done": "green", "up to date": "dim", "failed": "bold red"}
        for r in result.results:
            failed = r.status == "failed"
            table.add_row(Text(one_line(r.pin.repo if r.pin else r.entry.source)),
                          r.pin.sha[:8] if r.pin else "", "" if failed else str(r.records),
                          "" if failed else f"+{r.added} ~{r.changed} -{r.removed}",
                          *(_tasks(r),) * split, f"{r.seconds:.1f}s",
                          Text(r.status, style=style[r.status]))
        yield table


def _tasks(result: RepoResult) -> str:
    """A repository's tasks, and the workers that died under them with the work they lost."""
    lost = f", {result.workers_lost} lost {result.seconds_lost:.1f}s" if result.workers_lost else ""
    return f"{result.tasks}{lost}"


@dataclass(frozen=True)
class ValidateSummary:
    """`validate`: how many record and manifest files were checked, and what is wrong in them."""

    checked: int
    problems: tuple[str, ...]

    @classmethod
    def of_folder(cls, folder: Path) -> ValidateSummary:
        """Every repository folder under `folder`: its records and its manifest, against the schemas."""
        from crawler.serve.review.checks import validate_output

        checked, problems = validate_output(folder)
        return cls(checked, tuple(problems))

    def to_json(self) -> str:
        return _dumps({"checked": self.checked, "problems": list(self.problems)}, ascii_only=False)

    def lines(self) -> Iterator[Line]:
        yield f"{self.checked} files checked, {len(self.problems)} problems"


@dataclass(frozen=True)
class CheckSummary:
    """`check`: records whose annotation may not fit their message, annotations left on removed
    records with their likeliest successors, adoptions left half done, and unreadable files."""

    review: Review

    def to_json(self) -> str:
        review = self.review
        return _dumps({
            "checked": review.checked,
            "findings": [{"path": str(f.path), "id": f.record.id, "status": f.record.status,
                          "written_for": f.record.annotation.written_for,
                          "template": f.record.site.message.template} for f in review.findings],
            "orphans": [{"path": str(o.path), "id": o.record.id,
                         "written_for": o.record.annotation.written_for,
                         "template": o.record.site.message.template,
                         "successors": [{"id": s.record.id, "path": s.record.site.path,
                                         "line": s.record.site.line,
                                         "template": s.record.site.message.template,
                                         "score": s.score, "why": s.resemblance.why()}
                                        for s in o.successors]} for o in review.orphans],
            "unfinished_adoptions": [{"path": str(u.path), "old": u.old.id, "new": u.new.id}
                                     for u in review.unfinished],
            "problems": list(review.problems),
            "annotation_mismatches": [_mismatch(m) for m in review.mismatches],
            "dismissed": [{"path": str(m.path), "id": m.fit.record.id, "level": m.level}
                          for m in review.dismissed],
        })

    def findings(self) -> Iterator[Line]:
        """One line a finding: what `-q` still prints (problems are findings, as ruff's are)."""
        review = self.review
        yield from (finding.describe() for finding in review.findings)
        yield from (orphan.describe() for orphan in review.orphans)
        yield from (unfinished.describe() for unfinished in review.unfinished)
        yield from (mismatch.describe() for mismatch in review.mismatches)

    def lines(self) -> Iterator[Line]:
        review = self.review
        yield from self.findings()
        unfinished = f", {len(review.unfinished)} adoptions unfinished" if review.unfinished else ""
        sure = sum(m.fit.sure for m in review.mismatches)
        yield (f"{review.checked} records checked, {len(review.findings)} to review, "
               f"{len(review.orphans)} orphaned annotations{unfinished}, "
               f"{len(review.mismatches)} annotations that do not fit ({sure} sure, "
               f"{len(review.mismatches) - sure} suspect, {len(review.dismissed)} dismissed), "
               f"{len(review.problems)} unreadable")


def _mismatch(mismatch: Mismatch) -> dict[str, Any]:
    """An annotation-mismatch as `check --json` gives it: the record, how sure, the evidence."""
    from crawler.serve.review.annotation_fit import LISTED_MARGIN, SURE_MARGIN

    fit = mismatch.fit
    return {"reason": "annotation-mismatch", "level": mismatch.level, "path": str(mismatch.path),
            "id": fit.record.id, "template": fit.record.site.message.template,
            "score": fit.score, "margin": fit.margin, "listed_from": LISTED_MARGIN,
            "sure_from": round(SURE_MARGIN, 3), "names": list(fit.names), "better_records": fit.rank,
            "better": [{"id": b.id, "qualname": b.qualname, "path": b.path, "score": b.score,
                        "margin": b.margin, "names": list(b.names), "sibling": b.sibling}
                       for b in fit.better]}


@dataclass(frozen=True)
class AdoptSummary:
    """`adopt`: the annotation moved (or to move, in a dry run), and what --force replaced."""

    adoption: Adoption
    dry_run: bool

    def to_json(self) -> str:
        a = self.adoption
        return _dumps({
            "folder": str(a.folder), "old": a.old.id, "new": a.new.id, "state": a.state,
            "old_status": a.old_after.status, "new_status": a.new_after.status,
            "written_for": a.new_after.annotation.written_for,
            "template": a.new_after.site.message.template,
            "replaced": a.replaced, "files": list(a.files), "dry_run": self.dry_run,
        }, ascii_only=False)

    def lines(self) -> Iterator[Line]:
        a = self.adoption
        verb = {"adopted": "moves" if self.dry_run else "moved",
                "finished": "finishes" if self.dry_run else "finished",
                "done already": "was moved already:"}[a.state]
        what = "the annotation" if a.state != "finished" else "the interrupted move of the annotation"
        yield (f"{verb} {what} of {a.old.id} ({a.old.status}, {a.old.site.path}:{a.old.site.line}) "
               f"into {a.new.id} ({a.new_after.status}, {a.new.site.path}:{a.new.site.line})")
        template = a.new_after.site.message.template
        if a.new_after.annotation.written_for != template:
            history = a.new_after.history
            was = a.new_after.annotation.written_for or (history and history.previous_template)
            written = f"it was written for {was!r}" if was else "it names no message it was written for"
            yield (f"{written}; the message is now {template!r}: check it, then set "
                   "annotation.written_for to the new message")
        if a.replaced is not None:
            yield f"--force replaced the annotation {a.new.id} held:"
            yield from a.replaced.rstrip("\n").split("\n")  # each line shown escaped
        if self.dry_run:
            yield f"dry run: {len(a.files)} files would change, nothing written"
        else:
            yield f"{len(a.files)} files written to {a.folder}"


@dataclass(frozen=True)
class ExportSummary:
    """`export`: how many records went where, in which format, and the files left out."""

    fmt: str
    target: str
    records: int
    skipped: tuple[str, ...]

    def to_json(self) -> str:
        return _dumps({"format": self.fmt, "target": self.target, "records": self.records,
                       "skipped": list(self.skipped)}, ascii_only=False)

    def lines(self) -> Iterator[Line]:
        yield f"{self.records} records exported as {self.fmt} to {self.target}"


@dataclass(frozen=True)
class HistorySummary:
    """`history`: each step of the walk with what it changed, and the tags left out."""

    result: HistoryResult

    def to_json(self) -> str:
        result = self.result
        return _dumps({
            "folder": str(result.folder),
            "steps": [{"tag": step.tag, "ref": step.result.pin.ref, "commit": step.result.pin.sha,
                       "records": step.result.manifest.counts.records,
                       "files_read_again": step.result.parsed,
                       **{key: len(getattr(step.result.merged, key)) for key, _ in CHANGES},
                       "seconds": round(step.result.seconds, 3)} for step in result.steps],
            "ignored": [{"tag": tag, "why": why} for tag, why in result.walk.ignored],
            "by_date": result.walk.by_date,
            "read_ahead": result.read_ahead,
            "moved": [{"tag": m.tag, "walked": m.walked, "now": m.now} for m in result.moved],
            "seconds": round(result.seconds, 3),
        }, ascii_only=False)

    def lines(self) -> Iterator[Line]:
        result = self.result
        yield from self.left_out(result.walk.ignored)
        for move in result.moved:
            yield tag_moved_line(move)
        walked = [step.tag for step in result.steps if step.tag is not None]
        order = "tag date (no tag names a version)" if result.walk.by_date else "version order"
        yield (f"{len(walked)} release tags walked in {order}"
               + (f", {walked[0]} to {walked[-1]}" if walked else "")
               + f", in {round(result.seconds, 3):.2f}s; records in {result.folder}")

    @staticmethod
    def left_out(ignored: tuple[tuple[str, str], ...]) -> Iterator[str]:
        """One line a reason, in the order first given: the tag, or how many and the first and
        last (the tags before --since, 63 of them on a web framework, were a line each);
        `--json` lists every tag."""
        tags: dict[str, list[str]] = {}
        for tag, why in ignored:
            tags.setdefault(why, []).append(tag)
        for why, named in tags.items():
            yield (f"left out {named[0]}: {why}" if len(named) == 1 else
                   f"left out {len(named)} tags ({named[0]} to {named[-1]}): {why}")

    @staticmethod
    def step_line(step: TagStep) -> str:
        """One step's progress line: the tag (or the end commit) and what changed there."""
        result = step.result
        where = step.tag if step.tag is not None else f"{result.pin.ref} (no release)"
        changes = ", ".join(f"{len(getattr(result.merged, key))} {key}" for key, _ in CHANGES
                            if getattr(result.merged, key))
        dated = (f" ({time.strftime('%Y-%m-%d', time.gmtime(step.date))})"
                 if step.date else "")
        left = (f"; about {_duration(step.left)} left"
                if step.left is not None and step.number < step.steps else "")
        return (f"[{step.number}/{step.steps}] {where}{dated} @ {result.pin.sha[:12]}: "
                f"{result.manifest.counts.records} records; {changes or 'no change'}; "
                f"{result.parsed} files read in {round(result.seconds, 3):.2f}s{left}")


def tag_moved_line(move: TagMove) -> str:
    """One line for a walked tag that moved or went: the records' releases were read where it
    was, and stay so (a walk never goes back to re-read a release)."""
    where = (f"moved from {move.walked[:12]} to {move.now[:12]}" if move.now is not None
             else f"is gone (it named {move.walked[:12]})")
    return (f"tag {move.tag} {where} since it was walked: the records' releases still say what "
            f"{move.tag} held at {move.walked[:12]}")


def _duration(seconds: float) -> str:
    """`2h05m`, `7m12s` or `40s`: a time left, to the second at most."""
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
