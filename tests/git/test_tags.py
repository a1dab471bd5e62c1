"""A repository's tags for `crawler history`: names, the commits they name, and their dates."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.errors import RefError
from crawler.git.pin import pin
from crawler.git.tags import list_tags
from tests.helpers.gitrepo import GitRepo


def test_tags_name_their_commits_with_dates_and_a_tag_of_a_tree_or_blob_is_listed_apart(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("m.py", "x = 1\n")
    first = repo.commit()
    repo.tag("v1.0", annotated=True)
    repo.write("m.py", "x = 2\n")
    second = repo.commit()
    repo.tag("v2.0")
    repo.tag("other")
    repo.git("tag", "v-tree", repo.git("rev-parse", "HEAD^{tree}"))
    repo.git("tag", "-a", "v-blob", "-m", "a blob", repo.git("rev-parse", "HEAD:m.py"))
    repo.git("tag", "-a", "v2.0-again", "-m", "a tag of a tag", "v1.0")
    dates = {sha: int(repo.git("log", "-1", "--format=%ct", sha)) for sha in (first, second)}
    for source in (str(repo.path), (tmp_path / "repo").as_uri()):
        with pin(source, "HEAD", cache_dir=tmp_path / "cache") as pinned:
            found = list_tags(pinned, "v*")
        assert [(t.name, t.commit) for t in found.tags] == [
            ("v1.0", first), ("v2.0", second), ("v2.0-again", first)]
        assert found.tags[1].date == dates[second]
        assert found.tags[0].date >= dates[first]  # the tagger's date of the annotated tag
        assert found.not_commits == (("v-blob", "points at a blob, not a commit"),
                                     ("v-tree", "points at a tree, not a commit"))


@pytest.mark.parametrize("kind", ["tree", "blob"])
def test_pinning_a_tag_of_a_tree_or_blob_says_what_it_names(tmp_path: Path, kind: str) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("m.py", "x = 1\n")
    repo.commit()
    target = repo.git("rev-parse", "HEAD^{tree}" if kind == "tree" else "HEAD:m.py")
    repo.git("tag", "-a", f"v-{kind}", "-m", kind, target)
    for source in (str(repo.path), (tmp_path / "repo").as_uri()):
        with pytest.raises(RefError) as caught:
            pin(source, f"v-{kind}", cache_dir=tmp_path / "cache")
        assert str(caught.value) == (
            f"[{source}] 'v-{kind}' names a {kind}, not a commit: give a branch, a tag or a sha "
            "that names a commit")
