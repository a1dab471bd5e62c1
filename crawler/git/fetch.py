"""The cache's bare repository for one remote: `<cache>/repos/<host>/<owner>/<name>.git`.

A GitPython `Repo`, made with `Repo.init(bare=True)` and its remote written by its config
writer; fetches and `ls-remote` go through GitPython with its unsafe-option guards on.

Fetches bring one commit's snapshot (`--depth=1`, blobs over the size limit left out) where
the server allows it, and fall back to every branch and tag where it does not. The store is
ours alone: we take a lock around each fetch, clear git's lock files that an interrupted run
left behind, and recreate the store when it is damaged (it is only a cache).
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from crawler.errors import RefError, SourceError
from crawler.git._cmd import (
    FULL_SHA,
    HEX_SHA,
    Git,
    GitFailed,
    GitRepo,
    InvalidGitRepositoryError,
    NoSuchPathError,
    UnsafeOptionError,
    UnsafeProtocolError,
    complete,
    not_a_commit,
    peel,
    peeled_kind,
    unknown_ref,
)
from crawler.git.source import SourceSpec, refused_as_unsafe

ALL_REFS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
# A snapshot fetch must bring the commit's trees even when refs here name the commit (from a
# commits-only history fetch): with no "have" lines the server assumes we hold nothing.
NO_HAVES = ("fetch.negotiationAlgorithm=noop",)


class Damaged(Exception):
    """The store cannot give what a fetch just brought: recreate it and try once more."""


class Store:
    """One remote's bare repository in the cache, fetched under its own lock."""

    def __init__(self, cache_dir: Path, spec: SourceSpec, blob_limit: int | None) -> None:
        # Absolute: git gets it as --git-dir and runs with the store as its working folder.
        folder = cache_dir.absolute() / "repos" / spec.host / Path(*spec.owner.split("/"))
        self.git_dir = folder / f"{spec.name}.git"
        self.lock_path = folder / f"{spec.name}.git.crawler-lock"
        self.spec = spec
        self.url = spec.location
        self.where = spec.display
        self.blob_limit = blob_limit
        self.fresh = False  # created during this call: a failure there is not damage
        self._repo: GitRepo | None = None  # open while a pin or commit call runs

    @property
    def repo(self) -> GitRepo:
        assert self._repo is not None, "the store is opened by pin() and commit()"
        return self._repo

    def pin(self, ref: str) -> tuple[str, bool]:
        """(commit sha, reachable from a branch or tag) for `ref`, fetched if need be."""
        with self._locked(), self._git_errors(), self._opened():
            try:
                return self._pin(ref)
            except Damaged:
                self._create()
                return self._pin(ref)

    def commit(self, sha: str, *, keep: str) -> str:
        """The full sha of commit `sha`, fetched if need be; `keep` must stay readable."""
        with self._locked(), self._git_errors(), self._opened():
            try:
                return self._commit(sha)
            except Damaged:
                self._create()
                self._commit(keep)
                return self._commit(sha)

    @contextmanager
    def _git_errors(self) -> Iterator[None]:
        """A git failure nobody expected still reaches the user as one line."""
        try:
            yield
        except GitFailed as exc:
            raise SourceError(refused_as_unsafe(self.spec, exc.lines)
                              or f"[{self.where}] git failed in the cache {self.git_dir}: "
                              f"{exc.reason}") from None
        except (UnsafeOptionError, UnsafeProtocolError) as exc:
            raise SourceError(f"[{self.where}] refused before git ran: {exc}") from None

    def _pin(self, ref: str) -> tuple[str, bool]:
        # git's order: a full sha is a sha; else a name (branch, tag...); else a short sha.
        if FULL_SHA.fullmatch(ref.lower()):
            sha = self._snapshot(ref.lower(), ref)
            return sha, self._reachable(sha)
        named = self._remote_ref(ref)
        if named is not None:
            refname, target = named
            sha = self._snapshot(target, ref)
            # A shallow fetch cannot tell; a branch or tag (or HEAD) is reachable by definition.
            if refname == "HEAD" or refname.startswith(("refs/heads/", "refs/tags/")):
                return sha, True
            return sha, self._reachable(sha)
        if HEX_SHA.fullmatch(ref):
            sha = self._commit(ref.lower())
            return sha, self._reachable(sha)
        raise unknown_ref(self.where, ref)

    def _commit(self, rev: str) -> str:
        """A commit by full or short sha, made present with its trees."""
        if FULL_SHA.fullmatch(rev):
            return self._snapshot(rev, rev)
        sha = peel(self.repo, rev)  # a short sha resolves among present objects only
        if sha is None:
            self._fetch_all()  # a server cannot be asked for an abbreviation
            sha = peel(self.repo, rev)
        if sha is None:
            raise unknown_ref(self.where, rev)
        return self._snapshot(sha, rev)

    def _snapshot(self, target: str, ref: str) -> str:
        """Make commit (or tag) `target` and its trees present; return the commit's sha."""
        if not complete(self.repo, target):
            try:
                self._fetch("--depth=1", "--no-tags", *self._filter(), refs=(target,), haves=False)
                by_sha = True
            except GitFailed:  # no fetch by sha, no shallow support: take every branch and tag
                by_sha = False
                self._fetch_all()
            if not complete(self.repo, target):
                if by_sha and not self.fresh:
                    raise Damaged(target)
                raise unknown_ref(self.where, ref)
        sha = peel(self.repo, target)
        if sha is None:
            raise (not_a_commit(self.where, ref, peeled_kind(self.repo, target))
                   or RefError(f"[{self.where}] {ref!r} names {target}, which is not a commit"))
        return sha

    def _reachable(self, sha: str) -> bool:
        """Is `sha` on a branch or tag of the remote? Its tips, else their commit history."""
        if sha in self._tips():
            return True
        # Commits only (tree:0), deepened past the snapshots' shallow cuts.
        self._fetch_or_fail("--prune", "--filter=tree:0", *self._unshallow(), refs=ALL_REFS,
                            haves=True)
        out = self.repo.run("for-each-ref", "--count=1", f"--contains={sha}",
                            "--format=%(refname)", "refs/heads", "refs/tags")
        return bool(out.strip())

    def _remote_ref(self, ref: str) -> tuple[str, str] | None:
        """(refname, object sha) of `ref` on the remote, by git's own lookup order."""
        found = {refname: sha for sha, refname in self._ls_remote(pattern=ref)}
        rules = ["HEAD"] if ref == "HEAD" else [
            ref, f"refs/{ref}", f"refs/tags/{ref}", f"refs/heads/{ref}",
            f"refs/remotes/{ref}", f"refs/remotes/{ref}/HEAD"]
        for refname in rules:
            if refname in found:
                return refname, found[refname]
        return None

    def _tips(self) -> set[str]:
        """Shas of every branch and tag on the remote, annotated tags also peeled."""
        return {sha for sha, _ in self._ls_remote("--heads", "--tags")}

    def _ls_remote(self, *options: str, pattern: str | None = None) -> list[tuple[str, str]]:
        """(sha, refname) pairs; the remote's own answer, so a moved branch is seen."""
        try:
            out = self.repo.run("ls-remote", *options, "--end-of-options", "origin",
                                *([pattern] if pattern else []), network=True)
        except GitFailed as exc:
            raise SourceError(refused_as_unsafe(self.spec, exc.lines)
                              or f"[{self.where}] cannot fetch: {exc.reason}; check the URL "
                              "and your network") from None
        pairs = [line.partition("\t") for line in out.decode("utf-8", "replace").splitlines()]
        return [(sha.lower(), refname) for sha, _, refname in pairs]

    def _fetch_all(self) -> None:
        """Every branch and tag, with their history: for servers that refuse the short way."""
        self._fetch_or_fail("--prune", *self._filter(), *self._unshallow(), refs=ALL_REFS,
                            haves=False)

    def _fetch_or_fail(self, *options: str, refs: tuple[str, ...], haves: bool) -> None:
        """A fetch that must work. When it fails but the server answers ls-remote, an old
        store is taken for damaged; a network failure never costs the cache."""
        try:
            self._fetch(*options, refs=refs, haves=haves)
        except GitFailed as exc:
            self._ls_remote("--heads")  # raises SourceError when the server is out of reach
            if not self.fresh:
                raise Damaged(exc.reason) from None
            raise SourceError(f"[{self.where}] cannot fetch: {exc.reason}; check the URL and "
                              "your network") from None

    def _fetch(self, *options: str, refs: tuple[str, ...], haves: bool) -> None:
        self.repo.run("fetch", "--quiet", *options, "--end-of-options", "origin", *refs,
                      network=True, config=() if haves else NO_HAVES)

    def _filter(self) -> tuple[str, ...]:
        # Explicit every time: with none, git would reuse the filter of an earlier fetch.
        if self.blob_limit is None:
            return ("--no-filter",)
        return (f"--filter=blob:limit={self.blob_limit}",)

    def _unshallow(self) -> tuple[str, ...]:
        out = self.repo.run("rev-parse", "--is-shallow-repository")
        return ("--unshallow",) if out.strip() == b"true" else ()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Our own lock: one fetch or repair of this store at a time, across processes."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "ab") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextmanager
    def _opened(self) -> Iterator[None]:
        """Use the store if it is sound, else make a new one; closed again on the way out."""
        if self.git_dir.is_dir() and self._sound():
            self._clear_stale_locks()
            self.fresh = False
        else:
            self._create()
        try:
            yield
        finally:
            self._close()

    def _sound(self) -> bool:
        try:
            self._repo = GitRepo(self.git_dir)
            url = self._repo.config_reader("repository").get_value('remote "origin"', "url", "")
        except Exception:  # GitPython reads the files itself: any damage surfaces differently
            self._close()
            return False
        return self._repo.bare and url == self.url

    def _close(self) -> None:
        repo, self._repo = self._repo, None
        if repo is not None:
            repo.close()

    def _clear_stale_locks(self) -> None:
        """git's `*.lock` files: under our lock, any left are from a run that was killed."""
        for path in [*self.git_dir.glob("*.lock"), *(self.git_dir / "refs").rglob("*.lock")]:
            path.unlink(missing_ok=True)

    def _create(self) -> None:
        """A new, empty store (the old one, if any, removed)."""
        try:
            if self.git_dir.is_dir() and not self.git_dir.is_symlink():
                shutil.rmtree(self.git_dir)
            elif self.git_dir.exists() or self.git_dir.is_symlink():
                self.git_dir.unlink()
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            self._close()
            Git.check_unsafe_protocols(self.url)  # GitPython's guard, as Remote.create has it
            # No template (init.templateDir= on every call): nothing, hooks included, is copied.
            self._repo = cast(GitRepo, GitRepo.init(self.git_dir, mkdir=True, bare=True,
                                                    quiet=True))
            with self._repo.config_writer("repository") as config:
                config.set_value('remote "origin"', "url", self.url)
        except (OSError, GitFailed, InvalidGitRepositoryError, NoSuchPathError) as exc:
            reason = exc.reason if isinstance(exc, GitFailed) else str(exc)
            raise SourceError(f"[{self.where}] cannot make the cache repository "
                              f"{self.git_dir}: {reason}") from None
        self.fresh = True
