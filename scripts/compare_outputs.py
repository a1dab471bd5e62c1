"""Compare two output folders byte for byte: what `crawler extract --output DIR` wrote, twice.

Same code and same inputs must give the same bytes, and a change that moves code without
changing behaviour must too. Every file, folder and link under the two roots is compared by
its path relative to its root; the only files left out are the two a run legitimately writes
differently:

- `lookup.sqlite`, the lookup index beside each repository's records: a cache whose rows hold
  the files' signatures (inode, size, times), which differ between any two runs;
- `.crawler.lock`, the lock file of a repository's folder (empty, kept for the next run).

Nothing else differs between two runs of the same code on the same input: a difference in any
other file is reported, never hidden, and so is a file of the same bytes whose permission bits
differ. The script prints one line per file that differs (with the first differing line of a
text file), that is only in the first root (`missing`) or only in the second (`extra`; a folder
only one root has is one line, with the number of files it holds), or whose kind differs (a
file against a folder or a link), then a summary, and exits 1 on any difference, 0 when the
folders are equal, 2 when a root is no folder.

    python scripts/compare_outputs.py BEFORE AFTER [--quiet] [--code-changed]

With `--code-changed` (the two roots were written by two versions of the crawler, as a move of
its modules is checked), one line more is left out: the manifest's `evidence_digest`, which
digests the source of the crawler's evidence reader so that an update reads the tests again
after that code changes. Moving a module changes that digest and nothing else: the line is
compared with its value blanked, and every other byte of the manifest still counts.

Both roots are usually output roots of the same list of inputs written by
`scripts/produce_outputs.py` (one folder per input below each root).
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

# The names the crawler gives them (crawler/serve/lookup/index.py INDEX_FILE and
# crawler/store/repo_output.py LOCK_FILE), written here rather than imported: the script must
# compare the outputs of two versions of the code, whichever package those names live in.
LEFT_OUT = frozenset({"lookup.sqlite", ".crawler.lock"})
CODE_DIGEST = re.compile(rb"^evidence_digest: [0-9a-f]+$", re.M)
CHUNK = 1 << 20
SHOWN = 160  # characters of a differing line shown


def entries(root: Path) -> Iterator[tuple[str, str]]:
    """(relative path, kind) of everything below `root`, links not followed; kind is `file`,
    `folder`, `link` or `other`. The left-out files are not listed."""
    for folder, folders, files in os.walk(root):
        folders.sort()
        here = Path(folder)
        for name in sorted(folders + files):
            path = here / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                kind = "link"
            elif stat.S_ISDIR(mode):
                kind = "folder"
            elif stat.S_ISREG(mode):
                kind = "file"
            else:
                kind = "other"
            if kind == "file" and name in LEFT_OUT:
                continue
            yield path.relative_to(root).as_posix(), kind


def same_bytes(first: Path, second: Path, code_changed: bool = False) -> bool:
    if code_changed and first.name == "manifest.yaml":
        return blank_code_digest(first.read_bytes()) == blank_code_digest(second.read_bytes())
    if first.stat().st_size != second.stat().st_size:
        return False
    with open(first, "rb") as a, open(second, "rb") as b:
        while True:
            one, two = a.read(CHUNK), b.read(CHUNK)
            if one != two:
                return False
            if not one:
                return True


def blank_code_digest(data: bytes) -> bytes:
    return CODE_DIGEST.sub(b"evidence_digest: <digest of the crawler's own code>", data)


def first_difference(first: Path, second: Path) -> str:
    """Where two files part: the line number and the two lines of a text file, else the byte."""
    one, two = first.read_bytes(), second.read_bytes()
    sizes = f"{len(one)} and {len(two)} bytes"
    at = next((index for index, (x, y) in enumerate(zip(one, two)) if x != y), min(len(one), len(two)))
    try:
        lines_one, lines_two = one.decode("utf-8").splitlines(), two.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return f"{sizes}, first difference at byte {at}"
    line = one[:at].count(b"\n")
    left = lines_one[line] if line < len(lines_one) else "<end of file>"
    right = lines_two[line] if line < len(lines_two) else "<end of file>"
    return (f"{sizes}, line {line + 1}: {left[:SHOWN]!r} against {right[:SHOWN]!r}")


def compare(first: Path, second: Path, quiet: bool = False,
            code_changed: bool = False) -> tuple[int, list[str]]:
    """The number of files compared and one line per difference."""
    one, two = dict(entries(first)), dict(entries(second))
    compared, lines = 0, []
    alone = ""  # a folder only one side has: one line for it, none for what it holds
    for path in sorted(one.keys() | two.keys()):
        if alone and path.startswith(alone):
            continue
        kind_one, kind_two = one.get(path), two.get(path)
        if kind_one is None or kind_two is None:
            side, kinds = (first, one) if kind_two is None else (second, two)
            kind = kinds[path]
            word = "missing" if kind_two is None else "extra"
            if kind == "folder":
                alone = path + "/"
                held = sum(name.startswith(alone) and what == "file" for name, what in kinds.items())
                lines.append(f"{word}: {path}/ (folder only in {side}, holding {held} files)")
            else:
                lines.append(f"{word}: {path} ({kind} only in {side})")
        elif kind_one != kind_two:
            lines.append(f"kind: {path} is a {kind_one} in {first}, a {kind_two} in {second}")
        elif kind_one == "link":
            target_one, target_two = os.readlink(first / path), os.readlink(second / path)
            if target_one != target_two:
                lines.append(f"differs: {path} (a link to {target_one!r} against {target_two!r})")
        elif kind_one == "file":
            compared += 1
            if not same_bytes(first / path, second / path, code_changed):
                detail = "" if quiet else f" ({first_difference(first / path, second / path)})"
                lines.append(f"differs: {path}{detail}")
            else:
                mode_one, mode_two = (stat.S_IMODE((root / path).stat().st_mode)
                                      for root in (first, second))
                if mode_one != mode_two:  # the same bytes another user may not read
                    lines.append(f"differs: {path} (mode {mode_one:o} against {mode_two:o})")
        elif kind_one == "other":
            lines.append(f"differs: {path} (neither a file, a folder nor a link: not compared)")
    return compared, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path, help="the first output root (before)")
    parser.add_argument("second", type=Path, help="the second output root (after)")
    parser.add_argument("--quiet", action="store_true",
                        help="no first differing line, only the paths and the summary")
    parser.add_argument("--code-changed", action="store_true",
                        help="the roots come from two versions of the crawler: the manifests' "
                             "evidence_digest (a digest of the crawler's own code) is left out")
    args = parser.parse_args(argv)
    for root in (args.first, args.second):
        if not root.is_dir():
            print(f"error: {root} is no folder", file=sys.stderr)
            return 2
    try:
        compared, lines = compare(args.first, args.second, args.quiet, args.code_changed)
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    differing = sum(line.startswith("differs:") for line in lines)
    print(f"{compared} files compared, {differing} differing, "
          f"{sum(line.startswith('missing:') for line in lines)} missing, "
          f"{sum(line.startswith('extra:') for line in lines)} extra, "
          f"{sum(line.startswith('kind:') for line in lines)} of another kind "
          f"({', '.join(sorted(LEFT_OUT))} left out)")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
