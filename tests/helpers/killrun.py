"""Kill real `python -m crawler` runs and check what they leave: for test_kill_repo and kill_fuzz.

A `KillScene` is a generated library (`tests.helpers.killlib`) committed three times in a real git
repository, extracted at its first commit, with an annotation planted on every record; and, for
`extract` and `update` to the last commit, the output of a clean run from that start and how long
it took. `kill_chain` then starts the same command again and again on a copy of that start,
kills it with SIGKILL after a random delay (or just before its Nth file step, through
`tests.helpers.child`), and after every kill checks that:

- every process of the run (its process group, and every descendant seen just before the kill)
  is gone within a few seconds (`killprocs.grace`); one that is not is named, then killed;
- the folder's lock is free;
- every file in the folder loads (or is a temp file a later run removes), and every planted
  annotation block is byte for byte as it was written;

and after a few kills in a row, one run to the end must give exactly the clean run's output.
Problems are collected as lines, not raised, so the script can count them over hundreds of kills.
"""

from __future__ import annotations

import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from crawler.errors import CrawlerError
from crawler.pipeline import load_cache
from crawler.store import atomic, manifest_file, record_files, repo_output
from crawler.store.render import annotation_block
from tests.helpers.gitrepo import GitRepo
from tests.helpers.killlib import Tree, edited, renamed
from tests.helpers.killprocs import Ended, run
from tests.helpers.outputkit import snapshot
from tests.helpers.processes import child_env

COMMANDS = ("extract", "update")


# ---------------------------------------------------------------- annotations


def annotation(number: int, template: str) -> str:
    """The `annotation:` block planted on the Nth record: one of several layouts people write."""
    quoted = '"' + template.replace("\\", "\\\\").replace('"', '\\"') + '"'
    kind = number % 4
    if kind == 0:
        return ("annotation:\n"
                "  # reviewed by hand; keep this comment\n"
                f"  written_for: {quoted}\n"
                "  what_it_means: |\n"
                f"    Record {number}: the value is out of range.\n"
                "    Ünïcödé, 値が範囲外です, ✓ and 🚀 stay as they are.\n"
                "  solutions:\n"
                "  - Check the input first.\n"
                "  - |\n"
                "    a solution\n"
                "    over two lines\n"
                "  example_fix: null\n"
                "  defensive_patterns: []\n"
                "  prevention: []\n"
                "  when_it_happens: >-\n"
                "    folded text that\n"
                "    continues here\n"
                "  related: []\n")
    if kind == 1:
        return ("annotation:\n"
                "  written_for: null\n"
                "# a comment at the margin, inside the block\n"
                f"  what_it_means: \"tab\\there, quote \\\" and backslash \\\\ in {number}\"\n"
                "  solutions: [one, 'two, with a comma', \"three: a colon\"]\n"
                "  example_fix: |-\n"
                "    try:\n"
                "        f(x)\n"
                "    except ValueError as exc:  # not a YAML comment\n"
                "        print(exc)\n"
                "  defensive_patterns: []\n"
                "  prevention:\n"
                "    - indented list item\n"
                "  when_it_happens: null   # a trailing comment\n"
                "  related: []\n")
    if kind == 2:
        return ("annotation:\n"
                f"  written_for: {quoted}\n"
                "  what_it_means: |+\n"
                f"    keeps its trailing blank line ({number})\n"
                "\n"
                "  solutions:\n"
                "  - step: read the message\n"
                "    code: print(exc)\n"
                "  - step: 'fix: the value'\n"
                "  example_fix: null\n"
                "  defensive_patterns:\n"
                "  - \"שלום עולם\"\n"
                "  - e\u0301 with a combining accent\n"
                "  prevention: []\n"
                "  when_it_happens: null\n"
                "  related: []\n"
                "  reviewer: {name: Zoë, date: '2026-12-01'}\n"
                "\n")
    return ("annotation:\n"
            "  written_for: null\n"
            f"  what_it_means: plain words for record {number}\n"
            "  solutions: []\n"
            "  example_fix: null\n"
            "  defensive_patterns: []\n"
            "  prevention: []\n"
            "  when_it_happens: null\n"
            "  related: []\n")


