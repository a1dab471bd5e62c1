"""The command line's shared options: one decorator per option, applied to each command that has it.

An option two commands share is declared once here, so its name, default and help cannot drift
apart (as sqlite-utils' `output_options`). Options that only one command has stay beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def _folder(exists: bool = False) -> click.Path:
    return click.Path(exists=exists, file_okay=False, path_type=Path)


source_argument = click.argument("source", default=".")

commit_option = click.option(
    "--commit", "ref", default="HEAD", show_default=True,
    help="What to pin: a branch, a tag, a sha, or in a local repository any revision "
         "`git rev-parse` reads (HEAD~1, v1.0^{commit}).")

OUTPUT_HELP = ("Where the command writes: the output root (extract, update, batch), or the "
               "export's file or folder ('-': standard output).")

output_option = click.option(
    "-o", "--output", "output_root", type=_folder(), default=Path("output"), show_default=True,
    help=OUTPUT_HELP)

cache_dir_option = click.option(
    "--cache-dir", type=_folder(), default=None,
    help="Where fetched repositories and parse results are cached "
         "[default: the user cache folder].")

name_option = click.option(
    "--name", default=None,
    help="Override the output identity: HOST/OWNER/NAME, OWNER/NAME or NAME "
         "(`update` reads the one `extract` was given from the folder's manifest).")

web_url_option = click.option(
    "--web-url", default=None, metavar="URL",
    help="The repository's web page on a self-hosted forge (https://HOST/OWNER/NAME): its "
         "identity and the records' permalinks (GitLab-shaped unless the host says Gitea, "
         "Forgejo or GitHub); `update` reads the one `extract` was given from the manifest.")

jobs_option = click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None,
    help="Worker processes [default: all cores].")

scheduler_option = click.option(
    "--scheduler", default=None, metavar="ADDRESS",
    help="Parse on this Dask scheduler's workers (tcp://HOST:8786); merges and writes stay here "
         "[default: Dask's scheduler-address setting, else local processes; `local` forces local "
         "processes]. One that does not answer as a Dask scheduler within Dask's connect timeout "
         "(its distributed.comm.timeouts.connect setting, 30 s) ends the command.")
dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Do everything but write: show what would change.")

wait_option = click.option(
    "--wait", type=click.FloatRange(min=0), default=0, show_default=True, metavar="SECONDS",
    help="If another run holds the output folder, wait this long for it, then give up.")

force_option = click.option(
    "--force", is_flag=True,
    help="Go on where the crawler would stop to spare work or a file: `batch` extracts again "
         "repositories already up to date, `export` replaces a file at --output it did not "
         "write, `adopt` replaces an annotation NEW_ID carries, printing what it held.")

evidence_option = click.option(
    "--evidence/--no-evidence", default=True, show_default=True,
    help="Read the test files for assertions on each message (a test file whose blob is in the "
         "cache is not parsed again) and rewrite the records whose evidence changed; "
         "--no-evidence keeps the records' evidence as it is.")

quiet_option = click.option(
    "-q", "--quiet", is_flag=True, help="No progress bar and no summary; problems are still printed.")


def json_option(what: str = "summary") -> Callable[[F], F]:
    """`--json`: print `what` (the summary, the findings, the records) as JSON instead of lines."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print the {what} as JSON.")


def summary_options(command: F) -> F:
    """`--json` and `-q`, for the commands that end with a summary of what they did."""
    return json_option()(quiet_option(command))


class UsageLine(click.ClickException):
    """A usage error said in one line (no usage block): the usage exit code."""

    exit_code = 2


class MissingFolder(click.ClickException):
    """A folder the command reads is not there: one line, and the usage exit code on every
    command (a path on the command line that names nothing)."""

    exit_code = 2


class ExistingFolder(click.ParamType):
    """A folder that must exist; refused with `MissingFolder` (one line, exit 2) when not."""

    name = "folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(value)
        if path.is_dir():
            return path
        what = "not a folder" if path.exists() else "no such folder"
        raise MissingFolder(f"{path}: {what}; give the output folder of `crawler extract` "
                            "(or run it first)")


def existing_folder_argument(name: str, checked: bool = True) -> Callable[[F], F]:
    """The output root (or a part of it) that the command reads: `output` when not given,
    which the usage line shows; `checked=False` where the command checks it itself."""
    kind = ExistingFolder() if checked else click.Path(path_type=Path)
    return click.argument(name, default="output", type=kind, metavar=f"[{name.upper()}=output]")
