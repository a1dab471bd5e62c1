"""Every record whose message reading changed between two versions of the crawler's code.

Each library of a list (`scripts/produce_outputs.py`'s: `NAME PATH COMMIT [IDENTITY]` a line,
real repositories at pinned commits) is extracted twice, once with an OLD and once with a NEW
revision of this repository's code, and the two outputs' records are compared: every record
whose message `kind`, `template`, `placeholders` or `regex` differs is printed with both values,
and so is every record only one side has; a count per library ends the report.

    python scripts/template_changes.py LIST --old REV --new REV [--work DIR] [--only A,B]
        [--jobs 1]
    python scripts/template_changes.py --roots OLD_ROOT NEW_ROOT

With `--old`/`--new`, each revision's tree is written out with `git archive` (the repository
itself is left as it is: no worktree is registered) under `WORK/code/SHA`, and
`scripts/produce_outputs.py` runs each library with `python -m crawler` in that tree (the
current folder and PYTHONPATH), so the interpreter and its installed dependencies are this
one's and the crawler's code is the revision's; its outputs go to `WORK/old` and `WORK/new`.
With `--roots`, two output roots written before (`produce_outputs.py` of the same list, one
folder per library) are compared as they are.

Records are paired by their id; a record whose id only one side has is paired with the other
side's unpaired record at the same file, line and exception when there is exactly one. What is
still unpaired is reported as `only old` or `only new`. The byte-for-byte check of two roots
is `scripts/compare_outputs.py`; this script says which readings changed. Exit 0 when no record
changed, 1 when any did, 2 when a run or an input failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
FIELDS = ("kind", "template", "placeholders", "regex")


@dataclass(frozen=True)
class Reading:
    """One record's identity and its message reading."""

    id: str
    path: str
    line: int
    exception: str
    fields: tuple[tuple[str, object], ...]

    @property
    def site(self) -> tuple[str, int, str]:
        return self.path, self.line, self.exception

    def where(self) -> str:
        return f"{self.path}:{self.line} {self.exception} [{self.id}]"


def readings(folder: Path) -> dict[str, Reading]:
    """Every record under `folder` (a library's output), by id."""
    found: dict[str, Reading] = {}
    for path in sorted(folder.rglob("*.yaml")):
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        if not isinstance(data, dict) or not isinstance(data.get("extracted"), dict):
            continue  # the manifest, or any other file that is no record
        extracted = data["extracted"]
        message = extracted.get("message") or {}
        found[str(data["id"])] = Reading(
            str(data["id"]), str(extracted.get("path")), int(extracted.get("line") or 0),
            str(extracted.get("exception")),
            tuple((name, message.get(name)) for name in FIELDS))
    return found


def pairs(old: dict[str, Reading], new: dict[str, Reading]) -> tuple[
        list[tuple[Reading, Reading]], list[Reading], list[Reading]]:
    """Records paired by id, then the rest by a file, line and exception one record each side
    has; and the records of each side left unpaired."""
    paired = [(old[key], new[key]) for key in sorted(old.keys() & new.keys())]
    rest_old = [old[key] for key in sorted(old.keys() - new.keys())]
    rest_new = [new[key] for key in sorted(new.keys() - old.keys())]
    by_site_old: dict[tuple[str, int, str], list[Reading]] = {}
    by_site_new: dict[tuple[str, int, str], list[Reading]] = {}
    for reading in rest_old:
        by_site_old.setdefault(reading.site, []).append(reading)
    for reading in rest_new:
        by_site_new.setdefault(reading.site, []).append(reading)
    matched: set[str] = set()
    for site, ones in by_site_old.items():
        others = by_site_new.get(site, [])
        if len(ones) == 1 and len(others) == 1:
            paired.append((ones[0], others[0]))
            matched.update((ones[0].id, others[0].id))
    return (paired, [r for r in rest_old if r.id not in matched],
            [r for r in rest_new if r.id not in matched])


def changes(name: str, old: dict[str, Reading], new: dict[str, Reading]) -> Iterator[str]:
    """One block of lines per changed record, one line per record only one side has."""
    paired, only_old, only_new = pairs(old, new)
    for before, after in sorted(paired, key=lambda pair: (pair[0].site, pair[0].id)):
        differing = [(field, one, two) for (field, one), (_, two)
                     in zip(before.fields, after.fields) if one != two]
        if differing:
            yield f"{name}: changed {before.where()}" + (
                f" (new id {after.id})" if after.id != before.id else "")
            for field, one, two in differing:
                yield f"    {field}: {one!r}"
                yield f"    {' ' * len(field)}  -> {two!r}"
    for reading in sorted(only_old, key=lambda r: (r.site, r.id)):
        yield f"{name}: only old {reading.where()} {dict(reading.fields)['template']!r}"
    for reading in sorted(only_new, key=lambda r: (r.site, r.id)):
        yield f"{name}: only new {reading.where()} {dict(reading.fields)['template']!r}"


