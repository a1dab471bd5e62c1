"""Repository identity (issue 14, case 2): two repositories never share an output folder.

A local repository without a network origin is named by its first commit, and a folder whose
manifest names another repository is refused before anything in it is read or written.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.errors import OutputError
from crawler.pipeline import extract, update
from crawler.store import record_files
from crawler.store.manifest_file import MANIFEST, load_manifest
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import annotate

MakeRepo = Callable[[str], GitRepo]


def library(path: Path, message: str) -> GitRepo:
    """A repository named `lib` with no remote: its first commit is its own."""
    repo = GitRepo(path / "lib")
    repo.write("lib/core.py", f"def run(x):\n    raise ValueError({message!r})\n")
    repo.commit("first")
    return repo


@pytest.fixture
def two_libs(tmp_path: Path) -> tuple[GitRepo, GitRepo]:
    """`x/lib` and `y/lib`: the same folder name, two histories, no remote."""
    return library(tmp_path / "x", "x failed"), library(tmp_path / "y", "y failed")


def every_file(folder: Path) -> dict[str, bytes]:
    """Each file under the folder, the lock and any temp file included, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def annotated_folder(repo: GitRepo, out: Path, name: str | None) -> Path:
    """Extract `repo` and annotate each of its records by hand."""
    folder = extract(str(repo.path), output_root=out, name=name, jobs=1, evidence=False).folder
    for path in record_files.iter_record_paths(folder):
        annotate(path, "written for the first repository")
    return folder


def test_same_folder_name_without_name_gives_two_folders(two_libs: tuple[GitRepo, GitRepo],
                                                         tmp_path: Path) -> None:
    x, y = two_libs
    out = tmp_path / "out"
    first = annotated_folder(x, out, None)
    second = extract(str(y.path), output_root=out, jobs=1, evidence=False)
    assert first == out / "local" / x.head()[:12] / "lib"
    assert second.folder == out / "local" / y.head()[:12] / "lib"
    assert [r.site.message.template for r in second.merged.records] == ["y failed"]
    assert all(r.annotation.data.get("what_it_means") is None for r in second.merged.records)
    assert load_manifest(second.folder).pin.root == y.head()  # type: ignore[union-attr]


@pytest.mark.parametrize("command", ["extract", "extract --dry-run", "update"])
def test_another_repository_under_the_same_name_is_refused(
        two_libs: tuple[GitRepo, GitRepo], tmp_path: Path, command: str) -> None:
    x, y = two_libs
    out = tmp_path / "out"
    folder = annotated_folder(x, out, "lib")
    assert folder == out / "local" / "local" / "lib"  # --name keeps naming the folder itself
    (folder / record_files.ERRORS_DIR / ".0123456789abcdef.yaml.x.tmp").write_text("left over")
    before = every_file(folder)
    args = [*command.split(), str(y.path), "-o", str(out), "--name", "lib", "-j", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert re.fullmatch(
        rf"Error: {re.escape(str(folder))}: holds the records of another repository, "
        # the folder's manifest names its repository by identity, never by a path of this machine
        rf"local/local/lib \(first commit {x.head()[:12]}\), not of "
        rf"{re.escape(str(y.path))} \(first commit {y.head()[:12]}\); its records are left as "
        r"they are: give this one another --name, or another -o\n", result.output)
    assert every_file(folder) == before  # the temp file of "a killed run" too: nothing touched


def test_the_same_repository_elsewhere_is_the_same_identity(tmp_path: Path) -> None:
    """A clone without a remote (moved, copied) shares the first commit: one folder, merged."""
    original = library(tmp_path / "x", "x failed")
    out = tmp_path / "out"
    folder = annotated_folder(original, out, None)
    copy = tmp_path / "elsewhere" / "lib"
    subprocess.run(["git", "clone", "-q", str(original.path), str(copy)], check=True)
    subprocess.run(["git", "-C", str(copy), "remote", "remove", "origin"], check=True)
    again = extract(str(copy), output_root=out, jobs=1, evidence=False)
    assert again.folder == folder and again.files_written == 0


def test_a_manifest_from_before_the_root_field_is_accepted_and_gains_it(
        two_libs: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    x, _ = two_libs
    out = tmp_path / "out"
    folder = annotated_folder(x, out, "lib")
    manifest = folder / MANIFEST
    old = re.sub(r"^root: [0-9a-f]{40}\n", "", manifest.read_text(), flags=re.MULTILINE)
    assert "root:" not in old
    manifest.write_text(old)
    records = {p.name: p.read_bytes() for p in record_files.iter_record_paths(folder)}
    x.write("lib/extra.py", "def more():\n    raise KeyError('more')\n")
    x.commit("second")
    update(str(x.path), output_root=out, name="lib", jobs=1)
    assert f"root: {x.git('rev-list', '--max-parents=0', 'HEAD')}\n" in manifest.read_text()
    for name, data in records.items():  # the annotated records are left alone
        assert (folder / record_files.ERRORS_DIR / name).read_bytes() == data


def test_a_network_origin_is_the_identity_whatever_the_history(make_repo: MakeRepo,
                                                               tmp_path: Path) -> None:
    """Two clones of one repository are one, even pinned at unrelated histories (an orphan
    branch); the same --name for two different forge repositories is refused by their URLs."""
    repo = make_repo("widgets")
    repo.write("a.py", "raise ValueError('main')\n")
    repo.commit("main")
    repo.git("config", "remote.origin.url", "https://github.com/acme/widgets.git")
    repo.git("checkout", "-q", "--orphan", "pages")
    repo.write("a.py", "raise ValueError('pages')\n")
    repo.commit("pages")
    out = tmp_path / "out"
    first = extract(str(repo.path), ref="main", output_root=out, jobs=1, evidence=False)
    second = extract(str(repo.path), ref="pages", output_root=out, jobs=1, evidence=False)
    assert first.folder == second.folder == out / "github.com" / "acme" / "widgets"
    assert first.pin.root != second.pin.root
    repo.git("config", "remote.origin.url", "https://github.com/other/widgets.git")
    with pytest.raises(OutputError, match=r"https://github.com/acme/widgets \(first commit"):
        extract(str(repo.path), ref="pages", output_root=out, name="acme/widgets", jobs=1)


def test_an_earlier_folder_named_local_local_is_pointed_out(two_libs: tuple[GitRepo, GitRepo],
                                                           tmp_path: Path) -> None:
    """Records made before roots named local repositories are not carried over silently."""
    x, _ = two_libs
    out = tmp_path / "out"
    earlier = annotated_folder(x, out, "lib")  # local/local/lib, as every run made it before
    manifest = earlier / "manifest.yaml"  # and with a manifest of then, which named no first commit
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    manifest.write_text("".join(line for line in lines if not line.startswith("root:")), encoding="utf-8")
    hint = (f"{earlier} holds records from before local repositories were told apart by their "
            "first commit; if they are this repository's, pass --name lib to go on there")
    with pytest.raises(OutputError, match=re.escape(hint)):
        update(str(x.path), output_root=out, jobs=1)
    result = extract(str(x.path), output_root=out, jobs=1, evidence=False)
    assert result.notes == (hint,)
    assert extract(str(x.path), output_root=out, jobs=1, evidence=False).notes == ()


def test_a_shallow_clone_without_origin_needs_a_name(tmp_path: Path) -> None:
    original = library(tmp_path / "x", "x failed")
    original.write("lib/core.py", "def run(x):\n    raise ValueError('second')\n")
    original.commit("second")
    clone = tmp_path / "shallow" / "lib"
    subprocess.run(["git", "clone", "-q", "--depth=1", original.path.as_uri(), str(clone)],
                   check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "remove", "origin"], check=True)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["extract", str(clone), "-o", str(out), "-j", "1"])
    assert result.exit_code == 1
    assert result.output == (f"Error: [{clone}] a shallow clone with no network origin: nothing "
                             "tells it apart from another folder of its name; give --name NAME\n")
    named = extract(str(clone), output_root=out, name="lib", jobs=1, evidence=False)
    assert named.folder == out / "local" / "local" / "lib" and named.pin.root is None