def plant(folder: Path, cache: Path) -> dict[str, str]:
    """An annotation on every record of the folder; each block's exact text, by record id.

    Each planted file is loaded through the load cache in `cache`, as the next run would: the
    kills then hit runs as long as a weekly update's, not the first one after a long edit.
    """
    planted = {}
    loads = load_cache(cache)
    for number, path in enumerate(record_files.iter_record_paths(folder)):
        record = record_files.load_record(path)
        text = path.read_text(encoding="utf-8")
        old = annotation_block(text)
        assert old is not None and text.count(old) == 1, path
        block = annotation(number, record.site.message.template)
        path.write_text(text.replace(old, block), encoding="utf-8")
        record_files.load_record(path, loads)  # it still loads: the start is a valid folder
        planted[record.id] = block
    loads.flush()
    return planted


# ---------------------------------------------------------------- the scene


@dataclass(frozen=True)
class Workspace:
    """One output root and cache folder, copied from the scene's start; logs of its runs."""

    root: Path

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def stderr(self) -> str:
        return (self.logs / "stderr").read_text(encoding="utf-8", errors="replace")[-800:]


def commit_tree(repo: GitRepo, tree: Tree, before: Tree) -> str:
    for path in sorted(set(before) - set(tree)):
        (repo.path / path).unlink()
    for path, text in sorted(tree.items()):
        if before.get(path) != text:
            repo.write(path, text)
    return repo.commit(f"{len(tree)} files")


