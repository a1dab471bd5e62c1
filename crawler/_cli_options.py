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
    help="Branch, tag, or short or full sha to pin.")

output_option = click.option(
    "-o", "--output", "output_root", type=_folder(), default=Path("output"), show_default=True,
    help="Output root folder.")

cache_dir_option = click.option(
    "--cache-dir", type=_folder(), default=None,
    help="Where fetched repositories and parse results are cached "
         "[default: the user cache folder].")

name_option = click.option(
    "--name", default=None,
    help="Override the output identity: HOST/OWNER/NAME, OWNER/NAME or NAME "
         "(`update` needs the one `extract` was given).")

evidence_option = click.option(
    "--evidence/--no-evidence", default=True, show_default=True,
    help="Read the test files for assertions on each message (costs their parse; "
         "--no-evidence keeps the records' evidence as it is).")

jobs_option = click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None,
    help="Worker processes [default: all cores].")

dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Do everything but write: show what would change.")

force_option = click.option(
    "--force", is_flag=True,
    help="Go past a check that would stop it: `batch` extracts again repositories already up to "
         "date; `adopt` replaces an annotation NEW_ID carries, printing what it held.")

wait_option = click.option(
    "--wait", type=click.FloatRange(min=0), default=0, show_default=True, metavar="SECONDS",
    help="If another run holds the output folder, wait this long for it, then give up.")

force_option = click.option(
    "--force", is_flag=True,
    help="Go on where the crawler would stop to spare work or a file: `batch` extracts again "
         "repositories already up to date, `export` replaces a file at --to it did not write.")

quiet_option = click.option(
    "-q", "--quiet", is_flag=True, help="No progress bar and no summary; problems are still printed.")


def json_option(what: str = "summary") -> Callable[[F], F]:
    """`--json`: print `what` (the summary, the findings, the records) as JSON instead of lines."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print the {what} as JSON.")


def summary_options(command: F) -> F:
    """`--json` and `-q`, for the commands that end with a summary of what they did."""
    return json_option()(quiet_option(command))


def existing_folder_argument(name: str) -> Callable[[F], F]:
    """A folder that must exist, `output` when not given (the output root, or a part of it)."""
    return click.argument(name, default="output", type=_folder(exists=True))
