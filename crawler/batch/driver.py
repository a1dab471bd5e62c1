"""Batch extraction: many repositories, in local worker processes or on a Dask cluster.

The driver (this process) takes the entries of a repos.yaml (`reposfile`), sends one
`RepoTask` per repository to the workers (`_worker`, run by `_executors`), and applies each
`RepoOutcome` as it comes back. A worker only pins and visits (`pipeline.collect`); the driver
alone merges and writes (`pipeline.apply`), so what crosses the network is small (a batch
entry out, a `Collected` back) and the output folder needs no locks. A repository already up
to date at its pinned commit is skipped, so an interrupted batch picks up where it stopped.
Nothing here prints: progress goes to the callback the caller gives.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from crawler import __version__
from crawler.batch._executors import LocalPool, dask_executor
from crawler.batch._worker import RepoOutcome, RepoTask, collect_repo
from crawler.batch.reposfile import RepoEntry
from crawler.errors import CrawlerError
from crawler.git.source import redact
from crawler.pipeline import RunResult, apply, load_cache, output_folder
from crawler.records import ExtractOptions, Pin, is_network_address
from crawler.store.cache import LoadCache
from crawler.store.context import StoreContext
from crawler.store.manifest_file import MANIFEST
from crawler.store.plain_files import read_plain
from crawler.store.safe_yaml import safe_load_text

DONE, UP_TO_DATE, FAILED = "done", "up to date", "failed"
LOCAL = "local"  # --scheduler local: worker processes on this machine, whatever Dask's config says
POLL_SECONDS = 0.25  # how often the driver wakes to report progress while it waits
WRITER_THREADS = 4  # repositories the driver merges and writes at once (the writes wait on fsync)


# ---------------------------------------------------------------- what is already on disk


@dataclass(frozen=True)
class Known:
    """A repository folder already written: enough of its manifest to tell if it is up to date."""

    folder: Path
    slug: str  # host/owner/name, the folder under its output root
    source: str
    sha: str
    options: ExtractOptions
    crawler_version: str
    files: int
    records: int


def scan_outputs(roots: set[Path]) -> list[Known]:
    """Every manifest under the output roots; a manifest that cannot be read counts as absent."""
    known = []
    for root in sorted(roots):
        for folder in _manifest_folders(root):
            head = _manifest_head(folder / MANIFEST)
            if head is not None:
                known.append(replace(head, slug=folder.relative_to(root).as_posix()))
    return known


def _manifest_folders(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        if MANIFEST in filenames:
            dirnames.clear()  # a repository folder: its errors/ may hold thousands of files
            yield Path(dirpath)
        else:
            dirnames.sort()


def _manifest_head(path: Path) -> Known | None:
    """What a manifest says of its pin, parsed without its long lists of skipped and read files.

    `manifest_data` writes the pin, options and counts first; a manifest laid out otherwise is parsed
    whole. One that cannot be read at all counts as absent: the repository is extracted again.
    """
    try:
        text = read_plain(path).decode("utf-8")  # a link or a FIFO counts as absent, unopened
        head = text.split("\nexception_classes:", 1)[0]
        for part in (head, text) if head != text else (text,):
            data = safe_load_text(part, str(path))  # refuses tags, aliases, deep nesting
            if isinstance(data, dict) and {"source", "commit", "options", "counts",
                                           "crawler_version"} <= data.keys():
                break
        options = data["options"]
        return Known(
            folder=path.parent, slug="", source=data["source"], sha=data["commit"],
            options=ExtractOptions(include=tuple(options["include"]),
                                   exclude=tuple(options["exclude"]),
                                   include_tests=options["include_tests"],
                                   max_file_bytes=options["max_file_bytes"]),
            crawler_version=data["crawler_version"],
            files=data["counts"]["files"], records=data["counts"]["records"],
        )
    except (OSError, UnicodeDecodeError, yaml.YAMLError, CrawlerError, KeyError, TypeError):
        return None


# ---------------------------------------------------------------- where tasks run


def scheduler_address(option: str | None) -> str | None:
    """The Dask scheduler to use: `--scheduler`, else Dask's `scheduler-address` setting.

    None means local worker processes (also for `--scheduler local`, whatever the config says).
    """
    if option is not None:
        return None if option == LOCAL else option
    try:
        import dask.config
    except ImportError:
        return None
    address = dask.config.get("scheduler-address", None)
    return str(address) if address else None


# ---------------------------------------------------------------- the driver


@dataclass(frozen=True)
class RepoResult:
    """One repository's line in the summary."""

    entry: RepoEntry
    status: str  # done, up to date, failed
    pin: Pin | None = None
    folder: Path | None = None
    records: int = 0
    added: int = 0
    changed: int = 0  # moved, template changed (needs review) or revived
    removed: int = 0
    files: int = 0  # files visited
    files_written: int = 0
    seconds: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands, reported while it runs."""

    total: int
    done: int  # finished, whatever the status
    running: int
    failed: int
    files_parsed: int


@dataclass(frozen=True)
class BatchResult:
    """Every repository's result, in the order of the batch file."""

    results: tuple[RepoResult, ...]
    seconds: float
    scheduler: str  # "local" or the scheduler's address

    @property
    def failed(self) -> list[RepoResult]:
        return [r for r in self.results if r.status == FAILED]

    @property
    def files(self) -> int:
        return sum(r.files for r in self.results)


