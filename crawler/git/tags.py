"""A repository's tags, for `crawler history`: name, the commit each names, and its date.

A local repository (and a `file://` one) is asked with `for-each-ref`, which knows every tag's
date: the tagger's for an annotated tag, else the commit's. A network remote is asked with
`ls-remote`, which gives no dates (a tag is dated 0 there, so tags that are not versions keep
their name order) and no commit in the cache until the tag is pinned.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from crawler.errors import SourceError
from crawler.git._cmd import GitFailed, GitRepo
from crawler.git.pin import PinnedRepo
from crawler.git.source import file_url_git_dir
from crawler.records import ReleaseTag

_TAGS = "refs/tags/"


@dataclass(frozen=True)
class TagListing:
    """The tags a glob selects: those that name a commit, by name, and the others (a tag of a
    tree or a blob names no release), each with why it is left out."""

    tags: tuple[ReleaseTag, ...]
    not_commits: tuple[tuple[str, str], ...] = ()  # (tag, why), by name


def list_tags(repo: PinnedRepo, glob: str) -> TagListing:
    """Every tag whose name matches `glob` (fnmatch, case-sensitive), sorted by name."""
    spec = repo.spec
    try:
        if spec.kind == "local" or spec.file_url:
            local = repo.repo if spec.kind == "local" else GitRepo(file_url_git_dir(spec))
            try:
                tags, others = _local_tags(local)
            finally:
                if local is not repo.repo:
                    local.close()
        else:
            tags, others = _remote_tags(repo.repo), []
    except GitFailed as exc:
        raise SourceError(f"[{spec.display}] cannot list tags: {exc.reason}") from None
    return TagListing(
        tuple(sorted((tag for tag in tags if fnmatchcase(tag.name, glob)), key=lambda t: t.name)),
        tuple(sorted(other for other in others if fnmatchcase(other[0], glob))))


def _local_tags(repo: GitRepo) -> tuple[list[ReleaseTag], list[tuple[str, str]]]:
    out = repo.run("for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)%00"
                   "%(objecttype)%00%(*objecttype)%00%(creatordate:unix)", _TAGS)
    tags, others = [], []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        refname, sha, peeled, kind, peeled_kind, date = line.split("\0")
        commit, named = (peeled, peeled_kind) if kind == "tag" else (sha, kind)
        if named == "tag":  # a tag of a tag: `*` peels one level only
            commit, named = _peeled(repo, refname)
        name = refname[len(_TAGS):]
        if named != "commit":  # a tag of a tree or a blob names no release
            others.append((name, f"points at a {named}, not a commit"))
            continue
        tags.append(ReleaseTag(name, commit, int(date or 0)))
    return tags, others


def _peeled(repo: GitRepo, refname: str) -> tuple[str, str]:
    """(sha, type) of what a tag names once every tag on the way is peeled."""
    sha = repo.run("rev-parse", "--verify", "--end-of-options", f"{refname}^{{}}")
    sha_text = sha.decode("ascii").strip()
    return sha_text, repo.run("cat-file", "-t", sha_text).decode("ascii").strip()


def _remote_tags(repo: GitRepo) -> list[ReleaseTag]:
    out = repo.run("ls-remote", "--tags", "--end-of-options", "origin", network=True)
    found: dict[str, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        sha, _, refname = line.partition("\t")
        name = refname[len(_TAGS):]
        if name.endswith("^{}"):
            found[name[:-3]] = sha.lower()  # the peeled commit of an annotated tag wins
        else:
            found.setdefault(name, sha.lower())
    return [ReleaseTag(name, sha, 0) for name, sha in found.items()]
