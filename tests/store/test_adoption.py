"""Nothing orphaned in silence: `crawler check` lists annotations left on removed records with
their likeliest successor, and `crawler adopt` moves one deliberately, byte for byte.

One real git history is built once: a message reworded past the fuzzy threshold (the update
can only retire its record and make a new one), a raise deleted outright, and a decoy whose
text is nearer the reworded message but sits in another function of another file. Each test
works on its own copy of the output folder, and drives the real `python -m crawler`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from crawler import pipeline
from crawler.cli.commands import main
from crawler.records import ACTIVE, NEEDS_REVIEW, REMOVED, ErrorRecord
from crawler.serve.review.checks import review_output
from crawler.store import adoption, record_files, render
from crawler.store.manifest_file import load_manifest
from tests.helpers.child import kill_before
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import snapshot
from tests.helpers.processes import ROOT, child_env
from tests.helpers.update_output import BASE, BLOCK  # the same module, and a person's block

# The same code a week later: `check` rewritten in another file under another name, its message
# reworded past recognition and no line of its code kept (so the update cannot follow it: git's
# diff, the qualname and the code around the raise all lost it), `load` gone (its last raise
# moved to a new `read`), and in a third file a new raise whose words are nearer the old message.
REWORDED = "negative values are not accepted here: {x}"
CHECK = '''def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    return x


'''
LATER = (BASE.replace(CHECK, "")
         .replace('    def load(self, path):\n        if not path:\n'
                  '            raise FileNotFoundError("no path given")\n', "    def read(self, path):\n"))
CHECKS = '''\
def ensure_sign(x):
    """The old check, rewritten."""
    ok = isinstance(x, int) and x >= 0
    if not ok:
        raise ValueError(f"negative values are not accepted here: {x}")
    return int(x)
'''
DECOY = '''\
def size(y):
    if not isinstance(y, int):
        raise TypeError(f"y must be positive, got {y}")
    return y
'''

POSITIVE = "x must be positive, got {x}"
NO_PATH = "no path given"
CANNOT = "cannot load {path}"
DECOY_TEMPLATE = "y must be positive, got {y}"

OTHER_BLOCK = BLOCK.replace("Read the message.", "Something else entirely.")


@dataclass
class Folder:
    """A copy of the orphaned output: its root, the repository folder, the ids by template."""

    repo: GitRepo
    root: Path
    folder: Path
    cache: Path
    ids: dict[str, str]  # template -> id, the removed records under their old template
    blocks: dict[str, str]  # id -> annotation block as written

    def path(self, record_id: str) -> Path:
        return self.folder / record_files.ERRORS_DIR / f"{record_id}.yaml"

    def record(self, record_id: str) -> ErrorRecord:
        return record_files.load_record(self.path(record_id))

    def block(self, record_id: str) -> str | None:
        return render.annotation_block(self.path(record_id).read_text(encoding="utf-8"))

    def crawler(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The real command line, in a fresh interpreter."""
        return subprocess.run([sys.executable, "-m", "crawler", *args], cwd=ROOT, env=child_env(),
                              capture_output=True, text=True, timeout=120)

    def cli(self, *args: str) -> Result:
        """The same command line in this process: a fresh interpreter costs seconds here."""
        return CliRunner().invoke(main, list(args))

    def update(self) -> pipeline.RunResult:
        return pipeline.update(str(self.repo.path), ref=self.repo.head(), output_root=self.root,
                               cache_dir=self.cache, jobs=1)


def annotate(path: Path, meaning: str, written_for: str | None, block: str = BLOCK) -> str:
    """Write an annotation block into a record file by hand; its exact text."""
    text = path.read_text(encoding="utf-8")
    new = block.format(written_for=json.dumps(written_for), meaning=meaning)
    old = render.annotation_block(text)
    assert old is not None
    path.write_text(text.replace(old, new), encoding="utf-8")
    return new