def test_file_urls_of_two_folders_named_alike_are_two_identities(
        two_libs: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    """A file:// source is fetched shallowly, so its first commit is read where it lives."""
    x, y = two_libs
    out = tmp_path / "out"
    first = extract(x.path.as_uri(), output_root=out, jobs=1, evidence=False)
    second = extract(y.path.as_uri(), output_root=out, jobs=1, evidence=False)
    assert first.folder == out / "local" / x.head()[:12] / "lib"
    assert second.folder == out / "local" / y.head()[:12] / "lib"
    with pytest.raises(OutputError, match="holds the records of another repository"):
        extract(y.path.as_uri(), output_root=out, name=f"local/{x.head()[:12]}/lib", jobs=1)


# Record ids are the site's URLs: a change of the id scheme changes every page's address. These
# were written by the crawler for the repository below; a change that alters one fails here.
GOLDEN_IDS = {
    "github.com/acme/widgets": {
        ("widgets/core.py", "ValueError", "no widget named {name}"): "64ac46c67f378125",
        ("widgets/core.py", "KeyError", "widget"): "aedbddeaf52d1a82",
    },
    "widgets": {
        ("widgets/core.py", "ValueError", "no widget named {name}"): "daabbb4cd6c379a2",
        ("widgets/core.py", "KeyError", "widget"): "2dfdfc9264e716af",
    },
    None: {
        ("widgets/core.py", "ValueError", "no widget named {name}"): "d517a58c5457585d",
        ("widgets/core.py", "KeyError", "widget"): "47432273bb183841",
    },
}


@pytest.mark.parametrize("name", list(GOLDEN_IDS), ids=str)
def test_record_ids_are_pinned_for_a_repository_at_a_fixed_commit(tmp_path: Path,
                                                                  name: str | None) -> None:
    repo = GitRepo(tmp_path / "widgets")
    repo.write("widgets/core.py", "def get(name):\n"
                                  "    if not name:\n        raise KeyError('widget')\n"
                                  "    raise ValueError(f'no widget named {name!r}')\n")
    repo.commit("first")
    # fixed dates and author: the same commit on every machine
    assert repo.head() == "f8c810c9bbb9394580bed8f477c8626434d2ff76"
    out = tmp_path / "out"
    args = ["crawler", "extract", str(repo.path), "-o", str(out), "-j", "1", "-q", "--json"]
    subprocess.run(args + (["--name", name] if name else []), check=True, capture_output=True)
    found = {}
    for path in sorted(out.rglob("errors/*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        extracted = data["extracted"]
        found[(extracted["path"], extracted["exception"], extracted["message"]["template"])] = data["id"]
    assert found == GOLDEN_IDS[name]
