"""The walk held in memory (`store.held_folder`) against the walk step by step on disk.

The history is `tests.pipeline.test_history_run.build_history`'s: four releases (two rewords, a move to
another file, a removal and return, an exception class change, tags that are no versions)
and a commit after the last one. The step-by-step walk is what `crawler history` made before
the folder was held: one `extract`, then one `update` per tag, each writing its records and the
next reading them back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from crawler.errors import OutputError
from crawler.parse.outcomes import FileOutcome, Job
from crawler.parse.workers import STATS, WorkerPool
from crawler.pipeline import extract, update
from crawler.pipeline.history_run import HistoryResult, TagStep, walk_releases
from crawler.store import record_files
from crawler.store.held_folder import JOURNAL
from crawler.store.repo_output import LOCK_FILE
from tests.helpers.gitrepo import GitRepo
from tests.helpers.history import TAGS, build_history
from tests.helpers.killprocs import run
from tests.helpers.outputkit import annotate
from tests.helpers.processes import child_env

pytestmark = pytest.mark.runs_long

RELEASES = ("v0.9.0", "v0.10.0rc1", "v0.10.0", "v0.11.0")  # the version order of TAGS


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under the folder by its relative path, the lock file's empty self included."""
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file() and path.name != "lookup.sqlite"}  # lookup's cache: the machine's


def held_walk(repo: GitRepo, root: Path, cache: Path, ref: str = "HEAD",
              checkpoint_steps: int = 10) -> HistoryResult:
    return walk_releases(str(repo.path), tags=TAGS, ref=ref, output_root=root, cache_dir=cache,
                         jobs=1, evidence=False, checkpoint_steps=checkpoint_steps)


def step_by_step(repo: GitRepo, root: Path, cache: Path) -> Path:
    """The walk as one extract and an update per release, each written to disk and read back."""
    source = str(repo.path)
    first = extract(source, ref=RELEASES[0], output_root=root, cache_dir=cache, jobs=1,
                    evidence=False, release=RELEASES[0])
    for tag in RELEASES[1:]:
        update(source, ref=tag, output_root=root, cache_dir=cache, jobs=1, evidence=False,
               release=tag)
    update(source, ref="HEAD", output_root=root, cache_dir=cache, jobs=1, evidence=False)
    return first.folder


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return build_history(tmp_path_factory.mktemp("held") / "repo")


