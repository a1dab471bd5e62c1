"""Random edit histories over several commits, and the invariants of issue 4 after every update.

A small model of a library (files, functions, raises) is edited at random (lines inserted above,
functions renamed or moved to another file, files renamed, messages reworded slightly or heavily,
raises deleted and restored, templates duplicated, raises added, exception classes changed),
committed, and the records updated. Issue 15 adds identical raises inserted above an existing one
under the same guard, and functions moved to another file and reworded in the same commit.
Between commits, a "person" annotates some records by hand and checks some reviews.
After every update:

- no annotation is lost and none is duplicated: each note is in exactly the record it was
  written into, and in no other;
- no annotation sits on a record whose template differs from its `written_for`, unless the
  record is in review (`needs_review`, or removed while in review);
- a site the edits did not touch keeps its id (sites with a unique template, not reworded);
- every site whose lines git's diff left untouched keeps its id, at the place the diff maps it to,
  whatever was inserted beside it (identical raises included);
- the incremental output is what a full run over the same commit would write.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler import pipeline
from crawler.git.diff import line_map
from crawler.git.pin import pin
from crawler.records import NEEDS_REVIEW, REMOVED, ErrorRecord
from crawler.store import record_files, render
from tests.helpers.gitrepo import GitRepo

WORDS = ("shape", "dtype", "axis", "index", "buffer", "device", "tracer", "module", "config")
EXCEPTIONS = ("ValueError", "TypeError")


@dataclass
class Raise:
    uid: int
    template: str
    exception: str
    alive: bool = True
    guard: int | None = None  # the uid whose `if` it shares: an identical raise under the same guard


@dataclass
class Func:
    name: str
    raises: list[Raise]


@dataclass
class File:
    path: str
    header: int = 0  # comment lines above the code
    funcs: list[Func] = field(default_factory=list)


class Library:
    """The model: what the repository's Python files hold."""

    def __init__(self) -> None:
        self.counter = 0
        self.files: list[File] = []
        for f in range(2):
            file = File(f"pkg/mod{f}.py")
            for _ in range(2):
                file.funcs.append(Func(self.name("func"), [self.new_raise(), self.new_raise()]))
            self.files.append(file)

    def next(self) -> int:
        self.counter += 1
        return self.counter

    def name(self, stem: str) -> str:
        return f"{stem}{self.next()}"

    def new_raise(self, template: str | None = None, exception: str | None = None) -> Raise:
        uid = self.next()
        word = WORDS[uid % len(WORDS)]
        text = template or f"{word} number {uid} is not valid for this call"
        return Raise(uid, text, exception or EXCEPTIONS[uid % 2])

    def render(self, file: File) -> str:
        lines = [f"# header line {i}" for i in range(file.header)]
        for func in file.funcs:
            lines += ["", "", f"def {func.name}(x):"]
            for r in func.raises:
                if r.alive:
                    lines += [f"    if x == {r.guard or r.uid}:",
                              f"        raise {r.exception}({json.dumps(r.template)})"]
            lines.append("    return x")
        return "\n".join(lines) + "\n"

    def raises(self) -> list[tuple[File, Func, Raise]]:
        return [(f, fn, r) for f in self.files for fn in f.funcs for r in fn.raises]


EDITS = ("insert_above", "rename_function", "move_function", "rename_file", "reword_slightly",
         "reword_heavily", "delete", "restore", "duplicate", "add", "retype", "duplicate_above",
         "move_and_reword")


def apply_edit(lib: Library, kind: str, pick: int, touched: set[int]) -> None:
    """One edit; the uids of raises it touches go to `touched`."""
    files = lib.files
    file = files[pick % len(files)]
    all_raises = lib.raises()
    _, func, target = all_raises[pick % len(all_raises)]
    if kind == "insert_above":
        file.header += 1 + pick % 3
    elif kind == "rename_function" and file.funcs:
        file.funcs[pick % len(file.funcs)].name = lib.name("renamed")
    elif kind == "move_function" and len(file.funcs) > 1:
        moved = file.funcs.pop(pick % len(file.funcs))
        files[(pick + 1) % len(files)].funcs.append(moved)
    elif kind == "rename_file":
        file.path = f"pkg/renamed{lib.next()}.py"
    elif kind == "reword_slightly" and target.alive:
        target.template = target.template.replace("for this call", "for this particular call")
        touched.add(target.uid)
    elif kind == "reword_heavily" and target.alive:
        target.template = f"zq{lib.next()} vk wx"
        touched.add(target.uid)
    elif kind == "delete" and target.alive:
        target.alive = False
        touched.add(target.uid)
    elif kind == "restore" and not target.alive:
        target.alive = True
        touched.add(target.uid)
    elif kind == "duplicate" and target.alive:
        copy = lib.new_raise(target.template, target.exception)
        files[(pick + 1) % len(files)].funcs.append(Func(lib.name("copy"), [copy]))
        touched.update((target.uid, copy.uid))
    elif kind == "add":
        func.raises.append(lib.new_raise())
    elif kind == "duplicate_above" and target.alive:  # the same raise, same guard, just above
        copy = lib.new_raise(target.template, target.exception)
        copy.guard = target.guard or target.uid
        func.raises.insert(func.raises.index(target), copy)
        touched.add(copy.uid)
    elif kind == "move_and_reword" and len(file.funcs) > 1:  # to another file, reworded there
        moved = file.funcs.pop(pick % len(file.funcs))
        files[(pick + 1) % len(files)].funcs.append(moved)
        for r in moved.raises[:1]:
            r.template = r.template.replace(" is not valid", " is never valid")
            touched.add(r.uid)
    elif kind == "retype":  # another exception class, the same message
        target.exception = "RuntimeError" if target.exception != "RuntimeError" else "KeyError"
        touched.add(target.uid)  # keeps its record alone; not when its function moves too


