"""The `crawler` command line: the only place that prints or exits.

Library errors (`CrawlerError`) become one line on stderr and exit code 1; usage errors exit 2.
Options two commands share are declared once (`_cli_options`); what a command reports is a
summary (`_cli_summaries`) that this module prints as JSON or as lines.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from crawler import __version__
from crawler._cli_options import (
    OUTPUT_HELP,
    MissingFolder,
    UsageLine,
    cache_dir_option,
    commit_option,
    dry_run_option,
    evidence_option,
    existing_folder_argument,
    force_option,
    jobs_option,
    json_option,
    name_option,
    output_option,
    quiet_option,
    source_argument,
    summary_options,
    wait_option,
    web_url_option,
)
from crawler._cli_summaries import (
    AdoptSummary,
    BatchSummary,
    CheckSummary,
    ExportSummary,
    ExtractSummary,
    HistorySummary,
    Line,
    LookupSummary,
    UpdateSummary,
    ValidateSummary,
)
from crawler.errors import CrawlerError, MissingSourceError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import ProgressColumn

    from crawler.batch.driver import BatchProgress
    from crawler.pipeline import Progress as RunProgress

INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C (128 + SIGINT)
TERMINATED = 143  # a batch stopped by SIGTERM (128 + SIGTERM)
UNWRAPPED_WIDTH = 100_000  # a table's width off a terminal: as wide as its longest row
WALK_CUT_SHORT = 141  # a history walk whose reader went away: 128 + SIGPIPE, as a shell says


class CrawlerGroup(click.Group):
    """One exit code per outcome, never a traceback: 0 done, 1 findings or a failure (a
    `CrawlerError` as one line), 2 usage (click's, and a folder named that is not there),
    130 interrupted (Ctrl-C); a closed standard output (`| head -1`) ends the command quietly."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MissingSourceError as error:  # a folder named that is not there: usage
            raise MissingFolder(one_line(str(error))) from None
        except CrawlerError as error:
            raise click.ClickException(one_line(str(error))) from None
        except KeyboardInterrupt:
            sys.unraisablehook = _after_interrupt
            raise Interrupted("interrupted") from None
        except OSError as error:  # the machine's trouble (permissions, a full disk), not a bug
            if error.errno == errno.EPIPE and _stdout_closed():
                _quiet_stdout()
                raise click.exceptions.Exit(0) from None
            where = f"{error.filename}: " if error.filename else ""
            raise click.ClickException(one_line(f"{where}{error.strerror or error}")) from None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        finally:  # what is still buffered for a reader that is gone must not fail the exit
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                _quiet_stdout()


class Interrupted(click.ClickException):
    """Ctrl-C: one line, exit 130, whatever the command was doing (every write is atomic)."""

    exit_code = INTERRUPTED


class TerminatedExit(click.ClickException):
    """SIGTERM to a batch: one line, exit 143 (128 + SIGTERM), its workers stopped."""

    exit_code = TERMINATED


def _after_interrupt(unraisable: Any) -> None:
    """Say nothing of what a finalizer raises once Ctrl-C is reported: objects the interrupt cut
    off mid-read (GitPython's `cat-file` streams) raise from `__del__` as they are freed, which
    would print an "Exception ignored in" trace beside the one line the interrupt gets."""


def _stdout_closed() -> bool:
    """Has the reader of standard output gone? (A pipe whose reading end closed polls POLLERR.)"""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
    except (AttributeError, OSError, ValueError):  # not a real file (a test's runner)
        return False
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _quiet_stdout(*others: Any) -> None:
    """Standard output (and `others`) to nowhere, so that the interpreter's last flush does
    not fail."""
    for stream in (sys.stdout, *others):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, stream.fileno())
            os.close(nowhere)


def one_line(message: str) -> str:
    """Messages are one line: a newline or control character in a name must not break that."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)


class Summary(Protocol):
    """What a command reports (`crawler._cli_summaries`): its JSON form and its human lines."""

    def to_json(self) -> str: ...

    def lines(self) -> Iterable[Line]: ...


def _show(summary: Summary, as_json: bool, quiet: bool = False) -> None:
    """A command's summary on stdout: as JSON, as lines, or (with -q) not at all."""
    if as_json:
        click.echo(summary.to_json())
    elif not quiet:
        _echo_lines(summary.lines())


def _echo_lines(lines: Iterable[Line]) -> None:
    """Text lines as they are (no markup, no emoji codes); tables through rich."""
    for line in lines:
        if isinstance(line, str):
            click.echo(line)
        else:
            from rich.console import Console

            console = Console(highlight=False)
            if not console.is_terminal:  # a log or a pipe: one line a row, never cut at 80 columns
                console.width = UNWRAPPED_WIDTH
            console.print(line)


