"""The `crawler` command line: the only place that prints or exits.

Library errors (`CrawlerError`) become one line on stderr and exit code 1; usage errors exit 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from crawler import __version__, emit
from crawler.errors import CrawlerError
from crawler.records import ExtractOptions

if TYPE_CHECKING:
    from crawler.batch import BatchProgress, BatchResult

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
@click.argument("repos_file", metavar="REPOS.yaml",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", "output_root", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output"), show_default=True,
              help="Output root for entries that name none.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler (tcp://HOST:8786) [default: Dask's scheduler-address setting, "
                   "else local processes; `local` forces local processes].")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Local worker processes, one repository each [default: all cores].")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where workers cache fetched repositories [default: their user cache folder].")
@click.option("--force", is_flag=True, help="Extract again even repositories already up to date.")
@click.option("--dry-run", is_flag=True, help="Extract and merge, but write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no table; failures still printed.")
def batch(repos_file: Path, output_root: Path, scheduler: str | None, jobs: int | None,
          cache_dir: Path | None, force: bool, dry_run: bool, as_json: bool, quiet: bool) -> None:
    """Extract or update every repository listed in REPOS.yaml, in parallel.

    Repositories run in local worker processes, or on a Dask cluster with --scheduler. One
    that fails is reported with its reason and the others go on (exit code 1 if any failed).
    A repository already up to date at its pinned commit is skipped, so an interrupted batch
    picks up where it stopped. The file's format is schemas/batch.schema.json.

    \b
    Example:
      crawler batch repos.yaml
      crawler batch repos.yaml --scheduler tcp://10.0.0.5:8786 --json
    """
    from crawler.batch import run_batch, scheduler_address
    from crawler.batchfile import load_batch

    entries = load_batch(repos_file, output_root)
    address = scheduler_address(scheduler)
    with batch_progress(quiet or as_json, len(entries)) as progress:
        result = run_batch(entries, scheduler=address, jobs=jobs, cache_dir=cache_dir,
                           force=force, dry_run=dry_run, progress=progress)
    for failed in result.failed:
        _err.print(f"repos[{failed.entry.index}]: {failed.error}", markup=False, highlight=False,
                   soft_wrap=True)
    if as_json:
        click.echo(json.dumps(batch_summary(result), indent=2))
    elif not quiet:
        Console().print(batch_table(result))
    if result.failed:
        sys.exit(1)


@contextmanager
def batch_progress(quiet: bool, total: int) -> Iterator[Callable[[BatchProgress], None] | None]:
    """Repositories done and running, and files parsed, on a terminal; nothing in a pipe."""
    if quiet or not _err.is_terminal:
        yield None
        return
    columns = (TextColumn("repositories"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[running]} running, {task.fields[failed]} failed, "
                          "{task.fields[files]} files parsed"), TimeElapsedColumn())
    with Progress(*columns, console=_err, transient=True) as bar:
        task = bar.add_task("batch", total=total, running=0, failed=0, files=0)

        def update(state: BatchProgress) -> None:
            bar.update(task, completed=state.done, running=state.running, failed=state.failed,
                       files=state.files_parsed)

        yield update


def batch_summary(result: BatchResult) -> dict[str, Any]:
    repos = [{
        "index": r.entry.index, "source": r.entry.source, "ref": r.entry.ref,
        "repo": r.pin.repo if r.pin else None, "commit": r.pin.sha if r.pin else None,
        "folder": str(r.folder) if r.folder else None, "status": r.status,
        "records": r.records, "added": r.added, "changed": r.changed, "removed": r.removed,
        "files": r.files, "files_written": r.files_written, "seconds": round(r.seconds, 3),
        "error": r.error,
    } for r in result.results]
    return {"scheduler": result.scheduler, "seconds": round(result.seconds, 3),
            "failed": len(result.failed), "files": result.files, "repos": repos}


def batch_table(result: BatchResult) -> Table:
    """One row a repository; changes are +added ~changed (moved, reworded, revived) -removed."""
    table = Table(title=f"{len(result.results)} repositories on {result.scheduler}, "
                        f"{result.files} files parsed in {result.seconds:.1f}s",
                  title_justify="left", caption="changes: +added ~changed -removed records",
                  caption_justify="left")
    table.add_column("repository", overflow="fold", min_width=16)
    table.add_column("sha", no_wrap=True)
    for column in ("records", "changes", "time"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    style = {"done": "green", "up to date": "dim", "failed": "bold red"}
    for r in result.results:
        changes = "" if r.status == "failed" else f"+{r.added} ~{r.changed} -{r.removed}"
        table.add_row(Text(r.pin.repo if r.pin else r.entry.source), r.pin.sha[:8] if r.pin else "",
                      "" if r.status == "failed" else str(r.records), changes,
                      f"{r.seconds:.1f}s", Text(r.status, style=style[r.status]))
    return table


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