@pytest.fixture(scope="module")
def orphaned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Folder]:
    """Extract, annotate two records, reword one message and delete the other raise, update."""
    base = tmp_path_factory.mktemp("orphaned")
    repo = GitRepo(base / "lib")
    repo.write("lib/m.py", BASE)
    repo.commit("first")
    root, cache = base / "out", base / "cache"
    folder = pipeline.extract(str(repo.path), ref=repo.head(), output_root=root, cache_dir=cache,
                              jobs=1).folder
    records = {r.site.message.template: r for r in pipeline.load_existing(folder)}
    ids = {t: records[t].id for t in (POSITIVE, NO_PATH)}
    blocks = {ids[t]: annotate(folder / "errors" / f"{ids[t]}.yaml", f"meaning of {t}", t)
              for t in ids}
    assert CHECK in BASE and CHECK not in LATER
    repo.write("lib/m.py", LATER)
    repo.write("lib/checks.py", CHECKS)
    repo.write("lib/sizes.py", DECOY)
    repo.commit("a week later")
    made = Folder(repo, root, folder, cache, ids, blocks)
    result = made.update()
    assert sorted(result.merged.removed) == sorted(ids.values())  # the update could not pair them
    yield made


@pytest.fixture
def out(orphaned: Folder, tmp_path: Path) -> Folder:
    """A copy of the orphaned output folder (and of the repository it came from), for one test."""
    shutil.copytree(orphaned.root, tmp_path / "out", symlinks=True)
    shutil.copytree(orphaned.repo.path, tmp_path / "lib", symlinks=True)
    repo = GitRepo(tmp_path / "lib")  # git init again: the copied history is kept
    folder = tmp_path / "out" / orphaned.folder.relative_to(orphaned.root)
    return Folder(repo, tmp_path / "out", folder, tmp_path / "cache", dict(orphaned.ids),
                  dict(orphaned.blocks))


def live_id(out: Folder, template: str) -> str:
    found = [r.id for r in pipeline.load_existing(out.folder)
             if r.site.message.template == template and r.status != REMOVED]
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------- check


def test_check_lists_each_orphan_with_its_likeliest_successor_first(out: Folder) -> None:
    run = out.crawler("check", str(out.root), "--json")
    assert run.returncode == 1, run.stderr
    orphans = {o["id"]: o for o in json.loads(run.stdout)["orphans"]}
    assert set(orphans) == set(out.ids.values())
    # The merge now follows rewords in place, moves along git's diff, the qualname and the code
    # around a raise; what it leaves here was rewritten past all of those, so what `check`
    # offers is only the nearest wording: the decoy, another function elsewhere, is offered with
    # its score and why, for a person to reject; the rewritten check scores under the floor.
    reworded = orphans[out.ids[POSITIVE]]
    best = reworded["successors"][0]
    assert best["id"] == live_id(out, DECOY_TEMPLATE) and best["template"] == DECOY_TEMPLATE
    assert 0.25 <= best["score"] < 0.6 and best["why"].startswith("template 0.78")
    assert live_id(out, REWORDED) not in [s["id"] for s in reworded["successors"]]
    assert orphans[out.ids[NO_PATH]]["successors"] == []  # deleted outright: no candidate

    text = out.cli("check", str(out.root))
    lines = text.stdout.splitlines()
    assert text.exit_code == 1
    line = next(x for x in lines if out.ids[POSITIVE] in x)
    assert (f"likeliest successor {best['id']}" in line and f"score {best['score']:.2f}" in line
            and f"crawler adopt {out.ids[POSITIVE]} {best['id']}" in line)
    assert any(out.ids[NO_PATH] in x and "no candidate" in x for x in lines)
    assert lines[-1].endswith("0 to review, 2 orphaned annotations, 0 annotations that do not fit "
                              "(0 sure, 0 suspect, 0 dismissed), 0 unreadable")