def _stderr() -> Console:
    """The console of progress bars and of batch failures (rich loads when one is needed)."""
    from rich.console import Console

    return Console(stderr=True)


def _raise_problems(problems: tuple[str, ...], folder: Path) -> None:
    """Broken record files were left as they are: say so as one line, exit 1."""
    if problems:
        more = len(problems) - 1
        also = f" (and {more} more: `crawler validate {folder}` lists them)" if more else ""
        raise click.ClickException(one_line(problems[0]) + also)


@contextmanager
def _progress(quiet: bool, columns: tuple[ProgressColumn, ...], total: int | None,
              **fields: Any) -> Iterator[Callable[..., None] | None]:
    """A transient bar on a terminal's stderr, updated by keyword; nothing in a pipe or with -q."""
    from rich.progress import Progress

    err = _stderr()
    if quiet or not err.is_terminal:
        yield None
        return
    with Progress(*columns, console=err, transient=True) as bar:
        yield partial(bar.update, bar.add_task("", total=total, **fields))


@contextmanager
def files_progress(quiet: bool) -> Iterator[RunProgress | None]:
    """A bar per stage of the run (files parsed, test files read, the class pass, assertions
    matched, records written), each with its count and an estimate of the time left; on a
    terminal's stderr only, never with -q."""
    err = _stderr()
    if quiet or not err.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from crawler.pipeline import PARSING  # the pipeline is imported by the command anyway

    columns = (TextColumn("{task.description:<17}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(done: int, total: int, stage: str = PARSING) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


@contextmanager
def batch_progress(quiet: bool, total: int) -> Iterator[Callable[[BatchProgress], None] | None]:
    """Repositories done and running, and files parsed."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    columns = (TextColumn("repositories"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[running]} running, {task.fields[failed]} failed, "
                          "{task.fields[files]} files parsed"), TimeElapsedColumn())
    with _progress(quiet, columns, total, running=0, failed=0, files=0) as update:
        yield None if update is None else lambda state: update(
            completed=state.done, running=state.running, failed=state.failed,
            files=state.files_parsed)


@click.group(cls=CrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crawler")
def main() -> None:
    """Catalogue a Python library's raise sites as skeleton error records.

    \b
    Example:
      crawler extract .                       # this repository at HEAD
      crawler extract github:jax-ml/jax --commit v0.4.30
      crawler update github:jax-ml/jax --commit v0.4.31
      crawler check output/
      crawler validate output/
    """


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
    from crawler.parse._forkserver import warm_up
    from crawler.records import ExtractOptions

    warm_up()  # the workers' imports overlap ours and the pin
    from crawler.pipeline import extract as run_extract

    options = ExtractOptions(include=include, exclude=exclude, include_tests=include_tests)
    with files_progress(quiet) as progress:
        result = run_extract(source, ref=ref, output_root=output_root, options=options,
                             cache_dir=cache_dir, name=name, jobs=jobs, progress=progress,
                             dry_run=dry_run, wait=wait, evidence=evidence, web_url=web_url)
    _show(ExtractSummary(result, dry_run), as_json, quiet)
    _echo_notes(result.notes, quiet)
    _raise_problems(result.problems, result.folder)


def _echo_notes(notes: tuple[str, ...], quiet: bool) -> None:
    """What a run healed or assumed, one line each on stderr (-q silences them)."""
    for note in notes:
        if not quiet:
            click.echo(f"note: {one_line(note)}", err=True)


@main.command()
@click.argument("repos_file", metavar="REPOS.yaml",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler (tcp://HOST:8786) [default: Dask's scheduler-address setting, "
                   "else local processes; `local` forces local processes].")
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
    from crawler.batch.driver import Terminated, run_batch, scheduler_address
    from crawler.batch.reposfile import load_batch

    given = click.get_current_context().get_parameter_source("output_root")
    entries = load_batch(repos_file, output_root,
                         output_given=given is click.core.ParameterSource.COMMANDLINE,
                         split_files=split_files)
    address = scheduler_address(scheduler)
    try:
        with batch_progress(quiet or as_json, len(entries)) as progress:
            result = run_batch(entries, scheduler=address, jobs=jobs, cache_dir=cache_dir,
                               force=force, dry_run=dry_run, progress=progress,
                               wait_workers=wait_workers)
    except Terminated:
        raise TerminatedExit("terminated") from None
    for failed in result.failed:
        _stderr().print(f"repos[{failed.entry.index}]: {failed.error}", markup=False, highlight=False,
                   soft_wrap=True)
    _show(BatchSummary(result), as_json, quiet)
    if result.failed:
        sys.exit(1)


@main.command()
@existing_folder_argument("output")
@summary_options
def validate(output: Path, as_json: bool, quiet: bool) -> None:
    """Check every record and manifest under OUTPUT against the schemas in schemas/.

    Prints each bad file with the field and what is wrong; exits 1 if any file is bad.

    \b
    Example:
      crawler validate output/
      crawler validate output/github.com/jax-ml/jax --json
    """
    summary = ValidateSummary.of_folder(output)
    for problem in summary.problems:
        click.echo(one_line(problem), err=True)
    _show(summary, as_json, quiet)
    if summary.problems:
        sys.exit(1)
    if summary.checked == 0:
        raise click.ClickException(f"{output}: no records or manifests found; run `crawler extract` first")


class _PasteCommand(click.Command):
    """A command whose first argument is a paste: an argument that begins with `-` but is
    shaped like no option (a pytest rule line `-----`, a `- item` line) is read as an argument,
    so the paste needs no `--` before it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {name: not (param.is_flag or param.count) for param in self.get_params(ctx)
                 if isinstance(param, click.Option) for name in param.opts + param.secondary_opts}
        options: list[str] = []
        arguments: list[str] = []
        pending = False  # the option before takes this one as its value
        for number, arg in enumerate(args):
            if pending or (arg.split("=", 1)[0] in known or arg[:2] in known
                           or _OPTION_SHAPED.match(arg)) and arg != "--":
                options.append(arg)
                pending = not pending and known.get(arg, False)
            elif arg == "--":
                arguments.extend(args[number + 1:])
                break
            else:
                arguments.append(arg)
        return super().parse_args(ctx, [*options, "--", *arguments])


_OPTION_SHAPED = re.compile(r"--?[A-Za-z][\w-]*(?:=.*)?\Z", re.DOTALL)


@main.command("lookup", cls=_PasteCommand)
@click.argument("message")
@existing_folder_argument("output", checked=False)  # not read with --db
@click.option("-n", "--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Most records to print, of the matches and of the closest alike.")
@click.option("--db", type=click.Path(dir_okay=False, readable=False, path_type=Path), default=None,
              help="Search a database written by `crawler export --format sqlite` instead.")
@json_option("records")
@quiet_option
def lookup_command(message: str, output: Path, limit: int, db: Path | None, as_json: bool,
                   quiet: bool) -> None:
    """Find the raise sites that print MESSAGE, whatever a user pasted of it.

    MESSAGE may be the text alone, a first line, or a whole traceback as Python, pytest,
    IPython, Rich or a logger printed it, chained, wrapped or cut short; `-` reads it from
    standard input; a paste that begins with `-` is MESSAGE (`--` before it works too). OUTPUT
    is the output root or one repository's folder in it (each repository's lookup.sqlite
    answers). Matches are
    exact, an exact prefix of a template, or only close (~), ranked with ties shown. Exits 0
    when a template's own text explains most of the paste, 1 when none does (the closest are
    listed, or the plain line that no raise site prints it) or a record file cannot be read.

    \b
    Example:
      crawler lookup "KeyError: 'missing column x'" output/
      crawler lookup "bad shape (3, 4)" output/github.com/jax-ml/jax --json
      crawler lookup "ValueError: bad shape (3, 4)" --db errors.sqlite
    """
    from crawler.serve.lookup import lookup_database, lookup_output

    if message == "-":  # the paste from standard input: `crawler lookup - out/ < traceback.txt`
        message = click.get_text_stream("stdin").read()
    problems: tuple[str, ...] = ()
    if db is not None:
        if not db.exists() and not db.is_symlink():  # anything else: lookup_database says what
            raise MissingFolder(f"{db}: no such database; write one with "
                                "`crawler export --format sqlite -o FILE`")
        answer = lookup_database(db, message, limit)
    else:
        _require_folder(output)
        found = lookup_output(output, message, limit)
        answer, problems = found.answer, found.problems
    _echo_skipped(problems)  # on stderr, with --json and -q too: the output is incomplete
    _show(LookupSummary(answer), as_json, quiet)
    if answer.timed_out and not quiet:
        click.echo(f"note: {len(answer.timed_out)} records' regexes ran out of time and were not "
                   f"tried in full ({' '.join(answer.timed_out[:4])}); `crawler validate` the "
                   "records whose regex was edited", err=True)
    if problems or not answer.found:
        sys.exit(1)


def _echo_skipped(problems: Iterable[str]) -> None:
    """Files a reading command left out, one line each on stderr: the others are served."""
    for problem in problems:
        click.echo(f"skipped: {one_line(problem)}", err=True)


def _require_folder(folder: Path) -> None:
    """A folder the command reads must be there: else one line and the usage exit code."""
    if not folder.is_dir():
        raise MissingFolder(f"{folder}: no such folder; give the output folder of "
                            "`crawler extract` (or run it first)")


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
    from crawler.parse._forkserver import warm_up

    _require_folder(output_root)
    warm_up()  # the workers' imports overlap ours, the pin and the manifest's load
    from crawler.pipeline import update as run_update

    with files_progress(quiet or as_json) as progress:
        result = run_update(source, ref=ref, output_root=output_root, cache_dir=cache_dir,
                            name=name, jobs=jobs, progress=progress, dry_run=dry_run or check_only,
                            wait=wait, evidence=evidence, web_url=web_url)
    _show(UpdateSummary(result, dry_run or check_only, check_only), as_json, quiet)
    _echo_notes(result.notes, quiet)
    _raise_problems(result.problems, result.folder)
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
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Parse the tags' files on this Dask scheduler's workers (tcp://HOST:8786); "
                   "the merges stay here, in release order.")
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
    from crawler.parse._forkserver import warm_up

    warm_up()  # the workers' imports overlap ours and the pin
    from crawler.history import CHECKPOINT_STEPS, READ_AHEAD, TagStep, walk_releases

    def report(step: TagStep) -> bool:
        if not quiet:  # on stderr: --json keeps stdout for the summary
            try:
                click.echo(HistorySummary.step_line(step), err=True)
            except BrokenPipeError:
                return False  # the reader went away: the walk stops at a checkpoint
        return True

    result = walk_releases(source, tags=tags, ref=ref, output_root=output_root,
                           cache_dir=cache_dir, name=name, jobs=jobs, evidence=evidence,
                           since=since, on_step=report,
                           checkpoint_steps=checkpoint_steps or CHECKPOINT_STEPS,
                           read_ahead=READ_AHEAD if read_ahead is None else read_ahead,
                           scheduler=scheduler)
    if result.stopped:  # not done, unlike a lookup cut short (exit 0 in CrawlerGroup.invoke)
        _quiet_stdout(sys.stderr)
        raise click.exceptions.Exit(WALK_CUT_SHORT)
    _show(HistorySummary(result), as_json, quiet)
    if result.steps:
        _echo_notes(result.steps[-1].result.notes, quiet)
        _raise_problems(result.steps[-1].result.problems, result.folder)


@main.command()
@existing_folder_argument("output")
@click.option("--annotations", "annotations_only", is_flag=True,
              help="Only ask whether each annotation fits its record (annotation-mismatch).")
@cache_dir_option
@json_option("findings")
@quiet_option
def check(output: Path, annotations_only: bool, cache_dir: Path | None, as_json: bool,
          quiet: bool) -> None:
    """List records whose annotation may not fit their message any more, and orphaned annotations.

    A record is listed when its annotation's written_for is not its current message template,
    or when it is in needs_review (its message was reworded). After checking the annotation,
    set annotation.written_for to the current template: the next `crawler update` makes the
    record active again. A removed record that carries an annotation is listed with the live
    record without one that most resembles it and the score (or "no candidate"): move the
    annotation there with `crawler adopt OLD NEW`. Exits 1 if anything is listed or a record
    cannot be read. A record file whose exact bytes passed the schema before (in any run using
    the same cache folder) is not checked in full again.

    Every annotation is also asked whether it fits its record: one whose code names are defined
    elsewhere in the repository, and that never names its record's function, class or exception,
    is listed as annotation-mismatch with those names and its score (docs/annotations.md). A
    person who finds it right sets annotation.fits.confirmed to the current template.

    \b
    Example:
      crawler check output/
      crawler check --annotations --json output/
    """
    from crawler.pipeline import load_cache
    from crawler.serve.review import review_output

    # a record file whose exact bytes passed the schema before (in any run) is not read again
    review = review_output(output, load_cache(cache_dir), annotations_only)
    summary = CheckSummary(review)
    if not as_json:
        for problem in review.problems:
            click.echo(problem, err=True)
    if quiet and not as_json:
        _echo_lines(summary.findings())  # -q leaves out the count, never what needs a look
    _show(summary, as_json, quiet)
    if review.checked == 0:
        raise click.ClickException(f"{output}: no records found; run `crawler extract` first")
    if review.to_review:
        sys.exit(1)


@main.command()
@click.argument("old_id")
@click.argument("new_id")
@existing_folder_argument("output")
@click.option("--repo", default=None, metavar="HOST/OWNER/NAME",
              help="The repository folder, where OUTPUT holds the id in several.")
@force_option
@click.option("--reviewed", is_flag=True,
              help="The annotation was checked against NEW_ID's message: keep it active, "
                   "not needs_review.")
@dry_run_option
@wait_option
@summary_options
def adopt(old_id: str, new_id: str, output: Path, repo: str | None, force: bool, reviewed: bool,
          dry_run: bool, wait: float, as_json: bool, quiet: bool) -> None:
    """Move the annotation of record OLD_ID into record NEW_ID, deliberately.

    For an annotation the crawler could not carry itself (`crawler check` lists them with the
    likeliest successor). The annotation block moves byte for byte, comments included, and
    keeps its written_for; NEW_ID becomes needs_review (unless --reviewed) with
    history.adopted_from, and OLD_ID keeps empty slots and history.adopted_by. One-to-one:
    refused when NEW_ID already carries an annotation (unless --force), when OLD_ID carries
    none, or when the two are in different repositories. OUTPUT is the output root or a
    repository's folder in it. Run it again to finish an adopt that was interrupted.

    \b
    Example:
      crawler check output/
      crawler adopt 5be1c0d2a8e94f17 0c4d8e2f9a1b3c5d output/
      crawler adopt 5be1c0d2a8e94f17 0c4d8e2f9a1b3c5d --repo github.com/jax-ml/jax --dry-run
    """
    from crawler.store.adoption import adopt as run_adopt

    adoption = run_adopt(output, old_id, new_id, repo=repo, force=force, reviewed=reviewed,
                         dry_run=dry_run, wait=wait)
    _show(AdoptSummary(adoption, dry_run), as_json, quiet)


_DEFAULT_TARGETS = {"jsonl": Path("records.jsonl"), "json": Path("export"), "sqlite": Path("errors.db")}


@main.command("export")
@existing_folder_argument("output")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "json", "sqlite"]), default=None,
              help="jsonl: one record a line; json: errors/<id>.json, index.json and one "
                   "listing a repository; sqlite: a database datasette serves as it is, with "
                   "<db>.metadata.json beside it. [default: what --output's name says: .jsonl, "
                   ".json or a folder, .sqlite or .db; '-' or a pipe: jsonl]")