class KillScene:
    """The repository, the annotated start, and each command's clean result from that start."""

    def __init__(self, base: Path, first: Tree, seed: int) -> None:
        self.base = base
        # Compiled modules go to a folder of the scene: each run then spends its time on the
        # crawler's work, not on compiling it again (the checkout is not written to).
        self.env = {**child_env(PYTHONPYCACHEPREFIX=str(base / "pycache")),
                    "PYTHONDONTWRITEBYTECODE": ""}
        self.repo = GitRepo(base / "repo")
        second = renamed(first, seed)
        third = edited(second, seed + 1)
        self.shas = (commit_tree(self.repo, first, {}), commit_tree(self.repo, second, first),
                     commit_tree(self.repo, third, second))
        self.files = len(third)
        self.start = Workspace(base / "start")
        self.rel, self.planted = self._annotated_start()
        self.initial = snapshot(self.start.out / self.rel)
        self._good = set(self.initial.items())  # (path, bytes) known to load: not loaded again
        assert self.check(self.start).problems == [], "the annotated start"
        self.reference: dict[str, dict[str, bytes]] = {}
        self.seconds: dict[str, float] = {}
        self.steps: dict[str, int] = {}
        for command in COMMANDS:
            self._clean_run(command)

    def _annotated_start(self) -> tuple[Path, dict[str, str]]:
        """Extract at the first commit and plant an annotation on every record."""
        ended = run(self.command("extract", self.start, self.shas[0]), self.start.logs, env=self.env)
        assert ended.code == 0, self.start.stderr()
        manifests = sorted(self.start.out.rglob(manifest_file.MANIFEST))
        assert len(manifests) == 1, manifests
        rel = manifests[0].parent.relative_to(self.start.out)  # wherever its identity puts it
        return rel, plant(self.start.out / rel, self.start.cache)

    def _clean_run(self, command: str) -> None:
        """The command from the start without a kill: its output, duration and file steps."""
        clean = self.fresh(f"reference-{command}")
        counted = clean.root / "steps"
        env = {**self.env, "CRAWLER_TEST_COUNT_STEPS": str(counted)}
        ended = run(child_command(self.command(command, clean)), clean.logs, env=env)
        assert ended.code == 0, clean.stderr()
        self.seconds[command] = ended.seconds
        self.steps[command] = int(counted.read_text(encoding="ascii"))
        self.reference[command] = snapshot(self.folder(clean))
        assert self.check(clean).problems == [], f"the clean {command} itself"
        self._good.update(self.reference[command].items())
        shutil.rmtree(clean.root)

    def fresh(self, name: str) -> Workspace:
        """A copy of the annotated start: its output root and its cache."""
        space = Workspace(self.base / name)
        if space.root.exists():
            shutil.rmtree(space.root)
        shutil.copytree(self.start.out, space.out)
        shutil.copytree(self.start.cache, space.cache)
        return space

    def folder(self, space: Workspace) -> Path:
        return space.out / self.rel

    def command(self, command: str, space: Workspace, sha: str | None = None) -> list[str]:
        """The command line, with the default options but for where it reads and writes."""
        return [sys.executable, "-m", "crawler", command, str(self.repo.path), "--commit",
                sha or self.shas[-1], "-o", str(space.out), "--cache-dir", str(space.cache)]

    @property
    def records(self) -> int:
        return len(self.planted)

    # ---------------------------------------------------------------- after a kill

    def check(self, space: Workspace) -> Checked:
        """Every file loads or is a temp file; every planted block is as it was; the lock is free."""
        folder = self.folder(space)
        files = snapshot(folder)
        checked = Checked()
        for rel, data in sorted(files.items()):
            name = rel.rpartition("/")[2]
            if name.startswith(".") and name.endswith(atomic.TEMP_SUFFIX):
                checked.temps += 1
            elif (rel, data) not in self._good:  # neither as it was nor as a clean run leaves it
                checked.problems.extend(_loads(folder, rel))
        for record_id, block in self.planted.items():
            rel = f"{record_files.ERRORS_DIR}/{record_id}.yaml"
            if rel not in files:
                checked.problems.append(f"{rel}: the annotated record is gone")
            elif annotation_block(files[rel].decode("utf-8")) != block:
                checked.problems.append(f"{rel}: its annotation block changed")
            else:
                checked.annotations += 1
        try:
            with repo_output.lock(folder):
                pass
        except CrawlerError as error:
            checked.problems.append(f"the lock is still held: {error}")
        return checked

    def heal(self, command: str, space: Workspace) -> list[str]:
        """One run to the end must give exactly the clean run's output, file for file."""
        ended = run(self.command(command, space), space.logs, env=self.env)
        if ended.code != 0:
            return [f"the healing {command} exited {ended.code}: {space.stderr()}"]
        return differences(snapshot(self.folder(space)), self.reference[command])


@dataclass
class Checked:
    """What one check after a kill found."""

    problems: list[str] = field(default_factory=list)
    temps: int = 0
    annotations: int = 0


def _loads(folder: Path, rel: str) -> list[str]:
    try:
        if rel == manifest_file.MANIFEST:
            manifest_file.load_manifest(folder)
        elif rel.startswith(f"{record_files.ERRORS_DIR}/"):
            record_files.load_record(folder / rel)
    except CrawlerError as error:
        return [f"{rel} does not load: {error}"]
    return []


def differences(got: dict[str, bytes], want: dict[str, bytes]) -> list[str]:
    """Each file that is missing, extra, or holds other bytes than it should."""
    lines = [f"{rel}: missing" for rel in sorted(set(want) - set(got))]
    lines += [f"{rel}: not in the clean output" for rel in sorted(set(got) - set(want))]
    lines += [f"{rel}: differs from the clean output" for rel in sorted(set(got) & set(want))
              if got[rel] != want[rel]]
    return lines


def child_command(args: list[str]) -> list[str]:
    """The same command line through `tests.helpers.child`, whose file steps can be hooked."""
    assert args[1:3] == ["-m", "crawler"], args
    return [args[0], "-m", "tests.helpers.child", "crawler", *args[3:]]