def test_check_passes_over_an_annotated_candidate(out: Folder) -> None:
    """Only live records without an annotation are offered: adopting is one-to-one."""
    successor = live_id(out, REWORDED)
    annotate(out.path(successor), "somebody annotated it already", REWORDED)
    run = out.cli("check", str(out.root), "--json")
    orphan = next(o for o in json.loads(run.stdout)["orphans"] if o["id"] == out.ids[POSITIVE])
    assert successor not in [s["id"] for s in orphan["successors"]]


# ---------------------------------------------------------------- adopt


def test_adopt_moves_the_annotation_byte_for_byte(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    block = out.blocks[old]
    before = snapshot(out.folder)
    dry = out.cli("adopt", old, new, str(out.root), "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert json.loads(dry.stdout)["files"] == [f"errors/{new}.yaml", f"errors/{old}.yaml",
                                               "manifest.yaml"]
    assert snapshot(out.folder) == before  # a dry run writes nothing

    run = out.crawler("adopt", old, new, str(out.root))
    assert run.returncode == 0, run.stderr
    assert f"moved the annotation of {old}" in run.stdout and "3 files written" in run.stdout
    assert out.block(new) == block  # comments, layout and written_for, exactly
    assert out.block(old) == render.empty_annotation_text()
    adopted, left = out.record(new), out.record(old)
    assert adopted.status == NEEDS_REVIEW and adopted.annotation.written_for == POSITIVE
    assert adopted.history is not None and adopted.history.adopted_from == old
    assert adopted.history.previous_template == POSITIVE
    assert left.status == REMOVED and left.history is not None and left.history.adopted_by == new
    manifest = load_manifest(out.folder)
    assert manifest is not None and new in manifest.needs_review
    # Only the two records and the manifest changed.
    changed = {k for k, v in snapshot(out.folder).items() if before.get(k) != v}
    assert changed == {f"errors/{new}.yaml", f"errors/{old}.yaml", "manifest.yaml"}
    assert out.cli("validate", str(out.root)).exit_code == 0
    check = json.loads(out.cli("check", str(out.root), "--json").stdout)
    assert [o["id"] for o in check["orphans"]] == [out.ids[NO_PATH]]
    assert [f["id"] for f in check["findings"]] == [new]  # waits for a person's review


def test_adopt_reviewed_keeps_the_record_active(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    run = out.cli("adopt", old, new, str(out.folder), "--reviewed", "--json")
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["new_status"] == ACTIVE
    record = out.record(new)
    assert record.status == ACTIVE and record.history and record.history.previous_template is None
    manifest = load_manifest(out.folder)
    assert manifest is not None and new not in manifest.needs_review


def test_adopt_from_a_live_record_undoes_a_misattachment(out: Folder) -> None:
    """An annotation the crawler left on the wrong live record goes where it belongs; the
    record it leaves stays live, with empty slots and a pointer."""
    wrong, right = live_id(out, CANNOT), live_id(out, REWORDED)
    block = annotate(out.path(wrong), "meant for the reworded raise", POSITIVE)
    run = out.cli("adopt", wrong, right, str(out.root))
    assert run.exit_code == 0, run.stderr
    left = out.record(wrong)
    assert out.block(right) == block and out.block(wrong) == render.empty_annotation_text()
    assert left.status == ACTIVE and left.history and left.history.adopted_by == right
    again = out.cli("adopt", wrong, right, str(out.root))  # nothing left to move
    assert again.exit_code == 0 and "was moved already" in again.stdout


def test_adopt_force_replaces_and_shows_what_it_replaced(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    theirs = annotate(out.path(new), "another person's words", REWORDED, OTHER_BLOCK)
    refused = out.cli("adopt", old, new, str(out.root))
    assert refused.exit_code == 1 and "already carries an annotation" in refused.stderr
    assert "--force" in refused.stderr and out.block(new) == theirs
    run = out.cli("adopt", old, new, str(out.root), "--force")
    assert run.exit_code == 0, run.stderr
    assert theirs.rstrip("\n") in run.stdout  # said, in full, before it goes
    assert out.block(new) == out.blocks[old] and out.block(old) == render.empty_annotation_text()


def _two_repositories(out: Folder) -> Path:
    """A second repository folder beside the first, holding a copy of the reworded record."""
    other = out.root / "local" / "other" / "lib"
    shutil.copytree(out.folder, other)
    return other


REFUSALS = {
    "same record": (lambda out: [out.ids[POSITIVE], out.ids[POSITIVE]], "the same record"),
    "not an id": (lambda out: ["../../etc", live_id(out, REWORDED)], "not a record id"),
    "no annotation": (lambda out: [live_id(out, CANNOT), live_id(out, REWORDED)],
                      "has no annotation to move"),
    "old missing": (lambda out: ["0123456789abcdef", live_id(out, REWORDED)], "no record 0123"),
    "new missing": (lambda out: [out.ids[POSITIVE], "0123456789abcdef"], "no record 0123"),
    "new removed": (lambda out: [out.ids[POSITIVE], out.ids[NO_PATH]], "is removed"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_adopt_refuses(out: Folder, case: str) -> None:
    ids, reason = REFUSALS[case]
    before = snapshot(out.root)
    run = out.cli("adopt", *ids(out), str(out.root))
    assert run.exit_code == 1 and reason in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and snapshot(out.root) == before


@pytest.mark.parametrize("broken", ["old", "new"])
def test_adopt_refuses_a_broken_record(out: Folder, broken: str) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    path = out.path(old if broken == "old" else new)
    path.write_text(path.read_text(encoding="utf-8").replace("status:", "status: [", 1),
                    encoding="utf-8")
    before = snapshot(out.root)
    run = out.cli("adopt", old, new, str(out.root))
    assert run.exit_code == 1 and f"{path}:" in run.stderr and "nothing was written" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and snapshot(out.root) == before


@pytest.mark.parametrize("stray", ["{old} (copy).yaml", ".{old}.yaml.swp", "notes.txt"])
def test_adopt_refuses_beside_a_file_that_is_no_record(out: Folder, stray: str) -> None:
    """A copy of OLD beside it would hold the annotation still, once it moved."""
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    copy = out.folder / "errors" / stray.format(old=old)
    copy.write_bytes(out.path(old).read_bytes())
    before = snapshot(out.root)
    run = out.crawler("adopt", old, new, str(out.root))
    assert run.returncode == 1 and f"{copy}: not a record file" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and snapshot(out.root) == before


def test_adopt_and_check_say_no_none(out: Folder) -> None:
    """An annotation written for no message, and one written for its new home's: the lines
    adopt and check print say so in words (beside a killed run's temp file, which is no stray)."""
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    annotate(out.path(old), "written for no message", None)
    (out.folder / "errors" / f".{new}.yaml.0a1b2c3d.tmp").write_text("a killed run's\n")
    run = out.crawler("adopt", old, new, str(out.root))
    assert run.returncode == 0 and "None" not in run.stdout + run.stderr, run
    assert f"it was written for {POSITIVE!r}" in run.stdout
    other, home = out.ids[NO_PATH], live_id(out, CANNOT)
    annotate(out.path(other), "written for its new home", CANNOT)
    assert out.crawler("adopt", other, home, str(out.root)).returncode == 0
    check = out.crawler("check", str(out.root))
    assert "None" not in check.stdout + check.stderr, check
    assert (f"{out.path(home)}: needs_review: check the annotation against the message "
            f"{CANNOT!r}") in check.stdout


def test_adopt_across_repositories(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    other = _two_repositories(out)
    (other / "errors" / f"{old}.yaml").unlink()  # NEW is in both, OLD in the first only
    (out.path(new)).unlink()
    before = snapshot(out.root)
    run = out.cli("adopt", old, new, str(out.root))
    assert run.exit_code == 1 and "in another repository (local/other/lib)" in run.stderr
    assert snapshot(out.root) == before


def test_adopt_needs_the_repository_where_an_id_is_ambiguous(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    other = _two_repositories(out)
    before = snapshot(out.root)
    run = out.cli("adopt", old, new, str(out.root))
    assert run.exit_code == 1 and "in 2 repository folders" in run.stderr
    assert "--repo HOST/OWNER/NAME" in run.stderr and snapshot(out.root) == before
    slug = out.folder.relative_to(out.root).as_posix()
    run = out.cli("adopt", old, new, str(out.root), "--repo", slug)
    assert run.exit_code == 0, run.stderr
    assert out.block(new) == out.blocks[old]
    assert render.annotation_block((other / "errors" / f"{new}.yaml").read_text()) \
        == render.empty_annotation_text()  # the other repository's copy is not touched


# ---------------------------------------------------------------- interrupted, then updated


def _adopt_killed_before(out: Folder, step: int, old: str, new: str) -> bool:
    """Adopt in a forked child that SIGKILLs itself before its `step`-th file step; killed?"""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            kill_before(step)
            adoption.adopt(out.root, old, new)
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0
    return False


def test_a_killed_adopt_leaves_the_annotation_somewhere_and_is_finished_by_the_next(
        out: Folder, tmp_path: Path) -> None:
    """Killed before each of its file steps: the annotation is in NEW, OLD or both, never lost;
    `check` names a half-done adoption, and the same adopt finishes it to the clean result."""
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    block = out.blocks[old]
    start = snapshot(out.root)
    clean = tmp_path / "clean"
    shutil.copytree(out.root, clean)
    adoption.adopt(clean, old, new)
    finished = snapshot(clean)
    step, halves = 0, 0
    while True:
        step += 1
        killed = _adopt_killed_before(out, step, old, new)
        if not killed:
            break
        holders = [i for i in (old, new) if out.block(i) == block]
        assert holders, f"killed before step {step}: the annotation is nowhere"
        for record_id in (old, new):
            out.record(record_id)  # loads: never half-written
        if len(holders) == 2:
            halves += 1
            review = review_output(out.root)
            assert [(u.old.id, u.new.id) for u in review.unfinished] == [(old, new)]
            assert old not in [o.record.id for o in review.orphans]
        adoption.adopt(out.root, old, new)  # the same adopt again: finishes or does it all
        after = snapshot(out.root)
        assert {k: v for k, v in after.items() if not k.endswith(".tmp")} == finished
        for path, data in start.items():  # back to the start for the next kill
            (out.root / path).write_bytes(data)
        for path in set(after) - set(start):
            (out.root / path).unlink()
    assert step > 8 and halves >= 4  # every step of three atomic writes was tried


def test_update_after_adopt_keeps_it(out: Folder) -> None:
    old, new = out.ids[POSITIVE], live_id(out, REWORDED)
    block = out.blocks[old]
    assert out.cli("adopt", old, new, str(out.root)).exit_code == 0
    out.repo.write("lib/m.py", "import os\n\n\n" + LATER)  # every site moves down
    out.repo.write("lib/checks.py", "import os\n\n\n" + CHECKS)
    out.repo.commit("imports")
    assert out.update().problems == ()
    adopted, left = out.record(new), out.record(old)
    assert out.block(new) == block and adopted.history and adopted.history.adopted_from == old
    assert adopted.status == NEEDS_REVIEW and adopted.site.line == 8
    assert left.status == REMOVED and left.history and left.history.adopted_by == new
    assert out.block(old) == render.empty_annotation_text()

    # The old message comes back beside the new one: its record revives, without the annotation.
    out.repo.write("lib/m.py", LATER + "\n\ndef again(x):\n    if x < 0:\n"
                   "        raise ValueError(f\"x must be positive, got {x}\")\n")
    out.repo.commit("the old message is back elsewhere")
    assert out.update().problems == ()
    texts = [render.annotation_block(p.read_text()) for p in (out.folder / "errors").glob("*.yaml")]
    assert texts.count(block) == 1 and out.block(new) == block
    assert out.record(old).annotation.is_empty
