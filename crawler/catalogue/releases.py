"""The catalogue across releases: which tags to walk, in what order, and what each step records.

`crawler history` walks a repository's release tags one regeneration at a time (see
`crawler.pipeline.history_run`). This module decides the walk (`plan_walk`: the tags matching the glob in
PEP 440 order, or by tag date where none of them is a version, after the ones already walked)
and keeps each record's release history as a step's merge hands its records on (`mark_step`):

- `versions`: the first release that contained the site, and the last one once it is gone
  (None while it is there); the first release's commit is the record's `history.first_seen`,
  also where the record was in the folder before the walk (an `extract` at a later commit);
- `history.templates`: spans of consecutive releases with one wording, exception class and
  file; a span closes at the last release that had it, and a new one opens where any of the
  three changed or where the site came back after it was removed.

A step that is not a release (the commit after the last tag, or a plain `update` of a folder
that `history` built) opens spans with `first` None: the wording is in no release yet. The
manifest lists those records (`Releases.unreleased`), and the next release step gives them
their first release.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from packaging.version import InvalidVersion, Version

from crawler.parse.message.templates import build_template, pieces_of
from crawler.records import (
    REMOVED,
    ErrorRecord,
    History,
    Release,
    Releases,
    ReleaseTag,
    TagMove,
    Template,
    TemplateSpan,
    Versions,
)

# ---------------------------------------------------------------- the order of tags

# A tag is a PEP 440 version, as `packaging` reads one (`v1.2.3`, `1.2.3rc1`, `1.0.post2`,
# `2.0.0.dev3`, `1.0+local`, `1!2.0`), after a prefix of words ending in `-` or `_`
# (`jax-v0.4.33-rc`, `release-1.0`, `py_lib-v2.1`).
_PREFIX_WORD = re.compile(r"[a-z][a-z0-9]*[-_]", re.IGNORECASE)


# A version written with underscores for dots, as some projects tag their releases
# (SQLAlchemy's and Mako's `rel_1_4_0`, `rel_2_0_0b1`; Alembic's `rel_1_13_1`)
_UNDERSCORED = re.compile(r"\d+(?:_\d+)+(?:[a-z]+\d*)?", re.IGNORECASE)


def version_key(tag: str) -> Version | None:
    """The version a tag names, which sorts in PEP 440 order; None for any other tag."""
    rest = tag
    while True:
        try:
            return Version(rest.replace("_", ".") if _UNDERSCORED.fullmatch(rest) else rest)
        except InvalidVersion:
            word = _PREFIX_WORD.match(rest)
            if word is None:
                return None
            rest = rest[word.end():]


@dataclass(frozen=True)
class Walk:
    """The tags one `crawler history` run walks, in order, and those it leaves out, with why."""

    tags: tuple[ReleaseTag, ...]
    ignored: tuple[tuple[str, str], ...] = ()  # (tag, why)
    by_date: bool = False  # no tag named a version: the walk follows the tag dates


def order_tags(tags: Iterable[ReleaseTag]) -> Walk:
    """The tags in PEP 440 order; where some are versions, the others are left out; where none
    is, all of them by tag date (then name)."""
    tags = list(tags)
    keyed = [(version_key(tag.name), tag) for tag in tags]
    versions = [(key, tag) for key, tag in keyed if key is not None]
    if not versions:
        return Walk(tuple(sorted(tags, key=lambda t: (t.date, t.name))), by_date=bool(tags))
    ordered = sorted(versions, key=lambda pair: (pair[0], pair[1].date, pair[1].name))
    ignored = tuple((tag.name, "not a version") for key, tag in keyed if key is None)
    return Walk(tuple(tag for _, tag in ordered), ignored)


def plan_walk(tags: Iterable[ReleaseTag], walked: Releases | None, stop_at: str | None = None,
              since: str | None = None) -> Walk:
    """The tags still to walk: from `since` (one of them) on, those after the last one walked
    before (a tag that sorts before it is left out: the walk never goes back), up to
    `stop_at` when it is one of them."""
    walk = order_tags(tags)
    todo = list(walk.tags)
    ignored = list(walk.ignored)
    if since is not None:
        start = [tag.name for tag in todo].index(since)
        ignored += [(tag.name, f"before {since}, where the walk starts") for tag in todo[:start]]
        todo = todo[start:]
    if walked is not None and walked.walked:
        done = {release.tag for release in walked.walked}
        last = walked.walked[-1].tag
        names = [tag.name for tag in todo]
        if last in names:
            after = names.index(last) + 1
        else:  # the last tag walked is gone or no longer matches: place it by its version
            last_key = version_key(last)
            keys = [version_key(tag.name) for tag in todo]
            # a tag that names no version sorts first, as it did in the walk that ordered it
            after = 0 if last_key is None else sum(1 for key in keys if key is None or key <= last_key)
        ignored += [(tag.name, f"not after {last}, the last release walked")
                    for tag in todo[:after] if tag.name not in done]
        todo = todo[after:]
    if stop_at is not None and stop_at in [tag.name for tag in todo]:
        end = [tag.name for tag in todo].index(stop_at) + 1
        ignored += [(tag.name, f"after {stop_at}, where the walk ends") for tag in todo[end:]]
        todo = todo[:end]
    return Walk(tuple(todo), tuple(ignored), walk.by_date)


# ---------------------------------------------------------------- one step's bookkeeping


@dataclass(frozen=True)
class Step:
    """One regeneration of a walk: the release it reaches (None: a commit that is no release)."""

    tag: str | None
    commit: str
    before: Releases  # what the folder's manifest said of the walk


def mark_step(records: Sequence[ErrorRecord], existing: Mapping[str, ErrorRecord], step: Step
              ) -> tuple[list[ErrorRecord], Releases]:
    """The merged records with their release history moved on by one step, and the walk after it.

    `existing` holds the records as they were before the step (by id); a record not among them
    is new. Only records whose site appeared, went, came back or changed wording, class or file
    change here, and the unreleased ones at a release step: every other one keeps its bytes.
    """
    previous = step.before.last  # the last release that the folder's records were at
    marked = [_marked(record, existing.get(record.id), step, previous) for record in records]
    seen = {record.id for record in marked}
    unreleased = {i for i in step.before.unreleased if i not in seen}  # not loaded: still waiting
    unreleased.update(record.id for record in marked if _open_unreleased(record))
    walked = step.before.walked
    if step.tag is not None and (not walked or walked[-1].tag != step.tag):
        walked = (*walked, Release(step.tag, step.commit))
    return marked, Releases(walked=walked, unreleased=tuple(sorted(unreleased)),
                            moved=step.before.moved)


def moved_tags(walked: Releases, now: Mapping[str, str]) -> tuple[TagMove, ...]:
    """The walked tags that name another commit now, or are gone (`now`: every tag's commit,
    by name), in the order walked."""
    return tuple(TagMove(release.tag, release.commit, now.get(release.tag))
                 for release in walked.walked if now.get(release.tag) != release.commit)


def _marked(record: ErrorRecord, old: ErrorRecord | None, step: Step,
            previous: str | None) -> ErrorRecord:
    tag = step.tag
    live = record.status != REMOVED
    was_live = old is not None and old.status != REMOVED
    spans = list(record.history.templates) if record.history is not None else []
    versions = record.versions
    if not live:
        if not was_live or versions is None:
            return record  # gone before this step, or never walked
        spans = _closed(spans, previous)
        last = previous if versions.first is not None else None
        return _with(record, spans, Versions(versions.first, last))
    if old is None or not was_live or versions is None:  # new, back, or first seen by a walk
        spans = _closed(spans, previous)  # a removed record's spans are closed already
        first = versions.first if versions is not None and versions.first is not None else tag
        if versions is None and tag is not None:  # its first release: first seen there
            record = _first_seen(record, step.commit)
        return _with(record, [*spans, _span(record, tag)], Versions(first, None))
    if not spans or spans[-1].last is not None:  # its open span was lost: start one here
        return _with(record, [*spans, _span(record, tag)], versions)
    if _wording(spans[-1]) != _wording(_span(record, None)):
        return _with(record, [*_closed(spans, previous), _span(record, tag)], versions)
    if tag is not None and spans[-1].first is None:  # its wording's first release
        spans[-1] = replace(spans[-1], first=tag)
        return _with(record, spans, Versions(versions.first or tag, None))
    return record


def _first_seen(record: ErrorRecord, commit: str) -> ErrorRecord:
    """The record as first seen at `commit`: a walk over a folder `extract` made meets its
    records at their first release, older than the extract's commit (which was when the
    extract ran), so `history.first_seen` agrees with `versions.first`."""
    history = record.history or History(first_seen=commit)
    return replace(record, history=replace(history, first_seen=commit))


def _span(record: ErrorRecord, tag: str | None) -> TemplateSpan:
    site = record.site
    return TemplateSpan(site.message.template, tag, None, site.exception, site.path)


def _wording(span: TemplateSpan) -> tuple[str, str, str]:
    return (span.template, span.exception, span.path)


def _closed(spans: list[TemplateSpan], previous: str | None) -> list[TemplateSpan]:
    """The spans with the open one closed at the last release walked; an open span that began
    after that release is dropped: no release printed its wording."""
    if not spans or spans[-1].last is not None:
        return spans
    head, span = spans[:-1], spans[-1]
    if span.first is None or previous is None:
        return head
    return [*head, replace(span, last=previous)]


def _open_unreleased(record: ErrorRecord) -> bool:
    history = record.history
    return (record.status != REMOVED and history is not None and bool(history.templates)
            and history.templates[-1].first is None and history.templates[-1].last is None)


def _with(record: ErrorRecord, spans: list[TemplateSpan], versions: Versions) -> ErrorRecord:
    history = record.history or History(first_seen=record.commit)
    return replace(record, history=replace(history, templates=tuple(spans)), versions=versions)


# ---------------------------------------------------------------- a past wording's regex


def wording_template(text: str) -> Template | None:
    """A past wording read back from its text alone (a span keeps no placeholder list): its
    placeholders found by their braces, then read and built as the crawler reads and builds any
    template (`messages.pieces_of`, `messages.build_template`); None when the braces do not pair
    (a hand-edited record)."""
    names = _placeholder_names(text)
    if names is None:
        return None
    pieces = pieces_of(Template(kind="fstring", template=text, placeholders=tuple(names), regex=""))
    return build_template("fstring", pieces) if pieces is not None else None


def _placeholder_names(text: str) -> list[str] | None:
    """The placeholders of a template's text, in order, by their braces (`{{` and `}}` are
    literal braces); None where a brace is left open or closes nothing."""
    names: list[str] = []
    index = 0
    while index < len(text):
        if text[index:index + 2] in ("{{", "}}"):
            index += 2
        elif text[index] == "{":
            end = _closing(text, index)
            if end is None:
                return None
            names.append(text[index + 1:end])
            index = end + 1
        elif text[index] == "}":
            return None
        else:
            index += 1
    return names


def _closing(text: str, start: int) -> int | None:
    """The index of the `}` that closes the placeholder opened at `start` (nested braces of
    the expression count)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return None
