"""A repository's tags for `crawler history`: names, the commits they name, and their dates."""

from __future__ import annotations

from pathlib import Path

from crawler.git.pin import pin
from crawler.git.tags import list_tags
from tests.gitrepo import GitRepo


def test_tags_name_their_commits_with_dates_and_a_tag_of_a_tree_is_no_release(
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
    dates = {sha: int(repo.git("log", "-1", "--format=%ct", sha)) for sha in (first, second)}
    for source in (str(repo.path), (tmp_path / "repo").as_uri()):
        with pin(source, "HEAD", cache_dir=tmp_path / "cache") as pinned:
            found = list_tags(pinned, "v*")
        assert [(t.name, t.commit) for t in found] == [("v1.0", first), ("v2.0", second)]
        assert found[1].date == dates[second]
        assert found[0].date >= dates[first]  # the tagger's date of the annotated tag
