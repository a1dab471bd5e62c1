"""A record's annotation block is one block, kept byte for byte or refused, never rewritten.

PyYAML keeps the last of two equal keys and drops the first without a word, and a block the
crawler cannot keep as it stands was once written again from its loaded data (comments gone,
U+0085 turned into a space). Here a person's block in each such layout is planted in a real
output folder, and every command that reads records is run on it as a user types it: each
refuses with one line naming the file and the line, and the file keeps its bytes. A block whose
quoted values hold a line break YAML knows (U+2028, U+2029, U+0085) is kept, comments and all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawler import pipeline
from crawler.store import render
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import snapshot
from tests.helpers.processes import ROOT, child_env
from tests.helpers.update_output import BASE

POSITIVE = "x must be positive, got {x}"
CANNOT = "cannot load {path}"
MOVED = "import os\n\n\n" + BASE  # every raise three lines down: an update rewrites each record

PERSON = (
    "annotation:\n"
    "  # written by hand: keep this comment\n"
    "  written_for: 'x must be positive, got {x}'\n"
    "  what_it_means: 'x is negative'\n"
    "  solutions: []\n"
    "  example_fix: null\n"
    "  defensive_patterns: []\n"
    "  prevention: []\n"
    "  when_it_happens: null\n"
    "  related: []\n"
)


@dataclass
class Out:
    repo: Path
    root: Path
    folder: Path
    ids: dict[str, str]  # template -> id

    def path(self, template: str) -> Path:
        return self.folder / "errors" / f"{self.ids[template]}.yaml"

    def crawler(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "crawler", *map(str, args)], cwd=ROOT,
                              env=child_env(), capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Out:
    """A repository extracted at its first commit, and a second commit that moves every raise."""
    base = tmp_path_factory.mktemp("one block é")
    repo = GitRepo(base / "lib")
    repo.write("lib/m.py", BASE)
    repo.commit("first")
    folder = pipeline.extract(str(repo.path), ref=repo.head(), output_root=base / "out",
                              cache_dir=base / "cache", jobs=1).folder
    ids = {r.site.message.template: r.id for r in pipeline.load_existing(folder)}
    repo.write("lib/m.py", MOVED)
    repo.commit("second")
    return Out(repo.path, base / "out", folder, ids)


@pytest.fixture
def out(made: Out, tmp_path: Path) -> Out:
    shutil.copytree(made.root, tmp_path / "out", symlinks=True)
    shutil.copytree(made.repo, tmp_path / "lib", symlinks=True)
    folder = tmp_path / "out" / made.folder.relative_to(made.root)
    return Out(tmp_path / "lib", tmp_path / "out", folder, dict(made.ids))


def _plant(path: Path, block: str, after: str = "") -> str:
    """Put `block` in place of the record's annotation block, and `after` at its end."""
    text = path.read_text(encoding="utf-8")
    kept = render.annotation_block(text)
    assert kept is not None
    planted = text.replace(kept, block) + after
    path.write_bytes(planted.encode("utf-8"))
    return planted


def _line_of(text: str, marker: str, nth: int = 1) -> int:
    """The line (counted by `\\n`) of the `nth` occurrence of `marker`."""
    at = -1
    for _ in range(nth):
        at = text.index(marker, at + 1)
    return text.count("\n", 0, at) + 1


