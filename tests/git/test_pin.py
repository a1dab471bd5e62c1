"""The git stage on real repositories: local ones read in place, `file://` ones fetched."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from crawler.errors import MissingSourceError, RefError, SourceError
from crawler.git import _cmd, fetch
from crawler.git.cache_folder import default_cache_dir
from crawler.git.pin import PinnedRepo, parse_source, pin
from crawler.git.source import sanitise
from tests.helpers.gitrepo import GitRepo

MakeRepo = Callable[..., GitRepo]
LIMIT = 1000  # the tests' blob size limit: BIG is over it, everything else under
BIG = b"\x00big" * 750
UTIL = "".join(f"def helper_{i}():\n    return {i}\n\n" for i in range(20))


@dataclass
class History:
    """A repository with every kind of commit and entry the stage must handle."""

    repo: GitRepo
    first: str  # tag v1 (lightweight)
    second: str  # tag v2 (annotated); adds pkg/util.py
    feature: str  # only on branch `feature`
    third: str  # on main, no tip: renames util.py and data.bin, adds a symlink
    head: str  # main: adds a submodule entry
    dangling: str  # committed, then reset away: on no branch or tag

    @property
    def path(self) -> str:
        return str(self.repo.path)

    @property
    def url(self) -> str:
        return self.repo.path.as_uri()

    def blob(self, rev: str, path: str) -> str:
        return self.repo.git("rev-parse", f"{rev}:{path}")


def build_history(repo: GitRepo) -> History:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", 'def f():\n    raise ValueError("bad")\n')
    repo.write("data.bin", BIG)
    first = repo.commit("first")
    repo.tag("v1")
    repo.write("pkg/core.py", 'def f(x):\n    raise ValueError(f"bad {x}")\n')
    repo.write("pkg/util.py", UTIL)
    second = repo.commit("second")
    repo.tag("v2", annotated=True)
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("pkg/feature.py", "FEATURE = 1\n")
    feature = repo.commit("feature")
    repo.checkout("main")
    repo.move("pkg/util.py", "pkg/helpers.py")
    repo.move("data.bin", "assets/data.bin")
    os.symlink("pkg/core.py", repo.path / "link.py")
    third = repo.commit("third")
    # A submodule entry (gitlink) without a submodule repository, so without a network.
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},sub")
    (repo.path / "sub").mkdir()
    repo.git("commit", "-q", "-m", "submodule")
    head = repo.head()
    repo.write("pkg/gone.py", "GONE = 1\n")
    dangling = repo.commit("dangling")
    repo.git("reset", "-q", "--hard", "HEAD~1")
    return History(repo, first, second, feature, third, head, dangling)


@pytest.fixture(scope="session")
def _history_template(tmp_path_factory: pytest.TempPathFactory) -> History:
    """Built once; each test gets its own copy (building costs ten times as much)."""
    return build_history(GitRepo(tmp_path_factory.mktemp("template") / "repo"))


@pytest.fixture
def history(_history_template: History, tmp_path: Path) -> History:
    shutil.copytree(_history_template.repo.path, tmp_path / "repo", symlinks=True)
    return replace(_history_template, repo=GitRepo(tmp_path / "repo"))


@pytest.fixture
def dirty(history: History) -> History:
    """Uncommitted, staged and untracked changes that the stage must never see."""
    history.repo.write("pkg/core.py", "raise SystemExit('work tree')\n")
    history.repo.write("pkg/staged.py", "STAGED = 1\n")
    history.repo.git("add", "pkg/staged.py")
    history.repo.write("pkg/untracked.py", "UNTRACKED = 1\n")
    return history


@pytest.fixture
def served(history: History) -> History:
    """The history as a `file://` remote that allows filters and fetching any sha."""
    history.repo.git("config", "uploadpack.allowFilter", "true")
    history.repo.git("config", "uploadpack.allowAnySHA1InWant", "true")
    return history


def fetches(calls: list[list[str]]) -> list[list[str]]:
    return [call for call in calls if "fetch" in call]


def files_by_path(repo: PinnedRepo) -> dict[str, Any]:
    return {entry.path: entry for entry in repo.list_files()}


def store_dir(history: History) -> Path:
    return default_cache_dir() / "repos" / "local" / "local" / "repo.git"


# --- local repositories ------------------------------------------------------------------

LOCAL_REFS: list[tuple[Callable[[History], str], str]] = [
    (lambda h: "HEAD", "head"),
    (lambda h: "main", "head"),
    (lambda h: "v1", "first"),
    (lambda h: "v2", "second"),  # annotated: peeled to the commit
    (lambda h: "feature", "feature"),
    (lambda h: "refs/heads/feature", "feature"),
    (lambda h: h.second[:7], "second"),
    (lambda h: h.first, "first"),
    (lambda h: h.first.upper(), "first"),
]


@pytest.mark.parametrize(("ref", "expected"), LOCAL_REFS)
def test_local_refs_resolve_to_full_shas(history: History, ref: Callable[[History], str],
                                         expected: str) -> None:
    with pin(history.path, ref(history)) as repo:
        assert repo.pin.sha == getattr(history, expected)
        assert repo.pin.ref == ref(history)


def test_local_pin_record(history: History) -> None:
    with pin(history.path, "v2") as repo:
        record = repo.pin
    # issue 14: a local repository with no network origin is told apart by its first commit
    assert (record.source, record.host, record.owner, record.name) == (
        history.path, "local", history.first[:12], "repo")
    assert record.root == history.first
    assert (record.web_url, record.reachable, record.ref) == (None, True, "v2")
    assert repo.git_dir == history.repo.path / ".git"


def test_relative_paths_and_dot(history: History, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(history.repo.path)
    assert pin(".").pin.sha == history.head
    monkeypatch.chdir(history.repo.path.parent)
    assert pin("repo").pin.name == "repo"


def test_reachable_only_from_a_branch_or_tag(history: History) -> None:
    assert pin(history.path, history.dangling).pin.reachable is False
    assert pin(history.path, history.feature).pin.reachable is True  # a branch only
    assert pin(history.path, history.third).pin.reachable is True  # in main's history


def test_list_files_is_the_commit_not_the_work_tree(dirty: History) -> None:
    with pin(dirty.path) as repo:
        files = repo.list_files()
    assert [entry.path for entry in files] == [
        "assets/data.bin", "link.py", "pkg/__init__.py", "pkg/core.py", "pkg/helpers.py", "sub"]
    by_path = {entry.path: entry for entry in files}
    assert (by_path["link.py"].mode, by_path["link.py"].size) == ("120000", len("pkg/core.py"))
    assert (by_path["sub"].mode, by_path["sub"].blob, by_path["sub"].size) == (
        "160000", dirty.first, -1)
    core = by_path["pkg/core.py"]
    assert core.blob == dirty.blob("HEAD", "pkg/core.py")
    assert core.size == len('def f(x):\n    raise ValueError(f"bad {x}")\n')
    assert by_path["assets/data.bin"].size == len(BIG)


def test_read_blobs_streams_committed_bytes_in_order_through_one_process(
        dirty: History, git_calls: list[list[str]]) -> None:
    core, init = dirty.blob("HEAD", "pkg/core.py"), dirty.blob("HEAD", "pkg/__init__.py")
    with pin(dirty.path) as repo:
        got = list(repo.read_blobs([core, init, core]))
        again = list(repo.read_blobs([init]))
    assert [sha for sha, _ in got] == [core, init, core]
    assert got[0][1] == b'def f(x):\n    raise ValueError(f"bad {x}")\n'
    assert got[1][1] == b"" and again == [(init, b"")]
    assert len([call for call in git_calls if "--batch" in call]) == 1


def test_read_blobs_refuses_what_is_not_a_blob_of_the_repository(history: History) -> None:
    with pin(history.path) as repo:
        with pytest.raises(SourceError, match="not in the repository"):
            list(repo.read_blobs(["0" * 40]))
        with pytest.raises(SourceError, match="not a blob"):
            list(repo.read_blobs([history.head]))


def test_work_tree_and_index_are_untouched(dirty: History) -> None:
    repo_path = dirty.repo.path
    before = (dirty.repo.git("status", "--porcelain"), (repo_path / ".git/index").read_bytes())
    with pin(dirty.path) as repo:
        shas = [entry.blob for entry in repo.list_files() if entry.mode.startswith("100")]
        list(repo.read_blobs(shas))
        repo.changed_paths(dirty.first)
    after = (dirty.repo.git("status", "--porcelain"), (repo_path / ".git/index").read_bytes())
    assert after == before
    assert (repo_path / "pkg/core.py").read_text() == "raise SystemExit('work tree')\n"


def test_fsmonitor_in_the_repository_never_runs(history: History, tmp_path: Path) -> None:
    marker = tmp_path / "FSMONITOR_RAN"
    script = history.repo.write("../fsmonitor.sh", f"#!/bin/sh\ntouch '{marker}'\n")
    script.chmod(0o755)
    history.repo.git("config", "core.fsmonitor", str(script))
    with pin(history.path, "main") as repo:
        list(repo.read_blobs(entry.blob for entry in repo.list_files() if entry.size > 0))
        repo.changed_paths(history.first)
    assert not marker.exists()
    # The trap is armed: porcelain does run it.
    subprocess.run(["git", "status"], cwd=history.repo.path, capture_output=True, check=False)
    assert marker.exists()


def test_changed_paths_reports_renames_and_changes(history: History) -> None:
    with pin(history.path) as repo:
        assert repo.changed_paths(history.second) == (
            {"pkg/util.py": "pkg/helpers.py", "data.bin": "assets/data.bin"},
            {"link.py", "sub"},
        )
        renames, changed = repo.changed_paths(history.first)
    assert renames == {"data.bin": "assets/data.bin"}
    assert changed == {"pkg/core.py", "pkg/helpers.py", "link.py", "sub"}


@pytest.mark.parametrize("old", ["0" * 40, "deadbeef", "not-a-sha", "-c"])
def test_changed_paths_without_the_old_commit_is_a_ref_error(history: History, old: str) -> None:
    with pin(history.path) as repo, pytest.raises(RefError):
        repo.changed_paths(old)


def test_unknown_ref_names_the_source_and_the_ref(history: History) -> None:
    with pytest.raises(RefError) as caught:
        pin(history.path, "v9")
    message = str(caught.value)
    assert message.startswith(f"[{history.path}] unknown commit 'v9'")
    assert "ls-remote" in message and "\n" not in message


def test_not_a_repository(history: History, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SourceError, match="is not a git repository"):
        pin(str(plain))
    with pytest.raises(SourceError, match="give its top folder"):
        pin(str(history.repo.path / "pkg"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError, match="no such folder"):
        pin("no/such/folder")


def test_a_partial_local_clone_is_read_without_fetching(served: History, tmp_path: Path) -> None:
    clone = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--filter=blob:limit=1000", "--no-checkout",
                    served.url, str(clone)], check=True, capture_output=True)
    with pin(str(clone)) as repo:
        files = files_by_path(repo)
        assert files["assets/data.bin"].size == -1
        with pytest.raises(SourceError, match="size limit"):
            list(repo.read_blobs([files["assets/data.bin"].blob]))


# --- refused before git runs -------------------------------------------------------------


@pytest.fixture
def no_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Fail the test if any process starts; yield the MARKER that must never appear."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a process ran: {args!r}")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    marker = tmp_path / "MARKER"
    yield marker
    assert not marker.exists()


REFUSED_SOURCES = [
    "ext::sh -c touch% MARKER",
    "fd::17",
    "--upload-pack=touch MARKER",
    "-oProxyCommand=touch MARKER",
    "ssh://-oProxyCommand=touch%20MARKER/owner/name",
    "git@-oProxyCommand=x:owner/name",
    "git@host:-u/name",
    "https://host/owner/name --upload-pack=touch MARKER",
    "https://host/owner/na\nme",
    "https://host/owner/na me",
    "ftp://host/owner/name",
    "http://example.com/owner/name",
    "https://host",
    "",
]


@pytest.mark.parametrize("source", REFUSED_SOURCES)
def test_unsafe_sources_are_refused_before_git_runs(no_git: Path, source: str) -> None:
    with pytest.raises(SourceError):
        pin(source)


REFUSED_REFS = ["--output=MARKER", "-c", "-u", "HEAD --output=MARKER", "a b", "a\nb", "a\tb",
                "a\x7fb", ""]
# Not a name git could fetch: a remote (fetched one commit deep) refuses them before git runs;
# a local repository hands them to `git rev-parse`, which finds no such commit.
NOT_NAMES = ["a..b", "x.lock", ".hidden", "main:MARKER", "ref/", "a//b", "*"]


@pytest.mark.parametrize("ref", REFUSED_REFS)
@pytest.mark.parametrize("kind", ["local", "remote"])
def test_unsafe_refs_are_refused_before_git_runs(history: History, no_git: Path, ref: str,
                                                 kind: str) -> None:
    with pytest.raises(RefError):
        pin(history.path if kind == "local" else history.url, ref)


@pytest.mark.parametrize("ref", [*NOT_NAMES, "HEAD~1", "@", "@{-1}"])
def test_revisions_that_are_no_name_are_refused_for_a_remote_before_git_runs(
        history: History, no_git: Path, ref: str) -> None:
    with pytest.raises(RefError, match="a remote is fetched one commit deep"):
        pin(history.url, ref)


@pytest.mark.parametrize("ref", NOT_NAMES)
def test_revisions_naming_no_commit_are_unknown_locally(history: History, ref: str) -> None:
    with pytest.raises(RefError):
        pin(history.path, ref)


def test_any_revision_rev_parse_reads_pins_a_local_repository(history: History) -> None:
    """`--commit HEAD~1`, a peeled tag, a short sha: what `git rev-parse` reads."""
    parent = history.repo.git("rev-parse", f"{history.head}~1")
    with pin(history.path, "HEAD~1") as pinned:
        assert (pinned.pin.sha, pinned.pin.ref) == (parent, "HEAD~1")
    with pin(history.path, "v2^{commit}") as pinned:
        assert pinned.pin.sha == history.second
    with pin(history.path, history.first[:7]) as pinned:
        assert pinned.pin.sha == history.first


def test_a_peeled_tag_is_fetched_as_the_tag_from_a_remote(served: History, tmp_path: Path) -> None:
    with pin(served.url, "v2^{commit}", cache_dir=tmp_path / "cache") as pinned:
        assert pinned.pin.sha == served.second


@pytest.mark.parametrize("name", ["-x", "--output=MARKER", "a\nb"])
def test_unsafe_names_are_refused_before_git_runs(history: History, no_git: Path,
                                                  name: str) -> None:
    with pytest.raises(SourceError):
        pin(history.path, name=name)


# --- identity ----------------------------------------------------------------------------

GH = ("github.com", "jax-ml", "jax", "https://github.com/jax-ml/jax")
IDENTITIES = [
    ("https://github.com/jax-ml/jax", GH),
    ("https://github.com/jax-ml/jax.git", GH),
    ("https://github.com/jax-ml/jax/", GH),
    ("https://user:secret@github.com/jax-ml/jax.git", GH),
    ("git@github.com:jax-ml/jax.git", GH),
    ("ssh://git@github.com/jax-ml/jax.git", GH),
    ("ssh://git@GitHub.com:2222/jax-ml/jax.git", GH),
    ("git+ssh://github.com/jax-ml/jax", GH),
    ("jax-ml/jax", GH),
    ("jax-ml/jax.git", GH),
    ("git://git.example.org/pub/tool.git",
     ("git.example.org", "pub", "tool", "https://git.example.org/pub/tool")),
    ("https://gitlab.com/group/sub/project.git",
     ("gitlab.com", "group/sub", "project", "https://gitlab.com/group/sub/project")),
    ("git@gitlab.com:group/sub/project.git",
     ("gitlab.com", "group/sub", "project", "https://gitlab.com/group/sub/project")),
    ("https://Git.Example.com:8443/a/b", ("git.example.com", "a", "b",
                                          "https://git.example.com:8443/a/b")),
    ("git://host/lonely.git", ("host", "_", "lonely", "https://host/lonely")),
    ("https://host/o~wner/na%24me", ("host", "o-wner", "na-me", "https://host/o~wner/na%24me")),
    ("https://host/a/..", ("host", "a", "--", "https://host/a/..")),
    ("http://localhost:8080/o/r.git", ("localhost", "o", "r", "http://localhost:8080/o/r")),
    ("http://127.0.0.1/o/r", ("127.0.0.1", "o", "r", "http://127.0.0.1/o/r")),
    ("http://[::1]/o/r", ("--1", "o", "r", "http://[::1]/o/r")),
    ("file:///srv/git/tool.git", ("local", "local", "tool", None)),
]


@pytest.mark.parametrize(("source", "identity"), IDENTITIES)
def test_identity_of_sources(no_git: Path, source: str,
                             identity: tuple[str, str, str, str | None]) -> None:
    spec = parse_source(source)
    assert (spec.host, spec.owner, spec.name, spec.web_url) == identity
    assert spec.kind == "remote"


def test_remote_locations(no_git: Path) -> None:
    assert parse_source("jax-ml/jax").location == "https://github.com/jax-ml/jax.git"
    assert parse_source("file:///srv/x.git").location == "file:///srv/x.git"
    assert parse_source("https://u:secret@host/o/r").display == "https://host/o/r"
    assert parse_source("ssh://git@host/o/r").display == "ssh://git@host/o/r"


LOCAL_ORIGINS = [
    ("https://github.com/acme/widgets.git",
     ("github.com", "acme", "widgets", "https://github.com/acme/widgets")),
    ("git@gitlab.com:group/sub/proj.git",
     ("gitlab.com", "group/sub", "proj", "https://gitlab.com/group/sub/proj")),
    ("https://token@github.com/acme/widgets",
     ("github.com", "acme", "widgets", "https://github.com/acme/widgets")),
    (None, ("local", "local", "my.repo", None)),
    ("/somewhere/else.git", ("local", "local", "my.repo", None)),
    ("../sibling", ("local", "local", "my.repo", None)),
    ("file:///somewhere/else.git", ("local", "local", "my.repo", None)),
    ("ext::sh -c touch% MARKER", ("local", "local", "my.repo", None)),
]


@pytest.mark.parametrize(("origin", "identity"), LOCAL_ORIGINS)
def test_identity_of_local_repositories(make_repo: MakeRepo, tmp_path: Path, origin: str | None,
                                        identity: tuple[str, str, str, str | None],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo("my.repo")
    repo.commit("empty")
    if origin is not None:
        repo.git("config", "remote.origin.url", origin)
    monkeypatch.chdir(tmp_path)
    spec = parse_source(str(repo.path))
    assert (spec.host, spec.owner, spec.name, spec.web_url) == identity
    assert (spec.kind, spec.location) == ("local", str(repo.path))
    assert not (tmp_path / "MARKER").exists()


def test_a_local_folder_wins_over_github_shorthand(make_repo: MakeRepo, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo("acme/widgets").commit("empty")
    monkeypatch.chdir(tmp_path)
    spec = parse_source("acme/widgets")
    assert (spec.kind, spec.host, spec.name) == ("local", "local", "widgets")


def test_bare_repository_and_git_dir(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo = make_repo("work")
    repo.commit("one")
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(tmp_path / "tool.git")],
                   check=True, capture_output=True)
    assert parse_source(str(tmp_path / "tool.git")).name == "tool"
    assert parse_source(str(repo.path / ".git")).name == "work"
    assert pin(str(tmp_path / "tool.git")).pin.sha == repo.head()


@pytest.mark.parametrize(("name", "identity"), [
    ("example.org/team/sub/tool", ("example.org", "team/sub", "tool")),
    ("team/tool", ("github.com", "team", "tool")),
    ("tool", ("github.com", "jax-ml", "tool")),
    ("a/../b", ("a", "--", "b")),
    ("we ird/na:me", ("github.com", "we-ird", "na-me")),
])
def test_name_overrides_the_identity(no_git: Path, name: str,
                                     identity: tuple[str, str, str]) -> None:
    spec = parse_source("https://github.com/jax-ml/jax", name=name)
    assert (spec.host, spec.owner, spec.name) == identity
    assert spec.web_url == "https://github.com/jax-ml/jax"


@pytest.mark.parametrize(("raw", "clean"), [
    (".", "-"), ("..", "--"), ("", "_"), ("a b/c", "a-b-c"), ("ok.name_-1", "ok.name_-1"),
    ("é", "-")])
def test_sanitise(raw: str, clean: str) -> None:
    assert sanitise(raw) == clean


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "raise-site-crawler"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_cache_dir() == Path.home() / ".cache" / "raise-site-crawler"


# --- remote repositories, through file:// ------------------------------------------------

REMOTE_REFS: list[tuple[Callable[[History], str], str]] = [
    (lambda h: "HEAD", "head"),
    (lambda h: "main", "head"),
    (lambda h: "v1", "first"),
    (lambda h: "v2", "second"),
    (lambda h: "feature", "feature"),
    (lambda h: h.second[:7], "second"),
    (lambda h: h.third, "third"),
]


@pytest.mark.parametrize(("ref", "expected"), REMOTE_REFS)
def test_remote_refs_resolve_to_full_shas(served: History, ref: Callable[[History], str],
                                          expected: str) -> None:
    with pin(served.url, ref(served), blob_limit=LIMIT) as repo:
        assert repo.pin.sha == getattr(served, expected)
        assert repo.pin.reachable is True
        assert repo.git_dir == store_dir(served)
        core = files_by_path(repo)["pkg/core.py"]
        [(_, data)] = repo.read_blobs([core.blob])
        assert b"raise ValueError" in data


def test_remote_pin_record(served: History) -> None:
    record = pin(served.url, "v1").pin
    # issue 14: a file:// repository is told apart by its first commit, read where it is
    assert (record.source, record.host, record.owner, record.name, record.web_url) == (
        served.url, "local", served.first[:12], "repo", None)
    assert record.root == served.first


def test_remote_unreachable_commit(served: History) -> None:
    assert pin(served.url, served.dangling).pin.reachable is False


def test_big_blobs_are_left_out_and_never_fetched(served: History,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Open the door a lazy fetch would go through: only not asking keeps the blob out.
    monkeypatch.setattr(_cmd, "OFFLINE_CONFIG", ())
    with pin(served.url, "main", blob_limit=LIMIT) as repo:
        files = files_by_path(repo)
        big = files["assets/data.bin"]
        assert big.size == -1
        assert files["pkg/core.py"].size > 0
        with pytest.raises(SourceError, match="size limit"):
            list(repo.read_blobs([big.blob]))
        list(repo.read_blobs(entry.blob for entry in files.values() if entry.size > 0))
        repo.changed_paths(served.second)
        assert big.blob in _cmd.objects(repo.repo, served.head)[1]


def test_changed_paths_leaves_absent_blobs_out_of_rename_detection(served: History) -> None:
    with pin(served.url, "main", blob_limit=LIMIT) as repo:
        renames, changed = repo.changed_paths(served.second)  # not yet in the cache
    assert renames == {"pkg/util.py": "pkg/helpers.py"}
    assert changed == {"assets/data.bin", "link.py", "sub"}


def test_remote_changed_paths_without_the_old_commit(served: History) -> None:
    with pin(served.url, "main") as repo, pytest.raises(RefError):
        repo.changed_paths("0" * 40)


def test_second_pin_reuses_the_cache(served: History, git_calls: list[list[str]]) -> None:
    first = pin(served.url, "main", blob_limit=LIMIT)
    packs = sorted((first.git_dir / "objects/pack").iterdir())
    git_calls.clear()
    second = pin(served.url, "main", blob_limit=LIMIT)
    assert second.pin.sha == first.pin.sha
    assert fetches(git_calls) == []
    assert sorted((second.git_dir / "objects/pack").iterdir()) == packs


def test_a_moved_branch_gives_the_new_sha(served: History) -> None:
    assert pin(served.url, "feature").pin.sha == served.feature
    served.repo.checkout("feature")
    served.repo.write("pkg/feature.py", "FEATURE = 2\n")
    moved = served.repo.commit("moved")
    assert pin(served.url, "feature").pin.sha == moved


def test_fallback_when_the_server_refuses_sha_and_filter(
        served: History, monkeypatch: pytest.MonkeyPatch, git_calls: list[list[str]]) -> None:
    served.repo.git("config", "uploadpack.allowAnySHA1InWant", "false")
    served.repo.git("config", "uploadpack.allowFilter", "false")
    # Protocol v2 serves any sha it has; an old server speaks v0, which refuses.
    monkeypatch.setattr(_cmd, "NETWORK_CONFIG", (*_cmd.NETWORK_CONFIG, "protocol.version=0"))
    with pin(served.url, served.third, blob_limit=LIMIT) as repo:
        assert repo.pin.reachable is True
        assert files_by_path(repo)["assets/data.bin"].size == len(BIG)  # filter ignored
    fallbacks = [call for call in fetches(git_calls)
                 if fetch.ALL_REFS[0] in call and "--filter=tree:0" not in call]
    assert len(fallbacks) == 1


def test_fallback_for_a_short_sha_finds_older_commits(served: History) -> None:
    assert pin(served.url, "main").pin.sha == served.head  # the cache is now shallow
    assert pin(served.url, served.first[:8]).pin.sha == served.first


def _delete_head(git_dir: Path) -> None:
    (git_dir / "HEAD").unlink()


def _delete_objects(git_dir: Path) -> None:
    shutil.rmtree(git_dir / "objects")


def _truncate_packs(git_dir: Path) -> None:
    for pack in (git_dir / "objects/pack").glob("*.pack"):
        os.truncate(pack, pack.stat().st_size // 2)


def _leave_git_locks(git_dir: Path) -> None:
    """What a fetch killed half-way leaves behind."""
    for name in ("shallow.lock", "config.lock", "packed-refs.lock"):
        (git_dir / name).write_text("")


def _replace_with_a_file(git_dir: Path) -> None:
    shutil.rmtree(git_dir)
    git_dir.write_text("not a repository")


def _point_at_another_remote(git_dir: Path) -> None:
    subprocess.run(["git", f"--git-dir={git_dir}", "config", "remote.origin.url",
                    "file:///elsewhere"], check=True)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "HEAD deleted": _delete_head,
    "objects deleted": _delete_objects,
    "packs truncated": _truncate_packs,
    "stale git locks": _leave_git_locks,
    "a file in its place": _replace_with_a_file,
    "another remote's store": _point_at_another_remote,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=list(DAMAGE))
def test_a_damaged_cache_is_rebuilt(served: History, damage: Callable[[Path], None]) -> None:
    damage(pin(served.url, "v1", blob_limit=LIMIT).git_dir)
    with pin(served.url, "main", blob_limit=LIMIT) as repo:
        assert repo.pin.sha == served.head
        files = files_by_path(repo)
        [(_, data)] = repo.read_blobs([files["pkg/core.py"].blob])
    assert data.startswith(b"def f(x)")


def test_unknown_remote_ref(served: History) -> None:
    with pytest.raises(RefError, match=r"unknown commit 'v9'.*ls-remote") as caught:
        pin(served.url, "v9")
    assert str(caught.value).startswith(f"[{served.url}]")


def test_unreachable_url(tmp_path: Path) -> None:
    url = (tmp_path / "nowhere.git").as_uri()
    with pytest.raises(MissingSourceError, match=r"no such folder") as caught:
        pin(url)
    assert str(caught.value).startswith(f"[{url}]") and "\n" not in str(caught.value)


def test_cache_dir_argument(served: History, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = pin(served.url, "v1", cache_dir=tmp_path / "elsewhere")
    assert repo.git_dir == tmp_path / "elsewhere/repos/local/local/repo.git"
    monkeypatch.chdir(tmp_path)
    with pin(served.url, "v1", cache_dir=Path("relative")) as repo:
        assert repo.git_dir == tmp_path / "relative/repos/local/local/repo.git"
        assert [entry.path for entry in repo.list_files()] == [
            "data.bin", "pkg/__init__.py", "pkg/core.py"]


def test_concurrent_pins_of_one_remote_share_the_cache(served: History) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        shas = list(pool.map(lambda ref: pin(served.url, ref, blob_limit=LIMIT).pin.sha,
                             ["main", "v1", "feature", "main"]))
    assert shas == [served.head, served.first, served.feature, served.head]


def test_a_network_failure_keeps_the_cache(served: History, tmp_path: Path) -> None:
    git_dir = pin(served.url, "v1", blob_limit=LIMIT).git_dir
    packs = sorted((git_dir / "objects/pack").iterdir())
    served.repo.path.rename(tmp_path / "away")
    with pytest.raises(SourceError, match="cannot fetch|no such folder"):
        pin(served.url, served.second)  # a full sha not in the cache: fetched at once
    assert sorted((git_dir / "objects/pack").iterdir()) == packs


def test_inherited_git_variables_are_ignored(history: History, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "MARKER"
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {marker}'")
    monkeypatch.setenv("GIT_SSH_COMMAND", f"touch {marker}")
    with pin(history.path, "v2") as repo:
        assert repo.pin.sha == history.second
        assert len(list(repo.read_blobs(e.blob for e in repo.list_files() if e.size > 0))) == 3
    assert pin(history.url, "v2").pin.sha == history.second
    assert not marker.exists()
