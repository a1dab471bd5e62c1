"""Ruff as an independent oracle: every raise EM101/EM102/EM103 flags must be one of our records.

The files are committed into a fresh git repository and read back through the pipeline's own
collect stage (pin, visit) and the repository-wide pass, exactly as `crawler extract` reads a
repository. A ruff diagnostic is covered when a site of the same file spans its line; one in a
file LibCST cannot parse is left out and counted. The other direction, our raise statements
that ruff does not flag, is counted by message kind.

Run on the whole standard library of this interpreter:

    python -m tests.helpers.ruff_oracle [--jobs N] [--include-tests]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crawler.catalogue import classes
from crawler.pipeline import collect
from crawler.records import ExtractOptions
from tests.helpers.gitrepo import GitRepo

RULES = "EM101,EM102,EM103"


@dataclass
class OracleResult:
    """What ruff flagged, what we cover, and what we find that ruff does not flag."""

    files: int = 0
    parse_failed: int = 0
    ruff_sites: int = 0  # in files LibCST parses
    ruff_in_unparsed: int = 0
    covered: int = 0
    uncovered: list[str] = field(default_factory=list)  # "path:line code"
    raise_statements_with_records: int = 0
    records: int = 0
    ours_not_flagged: Counter[str] = field(default_factory=Counter)  # by kind
    examples: dict[str, list[str]] = field(default_factory=dict)  # kind: a few "path:line"
    seconds: float = 0.0


def ruff_command() -> list[str] | None:
    """How to run ruff here, or None when it is not installed."""
    if shutil.which("ruff"):
        return ["ruff"]
    probe = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    return [sys.executable, "-m", "ruff"] if probe.returncode == 0 else None


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(include_tests: bool = True) -> list[Path]:
    """The standard library's .py files, relative to its root, sorted; site-packages left out."""
    root = stdlib_root()
    files = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("site-packages", "dist-packages"):
            continue
        if not include_tests and relative.parts[0] in ("test", "idlelib", "lib2to3") and \
                len(relative.parts) > 1 and "test" in relative.parts[1]:
            continue
        files.append(relative)
    return files


def run_oracle(source_root: Path, files: Sequence[Path], work: Path, jobs: int = 1) -> OracleResult:
    """Commit `files` (relative to `source_root`) into a repository under `work`; compare."""
    ruff = ruff_command()
    if ruff is None:
        raise RuntimeError("ruff is not installed")
    started = time.perf_counter()
    repo = GitRepo(work / "repo")
    for relative in files:
        repo.write(relative.as_posix(), (source_root / relative).read_bytes())
    repo.commit("the files under test")

    completed = subprocess.run(
        [*ruff, "check", "--isolated", "--no-cache", "--select", RULES, "--output-format", "json",
         "--exit-zero", "."],
        cwd=repo.path, capture_output=True, text=True, check=True)
    diagnostics = json.loads(completed.stdout)

    options = ExtractOptions(include_tests=True, max_file_bytes=50_000_000)
    collected = collect(str(repo.path), options=options, cache_dir=work / "cache", jobs=jobs)
    parsed = [o for o in collected.outcomes if o.failure is None]
    failed = {o.path for o in collected.outcomes if o.failure is not None}
    sites = classes.resolve(parsed).sites

    result = OracleResult(files=len(collected.outcomes), parse_failed=len(failed))
    spans: dict[str, list[tuple[int, int]]] = {}
    for site in sites:
        spans.setdefault(site.path, []).append((site.line, site.end_line))
    flagged: dict[str, set[int]] = {}
    for diagnostic in diagnostics:
        path = Path(diagnostic["filename"]).resolve().relative_to(repo.path.resolve()).as_posix()
        row = diagnostic["location"]["row"]
        if path in failed:
            result.ruff_in_unparsed += 1
            continue
        result.ruff_sites += 1
        flagged.setdefault(path, set()).add(row)
        if any(line <= row <= end for line, end in spans.get(path, ())):
            result.covered += 1
        else:
            result.uncovered.append(f"{path}:{row} {diagnostic['code']}")
    seen: set[tuple[str, int]] = set()
    for site in sites:
        result.records += 1
        if (site.path, site.line) in seen:
            continue
        seen.add((site.path, site.line))
        result.raise_statements_with_records += 1
        rows = flagged.get(site.path, set())
        if not any(site.line <= row <= site.end_line for row in rows):
            result.ours_not_flagged[site.message.kind] += 1
            shown = result.examples.setdefault(site.message.kind, [])
            if len(shown) < 8:
                shown.append(f"{site.path}:{site.line}")
    result.seconds = time.perf_counter() - started
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--no-tests", action="store_true", help="leave the stdlib's test suites out")
    args = parser.parse_args(argv)
    files = stdlib_files(include_tests=not args.no_tests)
    with tempfile.TemporaryDirectory() as work:
        result = run_oracle(stdlib_root(), files, Path(work), jobs=args.jobs or 2)
    summary = {
        "python": sys.version.split()[0],
        "files": result.files,
        "parse_failed": result.parse_failed,
        "ruff_sites": result.ruff_sites,
        "ruff_in_unparsed_files": result.ruff_in_unparsed,
        "covered": result.covered,
        "uncovered": result.uncovered[:50],
        "records": result.records,
        "raise_statements_with_records": result.raise_statements_with_records,
        "ours_not_flagged_by_kind": dict(sorted(result.ours_not_flagged.items())),
        "examples": result.examples,
        "seconds": round(result.seconds, 1),
    }
    print(json.dumps(summary, indent=2))
    return 0 if not result.uncovered else 1


if __name__ == "__main__":
    raise SystemExit(main())