# Each layout: the planted text from a record's path, and the line a refusal must name.
LAYOUTS: dict[str, Callable[[Path], tuple[str, int]]] = {
    "a second annotation key": lambda path: (
        text := _plant(path, PERSON, "annotation:\n  what_it_means: a draft\n"),
        _line_of(text, "annotation:", 2)),
    "a key repeated in the block": lambda path: (
        text := _plant(path, PERSON.replace("  solutions: []\n",
                                            "  what_it_means: 'said again'\n  solutions: []\n")),
        _line_of(text, "what_it_means", 2)),
    "a quoted key": lambda path: (
        text := _plant(path, PERSON.replace("annotation:", '"annotation":')),
        _line_of(text, '"annotation":')),
    "a spaced key": lambda path: (
        text := _plant(path, PERSON.replace("annotation:", "annotation :")),
        _line_of(text, "annotation :")),
    "a flow mapping continued at the margin": lambda path: (
        text := _plant(path, "annotation: {written_for: null, what_it_means: 'x is negative',\n"
                             "solutions: [], example_fix: null, defensive_patterns: [],\n"
                             "prevention: [], when_it_happens: null, related: []}\n"),
        _line_of(text, "annotation:")),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_command_refuses_a_block_it_cannot_keep(out: Out, layout: str) -> None:
    path = out.path(POSITIVE)
    planted, line = LAYOUTS[layout](path)
    named = f"{path}:{line}: "
    before = snapshot(out.folder)

    commands: list[list[str | Path]] = [["validate", out.root], ["check", out.root]]
    for command in commands:
        run = out.crawler(*command)
        assert run.returncode == 1 and named in run.stdout + run.stderr, (command, run)
        assert snapshot(out.folder) == before

    exported = out.root.parent / "records.jsonl"
    run = out.crawler("export", out.root, "--format", "jsonl", "-o", exported)
    assert named in run.stdout + run.stderr, run
    assert out.ids[POSITIVE] not in exported.read_text(encoding="utf-8")

    run = out.crawler("lookup", "ValueError: x must be positive, got -3", out.root)
    assert named in run.stderr and out.ids[POSITIVE] not in run.stdout, run

    run = out.crawler("adopt", out.ids[POSITIVE], out.ids[CANNOT], out.root)
    assert run.returncode == 1 and named in run.stderr and "nothing was written" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and snapshot(out.folder) == before

    runs: list[list[str | Path]] = [["update", out.repo, "--commit", "HEAD"], ["extract", out.repo]]
    for command in runs:
        run = out.crawler(*command, "-o", out.root)
        assert named in run.stdout + run.stderr, (command, run)
        assert path.read_bytes() == planted.encode("utf-8")  # the person's file, as it was
        others = [p for p in path.parent.iterdir() if p != path]
        assert all(POSITIVE not in p.read_text(encoding="utf-8") for p in others)  # held back


@pytest.mark.parametrize("mark", ["\u2028", "\u2029", "\x85"])
def test_a_line_break_in_a_quoted_value_is_kept_byte_for_byte(out: Out, mark: str) -> None:
    block = PERSON.replace("'x is negative'", f'"x is{mark}negative"').replace(
        "  solutions: []\n", f"  # a comment beside them\n  solutions: ['a{mark}b']\n")
    path = out.path(POSITIVE)
    planted = _plant(path, block)

    run = out.crawler("update", out.repo, "--commit", "HEAD", "-o", out.root)
    assert run.returncode == 0, run
    text = path.read_bytes().decode("utf-8")
    assert text != planted and "line: 6\n" in text  # rewritten: the raise moved down
    assert render.split_at_annotation(text) is not None and block in text
    assert out.crawler("validate", out.root).returncode == 0

    run = out.crawler("adopt", out.ids[POSITIVE], out.ids[CANNOT], out.root)
    assert run.returncode == 0, run
    assert block in out.path(CANNOT).read_bytes().decode("utf-8")  # moved as bytes
    run = out.crawler("export", out.root, "--format", "jsonl", "-o", out.root.parent / "x.jsonl")
    assert run.returncode == 0, run
    lines = (out.root.parent / "x.jsonl").read_text(encoding="utf-8").split("\n")
    adopted = next(r for r in map(json.loads, filter(None, lines)) if r.get("id") == out.ids[CANNOT])
    read = " " if mark == "\x85" else mark  # as YAML reads the file: a quoted U+0085 folds
    assert adopted["annotation"]["what_it_means"] == f"x is{read}negative"
    assert adopted["annotation"]["solutions"] == [f"a{read}b"]
