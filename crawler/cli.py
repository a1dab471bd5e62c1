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

from crawler import __version__
from crawler.errors import CrawlerError
from crawler.parse._forkserver import warm_up
from crawler.records import ExtractOptions
from crawler.store import repo_output
from crawler.store.manifest_file import MANIFEST
from crawler.store.record_files import ERRORS_DIR

if TYPE_CHECKING:
    from crawler.batch.driver import BatchProgress, BatchResult

_err = Console(stderr=True)


class CrawlerGroup(click.Group):
    """Turns every CrawlerError into one clear line and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CrawlerError as error:
            raise click.ClickException(one_line(str(error))) from None
        except OSError as error:  # the machine's trouble (permissions, a full disk), not a bug
            where = f"{error.filename}: " if error.filename else ""
            raise click.ClickException(one_line(f"{where}{error.strerror or error}")) from None


def one_line(message: str) -> str:
    """Messages are one line: a newline or control character in a name must not break that."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)


@click.group(cls=CrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crawler")
def main() -> None:
    """Catalogue a Python library's raise sites as skeleton error records.

    \b
    Example:
      crawler extract .                       # this repository at HEAD
      crawler extract jax-ml/jax --commit v0.4.30
      crawler update jax-ml/jax --commit v0.4.31
      crawler check output/
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
@click.option("--evidence/--no-evidence", default=True, show_default=True,
              help="Read the test files for assertions on each message (costs their parse; "
                   "--no-evidence keeps the records' evidence as it is).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--dry-run", is_flag=True, help="Extract and merge, but write nothing.")
@click.option("--wait", type=click.FloatRange(min=0), default=0, show_default=True, metavar="SECONDS",
              help="If another run holds the output folder, wait this long for it, then give up.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def extract(source: str, ref: str, output_root: Path, cache_dir: Path | None, name: str | None,
            include: tuple[str, ...], exclude: tuple[str, ...], include_tests: bool,
            evidence: bool, jobs: int | None, dry_run: bool, wait: float, as_json: bool,
            quiet: bool) -> None:
    """Pin SOURCE at a commit and write one record per raise site.

    SOURCE is a local repository path, a file://, https:// or ssh URL, or OWNER/NAME on
    GitHub. Records go to OUTPUT/HOST/OWNER/NAME/errors/<id>.yaml beside a manifest.yaml;
    existing records are merged, never overwritten, so annotations are kept. One run at a
    time writes a folder: a second one waits --wait SECONDS, then stops. A record file that
    cannot be loaded is left as it is and its source file is not updated; the run writes the
    rest, names the file and line, and exits 1.

    \b
    Example:
      crawler extract .
      crawler extract https://github.com/jax-ml/jax --commit v0.4.30 --exclude 'docs/*'
    """
    warm_up()  # the workers' imports overlap ours and the pin
    from crawler.pipeline import extract as run_extract

    options = ExtractOptions(include=include, exclude=exclude, include_tests=include_tests)
    with progress_bar(quiet, "parsing") as progress:
        result = run_extract(source, ref=ref, output_root=output_root, options=options,
                             cache_dir=cache_dir, name=name, jobs=jobs, progress=progress,
                             dry_run=dry_run, wait=wait, evidence=evidence)
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
        "changed": len(result.merged.changed),
        "removed": len(result.merged.removed),
        "revived": len(result.merged.revived),
        "files_written": result.files_written,
        "test_assertions": result.evidence.assertions if result.evidence else None,
        "records_with_evidence": result.evidence.records if result.evidence else None,
        "seconds": round(result.seconds, 3),
        "dry_run": dry_run,
        "problems": list(result.problems),
        "notes": list(result.notes),
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif not quiet:
        click.echo(
            f"{result.pin.repo} @ {result.pin.sha[:12]} ({result.pin.ref}): "
            f"{summary['records']} records ({summary['added']} added, {summary['moved']} moved, "
            f"{summary['changed']} changed, "
            f"{summary['removed']} removed, {summary['revived']} revived) from "
            f"{summary['parsed']} of {summary['files']} files, {summary['skipped']} skipped; "
            + ("nothing written (dry run)" if dry_run
               else f"{result.files_written} files written to {result.folder}")
            + f" in {result.seconds:.1f}s"
        )
    for note in result.notes:
        if not quiet:
            click.echo(f"note: {one_line(note)}", err=True)
    _raise_problems(result.problems, result.folder)


def _raise_problems(problems: tuple[str, ...], folder: Path) -> None:
    """Broken record files were left as they are: say so as one line, exit 1."""
    if problems:
        more = len(problems) - 1
        also = f" (and {more} more: `crawler validate {folder}` lists them)" if more else ""
        raise click.ClickException(one_line(problems[0]) + also)


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
    from crawler.batch.driver import run_batch, scheduler_address
    from crawler.batch.reposfile import load_batch

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
    checked = 0
    problems: list[str] = []
    repositories = {path.parent for path in folder.rglob(ERRORS_DIR) if path.is_dir()}
    repositories |= {path.parent for path in folder.rglob(MANIFEST)}
    for repository in sorted(repositories):
        loaded = repo_output.load_folder(repository)
        checked += len(loaded.records) + len(loaded.broken)
        problems.extend(broken.problem for broken in loaded.broken)
        if (repository / MANIFEST).exists():
            checked += 1
            if loaded.manifest_problem:
                problems.append(loaded.manifest_problem)
    for problem in problems:
        click.echo(one_line(problem), err=True)
    if not quiet:
        click.echo(f"{checked} files checked, {len(problems)} problems")
    if problems:
        sys.exit(1)
    if checked == 0:
        raise click.ClickException(f"{folder}: no records or manifests found; run `crawler extract` first")


@main.command("lookup")
@click.argument("message")
@click.argument("output", default="output", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Most records to print.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Search a database written by `crawler export --format sqlite` instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
def lookup_command(message: str, output: Path, limit: int, db: Path | None, as_json: bool) -> None:
    """Find the records whose template matches MESSAGE, a message a user saw at runtime.

    MESSAGE may be the text alone or a whole traceback line (`ValueError: ...`). OUTPUT is
    the output root or one repository's folder in it. Records come best first, by how many
    literal characters of the message their template matched; when none matches, the closest
    templates are printed instead, marked `~`.

    \b
    Example:
      crawler lookup "KeyError: 'missing column x'" output/
      crawler lookup "bad shape (3, 4)" output/github.com/jax-ml/jax --json
      crawler lookup "ValueError: bad shape (3, 4)" --db errors.sqlite
    """
    from crawler.serve.lookup import LookupIndex, describe, load_records

    if db is not None:
        _lookup_database(message, db, limit, as_json)
        return
    if not output.is_dir():
        raise click.ClickException(f"{output}: no such folder; give the output folder or --db")
    records = load_records(output)
    if not records:
        raise click.ClickException(f"{output}: no records found; run `crawler extract` first")
    matches = LookupIndex(records).lookup(message, limit=limit)
    if as_json:
        click.echo(json.dumps(describe(matches), indent=2, ensure_ascii=False))
        return
    if not matches:
        click.echo("no record matches, and none is close")
        return
    if not matches[0].exact:
        click.echo("no template matches exactly; the closest (~):")
    for match in matches:
        site = match.record.site
        mark = "=" if match.exact else "~"
        click.echo(f"{mark} {match.record.id}  {site.exception}  {site.path}:{site.line}  "
                   f"({site.message.kind}, score {match.score})")
        click.echo(f"    {site.message.template}")
        for name, value in match.captures.items():
            click.echo(f"    {name} = {value!r}")
def _lookup_database(message: str, db: Path, limit: int, as_json: bool) -> None:
    """`lookup --db`: the same question, answered by the SQLite export's full-text index."""
    from dataclasses import asdict

    from crawler.serve.export import search_database
    from crawler.serve.lookup import parse_message

    _, texts = parse_message(message)
    hits = []
    for text in texts:  # the message without its `ValueError: ` first, then as given
        hits = search_database(db, text, limit=limit)
        if any(hit.exact for hit in hits):
            break
    if as_json:
        click.echo(json.dumps([asdict(hit) for hit in hits], indent=2, ensure_ascii=False))
        return
    if not hits:
        click.echo("no record matches, and none is close")
        return
    if not hits[0].exact:
        click.echo("no template matches exactly; the closest (~):")
    for hit in hits:
        click.echo(f"{'=' if hit.exact else '~'} {hit.id}  {hit.exception}  {hit.path}:{hit.line}")
        click.echo(f"    {hit.template}")


CHANGE_ROWS = (
    ("added", "added", "new raise sites"),
    ("moved", "moved", "same message, new line, place or code around it"),
    ("changed", "changed", "message reworded: needs_review"),
    ("removed", "removed", "site gone; kept with its annotation"),
    ("revived", "revived", "site back; same id and annotation"),
    ("cleared", "cleared", "review done: written_for is the current message"),
)


@main.command()
@click.argument("source", default=".")
@click.option("--commit", "ref", default="HEAD", show_default=True,
              help="Branch, tag, or short or full sha to move the records to.")
@click.option("-o", "--output", "output_root", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output"), show_default=True, help="Output root folder.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where fetched repositories and parse results are cached.")
@click.option("--name", default=None, help="The --name the records were extracted with, if any.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 if the output is not up to date with the commit.")
@click.option("--dry-run", is_flag=True, help="Show what would change, but write nothing.")
@click.option("--wait", type=click.FloatRange(min=0), default=0, show_default=True, metavar="SECONDS",
              help="If another run holds the output folder, wait this long for it, then give up.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def update(source: str, ref: str, output_root: Path, cache_dir: Path | None, name: str | None,
           jobs: int | None, check_only: bool, dry_run: bool, wait: float, as_json: bool,
           quiet: bool) -> None:
    """Move existing records of SOURCE to a new commit; annotations follow their records.

    Needs the output folder of an earlier `crawler extract` and repeats its options. Only files
    whose content changed are read again; records whose site did not change are not rewritten.
    A record whose message was reworded gets status needs_review; annotations whose written_for
    is not the current message are listed. Setting written_for to the current message marks
    the review done: the next update makes the record active again.

    \b
    Example:
      crawler update jax-ml/jax --commit main
      crawler update jax-ml/jax --commit v0.4.31 --check   # in CI: exit 1 if stale
    """
    warm_up()  # the workers' imports overlap ours, the pin and the manifest's load
    from crawler.pipeline import update as run_update

    with progress_bar(quiet or as_json, "parsing") as progress:
        result = run_update(source, ref=ref, output_root=output_root, cache_dir=cache_dir,
                            name=name, jobs=jobs, progress=progress, dry_run=dry_run or check_only,
                            wait=wait)
    merged = result.merged
    summary: dict[str, Any] = {
        "repo": result.pin.repo,
        "ref": result.pin.ref,
        "commit": result.pin.sha,
        "folder": str(result.folder),
        "files": result.manifest.counts.files,
        "files_read_again": result.parsed,
        "records": result.manifest.counts.records,
        **{key: sorted(getattr(merged, attr)) for key, attr, _ in CHANGE_ROWS},
        "stale_annotations": [{"id": r.id, "written_for": r.annotation.written_for,
                               "template": r.site.message.template} for r in result.stale],
        "files_to_write": list(result.pending),
        "files_written": result.files_written,
        "seconds": round(result.seconds, 3),
        "dry_run": dry_run or check_only,
        "problems": list(result.problems),
        "notes": list(result.notes),
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif not quiet:
        _print_update(summary, check_only)
    _raise_problems(result.problems, result.folder)
    if check_only and result.pending:
        sys.exit(1)


def _print_update(summary: dict[str, Any], check_only: bool) -> None:
    from rich.table import Table

    out = Console(highlight=False, soft_wrap=True)
    out.print(f"{summary['repo']} @ {summary['commit'][:12]} ({summary['ref']}): "
              f"{summary['records']} records; {summary['files_read_again']} of "
              f"{summary['files']} files read again in {summary['seconds']:.2f}s")
    table = Table("change", "records", "ids", "meaning")
    for key, _, meaning in CHANGE_ROWS:
        ids = summary[key]
        shown = " ".join(ids[:4]) + (f" (+{len(ids) - 4})" if len(ids) > 4 else "")
        table.add_row(key, str(len(ids)), shown, meaning)
    out.print(table)
    for stale in summary["stale_annotations"]:
        out.print(f"stale annotation {stale['id']}: written for {stale['written_for']!r}, "
                  f"the message is now {stale['template']!r}", markup=False)
    pending = summary["files_to_write"]
    if check_only:
        out.print(f"stale: {len(pending)} files would change" if pending else "up to date")
    elif summary["dry_run"]:
        out.print(f"dry run: {len(pending)} files would change, nothing written")
    else:
        out.print(f"{summary['files_written']} files written to {summary['folder']}")


@main.command()
@click.argument("folder", default="output", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def check(folder: Path, as_json: bool) -> None:
    """List records whose annotation may not fit their message any more.

    A record is listed when its annotation's written_for is not its current message template,
    or when it is in needs_review (its message was reworded). After checking the annotation,
    set annotation.written_for to the current template: the next `crawler update` makes the
    record active again. Exits 1 if anything is listed or a record cannot be read.

    \b
    Example:
      crawler check output/
    """
    from crawler.pipeline import check_output

    checked, findings, problems = check_output(folder)
    if as_json:
        click.echo(json.dumps({
            "checked": checked,
            "findings": [{"path": str(f.path), "id": f.record.id, "status": f.record.status,
                          "written_for": f.record.annotation.written_for,
                          "template": f.record.site.message.template} for f in findings],
            "problems": problems,
        }, indent=2))
    else:
        for finding in findings:
            click.echo(finding.describe())
        for problem in problems:
            click.echo(problem, err=True)
        click.echo(f"{checked} records checked, {len(findings)} to review, "
                   f"{len(problems)} unreadable")
    if checked == 0:
        raise click.ClickException(f"{folder}: no records found; run `crawler extract` first")
    if findings or problems:
        sys.exit(1)
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
    from crawler.serve import export

    target = target or _DEFAULT_TARGETS[fmt]
    if str(target) == "-":
        if fmt != "jsonl":
            raise click.UsageError("--to - (stdout) is for --format jsonl only")
        export.write_jsonl(export.load_output(output), sys.stdout)
        return
    count = export.export(output, fmt, target)
    if not quiet:
        click.echo(f"{count} records exported as {fmt} to {target}")
