"""A repository's tags, for `crawler history`: name, the commit each names, and its date.

A local repository (and a `file://` one) is asked with `for-each-ref`, which knows every tag's
date: the tagger's for an annotated tag, else the commit's. A network remote is asked with
`ls-remote`, which gives no dates (a tag is dated 0 there, so tags that are not versions keep
their name order) and no commit in the cache until the tag is pinned.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from crawler.errors import SourceError
from crawler.git._cmd import GitFailed, GitRepo
from crawler.git.pin import PinnedRepo
from crawler.git.source import file_url_git_dir
from crawler.records import ReleaseTag

_TAGS = "refs/tags/"


def list_tags(repo: PinnedRepo, glob: str) -> list[ReleaseTag]:
    """Every tag whose name matches `glob` (fnmatch, case-sensitive), sorted by name."""
    spec = repo.spec
    try:
        if spec.kind == "local" or spec.file_url:
            local = repo.repo if spec.kind == "local" else GitRepo(file_url_git_dir(spec))
            try:
                tags = _local_tags(local)
            finally:
                if local is not repo.repo:
                    local.close()
        else:
            tags = _remote_tags(repo.repo)
    except GitFailed as exc:
        raise SourceError(f"[{spec.display}] cannot list tags: {exc.reason}") from None
    return sorted((tag for tag in tags if fnmatchcase(tag.name, glob)), key=lambda t: t.name)


def _local_tags(repo: GitRepo) -> list[ReleaseTag]:
    out = repo.run("for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)%00"
                   "%(objecttype)%00%(*objecttype)%00%(creatordate:unix)", _TAGS)
    tags = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        refname, sha, peeled, kind, peeled_kind, date = line.split("\0")
        commit = peeled if kind == "tag" else sha
        if (peeled_kind if kind == "tag" else kind) != "commit":
            continue  # a tag of a tree or a blob names no release
        tags.append(ReleaseTag(refname[len(_TAGS):], commit, int(date or 0)))
    return tags


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