@click.option("-o", "--output", "--to", "target", type=click.Path(readable=False, path_type=Path),
              default=None, help=OUTPUT_HELP)
@force_option
@summary_options
def export_command(output: Path, fmt: str | None, target: Path | None, force: bool, as_json: bool,
                   quiet: bool) -> None:
    """Export every repository's records under OUTPUT for the site and API projects.

    Writes to -o/--output (--to is the same option): by default records.jsonl, export/ or
    errors.db by format; '-' writes JSON Lines to standard output; a device or a pipe is
    written through. Output is deterministic: the same records give byte-identical files.
    Schemas are in schemas/ (record.schema.json, export-index.schema.json, export.sql). An
    existing file is replaced only if the crawler wrote it (or with --force); a link is
    followed. A record file that cannot be read is left out with one line on stderr, and the
    exit code is 1.

    \b
    Example:
      crawler export output/ --format sqlite -o errors.db
      datasette serve errors.db -m errors.db.metadata.json   # written beside it
      crawler export output/ --format jsonl -o - | head -1
    """
    from crawler.serve import export, export_target

    fmt = fmt or (export_target.format_of(target) if target is not None else None)
    if fmt is None:
        where = f"{target}: its name says no format" if target else "no -o/--output to say a format"
        raise UsageLine(one_line(f"{where}; give --format jsonl, json or sqlite, or a name "
                                 "ending .jsonl, .json, .sqlite or .db"))
    target = target or _DEFAULT_TARGETS[fmt]
    to_stdout = str(target) == "-"
    if to_stdout and fmt != "jsonl":
        raise click.UsageError("-o - (standard output) is for --format jsonl only")
    if to_stdout and as_json:
        raise click.UsageError("-o - writes the records to standard output: give a file for "
                               "them, or leave out --json")
    read = export.read_output(output)  # a file that cannot be loaded is left out, and named
    _echo_skipped(read.skipped)
    if to_stdout:
        count = export.write_jsonl(read.repositories, sys.stdout)
    else:
        count = export.export_output(read, fmt, target, force=force)
        _show(ExportSummary(fmt, str(target), count, read.skipped), as_json, quiet)
    if read.skipped:
        sys.exit(1)