# ---------------------------------------------------------------- chains of kills


@dataclass
class Figures:
    """What a series of kills found; `problems` must stay empty."""

    kills: int = 0
    finished: int = 0  # runs that ended before their kill came
    heals: int = 0
    annotations: int = 0  # planted blocks found byte for byte, over every check
    temps: int = 0  # temp files seen after kills (a later run removes them)
    leftovers: list[str] = field(default_factory=list)
    lingered: float = 0.0  # the longest a process of a killed run took to exit after the kill
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, other: Figures) -> None:
        for name in ("kills", "finished", "heals", "annotations", "temps", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.lingered = max(self.lingered, other.lingered)
        self.leftovers += other.leftovers
        self.problems += other.problems


def draw_delay(rng: random.Random, seconds: float) -> float:
    """When to kill a run that takes `seconds` clean: uniform, one in eight very early, and one
    in eight very late (around the manifest's write and the exit)."""
    roll = rng.random()
    if roll < 0.125:
        return rng.uniform(0.0, 0.03 * seconds)
    if roll < 0.25:
        return rng.uniform(0.93 * seconds, 1.02 * seconds)
    return rng.uniform(0.0, seconds)


def kill_chain(scene: KillScene, command: str, kills: int, rng: random.Random, label: str,
               first_step: int | None = None) -> Figures:
    """`kills` SIGKILLs in a row of `command` on one copy of the start, then the healing run.

    With `first_step`, the first run is killed just before that file step of a clean run (the
    folder is still the start, so the steps are the clean run's); the others at a random delay.
    A run that finishes before its kill has healed the folder: it must equal the clean output,
    and the chain goes on from a fresh copy of the start, so that every kill hits a run with
    work to do (at most `3 * kills` runs in all).
    """
    started = time.monotonic()
    figures = Figures()
    name = label.replace(" ", "-")
    space = scene.fresh(name)
    if first_step is not None:
        env = {**scene.env, "CRAWLER_TEST_KILL_AT": str(first_step)}
        _kill_once(scene, command, space, figures, f"{label}: before step {first_step}",
                   child_command(scene.command(command, space)), env=env)
    runs = 0
    while figures.kills < kills and runs < 3 * kills:
        runs += 1
        delay = draw_delay(rng, scene.seconds[command])
        ended = _kill_once(scene, command, space, figures, f"{label}: after {delay:.3f} s",
                           scene.command(command, space), kill_after=delay)
        if ended.code == 0:
            space = scene.fresh(name)
    figures.problems += [f"{label}: healing: {line}" for line in scene.heal(command, space)]
    figures.heals += 1
    shutil.rmtree(space.root)
    figures.seconds = time.monotonic() - started
    return figures


def _kill_once(scene: KillScene, command: str, space: Workspace, figures: Figures, what: str,
               args: list[str], *, env: dict[str, str] | None = None,
               kill_after: float | None = None) -> Ended:
    """One run, killed (or not); then every check, its findings added to `figures`."""
    ended = run(args, space.logs, kill_after=kill_after, env=env or scene.env)
    figures.leftovers += ended.leftovers
    figures.problems += [f"{what}: {proc} outlived the kill by {ended.lingered:.1f} s"
                         for proc in ended.leftovers]
    figures.lingered = max(figures.lingered, ended.lingered)
    if ended.killed:
        figures.kills += 1
    elif ended.code == 0:  # done before the kill came: it healed the folder
        figures.finished += 1
        figures.problems += [f"{what}: finished, but {line}" for line in
                             differences(snapshot(scene.folder(space)), scene.reference[command])]
    else:
        figures.problems.append(f"{what}: exited {ended.code}: {space.stderr()}")
    checked = scene.check(space)
    figures.problems += [f"{what}: {line}" for line in checked.problems]
    figures.annotations += checked.annotations
    figures.temps += checked.temps
    return ended
