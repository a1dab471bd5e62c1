"""The record types that the pipeline stages pass to each other: frozen, typed, no loose dicts.

This package owns the shapes, not the behaviour: what a repository and its files give
(`sites`: `Pin`, `SourceFile`, `Template`, `RaiseSite`, `ClassDef` and the texts a visit
reads), one error record and its parts (`record`: `ErrorRecord`, `Annotation`, `History`,
`Evidence`, `Related`, `EntryPoints`, and `record_id`), and a folder's manifest (`manifest`).
Every stage imports them from here; it imports nothing of the crawler.

The contract, in one example: a site's identity is its key, never its line, and a new record's
id is a hash of the repository, the key and the ordinal among sites of equal key, so the same
raise gets the same id in any folder that names the repository alike.

>>> from dataclasses import replace
>>> from crawler.records import ErrorRecord, RaiseSite, Template, record_id
>>> message = Template(kind="literal", template="path must not be empty", placeholders=(),
...                    regex="^path must not be empty$")
>>> site = RaiseSite(path="pkg/mod.py", line=5, end_line=5, column=8, class_name=None,
...                  function="load", qualname="load", exception="ValueError",
...                  exception_qualname="builtins.ValueError", message=message, cause=None,
...                  condition="not path", snippet="def load(path): ...", snippet_line=1)
>>> site.key()
('pkg/mod.py', 'load', 'ValueError', 'path must not be empty')
>>> replace(site, line=40, end_line=40).key() == site.key()
True
>>> record_id("local/acme/lib", site.key(), 0), record_id("local/acme/lib", site.key(), 1)
('4ca6959e74317970', '78013964e0f8848a')
>>> record = ErrorRecord(id="4ca6959e74317970", status="active", repo="local/acme/lib",
...                      commit="1" * 40, url=None, site=site)
>>> record.annotation.is_empty, record.annotation.written_for
(True, None)

The id is given once: after that the merge carries it with its site (`crawler.catalogue`),
whatever the key becomes. (`crawler extract` of a repository named `acme/lib` whose
`pkg/mod.py` raises this message in `load` writes `errors/4ca6959e74317970.yaml`.)

May import: nothing of the crawler: every other package imports these types.
Line budget: 750 lines.
"""

from __future__ import annotations

from crawler.records.manifest import (
    Counts,
    ExtractOptions,
    FileEntry,
    Manifest,
    RaiseCounts,
    Release,
    Releases,
    ReleaseTag,
    Skipped,
    TagMove,
)
from crawler.records.record import (
    Annotation,
    BrokenFile,
    EntryPoint,
    EntryPoints,
    ErrorRecord,
    Evidence,
    History,
    Related,
    TemplateSpan,
    TestAssertion,
    Versions,
    empty_annotation,
    record_id,
)
from crawler.records.sites import (
    ACTIVE,
    MAX_FILE_BYTES,
    MESSAGE_KINDS,
    NEEDS_REVIEW,
    REMOVED,
    SCHEMA_VERSION,
    STATUSES,
    ArgumentText,
    BuiltException,
    CallArgument,
    ClassDef,
    CrossCall,
    ExposedFunction,
    Pin,
    RaiseSite,
    SourceFile,
    Template,
    TextCall,
    TextReading,
    TextRun,
    TextSlot,
    is_network_address,
)

__all__ = ["ACTIVE", "Annotation", "ArgumentText", "BrokenFile", "BuiltException", "CallArgument",
           "ClassDef", "Counts", "CrossCall", "EntryPoint", "EntryPoints", "ErrorRecord",
           "Evidence", "ExposedFunction", "ExtractOptions", "FileEntry", "History",
           "MAX_FILE_BYTES", "MESSAGE_KINDS", "Manifest", "NEEDS_REVIEW", "Pin", "REMOVED",
           "RaiseCounts", "RaiseSite", "Related", "Release", "ReleaseTag", "Releases", "TagMove",
           "SCHEMA_VERSION", "STATUSES", "Skipped", "SourceFile", "Template", "TemplateSpan",
           "TestAssertion", "TextCall", "TextReading", "TextRun", "TextSlot", "Versions", "empty_annotation",
           "is_network_address", "record_id"]
