"""The crawler's exceptions: each names the place first and says what to do.

Only `cli.py` turns them into an exit code; every stage raises them with context.
"""

from __future__ import annotations


class CrawlerError(Exception):
    """Base of every error the crawler reports to a user as one line."""


class SourceError(CrawlerError):
    """The source is not a repository we can read, or is refused as unsafe."""


class MissingSourceError(SourceError):
    """A source folder named on the command line is not there: a usage error (exit 2)."""


class RefError(CrawlerError):
    """The commit, branch or tag does not exist in the source."""


class OutputError(CrawlerError):
    """The output folder cannot be read or written safely."""


class RecordError(OutputError):
    """A record or manifest file on disk cannot be loaded; it is left as it is."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class SchemaError(OutputError):
    """A file does not validate against its JSON Schema."""


class BatchError(CrawlerError):
    """A batch file (repos.yaml) is not valid; the message names the entry and the field."""
