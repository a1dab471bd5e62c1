"""Permalinks and one repository identity, end to end through `crawler extract` and `update`.

A record's `repo` is the https web URL when one is known (from the source URL, the local
repository's remotes, `--name HOST/OWNER/NAME` on a known forge, or `--web-url`), else the
`local/<root>/<folder>` identity; its `url` is that forge's blob link at the pinned commit, and
no file names a path of the extracting machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from crawler.cli.commands import main
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import annotate

LIBRARY = "def check(x):\n    if x:\n        raise ValueError(\n            'x is set')\n"


@pytest.fixture
def library(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "widgets")
    repo.write("pkg/core.py", LIBRARY)
    repo.commit("first")
    return repo


def run(*args: str) -> None:
    result = CliRunner().invoke(main, [*args, "-j", "1", "-q", "--no-evidence"]
                                if args[0] == "extract" else [*args, "-j", "1", "-q"])
    assert result.exit_code == 0, result.output


def folder_records(folder: Path) -> list[dict]:
    return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted((folder / "errors").glob("*.yaml"))]


def manifest(folder: Path) -> dict:
    return yaml.safe_load((folder / "manifest.yaml").read_text(encoding="utf-8"))


def no_machine_path(folder: Path, repo: GitRepo) -> None:
    for path in folder.rglob("*.yaml"):
        assert str(repo.path) not in path.read_text(encoding="utf-8"), path


def test_a_github_remote_gives_github_permalinks(library: GitRepo, tmp_path: Path) -> None:
    """Not named origin: the only remote is the repository's identity."""
    library.git("remote", "add", "upstream", "git@github.com:acme/widgets.git")
    run("extract", str(library.path), "-o", str(tmp_path / "out"))
    folder = tmp_path / "out" / "github.com" / "acme" / "widgets"
    [record] = folder_records(folder)
    sha = library.head()
    assert record["extracted"]["repo"] == "https://github.com/acme/widgets"
    assert record["extracted"]["url"] == f"https://github.com/acme/widgets/blob/{sha}/pkg/core.py#L3-L4"
    data = manifest(folder)
    assert (data["repo"], data["source"], data["forge"]) == (
        "https://github.com/acme/widgets", "https://github.com/acme/widgets", "github")
    no_machine_path(folder, library)


def test_origin_comes_before_other_remotes(library: GitRepo, tmp_path: Path) -> None:
    library.git("remote", "add", "fork", "https://github.com/someone/widgets.git")
    library.git("remote", "add", "origin", "https://codeberg.org/acme/widgets.git")
    run("extract", str(library.path), "-o", str(tmp_path / "out"))
    [record] = folder_records(tmp_path / "out" / "codeberg.org" / "acme" / "widgets")
    assert record["extracted"]["url"] == (f"https://codeberg.org/acme/widgets/src/commit/"
                                          f"{library.head()}/pkg/core.py#L3-L4")


def test_two_remotes_and_no_origin_name_no_web_url(library: GitRepo, tmp_path: Path) -> None:
    library.git("remote", "add", "one", "https://github.com/a/widgets.git")
    library.git("remote", "add", "two", "https://github.com/b/widgets.git")
    run("extract", str(library.path), "-o", str(tmp_path / "out"))
    [folder] = (tmp_path / "out" / "local").iterdir()
    [record] = folder_records(folder / "widgets")
    assert record["extracted"]["url"] is None


def test_name_on_a_known_forge_is_the_web_url(library: GitRepo, tmp_path: Path) -> None:
    """`--name github.com/o/n` for a mirror without a network remote: links, not null."""
    run("extract", str(library.path), "-o", str(tmp_path / "out"), "--name", "github.com/o/n")
    folder = tmp_path / "out" / "github.com" / "o" / "n"
    [record] = folder_records(folder)
    assert record["extracted"]["repo"] == "https://github.com/o/n"
    assert record["extracted"]["url"] == f"https://github.com/o/n/blob/{library.head()}/pkg/core.py#L3-L4"
    assert manifest(folder)["source"] == "https://github.com/o/n"  # not the mirror's path
    no_machine_path(folder, library)


def test_web_url_names_a_self_hosted_forge(library: GitRepo, tmp_path: Path) -> None:
    """An unknown host given by --web-url gets GitLab's shape; update needs it again."""
    out = tmp_path / "out"
    run("extract", str(library.path), "-o", str(out), "--web-url", "https://git.example.org/o/n")
    folder = out / "git.example.org" / "o" / "n"
    [record] = folder_records(folder)
    assert record["extracted"]["repo"] == "https://git.example.org/o/n"
    assert record["extracted"]["url"] == (f"https://git.example.org/o/n/-/blob/{library.head()}"
                                          "/pkg/core.py#L3-4")
    assert manifest(folder)["forge"] == "gitlab"
    library.write("pkg/core.py", "\n" + LIBRARY)
    library.commit("a line above")
    run("update", str(library.path), "-o", str(out), "--web-url", "https://git.example.org/o/n")
    [moved] = folder_records(folder)
    assert moved["extracted"]["url"].endswith(f"{library.head()}/pkg/core.py#L4-5")
    no_machine_path(folder, library)


