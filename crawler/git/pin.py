"""The git stage: pin a repository at a commit and read its tree, only from the object store.

A local repository is opened as a GitPython `Repo` on its git directory and read through
plumbing (`rev-parse`, `ls-tree`, `rev-list`, `diff-tree`, and the object database's persistent
`cat-file --batch`), never through its work tree or index. A remote one is fetched, one
commit at a time where the server allows it, into a bare repository in the cache (`store.py`).
Blobs the fetch's size filter left out are reported, never fetched later: git 2.39 would fetch
them lazily from any command that asks for them, so we ask only `rev-list --missing=print`
which objects are present, and keep every other command away from the absent ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

from crawler.errors import RefError, SourceError
from crawler.git._cmd import (
    FULL_SHA,
    HEX_SHA,
    GitFailed,
    GitRepo,
    InvalidGitRepositoryError,
    NoSuchPathError,
    objects,
    resolve_commit,
)
from crawler.git.cache_folder import default_cache_dir
from crawler.git.fetch import Store
from crawler.git.root import root_commit
from crawler.git.source import (
    SourceSpec,
    check_file_url,
    check_ref,
    file_url_git_dir,
    parse_source,
    redact,
    remote_ref,
)
from crawler.records import MAX_FILE_BYTES, Pin, SourceFile

ROOT_DIGITS = 12  # of the root commit's sha, as the owner of a local repository's folder

__all__ = [
    "PinnedRepo",
    "SourceSpec",
    "parse_source",
    "pin",
]


def pin(
    source: str,
    ref: str = "HEAD",
    *,
    cache_dir: Path | None = None,
    name: str | None = None,
    web_url: str | None = None,  # a self-hosted forge's page of the repository: its identity
    blob_limit: int | None = MAX_FILE_BYTES,  # blobs a run would not parse are not fetched
) -> PinnedRepo:
    """Resolve `ref` in `source` to a full commit sha and open that commit for reading.

    `blob_limit` (bytes) is the fetch's size filter for remotes; None fetches every blob.
    """
    check_ref(ref, redact(source))  # before any git runs, even discovery
    spec = parse_source(source, name=name, web_url=web_url)
    check_file_url(spec, redact(source))
    store: Store | None = None
    root: str | None = None  # a network remote's shallow snapshots do not know it
    if spec.kind == "local":
        assert spec.git_dir is not None
        git_dir = Path(spec.git_dir)
        repo = _open_local(git_dir, spec.display)
        sha = resolve_commit(repo, ref, spec.display)
        reachable = _on_branch_or_tag(repo, sha, spec.display)
        root = _root(repo, sha, cache_dir or default_cache_dir(), spec.display)
    else:
        fetched = remote_ref(ref, spec.display)  # before the cache is touched
        store = Store(cache_dir or default_cache_dir(), spec, blob_limit)
        sha, reachable = store.pin(fetched)
        git_dir = store.git_dir
        repo = GitRepo(git_dir)
        if spec.file_url:  # its repository is on this machine, with its history
            source_repo = _open_local(file_url_git_dir(spec), spec.display)
            try:
                root = _root(source_repo, sha, cache_dir or default_cache_dir(), spec.display)
            finally:
                source_repo.close()
    record = Pin(source=redact(source), host=spec.host, owner=_owner(spec, root), name=spec.name,
                 ref=ref, sha=sha, web_url=spec.web_url, reachable=reachable, root=root,
                 forge=spec.forge)
    return PinnedRepo(record, repo, spec=spec, store=store)


def _root(repo: GitRepo, sha: str, cache_dir: Path, where: str) -> str | None:
    try:
        return root_commit(repo, sha, cache_dir)
    except GitFailed as exc:
        raise SourceError(f"[{where}] cannot find the first commit of {sha}: {exc.reason}"
                          ) from None


def _owner(spec: SourceSpec, root: str | None) -> str:
    """The folder's owner part: a local repository with no other name is told apart by its
    root commit (`local/<12 hex>/<folder name>`), so two folders named alike never share one."""
    if not spec.by_root:
        return spec.owner
    if root is None:
        raise SourceError(f"[{spec.display}] a shallow clone with no network origin: nothing "
                          "tells it apart from another folder of its name; give --name NAME")
    return root[:ROOT_DIGITS]


def _open_local(git_dir: Path, where: str) -> GitRepo:
    try:
        return GitRepo(git_dir)
    except (InvalidGitRepositoryError, NoSuchPathError, OSError) as exc:
        raise SourceError(f"[{where}] cannot open the repository {git_dir}: {exc}") from None


def _on_branch_or_tag(repo: GitRepo, sha: str, where: str) -> bool:
    """Is `sha` reachable from a branch (local or remote-tracking) or a tag?"""
    refs = ("refs/heads", "refs/remotes", "refs/tags")
    try:
        # A branch or tag that points at it answers at once; `--contains` walks the history.
        out = repo.run("for-each-ref", "--count=1", f"--points-at={sha}", "--format=%(refname)",
                       *refs)
        if not out.strip():
            out = repo.run("for-each-ref", "--count=1", f"--contains={sha}",
                           "--format=%(refname)", *refs)
    except GitFailed as exc:
        raise SourceError(f"[{where}] cannot list branches and tags: {exc.reason}") from None
    return bool(out.strip())


class PinnedRepo:
    """A repository pinned at one commit; `pin` says which, `repo` (at `git_dir`) reads it.

    Holds one `git cat-file --batch` process once blobs are read: close it, or use `with`.
    """

    def __init__(self, pin: Pin, repo: GitRepo, *, spec: SourceSpec,
                 store: Store | None = None) -> None:
        self.pin = pin
        self.repo = repo
        self.git_dir = Path(repo.git_dir)
        self.spec = spec
        self._store = store
        self._present: set[str] | None = None  # objects of the pinned commit in the store
        self._absent: set[str] = set()  # ...and those the size filter left out

    def __enter__(self) -> PinnedRepo:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the cat-file process."""
        self.repo.close()

    def list_files(self) -> list[SourceFile]:
        """Every tree entry at the pin, sorted by path; size -1 for submodules and absent blobs."""
        self._scan()
        out = self._git("ls-tree", "-r", "-z", "--full-tree", "--end-of-options", self.pin.sha)
        entries = [_ls_tree_entry(record) for record in out.split(b"\0") if record]
        sizes = self._sizes({blob for mode, kind, blob, _ in entries if kind == "blob"})
        files = [SourceFile(path=path, blob=blob, mode=mode, size=sizes.get(blob, -1))
                 for mode, _, blob, path in entries]
        return sorted(files, key=lambda entry: entry.path)

    def read_blobs(self, shas: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """(sha, bytes) of each blob, in the given order, through one cat-file process."""
        self._scan()
        for sha in shas:
            self._check_readable(sha)
            try:
                _, kind, _, data = self.repo.git.get_object_data(sha)
            except ValueError as exc:  # GitPython's word for a missing object or a dead cat-file
                raise SourceError(f"[{self.spec.display}] cannot read blob {sha}: {exc}") from None
            kind = kind.decode("ascii") if isinstance(kind, bytes) else kind  # bytes in GitPython 3
            if kind != "blob":
                raise SourceError(f"[{self.spec.display}] {sha} is a {kind}, not a blob")
            yield sha, data

    def changed_paths(self, old_sha: str) -> tuple[dict[str, str], set[str]]:
        """(renames old path -> new path, paths added or modified) from `old_sha` to the pin.

        Renames are git's (-M). A rename whose content also changed is in both; a pure rename
        is only in the first. A blob the size filter left out cannot take part in rename
        detection (git would fetch it): its path counts as deleted and added.
        """
        old = self._old_commit(old_sha)
        new = self.pin.sha
        absent = self._objects(old, new)[1]
        changed: set[str] = set()
        exclude: list[str] = []
        if absent:
            for status, old_blob, new_blob, paths in self._diff(old, new, "--no-renames", []):
                if status in ("A", "D") and {old_blob, new_blob} & absent:
                    exclude.append(f":(exclude,literal){paths[0]}")
                    if status == "A":
                        changed.add(paths[0])
        renames: dict[str, str] = {}
        for status, _, _, paths in self._diff(old, new, "-M", exclude):
            if status.startswith("R"):
                renames[paths[0]] = paths[1]
                if status != "R100":
                    changed.add(paths[1])
            elif status[0] in "AMT":
                changed.add(paths[0])
        return renames, changed

    def old_commit(self, old_sha: str) -> str:
        """An earlier commit to diff against: present, or fetched for a remote; else RefError."""
        return self._old_commit(old_sha)

    def absent_objects(self, *revs: str) -> set[str]:
        """Objects of the commits `revs` that the fetch's size filter left out."""
        return self._objects(*revs)[1]

    def _git(self, *args: str, input: bytes | None = None) -> bytes:
        try:
            return self.repo.run(*args, input=input)
        except GitFailed as exc:
            raise SourceError(f"[{self.spec.display}] git {args[0]} failed: {exc.reason}") from None

    def _objects(self, *revs: str) -> tuple[set[str], set[str]]:
        try:
            return objects(self.repo, *revs)
        except GitFailed as exc:
            raise SourceError(f"[{self.spec.display}] cannot list objects: {exc.reason}") from None

    def _scan(self) -> None:
        """Learn once which objects of the pinned commit are present and which are not."""
        if self._present is None:
            self._present, self._absent = self._objects(self.pin.sha)

    def _sizes(self, blobs: set[str]) -> dict[str, int]:
        """Sizes of the present blobs; `--batch-check` on an absent one would fetch it."""
        assert self._present is not None
        wanted = sorted(blobs & self._present)
        if not wanted:
            return {}
        out = self._git("cat-file", "--batch-check=%(objectname) %(objectsize)",
                        input="".join(f"{sha}\n" for sha in wanted).encode("ascii"))
        sizes = {}
        for line in out.decode("ascii").splitlines():
            sha, size = line.split()
            sizes[sha] = int(size)
        return sizes

    def _check_readable(self, sha: str) -> None:
        """Refuse a sha cat-file would have to fetch, before cat-file sees it."""
        assert self._present is not None
        if not FULL_SHA.fullmatch(sha):
            raise SourceError(f"[{self.spec.display}] not a full blob sha: {sha!r}")
        if sha in self._absent:
            raise SourceError(f"[{self.spec.display}] blob {sha} was left out by the fetch's "
                              "size limit; skip the files list_files gives size -1")
        if sha not in self._present:
            try:
                absent = objects(self.repo, sha)[1]
            except GitFailed:
                absent = {sha}
            if absent:
                raise SourceError(f"[{self.spec.display}] blob {sha} is not in the repository")

    def _old_commit(self, old_sha: str) -> str:
        """The commit to diff against: present, or fetched for a remote; else RefError."""
        where = self.spec.display
        if not HEX_SHA.fullmatch(old_sha):
            raise RefError(f"[{where}] not a commit sha: {old_sha!r}")
        try:
            if self._store is not None:
                return self._store.commit(old_sha.lower(), keep=self.pin.sha)
            return resolve_commit(self.repo, old_sha.lower(), where)
        except SourceError as exc:
            raise RefError(str(exc)) from None

    def _diff(self, old: str, new: str, renames: str,
              pathspecs: list[str]) -> Iterator[tuple[str, str, str, list[str]]]:
        """Raw `diff-tree` records: (status, old blob, new blob, paths)."""
        tail = ["--", *pathspecs] if pathspecs else []
        out = self._git("diff-tree", "-r", "-z", "--raw", "--no-abbrev", "--no-ext-diff",
                        "--no-textconv", renames, "--end-of-options", old, new, *tail)
        fields = out.split(b"\0")
        i = 0
        while i < len(fields) - 1:
            meta = fields[i].decode("ascii").lstrip(":").split()
            status = meta[4]
            count = 2 if status[0] in "RC" else 1
            paths = [_decode(field) for field in fields[i + 1: i + 1 + count]]
            yield status, meta[2], meta[3], paths
            i += 1 + count


def _ls_tree_entry(record: bytes) -> tuple[str, str, str, str]:
    """(mode, type, sha, path) from one `ls-tree -z` record."""
    meta, _, path = record.partition(b"\t")
    mode, kind, sha = meta.decode("ascii").split()
    return mode, kind, sha, _decode(path)


def _decode(path: bytes) -> str:
    # Paths are bytes to git; a non-UTF-8 one round-trips through surrogate escapes.
    return path.decode("utf-8", "surrogateescape")