def compare_roots(old_root: Path, new_root: Path, names: list[str]) -> tuple[list[str], int]:
    """The report's lines and the number of records changed or unpaired, over every library."""
    lines, counts = [], []
    total = 0
    for name in names:
        old, new = readings(old_root / name), readings(new_root / name)
        found = list(changes(name, old, new))
        changed = sum(" changed " in line for line in found)
        alone_old = sum(" only old " in line for line in found)
        alone_new = sum(" only new " in line for line in found)
        lines.extend(found)
        counts.append(f"{name:<16} {len(old):>7} {len(new):>7} {changed:>8} {alone_old:>8} "
                      f"{alone_new:>8}")
        total += changed + alone_old + alone_new
    header = f"{'library':<16} {'old':>7} {'new':>7} {'changed':>8} {'only old':>8} {'only new':>8}"
    return [*lines, header, *counts], total


def resolve(repository: Path, revision: str) -> str:
    done = subprocess.run(["git", "-C", str(repository), "rev-parse", "--verify", "-q",
                           f"{revision}^{{commit}}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise LookupError(f"{repository} holds no revision {revision!r}")
    return done.stdout.strip()


def write_tree(repository: Path, sha: str, folder: Path) -> Path:
    """The tree of `sha` written out under `folder/sha` (once: a folder already there is kept)."""
    target = folder / sha
    if (target / "crawler").is_dir():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        archive = Path(scratch) / "tree.tar"
        subprocess.run(["git", "-C", str(repository), "archive", "--format=tar", "-o",
                        str(archive), sha], check=True)
        unpacked = Path(scratch) / "tree"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        unpacked.rename(target)
    return target


def produce(code: Path, listing: Path, root: Path, work: Path, only: str, jobs: int) -> int:
    """This checkout's produce_outputs.py over the list, with the crawler of `code`."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(code)
    argv = [sys.executable, str(HERE / "produce_outputs.py"), str(listing.resolve()),
            str(root), "--work", str(work), "--jobs", str(jobs),
            "--crawler", f"{sys.executable} -m crawler"]
    if only:
        argv += ["--only", only]
    return subprocess.run(argv, cwd=code, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list", nargs="?", type=Path,
                        help="lines of NAME PATH COMMIT [IDENTITY] (produce_outputs.py's list)")
    parser.add_argument("--old", help="the old revision of this repository's code")
    parser.add_argument("--new", help="the new revision of this repository's code")
    parser.add_argument("--roots", nargs=2, type=Path, metavar=("OLD_ROOT", "NEW_ROOT"),
                        help="compare two output roots written before")
    parser.add_argument("--work", type=Path, help="trees, outputs, caches and logs "
                        "[default: a new temporary folder, kept]")
    parser.add_argument("--only", default="", help="these names of the list only")
    parser.add_argument("--jobs", type=int, default=1, help="the crawler's -j [default: 1]")
    args = parser.parse_args(argv)
    if args.roots:
        old_root, new_root = args.roots
        for root in args.roots:
            if not root.is_dir():
                print(f"error: {root} is no folder", file=sys.stderr)
                return 2
        names = sorted({path.name for root in args.roots for path in root.iterdir()
                        if path.is_dir()})
    else:
        if args.list is None or not args.old or not args.new:
            parser.error("give LIST --old REV --new REV, or --roots OLD_ROOT NEW_ROOT")
        try:
            old_sha, new_sha = resolve(REPOSITORY, args.old), resolve(REPOSITORY, args.new)
        except LookupError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        work = (args.work or Path(tempfile.mkdtemp(prefix="template-changes-"))).resolve()
        old_root, new_root = work / "old", work / "new"
        print(f"old {old_sha}, new {new_sha}, in {work}", flush=True)
        for sha, root in ((old_sha, old_root), (new_sha, new_root)):
            code = write_tree(REPOSITORY, sha, work / "code")
            if produce(code, args.list, root, work / f"{root.name}.work", args.only,
                       args.jobs) != 0:
                print(f"error: an extract with {sha} failed (logs in "
                      f"{work / f'{root.name}.work' / 'logs'})", file=sys.stderr)
                return 2
        names = sorted(path.name for path in old_root.iterdir() if path.is_dir())
    lines, total = compare_roots(old_root, new_root, names)
    for line in lines:
        print(line)
    print(f"{total} records changed or on one side only, over {len(names)} libraries")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