@pytest.mark.parametrize("web_url", ["ftp://git.example.org/o/n", "https://git.example.org/n",
                                     "http://git.example.org/o/n", "https://h/o/n?x=1"])
def test_a_web_url_that_is_no_repository_page_is_refused(library: GitRepo, tmp_path: Path,
                                                         web_url: str) -> None:
    result = CliRunner().invoke(main, ["extract", str(library.path), "-o", str(tmp_path / "out"),
                                       "--web-url", web_url, "-q"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "--web-url" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_no_remote_no_url(library: GitRepo, tmp_path: Path) -> None:
    run("extract", str(library.path), "-o", str(tmp_path / "out"))
    root = library.git("rev-list", "--max-parents=0", "HEAD")
    folder = tmp_path / "out" / "local" / root[:12] / "widgets"
    [record] = folder_records(folder)
    assert (record["extracted"]["repo"], record["extracted"]["url"]) == (
        f"local/{root[:12]}/widgets", None)
    data = manifest(folder)
    assert (data["source"], data["forge"]) == (f"local/{root[:12]}/widgets", None)
    no_machine_path(folder, library)


def test_an_older_folder_gets_links_on_update_and_keeps_its_annotations(
        library: GitRepo, tmp_path: Path) -> None:
    """A folder written before identities: source a path, repo `github.com/o/n`, url null.

    `update` at the same commit rewrites every record with the web URL and its link, and the
    manifest without the path; the annotation stays byte for byte.
    """
    out = tmp_path / "out"
    run("extract", str(library.path), "-o", str(out), "--name", "github.com/o/n")
    folder = out / "github.com" / "o" / "n"
    [path] = (folder / "errors").glob("*.yaml")
    block = annotate(path, "what an older crawler's user wrote")
    path.write_text(path.read_text(encoding="utf-8")
                    .replace("repo: https://github.com/o/n", "repo: github.com/o/n")
                    .replace(f"url: https://github.com/o/n/blob/{library.head()}/pkg/core.py#L3-L4",
                             "url: null"), encoding="utf-8")
    text = (folder / "manifest.yaml").read_text(encoding="utf-8")
    (folder / "manifest.yaml").write_text(
        text.replace("source: https://github.com/o/n", f"source: {library.path}")
        .replace("repo: https://github.com/o/n", "repo: github.com/o/n")
        .replace("forge: github\n", ""), encoding="utf-8")
    assert folder_records(folder)[0]["extracted"]["url"] is None
    run("update", str(library.path), "-o", str(out), "--name", "github.com/o/n")
    [record] = folder_records(folder)
    assert record["extracted"]["repo"] == "https://github.com/o/n"
    assert record["extracted"]["url"].startswith("https://github.com/o/n/blob/")
    assert block in path.read_text(encoding="utf-8")
    assert (manifest(folder)["source"], manifest(folder)["forge"]) == ("https://github.com/o/n", "github")
    no_machine_path(folder, library)


def test_a_removed_record_of_an_older_folder_takes_the_identity_too(library: GitRepo,
                                                                   tmp_path: Path) -> None:
    """Its link points at the commit it was last read at; it stays removed, annotation kept."""
    out = tmp_path / "out"
    library.write("pkg/gone.py", "def f():\n    raise KeyError('gone soon')\n")
    first = library.commit("two files")
    run("extract", str(library.path), "-o", str(out), "--name", "github.com/o/n")
    folder = out / "github.com" / "o" / "n"
    [gone] = [p for p in (folder / "errors").glob("*.yaml") if "gone soon" in p.read_text(encoding="utf-8")]
    block = annotate(gone, "kept while removed")
    library.remove("pkg/gone.py")
    library.commit("one file")
    run("update", str(library.path), "-o", str(out), "--name", "github.com/o/n")
    for path in [*(folder / "errors").glob("*.yaml"), folder / "manifest.yaml"]:
        text = re.sub(r"url: https://\S+", "url: null", path.read_text(encoding="utf-8"))
        path.write_text(text.replace("https://github.com/o/n", "github.com/o/n")
                        .replace("forge: github\n", ""), encoding="utf-8")
    run("update", str(library.path), "-o", str(out), "--name", "github.com/o/n")
    record = yaml.safe_load(gone.read_text(encoding="utf-8"))
    assert (record["status"], record["extracted"]["repo"]) == ("removed", "https://github.com/o/n")
    assert record["extracted"]["url"] == f"https://github.com/o/n/blob/{first}/pkg/gone.py#L2"
    assert block in gone.read_text(encoding="utf-8")
