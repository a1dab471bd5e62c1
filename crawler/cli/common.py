"""What every command of the command line shares: exit codes, one-line errors, summaries
printed as JSON or lines, progress bars on a terminal, and a closed standard output."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from crawler.cli.options import MissingFolder
from crawler.cli.summaries import Line
from crawler.cli.terminal import INTERRUPTED, TERMINATED, one_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import ProgressColumn

    from crawler.batch.driver import BatchProgress
    from crawler.pipeline import Progress as RunProgress


UNWRAPPED_WIDTH = 100_000  # a table's width off a terminal: as wide as its longest row


WALK_CUT_SHORT = 141  # a history walk whose reader went away: 128 + SIGPIPE, as a shell says


class Interrupted(click.ClickException):
    """Ctrl-C: one line, exit 130, whatever the command was doing (every write is atomic)."""

    exit_code = INTERRUPTED


class TerminatedExit(click.ClickException):
    """SIGTERM: one line, exit 143 (128 + SIGTERM), whatever the command was doing (every write
    is atomic; its workers are stopped)."""

    exit_code = TERMINATED


class Summary(Protocol):
    """What a command reports (`crawler.cli.summaries`): its JSON form and its human lines."""

    def to_json(self) -> str: ...

    def lines(self) -> Iterable[Line]: ...


def show(summary: Summary, as_json: bool, quiet: bool = False) -> None:
    """A command's summary on stdout: as JSON, as lines, or (with -q) not at all."""
    if as_json:
        click.echo(summary.to_json())
    elif not quiet:
        echo_lines(summary.lines())


def echo_lines(lines: Iterable[Line]) -> None:
    """Text lines (no markup, no emoji codes), each through `one_line`: what a summary says of
    the catalogue (templates, paths, tags, an annotation) is shown escaped, on a terminal or
    not; tables through rich."""
    for line in lines:
        if isinstance(line, str):
            click.echo(one_line(line))
        else:
            from rich.console import Console

            console = Console(highlight=False)
            if not console.is_terminal:  # a log or a pipe: one line a row, never cut at 80 columns
                console.width = UNWRAPPED_WIDTH
            console.print(line)


def stderr_console() -> Console:
    """The console of progress bars and of batch failures (rich loads when one is needed)."""
    from rich.console import Console

    return Console(stderr=True)


def raise_problems(problems: tuple[str, ...], folder: Path) -> None:
    """Broken record files were left as they are: say so as one line, exit 1."""
    if problems:
        more = len(problems) - 1
        also = f" (and {more} more: `crawler validate {folder}` lists them)" if more else ""
        raise click.ClickException(one_line(problems[0]) + also)


@contextmanager
def _progress(quiet: bool, columns: tuple[ProgressColumn, ...], total: int | None,
              **fields: Any) -> Iterator[Callable[..., None] | None]:
    """A transient bar on a terminal's stderr, updated by keyword; nothing in a pipe or with -q."""
    if quiet:  # before rich's import: a quiet run never loads it
        yield None
        return
    from rich.progress import Progress

    err = stderr_console()
    if not err.is_terminal:
        yield None
        return
    with Progress(*columns, console=err, transient=True) as bar:
        yield partial(bar.update, bar.add_task("", total=total, **fields))


@contextmanager
def files_progress(quiet: bool) -> Iterator[RunProgress | None]:
    """A bar per stage of the run (files parsed, test files read, the class pass, assertions
    matched, records written), each with its count and an estimate of the time left; on a
    terminal's stderr only, never with -q."""
    if quiet:  # before rich's import: a quiet run never loads it
        yield None
        return
    err = stderr_console()
    if not err.is_terminal:
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


def echo_notes(notes: tuple[str, ...], quiet: bool) -> None:
    """What a run healed or assumed, one line each on stderr (-q silences them)."""
    for note in notes:
        if not quiet:
            click.echo(f"note: {one_line(note)}", err=True)


def echo_skipped(problems: Iterable[str]) -> None:
    """Files a reading command left out, one line each on stderr: the others are served."""
    for problem in problems:
        click.echo(f"skipped: {one_line(problem)}", err=True)


def require_folder(folder: Path) -> None:
    """A folder the command reads must be there: else one line and the usage exit code."""
    if not folder.is_dir():
        raise MissingFolder(f"{folder}: no such folder; give the output folder of "
                            "`crawler extract` (or run it first)")
