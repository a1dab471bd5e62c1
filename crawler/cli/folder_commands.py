"""The commands that read a finished output folder: `validate`, `lookup`, `check`, `adopt`
and `export`. `crawler.cli.commands` adds them to the `crawler` group."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from crawler.cli.fast_lookup import pasted_argument, pasted_stdin, said, split_paste_args
from crawler.cli.options import (
    OUTPUT_HELP,
    MissingFolder,
    UsageLine,
    cache_dir_option,
    dry_run_option,
    existing_folder_argument,
    force_option,
    json_option,
    quiet_option,
    summary_options,
    wait_option,
)
from crawler.cli.summaries import AdoptSummary, CheckSummary, ExportSummary, ValidateSummary

if TYPE_CHECKING:

    pass
from crawler.cli.common import echo_lines, echo_skipped, require_folder, show
from crawler.cli.terminal import one_line


@click.command()
@existing_folder_argument("output")
@summary_options
def validate(output: Path, as_json: bool, quiet: bool) -> None:
    """Check every record and manifest under OUTPUT against the schemas in schemas/.

    Prints each bad file with the field and what is wrong, one line each on standard output
    (with -q too); exits 1 if any file is bad.

    \b
    Example:
      crawler validate output/
      crawler validate output/github.com/jax-ml/jax --json
    """
    summary = ValidateSummary.of_folder(output)
    if not as_json:  # the command's findings: on stdout, -q too (as ruff prints its diagnostics)
        echo_lines(one_line(problem) for problem in summary.problems)
    show(summary, as_json, quiet)
    if summary.problems:
        sys.exit(1)
    if summary.checked == 0:
        raise click.ClickException(f"{output}: no records or manifests found; run `crawler extract` first")


class _PasteCommand(click.Command):
    """A command whose first argument is a paste: an argument that begins with `-` but is
    shaped like no option (a pytest rule line `-----`, a `- item` line) is read as an argument,
    so the paste needs no `--` before it (`fast_lookup.split_paste_args`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {name: not (param.is_flag or param.count) for param in self.get_params(ctx)
                 if isinstance(param, click.Option) for name in param.opts + param.secondary_opts}
        options, arguments = split_paste_args(args, known)
        return super().parse_args(ctx, [*options, "--", *arguments])


@click.command("lookup", cls=_PasteCommand)
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
    listed, or the plain line that no raise site prints it) or a record file cannot be read as
    YAML (named on stderr, left out). A record that reads but breaks the schema answers as it
    is: `crawler validate` checks the schema.

    \b
    Example:
      crawler lookup "KeyError: 'missing column x'" output/
      crawler lookup "bad shape (3, 4)" output/github.com/jax-ml/jax --json
      crawler lookup "ValueError: bad shape (3, 4)" --db errors.sqlite
    """
    from crawler.serve.lookup.sources import lookup_database, lookup_output

    # the paste from standard input (`crawler lookup - out/ < traceback.txt`) or the argument
    pasted = pasted_stdin(sys.stdin.buffer) if message == "-" else pasted_argument(message)
    problems: tuple[str, ...] = ()
    if db is not None:
        if not db.exists() and not db.is_symlink():  # anything else: lookup_database says what
            raise MissingFolder(f"{db}: no such database; write one with "
                                "`crawler export --format sqlite -o FILE`")
        answer = lookup_database(db, pasted.text, limit, pasted.left_out)
    else:
        require_folder(output)
        found = lookup_output(output, pasted.text, limit, pasted.left_out)
        answer, problems = found.answer, found.problems
    # as the installed command prints them
    lines, code = said(answer, problems, as_json, quiet, pasted.undecodable)
    for text, err in lines:
        click.echo(text, err=err)
    if code:
        sys.exit(code)


@click.command()
@existing_folder_argument("output")
@click.option("--annotations", "annotations_only", is_flag=True,
              help="Only ask whether each annotation fits its record (annotation-mismatch).")
@click.option("--dismiss", "dismissals", multiple=True, metavar="RECORD_ID",
              help="Dismiss the annotation-mismatch finding of RECORD_ID (repeatable): it is not "
                   "listed again while its annotation and its record's facts stay as they are.")
@cache_dir_option
@json_option("findings")
@quiet_option
def check(output: Path, annotations_only: bool, dismissals: tuple[str, ...],
          cache_dir: Path | None, as_json: bool, quiet: bool) -> None:
    """List records whose annotation may not fit their message any more, and orphaned annotations.

    A record is listed when its annotation's written_for is not its current message template, or
    when it carries an annotation and is in needs_review (its message was reworded). After
    checking the annotation, set annotation.written_for to the current template: the next `crawler
    update` makes the record active again. A removed record that carries an annotation is listed
    with the live record without one that most resembles it and the score (or "no candidate"):
    move the annotation there with `crawler adopt OLD NEW`. A record file whose exact bytes
    passed the schema before (in any run using the same cache folder) is not checked in full
    again.

    Every annotation is also asked whether it fits its record: when another record holds twice
    what its own holds of the annotation's names and words (each weighed by how rare it is), it
    is listed as annotation-mismatch, "sure" from three times and a "suspect" under it, surest
    first, with the records that fit better (docs/annotations.md). A person who finds it right
    dismisses it with --dismiss RECORD_ID, until the annotation or the record changes.

    Exits 1 if anything but a suspect is listed or a record cannot be read: a site's CI fails on
    what needs a person, and a suspect is listed without failing it.

    \b
    Example:
      crawler check output/
      crawler check --annotations --json output/
      crawler check --dismiss c24a155dbe244fb0 output/
    """
    from crawler.git.cache_folder import default_cache_dir
    from crawler.serve.review.checks import dismiss, review_output
    from crawler.store.cache import LoadCache

    if dismissals:  # written first, one atomic file per repository folder; then the check runs
        for line in dismiss(output, dismissals):
            if not as_json and not quiet:
                click.echo(one_line(line))
    # a record file whose exact bytes passed the schema before (in any run) is not read again;
    # the pipeline's runs keep the same checked loads (`pipeline.load_cache`), which `check`
    # does not import: it reads records and never parses
    loads = LoadCache(cache_dir if cache_dir is not None else default_cache_dir())
    review = review_output(output, loads, annotations_only)
    summary = CheckSummary(review)
    if not as_json:  # a file that is no record is a finding too: on stdout, as validate's
        echo_lines(review.problems)
    if quiet and not as_json:
        echo_lines(summary.findings())  # -q leaves out the count, never what needs a look
    show(summary, as_json, quiet)
    if review.checked == 0:
        raise click.ClickException(f"{output}: no records found; run `crawler extract` first")
    if review.to_review:
        sys.exit(1)


@click.command()
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
    show(AdoptSummary(adoption, dry_run), as_json, quiet)


_DEFAULT_TARGETS = {"jsonl": Path("records.jsonl"), "json": Path("export"), "sqlite": Path("errors.db")}


@click.command("export")
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
    from crawler.serve.export import target as export_target
    from crawler.serve.export import writers as export

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
    echo_skipped(read.skipped)
    if to_stdout:
        count = export.write_jsonl(read.repositories, sys.stdout)
    else:
        count = export.export_output(read, fmt, target, force=force)
        show(ExportSummary(fmt, str(target), count, read.skipped), as_json, quiet)
    if read.skipped:
        sys.exit(1)
