"""The test-evidence stage of a run: test files read through the parser pool and the evidence
cache, and an update's refresh of the evidence its records carry.

A test file is read by the same limited worker processes as the sources (`WorkerPool.read_tests`)
unless the evidence cache holds its (path, blob): a file whose blob did not change is never
parsed again, by `extract` or `update`. A file whose worker crashed or ran out of time is listed
in the manifest (`EVIDENCE_CRASHED`, in place of its `test_file` entry), never a silent gap.

What the assertions were is kept in the manifest as a digest (`evidence_digest`): an update whose
tests gave the same assertions and whose sources did not change leaves every record's evidence
as it is; any other update matches the assertions against every live record (the rule counts a
pattern's fits over the whole repository), and rewrites the records whose evidence changed.
The manifest counts the test patterns the fit rule cut by their step bound
(`counts.test_patterns_cut`): a run that matched nothing keeps the previous count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace

from crawler.catalogue.evidence import EvidenceStats, match_evidence
from crawler.catalogue.related import with_derived
from crawler.parse.forkserver import warm_up
from crawler.parse.workers import WorkerPool
from crawler.records import REMOVED, ErrorRecord, Manifest, Skipped, SourceFile, TestAssertion
from crawler.store.cache import split_cached
from crawler.store.parse_cache import EvidenceCache, assertion_reader_digest

EVIDENCE_CRASHED = "evidence_crashed"  # a test file whose read crashed its worker or timed out
TEST_FILE = "test_file"  # selection's reason for a test file, which a crash entry stands in for

# (path, blob, bytes) of the given files, in their order, read lazily
BlobReader = Callable[[list[SourceFile]], Iterator[tuple[str, str, bytes]]]


@dataclass(frozen=True)
class TestEvidence:
    """What a run's test files gave: their assertions, the files that could not be read, and a
    digest of the assertions (what an update compares with the manifest's)."""

    __test__ = False  # not a test class, whatever pytest makes of its name

    assertions: tuple[TestAssertion, ...]
    crashed: tuple[Skipped, ...]  # reason EVIDENCE_CRASHED, the detail says how
    digest: str
    files: int  # test files read, from the cache or parsed
    parsed: int  # of those, the ones handed to a worker (not in the cache)


def read_test_files(read: BlobReader, files: list[SourceFile], jobs: int,
                    cache: EvidenceCache | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    pool: WorkerPool | None = None) -> TestEvidence:
    """Every test file's assertions, from the cache or the worker pool (`pool`, a walk's, is
    left open; else one of `jobs` processes), in file order."""
    found, misses = split_cached(cache, files)
    hits = len(files) - len(misses)
    if progress is not None and files:
        progress(hits, len(files))
    if misses:
        if pool is None:  # as for the sources: a test file to parse starts the fork server
            warm_up()
        with nullcontext(pool) if pool is not None else WorkerPool(jobs) as reading:
            chosen = [files[i] for i in misses]
            for done, (position, answer) in enumerate(reading.read_tests(read(chosen)), start=1):
                found[misses[position]] = answer
                if cache is not None:
                    cache.put(chosen[position].blob, answer)
                if progress is not None:
                    progress(hits + done, len(files))
    if cache is not None:
        cache.flush()
    read_all = [item for item in found if item is not None]
    assertions = tuple(a for item in read_all for a in item.assertions)
    crashed = tuple(Skipped(item.path, EVIDENCE_CRASHED, _crash_detail(item.failure))
                    for item in read_all if item.failure is not None)
    return TestEvidence(assertions, crashed, evidence_digest(assertions), len(files), len(misses))


def _crash_detail(failure: Skipped) -> str:
    """`parser_crashed: the parser killed its worker process: SIGSEGV ...`: how, then why."""
    return f"{failure.reason}: {failure.detail}" if failure.detail else failure.reason


def evidence_digest(assertions: Iterable[TestAssertion]) -> str:
    """sha256 of the assertions as a set, and of the code that reads and fits them."""
    rows = sorted({(a.path, a.line, a.test, a.form, a.check, a.exceptions, a.pattern)
                   for a in assertions})
    digest = hashlib.sha256(assertion_reader_digest().encode())
    digest.update(_fit_rule_digest().encode())
    digest.update(json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _fit_rule_digest() -> str:
    """Of the fit rule's code: the rule, and the bounded runs that decide which patterns it cuts."""
    from crawler import regexes
    from crawler.catalogue import evidence, globs

    digest = hashlib.sha256()
    for module in (evidence, globs, regexes):
        with open(module.__file__ or "", "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


def with_test_files(manifest: Manifest, crashed: Sequence[Skipped], digest: str | None,
                    cut: int = 0) -> Manifest:
    """The manifest with each crashed test file listed as EVIDENCE_CRASHED (in place of its
    `test_file` entry), the digest of the assertions its records' evidence came from, and the
    number of test patterns the fit rule cut."""
    crashed_paths = {entry.path for entry in crashed}
    kept = [s for s in manifest.skipped if not (s.path in crashed_paths and s.reason == TEST_FILE)
            and s.reason != EVIDENCE_CRASHED]
    skipped = tuple(sorted([*kept, *crashed], key=lambda s: (s.path, s.reason)))
    counts = replace(manifest.counts, skipped=len(skipped), test_patterns_cut=cut)
    return replace(manifest, skipped=skipped, counts=counts, evidence_digest=digest)


def previous_crashed(previous: Manifest | None) -> tuple[Skipped, ...]:
    """The test files a previous run could not read: kept while the tests are not read."""
    return tuple(s for s in previous.skipped if s.reason == EVIDENCE_CRASHED) if previous else ()


def patterns_cut(stats: EvidenceStats | None, previous: Manifest | None) -> int:
    """The test patterns cut by this run's matching, or by the last one when it matched none."""
    if stats is not None:
        return stats.cut
    return previous.counts.test_patterns_cut if previous is not None else 0


def needs_refresh(previous: Manifest | None, digest: str, sources_read: bool) -> bool:
    """Whether an update must match the tests against its records again."""
    return sources_read or previous is None or previous.evidence_digest != digest


def tests_changed(previous: Manifest | None, digest: str) -> bool:
    return previous is None or previous.evidence_digest != digest


def names_tested(assertions: Iterable[TestAssertion], records: Iterable[ErrorRecord]) -> bool:
    """Whether an assertion names the exception of one of `records` (by its last part, as the
    fit rule does): only then can a change of those records change another record's evidence
    (its fit counts), so an update must match over the whole folder."""
    written = {name.rsplit(".", 1)[-1] for a in assertions for name in a.exceptions}
    return any(name in written for record in records for name in _exception_names(record))


def _exception_names(record: ErrorRecord) -> set[str]:
    site = record.site
    return {site.exception.rsplit(".", 1)[-1], (site.exception_qualname or "").rsplit(".", 1)[-1]}


@dataclass(frozen=True)
class Refreshed:
    """An update's records with their evidence matched again, and the other records it changed."""

    records: tuple[ErrorRecord, ...]  # the merge's records, evidence set
    others: tuple[ErrorRecord, ...]  # records the merge did not touch whose evidence changed
    stats: EvidenceStats


def refresh_evidence(merged: Sequence[ErrorRecord], others: Sequence[ErrorRecord],
                     assertions: Sequence[TestAssertion],
                     progress: Callable[[int, int], None] | None = None) -> Refreshed:
    """Evidence matched over every live record: the merge's and the rest of the folder's."""
    stats = EvidenceStats()
    everything = [*merged, *(r for r in others if r.status != REMOVED)]
    evidence = match_evidence(everything, assertions, stats, progress)
    keep_related = {record.id: record.related for record in everything}
    records = with_derived(merged, keep_related, evidence)
    updated = with_derived(others, keep_related, evidence)  # the same object where unchanged
    changed = tuple(new for old, new in zip(others, updated) if new is not old)
    return Refreshed(tuple(records), changed, stats)
