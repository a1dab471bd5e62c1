"""The record types that the pipeline stages pass to each other: frozen, typed, no loose dicts.

One module a part: what a repository and its files give (`sites`), one error record (`record`),
a folder's manifest (`manifest`). Every stage imports them from here.
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
           "TestAssertion", "TextReading", "TextRun", "TextSlot", "Versions", "empty_annotation",
           "is_network_address", "record_id"]
