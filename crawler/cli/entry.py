"""The installed `crawler` command (`crawler.cli.entry:main`): a lookup in an output folder is
answered by `fast_lookup`, without click; anything else goes to the full command line
(`commands.main`), loaded only then."""

from __future__ import annotations

import sys
from typing import NoReturn

from crawler.cli.fast_lookup import quick_lookup
from crawler.cli.terminal import quiet_stdout


def main() -> NoReturn:
    """The `crawler` command: a lookup in an output folder here, anything else `crawler.cli.commands`."""
    code = quick_lookup(sys.argv[1:])
    if code is None:
        from crawler.cli.commands import main as command_line

        command_line()
        raise SystemExit(0)  # click's main exits itself
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # what is still buffered for a reader that is gone
        quiet_stdout()
    raise SystemExit(code)