def commit(repo: GitRepo, lib: Library) -> str:
    for old in repo.path.joinpath("pkg").glob("*.py"):
        old.unlink()
    for file in lib.files:
        repo.write(file.path, lib.render(file))
    return repo.commit()


def records_of(folder: Path) -> dict[str, ErrorRecord]:
    return {r.id: r for r in pipeline.load_existing(folder)}


def site_ids(lib: Library, records: dict[str, ErrorRecord]) -> dict[int, str]:
    """Model uid -> record id, for live raises whose template is unique among live records."""
    live = [r for r in records.values() if r.status != REMOVED]
    by_template: dict[str, list[ErrorRecord]] = {}
    for record in live:
        by_template.setdefault(record.site.message.template, []).append(record)
    found = {}
    for _, _, r in lib.raises():
        same = by_template.get(r.template, [])
        if r.alive and len(same) == 1 and sum(
                1 for _, _, o in lib.raises() if o.alive and o.template == r.template) == 1:
            found[r.uid] = same[0].id
    return found


def annotate(folder: Path, record: ErrorRecord, note: str, written_for: str) -> None:
    path = folder / record_files.ERRORS_DIR / f"{record.id}.yaml"
    text = path.read_text(encoding="utf-8")
    block = (f"annotation:\n  # by hand\n  written_for: {json.dumps(written_for)}\n"
             f"  what_it_means: {json.dumps(note)}  # {note}\n  solutions: []\n")
    old = render.annotation_block(text)
    assert old is not None
    path.write_text(text.replace(old, block), encoding="utf-8")


def check_untouched_keep_their_ids(repo: GitRepo, old_sha: str, before: dict[str, ErrorRecord],
                                   after: dict[str, ErrorRecord]) -> None:
    """Every live record whose lines git's diff left untouched is where the diff maps them."""
    with pin(str(repo.path), repo.head()) as pinned:
        lines = line_map(pinned, old_sha)
    for record_id, old in before.items():
        place = lines.follow(old.site.path, old.site.line, old.site.end_line)
        if old.status == REMOVED or place is None:
            continue
        new = after[record_id]
        assert new.status != REMOVED and (new.site.path, new.site.line) == place, (record_id, place)


def underived(record: ErrorRecord) -> ErrorRecord:
    return replace(record, evidence=(),
                   annotation=replace(record.annotation, text=None))


def check_invariants(folder: Path, notes: dict[str, str]) -> None:
    texts = {p.stem: p.read_text(encoding="utf-8") for p in (folder / record_files.ERRORS_DIR).glob("*.yaml")}
    for record_id, note in notes.items():
        holders = [i for i, text in texts.items() if f"# {note}\n" in text]
        assert holders == [record_id], (note, holders)  # neither lost nor duplicated
    for record in records_of(folder).values():
        written_for = record.annotation.written_for
        if written_for is None or written_for == record.site.message.template:
            continue
        in_review = record.history is not None and record.history.previous_template is not None
        assert record.status == NEEDS_REVIEW or (record.status == REMOVED and in_review), record.id


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_histories_keep_every_annotation_in_place(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = GitRepo(root / "lib")
        lib = Library()
        commit(repo, lib)
        run = dict(output_root=root / "out", cache_dir=root / "cache", jobs=1)
        folder = pipeline.extract(str(repo.path), ref=repo.head(), **run).folder  # type: ignore[arg-type]
        notes: dict[str, str] = {}
        for step in range(data.draw(st.integers(2, 4), label="commits")):
            records = records_of(folder)
            # a person annotates a few records and checks a few reviews
            for record in sorted(records.values(), key=lambda r: r.id):
                if record.status == REMOVED:
                    continue
                if record.id not in notes and data.draw(st.booleans(), label=f"annotate {record.id}"):
                    notes[record.id] = f"note {record.id} {step}"
                    annotate(folder, record, notes[record.id], record.site.message.template)
                elif record.status == NEEDS_REVIEW and data.draw(st.booleans(), label="review"):
                    notes[record.id] = f"note {record.id} {step} reviewed"
                    annotate(folder, record, notes[record.id], record.site.message.template)
            before = site_ids(lib, records_of(folder))
            old_sha, old_records = repo.head(), records_of(folder)
            touched: set[int] = set()
            edits = data.draw(st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 50)),
                                       min_size=1, max_size=3), label="edits")
            for kind, pick in edits:
                apply_edit(lib, kind, pick, touched)
            commit(repo, lib)
            pipeline.update(str(repo.path), ref=repo.head(), **run)  # type: ignore[arg-type]
            check_invariants(folder, notes)
            check_untouched_keep_their_ids(repo, old_sha, old_records, records_of(folder))
            after = site_ids(lib, records_of(folder))
            for uid, record_id in before.items():
                if uid not in touched and uid in after:
                    assert after[uid] == record_id, (uid, edits)
        full = pipeline.extract(str(repo.path), ref=repo.head(), dry_run=True, **run)  # type: ignore[arg-type]
        # incremental == full, but for the evidence (no test file here) and the annotation's text;
        # the related lists are the same too (an update makes them as a full run does)
        on_disk = records_of(folder)
        for record in full.merged.records:
            assert underived(on_disk[record.id]) == underived(record), record.id
        assert "manifest.yaml" not in full.pending
