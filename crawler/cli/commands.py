"""The `crawler` command line: the only place that prints or exits.

Library errors (`CrawlerError`) become one line on stderr and exit code 1; usage errors exit 2.
This module holds the group and the commands that run the crawler on a repository (`extract`,
`update`, `history`, `batch`); the commands that read a finished folder are in `folder_commands`,
what every command shares (exit codes, printing, progress) in `common`, options two
commands share in `options`, and what a command reports in `summaries`.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from crawler import __version__
from crawler.cli.options import (
    MissingFolder,
    cache_dir_option,
    commit_option,
    dry_run_option,
    evidence_option,
    force_option,
    jobs_option,
    name_option,
    output_option,
    scheduler_option,
    source_argument,
    summary_options,
    wait_option,
    web_url_option,
)
from crawler.cli.summaries import BatchSummary, ExtractSummary, HistorySummary, UpdateSummary
from crawler.errors import CrawlerError, MissingSourceError, Terminated, sigterm_raises

if TYPE_CHECKING:

    pass
from crawler.cli.common import (
    WALK_CUT_SHORT,
    Interrupted,
    TerminatedExit,
    batch_progress,
    echo_lines,
    echo_notes,
    files_progress,
    raise_problems,
    require_folder,
    show,
    stderr_console,
)
from crawler.cli.folder_commands import adopt, check, export_command, lookup_command, validate
from crawler.cli.terminal import INTERRUPTED, after_interrupt, one_line, quiet_stdout, stdout_closed

__all__ = ["INTERRUPTED", "CrawlerGroup", "main"]


class CrawlerGroup(click.Group):
    """One exit code per outcome, never a traceback: 0 done, 1 findings or a failure (a
    `CrawlerError` as one line), 2 usage (click's, and a folder named that is not there),
    130 interrupted (Ctrl-C), 143 terminated (SIGTERM); a closed standard output (`| head -1`)
    ends the command quietly."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with sigterm_raises():  # SIGTERM ends every command as Ctrl-C does, with its own code
                return super().invoke(ctx)
        except MissingSourceError as error:  # a folder named that is not there: usage
            raise MissingFolder(one_line(str(error))) from None
        except CrawlerError as error:
            raise click.ClickException(one_line(str(error))) from None
        except KeyboardInterrupt:
            sys.unraisablehook = after_interrupt
            raise Interrupted("interrupted") from None
        except Terminated:
            sys.unraisablehook = after_interrupt
            raise TerminatedExit("terminated") from None
        except OSError as error:  # the machine's trouble (permissions, a full disk), not a bug
            if error.errno == errno.EPIPE and stdout_closed():
                quiet_stdout()
                raise click.exceptions.Exit(0) from None
            where = f"{error.filename}: " if error.filename else ""
            raise click.ClickException(one_line(f"{where}{error.strerror or error}")) from None

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        """The arguments read, a Ctrl-C meanwhile said as during the command (click's own
        word for it is "Aborted!" and exit 1)."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            sys.unraisablehook = after_interrupt
            raise Interrupted("interrupted") from None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        finally:  # what is still buffered for a reader that is gone must not fail the exit
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                quiet_stdout()


@click.group(cls=CrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crawler")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Catalogue a Python library's raise sites as skeleton error records.

    Options a site repeats (output, name, web-url, include, exclude, jobs, tags) may be given
    once in crawler.toml or in [tool.crawler] of pyproject.toml, in the folder the command runs
    from; the command line wins over the file.

    \b
    Example:
      crawler extract .                       # this repository at HEAD
      crawler extract github:jax-ml/jax --commit v0.4.30
      crawler update github:jax-ml/jax --commit v0.4.31
      crawler check output/
      crawler validate output/
    """
    from crawler.cli.config import default_map

    ctx.default_map = default_map(Path.cwd())  # each command's defaults, from the file


@main.command()
@source_argument
@commit_option
@output_option
@cache_dir_option
@name_option
@web_url_option
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching (repeatable).")
@click.option("--include-tests", is_flag=True, help="Also catalogue test files and folders.")
@evidence_option
@jobs_option
@dry_run_option
@wait_option
@summary_options
def extract(source: str, ref: str, output_root: Path, cache_dir: Path | None, name: str | None,
            include: tuple[str, ...], exclude: tuple[str, ...], include_tests: bool,
            evidence: bool, jobs: int | None, dry_run: bool, wait: float, as_json: bool,
            quiet: bool, web_url: str | None = None) -> None:
    """Pin SOURCE at a commit and write one record per raise site.

    SOURCE is a local repository path, a file://, https:// or ssh URL, or github:OWNER/NAME
    (a bare OWNER/NAME that is no folder here is read so too, with a note). Records go to
    OUTPUT/HOST/OWNER/NAME/errors/<id>.yaml beside a manifest.yaml; existing records are
    merged, never overwritten, so annotations are kept. One run at a time writes a folder: a
    second one waits --wait SECONDS, then stops. A record file that
    cannot be loaded is left as it is and its source file is not updated; the run writes the
    rest, names the file and line, and exits 1.

    \b
    Example:
      crawler extract .
      crawler extract https://github.com/jax-ml/jax --commit v0.4.30 --exclude 'docs/*'
    """
    from crawler.pipeline import extract as run_extract
    from crawler.records import ExtractOptions

    options = ExtractOptions(include=include, exclude=exclude, include_tests=include_tests)
    with files_progress(quiet) as progress:
        result = run_extract(source, ref=ref, output_root=output_root, options=options,
                             cache_dir=cache_dir, name=name, jobs=jobs, progress=progress,
                             dry_run=dry_run, wait=wait, evidence=evidence, web_url=web_url)
    show(ExtractSummary(result, dry_run), as_json, quiet)
    echo_notes(result.notes, quiet)
    raise_problems(result.problems, result.folder)


@main.command()
@click.argument("repos_file", metavar="REPOS.yaml",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option
@scheduler_option
@jobs_option
@click.option("--split-files", type=click.IntRange(min=0), default=500, show_default=True,
              metavar="N", help="Share a repository with more files than N out over several "
                                "tasks (entries may give their own `split_files`; 0: never).")
@click.option("--wait-workers", type=click.FloatRange(min=0), default=10.0, show_default=True,
              metavar="SECONDS", help="How long a Dask cluster may have no worker before the "
                                      "batch stops with an error.")
@cache_dir_option
@force_option
@dry_run_option
@summary_options
def batch(repos_file: Path, output_root: Path, scheduler: str | None, jobs: int | None,
          split_files: int, wait_workers: float, cache_dir: Path | None, force: bool,
          dry_run: bool, as_json: bool, quiet: bool) -> None:
    """Extract or update every repository listed in REPOS.yaml, in parallel.

    Repositories run in local worker processes (one repository each), or on a Dask cluster
    with --scheduler; entries that name no output folder write under --output. One that fails
    is reported with its reason and the others go on (exit code 1 if any failed). A
    repository already up to date at its pinned commit is skipped, so an interrupted batch
    picks up where it stopped. The file's format is schemas/batch.schema.json.

    \b
    Example:
      crawler batch repos.yaml
      crawler batch repos.yaml --scheduler tcp://10.0.0.5:8786 --json
    """
    from crawler.batch.driver import run_batch, scheduler_address
    from crawler.batch.reposfile import load_batch

    given = click.get_current_context().get_parameter_source("output_root")
    entries = load_batch(repos_file, output_root,
                         output_given=given is click.core.ParameterSource.COMMANDLINE,
                         split_files=split_files)
    address = scheduler_address(scheduler)
    with batch_progress(quiet or as_json, len(entries)) as progress:
        result = run_batch(entries, scheduler=address, jobs=jobs, cache_dir=cache_dir,
                           force=force, dry_run=dry_run, progress=progress,
                           wait_workers=wait_workers)
    for failed in result.failed:
        stderr_console().print(one_line(f"repos[{failed.entry.index}]: {failed.error}"),
                               markup=False, highlight=False, soft_wrap=True)
    show(BatchSummary(result), as_json, quiet)
    if result.failed:
        sys.exit(1)


@main.command()
@source_argument
@commit_option
@output_option
@cache_dir_option
@name_option
@web_url_option
@jobs_option
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 if the output is not up to date with the commit.")
@evidence_option
@dry_run_option
@wait_option
@summary_options
def update(source: str, ref: str, output_root: Path, cache_dir: Path | None, name: str | None,
           jobs: int | None, check_only: bool, evidence: bool, dry_run: bool, wait: float,
           as_json: bool, quiet: bool, web_url: str | None = None) -> None:
    """Move existing records of SOURCE to a new commit; annotations follow their records.

    Needs the output folder of an earlier `crawler extract`; the identity it was given (--name,
    --web-url) is read from the folder's manifest. Only files
    whose content changed are read again; records whose site did not change are not rewritten.
    A record whose message was reworded gets status needs_review; annotations whose written_for
    is not the current message are listed. Setting written_for to the current message marks
    the review done: the next update makes the record active again.

    \b
    Example:
      crawler update jax-ml/jax --commit main
      crawler update jax-ml/jax --commit v0.4.31 --check   # in CI: exit 1 if stale
    """
    require_folder(output_root)
    from crawler.pipeline import update as run_update

    with files_progress(quiet or as_json) as progress:
        result = run_update(source, ref=ref, output_root=output_root, cache_dir=cache_dir,
                            name=name, jobs=jobs, progress=progress, dry_run=dry_run or check_only,
                            wait=wait, evidence=evidence, web_url=web_url)
    summary = UpdateSummary(result, dry_run or check_only, check_only)
    if quiet and not as_json:
        echo_lines(summary.findings())  # -q leaves out the summary, never what is stale
    show(summary, as_json, quiet)
    echo_notes(result.notes, quiet)
    raise_problems(result.problems, result.folder)
    if check_only and result.pending:
        sys.exit(1)


@main.command()
@source_argument
@click.option("--tags", required=True, metavar="GLOB",
              help="The release tags to walk, as a glob of their names: 'v*', 'jax-v*'.")
@click.option("--since", default=None, metavar="TAG",
              help="Start the walk at this release tag (one the glob selects).")
@click.option("--checkpoint-steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Write the records every N tags (default 10) as well as at the end; a killed "
                   "walk run again goes on from the last write.")
@click.option("--read-ahead", type=click.IntRange(min=0), default=None, metavar="N",
              help="Read the files of up to N coming tags while the steps merge (default 4; "
                   "0: each step reads its own). The folder is the same either way.")
@scheduler_option
@commit_option
@output_option
@cache_dir_option
@name_option
@evidence_option
@jobs_option
@summary_options
def history(source: str, tags: str, since: str | None, checkpoint_steps: int | None,
            read_ahead: int | None, scheduler: str | None, ref: str, output_root: Path,
            cache_dir: Path | None, name: str | None, evidence: bool, jobs: int | None,
            as_json: bool, quiet: bool) -> None:
    """Walk SOURCE's release tags in version order, then --commit: each record learns the
    releases that contain it and every wording it had.

    Tags that name a version walk in PEP 440 order and the others are left out; when none
    names a version, they walk by tag date. Each step is an `update` from the tag before (the
    same matching; annotations are never touched). The manifest lists the tags walked, so a
    run after a new release walks only the new tags. Test files are read for evidence only
    by the walk's last step, which matches them over every record. The records are held in
    memory from tag to tag and written every --checkpoint-steps tags and at the end: a killed
    walk, run again, goes on from its last write. One line per tag on stderr.

    \b
    Example:
      crawler history . --tags 'v*'
      crawler history jax-ml/jax --tags 'jax-v*' --since jax-v0.4.32 --no-evidence
    """
    from crawler.batch.dask_reading import cluster_pool
    from crawler.batch.driver import scheduler_address
    from crawler.parse.forkserver import warm_up

    warm_up()  # the workers' imports overlap ours and the pin
    from crawler.pipeline.history_run import CHECKPOINT_STEPS, READ_AHEAD, TagStep, walk_releases

    def report(step: TagStep) -> bool:
        if not quiet:  # on stderr: --json keeps stdout for the summary
            try:
                click.echo(one_line(HistorySummary.step_line(step)), err=True)
            except BrokenPipeError:
                return False  # the reader went away: the walk stops at a checkpoint
        return True

    result = walk_releases(source, tags=tags, ref=ref, output_root=output_root,
                           cache_dir=cache_dir, name=name, jobs=jobs, evidence=evidence,
                           since=since, on_step=report,
                           checkpoint_steps=checkpoint_steps or CHECKPOINT_STEPS,
                           read_ahead=READ_AHEAD if read_ahead is None else read_ahead,
                           cluster_pool=cluster_pool(scheduler_address(scheduler)))
    if result.stopped:  # not done, unlike a lookup cut short (exit 0 in CrawlerGroup.invoke)
        quiet_stdout(sys.stderr)
        raise click.exceptions.Exit(WALK_CUT_SHORT)
    show(HistorySummary(result), as_json, quiet)
    if result.steps:
        echo_notes(result.steps[-1].result.notes, quiet)
        raise_problems(result.steps[-1].result.problems, result.folder)


for _command in (validate, lookup_command, check, adopt, export_command):
    main.add_command(_command)