@pytest.fixture(scope="module")
def uninterrupted(history: GitRepo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One walk to HEAD, held in memory from its first tag and written at its end."""
    base = tmp_path_factory.mktemp("whole")
    return held_walk(history, base / "out", base / "cache").folder


def test_the_walk_in_memory_writes_what_the_walk_step_by_step_wrote(
        history: GitRepo, uninterrupted: Path, tmp_path: Path) -> None:
    on_disk = step_by_step(history, tmp_path / "out", tmp_path / "cache")
    assert folder_bytes(uninterrupted) == folder_bytes(on_disk)
    records = [record_files.load_record(p) for p in record_files.iter_record_paths(on_disk)]
    # the comparison covers every kind of release history the walk makes
    assert {len(r.history.templates) for r in records if r.history is not None} >= {1, 2, 3}
    assert any(r.versions is not None and r.versions.first == "v0.10.0rc1" for r in records)
    assert any(r.versions is not None and r.versions.first is None for r in records)


def test_a_walk_keeps_the_records_of_its_last_step_only_and_every_steps_counts(
        history: GitRepo, uninterrupted: Path, tmp_path: Path) -> None:
    """Each step's records that moved are new objects: kept for every step, they grew the walk
    by a version of each one per release (1 GB over jax's 186)."""
    result = held_walk(history, tmp_path / "out", tmp_path / "cache")
    *before, last = result.steps
    assert before and all(step.result.merged.records == () and step.result.manifest.files == ()
                          for step in before)
    one_by_one = walked_one_by_one(history, tmp_path / "one")  # each its run's last step
    assert [step.result.manifest.counts for step in result.steps] == [
        step.result.manifest.counts for step in one_by_one]
    assert [step.result.merged.moved for step in result.steps] == [
        step.result.merged.moved for step in one_by_one]
    assert any(step.result.merged.moved or step.result.merged.added for step in before)
    assert last.result.merged.records == one_by_one[-1].result.merged.records
    assert last.result.manifest == one_by_one[-1].result.manifest
    assert folder_bytes(result.folder) == folder_bytes(uninterrupted)


def walked_one_by_one(repo: GitRepo, root: Path) -> list[TagStep]:
    """The walk one tag a run: each run's only step is its last, kept whole."""
    return [held_walk(repo, root, root / "cache", ref=ref).steps[-1]
            for ref in (*RELEASES, "HEAD")]


def test_a_walk_one_tag_a_run_ends_where_one_walk_ends(
        history: GitRepo, uninterrupted: Path, tmp_path: Path) -> None:
    """Each run loads what the last one wrote: a checkpoint holds all the next step needs."""
    for tag in RELEASES:
        held_walk(history, tmp_path / "out", tmp_path / "cache", ref=tag)
    result = held_walk(history, tmp_path / "out", tmp_path / "cache")
    assert [step.tag for step in result.steps] == [None]
    assert folder_bytes(result.folder) == folder_bytes(uninterrupted)


def test_a_walk_killed_mid_walk_then_run_again_ends_where_an_uninterrupted_one_ends(
        history: GitRepo, uninterrupted: Path, tmp_path: Path) -> None:
    """Real SIGKILLs just before the Nth file step (a temp file made, an fsync, a rename) of a
    walk that writes every two tags: between two checkpoints, and inside each checkpoint after
    its journal, with renames left to do (without the journal, these two end elsewhere).

    A checkpoint's last file steps are those of a walk that ends at its tag: counted first."""
    cache = uninterrupted.parents[3] / "cache"  # warm: every run below takes the same steps
    args = [sys.executable, "-m", "tests.helpers.child", "crawler", "history", str(history.path),
            "--tags", TAGS, "--no-evidence", "--jobs", "1", "--checkpoint-steps", "2", "-q",
            "--cache-dir", str(cache)]
    ends = []
    for tag in ("v0.10.0rc1", "v0.11.0"):  # the second and fourth tags: the checkpoints
        counted = tmp_path / f"steps-{tag}"
        counting = run([*args, "--commit", tag, "-o", str(tmp_path / tag)], tmp_path / "logs",
                       env=child_env(CRAWLER_TEST_COUNT_STEPS=str(counted)))
        assert counting.code == 0
        ends.append(int(counted.read_text()))
    journals = 0
    for kill_at in (ends[0] - 2, ends[0] + 3, ends[1] - 2):
        out = tmp_path / f"out{kill_at}"
        ended = run([*args, "-o", str(out)], tmp_path / "logs",
                    env=child_env(CRAWLER_TEST_KILL_AT=str(kill_at)))
        assert ended.killed and not ended.leftovers, (kill_at, ended)
        folder = out / uninterrupted.relative_to(uninterrupted.parents[2])
        journals += (folder / JOURNAL).is_file()
        again = run([*args, "-o", str(out)], tmp_path / "logs")
        assert again.code == 0, (tmp_path / "logs" / "stderr").read_text()
        assert folder_bytes(folder) == folder_bytes(uninterrupted), kill_at
    assert journals == 2, "a kill did not fall between a checkpoint's journal and its renames"


def test_a_tag_with_no_change_reads_and_writes_no_record(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/a.py", 'def f(x):\n    if x:\n        raise ValueError("bad x")\n')
    repo.commit("first")
    repo.tag("v1.0")
    repo.write("README.md", "only the docs change\n")
    repo.commit("docs")
    repo.tag("v1.1")
    root, cache = tmp_path / "out", tmp_path / "cache"
    first = held_walk(repo, root, cache, ref="v1.0")
    errors = first.folder / record_files.ERRORS_DIR
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
              for p in errors.iterdir()}
    manifest = (first.folder / "manifest.yaml").read_bytes()
    result = held_walk(repo, root, cache, ref="v1.1")
    [step] = result.steps
    assert step.tag == "v1.1"
    assert (step.result.parsed, step.result.files_written, step.result.pending) == (0, 0, ())
    assert {p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in errors.iterdir()} == before
    # the manifest alone moves on: it lists the release walked
    after = (first.folder / "manifest.yaml").read_bytes()
    assert after != manifest and b"v1.1" in after and b"v1.1" not in manifest
    assert sorted(os.listdir(first.folder)) == sorted([LOCK_FILE, "errors", "lookup.sqlite",
                                                       "manifest.yaml"])


def test_a_record_a_person_edits_mid_walk_is_never_written_over(
        history: GitRepo, tmp_path: Path) -> None:
    """The walk holds the folder between checkpoints; a file edited meanwhile stops it, with
    nothing written, and the walk run again goes on from the edited files."""
    root, cache = tmp_path / "out", tmp_path / "cache"
    folder = held_walk(history, root, cache, ref="v0.9.0").folder
    [path] = [p for p in record_files.iter_record_paths(folder)
              if record_files.load_record(p).site.function == "load"]  # reworded next
    planted: list[str] = []

    def edit_after_the_first_step(step: TagStep) -> None:
        if step.number == 1:
            planted.append(annotate(path, "written while the walk ran"))

    before = folder_bytes(folder)
    with pytest.raises(OutputError) as stopped:
        walk_releases(str(history.path), tags=TAGS, output_root=root, cache_dir=cache, jobs=1,
                      evidence=False, checkpoint_steps=2, on_step=edit_after_the_first_step)
    assert str(stopped.value).startswith(f"{path}: changed while the walk held the folder")
    assert folder_bytes(folder) == {**before, str(path.relative_to(folder)): path.read_bytes()}
    held_walk(history, root, cache)
    record = record_files.load_record(path)
    assert planted[0] in path.read_text(encoding="utf-8")
    assert record.site.function == "load" and record.site.message.template == "size {x} is negative"


def test_a_walk_parses_each_new_blob_once_as_a_skeleton_in_one_pool_of_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step reads only what changed since the tag before: a changed file as a skeleton of
    its previous version, a file back at a blob an earlier tag had from the result cache, and
    all of it by the same worker processes, started once for the walk."""
    repo = GitRepo(tmp_path / "repo")
    two = ('def f(x):\n    if x:\n        raise ValueError(f"bad {x}")\n\n\n'
           'def g(y):\n    raise KeyError(f"missing {y}")\n')
    repo.write("pkg/a.py", two)
    repo.write("pkg/b.py", 'def h(z):\n    raise TypeError("no z")\n')
    repo.commit("first")
    repo.tag("v1.0")
    repo.write("pkg/a.py", two.replace("missing {y}", "no key {y}"))
    repo.commit("reword g")
    repo.tag("v1.1")
    repo.write("pkg/a.py", two)  # back to the blob v1.0 had
    repo.commit("reword g back")
    repo.tag("v1.2")
    repo.write("pkg/b.py", 'def h(z):\n    raise TypeError(f"no z: {z}")\n')
    repo.commit("reword h")
    repo.tag("v1.3")
    sent: list[tuple[str, str, bool]] = []  # (path, blob, with its previous version)
    pools: set[int] = set()
    real_run = WorkerPool.run

    def watched(pool: WorkerPool, jobs: Iterable[Job]) -> Iterator[tuple[int, FileOutcome]]:
        pools.add(id(pool))
        return real_run(pool, ((sent.append((job[0], job[1], job[3] is not None)), job)[1]
                               for job in jobs))

    monkeypatch.setattr(WorkerPool, "run", watched)
    started = STATS.started
    result = walk_releases(str(repo.path), tags="v*", ref="v1.3", output_root=tmp_path / "out",
                           cache_dir=tmp_path / "cache", jobs=1, evidence=False)
    assert [step.tag for step in result.steps] == ["v1.0", "v1.1", "v1.2", "v1.3"]
    assert [step.result.parsed for step in result.steps] == [2, 1, 1, 1]
    blob = {tag: {path: repo.git("rev-parse", f"{tag}:{path}") for path in ("pkg/a.py", "pkg/b.py")}
            for tag in ("v1.0", "v1.1", "v1.3")}
    assert sent == [("pkg/a.py", blob["v1.0"]["pkg/a.py"], False),
                    ("pkg/b.py", blob["v1.0"]["pkg/b.py"], False),
                    ("pkg/a.py", blob["v1.1"]["pkg/a.py"], True),
                    ("pkg/b.py", blob["v1.3"]["pkg/b.py"], True)]
    assert len(pools) == 1 and STATS.started - started == 1
