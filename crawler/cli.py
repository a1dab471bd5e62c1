"""The `crawler` command line: the only place that prints or exits.

Library errors (`CrawlerError`) become one line on stderr and exit code 1; usage errors exit 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from crawler import __version__, emit
from crawler.errors import CrawlerError
from crawler.records import ExtractOptions

_err = Console(stderr=True)


class CrawlerGroup(click.Group):
    """Turns every CrawlerError into one clear line and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CrawlerError as error:
            raise click.ClickException(str(error)) from None


@click.group(cls=CrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crawler")
def main() -> None:
    """Catalogue a Python library's raise sites as skeleton error records.

    \b
    Example:
      crawler extract .                       # this repository at HEAD
      crawler extract jax-ml/jax --commit v0.4.30
      crawler validate output/
    """


@contextmanager
def progress_bar(quiet: bool, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A files-parsed bar on a terminal; nothing in a pipe or with -q."""
    if quiet or not _err.is_terminal:
        yield None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_err, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@main.command()
@click.argument("source", default=".")
@click.option("--commit", "ref", default="HEAD", show_default=True,
              help="Branch, tag, or short or full sha to pin.")
@click.option("-o", "--output", "output_root", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output"), show_default=True, help="Output root folder.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where fetched repositories are cached [default: the user cache folder].")
@click.option("--name", default=None,
              help="Override the output identity: HOST/OWNER/NAME, OWNER/NAME or NAME.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching (repeatable).")
@click.option("--include-tests", is_flag=True, help="Also catalogue test files and folders.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--dry-run", is_flag=True, help="Extract and merge, but write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def extract(source: str, ref: str, output_root: Path, cache_dir: Path | None, name: str | None,
            include: tuple[str, ...], exclude: tuple[str, ...], include_tests: bool,
            jobs: int | None, dry_run: bool, as_json: bool, quiet: bool) -> None:
    """Pin SOURCE at a commit and write one record per raise site.

    SOURCE is a local repository path, a file://, https:// or ssh URL, or OWNER/NAME on
    GitHub. Records go to OUTPUT/HOST/OWNER/NAME/errors/<id>.yaml beside a manifest.yaml;
    existing records are merged, never overwritten, so annotations are kept.

    \b
    Example:
      crawler extract .
      crawler extract https://github.com/jax-ml/jax --commit v0.4.30 --exclude 'docs/*'
    """
    from crawler.pipeline import extract as run_extract

    options = ExtractOptions(include=include, exclude=exclude, include_tests=include_tests)
    with progress_bar(quiet, "parsing") as progress:
        result = run_extract(source, ref=ref, output_root=output_root, options=options,
                             cache_dir=cache_dir, name=name, jobs=jobs, progress=progress,
                             dry_run=dry_run)
    summary = {
        "repo": result.pin.repo,
        "ref": result.pin.ref,
        "commit": result.pin.sha,
        "folder": str(result.folder),
        "files": result.manifest.counts.files,
        "parsed": result.manifest.counts.parsed,
        "skipped": result.manifest.counts.skipped,
        "records": result.manifest.counts.records,
        "added": len(result.merged.added),
        "moved": len(result.merged.moved),
        "removed": len(result.merged.removed),
        "revived": len(result.merged.revived),
        "files_written": result.files_written,
        "test_assertions": result.evidence.assertions if result.evidence else None,
        "records_with_evidence": result.evidence.records if result.evidence else None,
        "seconds": round(result.seconds, 3),
        "dry_run": dry_run,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif not quiet:
        click.echo(
            f"{result.pin.repo} @ {result.pin.sha[:12]} ({result.pin.ref}): "
            f"{summary['records']} records ({summary['added']} added, {summary['moved']} moved, "
            f"{summary['removed']} removed, {summary['revived']} revived) from "
            f"{summary['parsed']} of {summary['files']} files, {summary['skipped']} skipped; "
            + ("nothing written (dry run)" if dry_run
               else f"{result.files_written} files written to {result.folder}")
            + f" in {result.seconds:.1f}s"
        )


@main.command()
@click.argument("folder", default="output", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("-q", "--quiet", is_flag=True, help="Print only the problems.")
def validate(folder: Path, quiet: bool) -> None:
    """Check every record and manifest under FOLDER against the schemas in schemas/.

    Prints each bad file with the field and what is wrong; exits 1 if any file is bad.

    \b
    Example:
      crawler validate output/
    """
    checked, problems = 0, []
    for path in sorted(folder.rglob("*.yaml")):
        kind = "manifest" if path.name == emit.MANIFEST else "record"
        if kind == "record" and path.parent.name != emit.ERRORS_DIR:
            continue
        checked += 1
        try:
            data, _ = emit.load_yaml_file(path)
        except CrawlerError as error:
            problems.append(str(error))
            continue
        problems.extend(f"{path}: {p}" for p in emit.schema_problems(data, kind))
        if kind == "record" and isinstance(data, dict) and data.get("id") != path.stem:
            problems.append(f"{path}: id: {data.get('id')!r} is not the file's name")
    for problem in problems:
        click.echo(problem, err=True)
    if not quiet:
        click.echo(f"{checked} files checked, {len(problems)} problems")
    if problems:
        sys.exit(1)
    if checked == 0:
        raise click.ClickException(f"{folder}: no records or manifests found; run `crawler extract` first")


_DEFAULT_TARGETS = {"jsonl": Path("records.jsonl"), "json": Path("export"), "sqlite": Path("errors.db")}


@main.command("export")
@click.argument("output", default="output", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "json", "sqlite"]), required=True,
              help="jsonl: one record a line; json: errors/<id>.json and index.json; "
                   "sqlite: a database datasette serves as it is.")
@click.option("--to", "target", type=click.Path(path_type=Path), default=None,
              help="File or folder to write [default: records.jsonl, export/ or errors.db]; "
                   "'-' writes JSON Lines to stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No summary.")
def export_command(output: Path, fmt: str, target: Path | None, quiet: bool) -> None:
    """Export every repository's records under OUTPUT for the site and API projects.

    Output is deterministic: the same records give byte-identical files. Schemas are in
    schemas/ (record.schema.json, export-index.schema.json, export.sql).

    \b
    Example:
      crawler export output/ --format sqlite --to errors.db && datasette errors.db
      crawler export output/ --format jsonl --to - | head -1
    """
    from crawler import export as exports

    target = target or _DEFAULT_TARGETS[fmt]
    if str(target) == "-":
        if fmt != "jsonl":
            raise click.UsageError("--to - (stdout) is for --format jsonl only")
        exports.write_jsonl(exports.load_output(output), sys.stdout)
        return
    count = exports.export(output, fmt, target)
    if not quiet:
        click.echo(f"{count} records exported as {fmt} to {target}")