def run_batch(entries: list[RepoEntry], *, scheduler: str | None = None, jobs: int | None = None,
              cache_dir: Path | None = None, force: bool = False, dry_run: bool = False,
              progress: Callable[[BatchProgress], None] | None = None) -> BatchResult:
    """Collect every repository on the workers and apply each result here as it arrives.

    `scheduler` is a Dask scheduler address, or None for `jobs` local processes (default: one
    per core). With `force`, repositories already up to date are extracted again.
    """
    started = time.perf_counter()
    known = [] if force else scan_outputs({entry.output_root for entry in entries})
    driver = _Driver(entries, known, dry_run, progress, load_cache(cache_dir))
    tasks = driver.plan(None if cache_dir is None else str(cache_dir))
    if scheduler is None:
        pool = LocalPool(max(1, min(jobs or os.cpu_count() or 1, len(tasks))))
        try:
            driver.run(tasks, pool)
        finally:
            pool.executor.shutdown(wait=True, cancel_futures=True)
    else:
        with dask_executor(scheduler) as (executor, slots, parsed):
            driver.run(tasks, executor, slots, parsed)
    results = tuple(driver.results[entry.index] for entry in entries)
    return BatchResult(results, time.perf_counter() - started, scheduler or LOCAL)


class _Driver:
    """Submits tasks, applies outcomes as they arrive, and keeps the tally for progress."""

    def __init__(self, entries: list[RepoEntry], known: list[Known], dry_run: bool,
                 progress: Callable[[BatchProgress], None] | None,
                 loads: LoadCache | None = None) -> None:
        self.entries = {entry.index: entry for entry in entries}
        self.loads = loads  # the driver's own checked record loads, shared by its writer threads
        self.known = {known_.folder: known_ for known_ in known}
        self.dry_run = dry_run
        self.progress = progress
        self.results: dict[int, RepoResult] = {}
        self.folders: dict[Path, int] = {}  # output folder -> the entry that wrote it
        self.files_done = 0

    def plan(self, cache_dir: str | None) -> list[RepoTask]:
        """One task per entry, the largest repositories known from earlier runs first."""
        by_source: dict[str, list[Known]] = {}
        for known in self.known.values():
            by_source.setdefault(known.source, []).append(known)
        tasks = []
        for entry in self.entries.values():
            # The manifest holds the source as pin redacts it: no token from a URL. A local path
            # is never written, so its candidates are the folders under its output root (the
            # worker checks the slug).
            candidates = by_source.get(redact(entry.source), []) if is_network_address(
                entry.source) else [k for k in self.known.values() if entry.output_root in k.folder.parents]
            fresh = tuple(
                (k.slug, k.sha) for k in candidates
                if k.folder == entry.output_root / k.slug and k.options == entry.options
                and k.crawler_version == __version__
            )
            size = max((k.files for k in candidates), default=-1)
            tasks.append((-1 if size < 0 else 0, -size, entry.index,
                          RepoTask(entry, cache_dir, fresh)))
        return [task for *_, task in sorted(tasks, key=lambda t: t[:3])]

    def run(self, tasks: list[RepoTask], pool: LocalPool | Executor, slots: int = 1,
            parsed: Callable[[], int] | None = None) -> None:
        """Run the tasks on `pool` (`slots` at a time on Dask, where `parsed` counts files)."""
        local = pool if isinstance(pool, LocalPool) else None
        live = local.files_parsed if local else parsed or (lambda: 0)
        remote: dict[Future[RepoOutcome], tuple[RepoTask, int]] = {}
        writing: dict[Future[RepoResult], int] = {}
        writer = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="crawler-apply")
        queue = deque(tasks)
        suspects: deque[RepoTask] = deque()  # under way when a local process died
        workers = local.jobs if local else slots
        # Back-pressure: results the driver has not written yet are held in its memory, so no
        # more tasks are out than keep the workers busy while the writers catch up.
        window = 2 * workers + WRITER_THREADS

        def submit(task: RepoTask) -> None:
            executor = local.executor if local else pool
            assert isinstance(executor, Executor)
            remote[executor.submit(collect_repo, task)] = (task, local.generation if local else 0)

        try:
            while queue or remote or writing or suspects:
                if local and suspects and not any(t.attempt for t, _ in remote.values()):
                    suspect = suspects.popleft()
                    remote[local.alone(suspect)] = (suspect, -1)
                while queue and len(remote) + len(writing) < window:
                    submit(queue.popleft())
                self._report(len(remote), workers, live)
                waiting: list[Future[Any]] = [*remote, *writing]
                finished, _ = wait(waiting, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future in writing:
                        self.results[writing.pop(future)] = future.result()
                        continue
                    task, generation = remote.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        assert local is not None
                        if task.attempt == 0:
                            local.restart(generation)
                            suspects.append(replace(task, attempt=1))
                            continue
                        outcome = RepoOutcome(error="its worker process died, twice "
                                              "(a crash in the parser, or out of memory)")
                    except Exception as error:  # noqa: BLE001 - a lost Dask worker, a cancellation
                        outcome = RepoOutcome(error=f"{type(error).__name__}: {error}")
                    entry = task.entry
                    done = self._settle(entry, outcome)
                    if done is not None:
                        self.results[entry.index] = done
                    else:
                        assert outcome.collected is not None
                        self.files_done += len(outcome.collected.outcomes)
                        writing[writer.submit(self._write, entry, outcome)] = entry.index
        finally:
            for pending in remote:
                pending.cancel()
            writer.shutdown(wait=True, cancel_futures=True)  # a write under way is finished
        self._report(0, workers, live)

    def _report(self, pending: int, workers: int, live: Callable[[], int]) -> None:
        if self.progress is None:
            return
        parsed = max(self.files_done, live())  # events from Dask workers may lag behind results
        failed = sum(1 for r in self.results.values() if r.status == FAILED)
        self.progress(BatchProgress(len(self.entries), len(self.results), min(pending, workers),
                                    failed, parsed))

    def _settle(self, entry: RepoEntry, outcome: RepoOutcome) -> RepoResult | None:
        """The result of an outcome that needs no writing; None when it must be written."""
        if outcome.error is not None or outcome.pin is None:
            return RepoResult(entry, FAILED, seconds=outcome.seconds, error=outcome.error)
        folder = output_folder(entry.output_root, outcome.pin)
        other = self.folders.setdefault(folder, entry.index)
        if other != entry.index:
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds,
                              error=f"writes the same folder as repos[{other}] ({folder}); "
                                    "give one of them its own `name`")
        if outcome.collected is None:
            known = self.known.get(folder)
            return RepoResult(entry, UP_TO_DATE, outcome.pin, folder,
                              records=known.records if known else 0, seconds=outcome.seconds)
        return None

    def _write(self, entry: RepoEntry, outcome: RepoOutcome) -> RepoResult:
        """Merge and write one repository (in a driver thread); its failure is its own."""
        collected = outcome.collected
        assert collected is not None and outcome.pin is not None
        files = len(collected.outcomes)
        try:
            run: RunResult = apply(collected, entry.output_root, dry_run=self.dry_run,
                                   store=StoreContext(self.loads))
        except (CrawlerError, OSError) as error:
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds, files=files,
                              error=str(error))
        except Exception as error:  # noqa: BLE001 - a bug met in one repository's merge
            return RepoResult(entry, FAILED, outcome.pin, seconds=outcome.seconds, files=files,
                              error=f"crashed while merging: {type(error).__name__}: {error}"[:500])
        merged = run.merged
        done = RepoResult(
            entry, DONE, run.pin, run.folder, records=run.manifest.counts.records,
            added=len(merged.added), changed=len(merged.moved) + len(merged.changed)
            + len(merged.revived), removed=len(merged.removed), files=files,
            files_written=run.files_written, seconds=run.seconds,
        )
        if run.problems:  # a file it could not read (a broken record, a FIFO) fails the entry
            count = f" ({len(run.problems)} files left as they are)" if len(run.problems) > 1 else ""
            return replace(done, status=FAILED, error=run.problems[0] + count)
        return done
