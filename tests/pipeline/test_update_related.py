"""An update gives every record the `related` list a fresh extract gives, and rewrites a record
only when its facts changed (issue 44: over werkzeug's weekly updates 3 to 5 records, over
jax's 285 to 1,209, had a `related` list other than a fresh extract's, since an update carried
the lists over and gave a new record none)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.pipeline import extract, update
from tests.helpers.folder_diff import SiteKey, differing, live_records, site_key
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import record_texts

FACTS = ("status", "site", "evidence", "related", "entry_points")  # not the commit read at

# One class whose raises share a scope (same_scope lists), and wordings shared with other files
# (same_shape lists): a kept file's records list the changed files' records by shape.
CODEC = '''\
class Codec:
    def encode(self, value):
        if value is None:
            raise ValueError("cannot encode None")
        raise ValueError(f"cannot encode {value} as {self.kind}")

    def decode(self, data):
        raise ValueError(f"cannot decode {data} as {self.kind}")
'''

KEPT = '''\
def load(name):
    raise LookupError(f"no codec named {name} in the registry")


def save(name):
    raise LookupError(f"no format called {name} is known here")
'''

OTHER = '''\
def unrelated():
    raise RuntimeError("a message no other record shares with this one")
'''


def registry(name: str, number: int) -> str:
    """A module whose raise has the shape of the kept file's first one."""
    return (f"# {name}\n" * number + f"def {name}(codec):\n"
            "    raise LookupError(f\"no codec named {codec} in the registry\")\n")



def test_each_update_gives_a_fresh_extracts_related_lists(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    repo.write("lib/codec.py", CODEC)
    repo.write("lib/kept.py", KEPT)
    repo.write("lib/other.py", OTHER)
    repo.write("lib/first.py", registry("first", 0))
    steps = [repo.commit("first")]
    repo.write("lib/codec.py", CODEC.replace(
        "    def decode", "    def check(self, value):\n"
        "        raise ValueError(f\"cannot check {value} as {self.kind}\")\n\n    def decode"))
    steps.append(repo.commit("a raise more in the class: its neighbours' same_scope lists"))
    repo.write("lib/second.py", registry("second", 0))
    steps.append(repo.commit("a new file with the kept file's wording: its same_shape list"))
    repo.write("lib/first.py", registry("first", 3))
    steps.append(repo.commit("a record of that wording moves down its file"))
    repo.remove("lib/second.py")
    steps.append(repo.commit("a record of that wording goes"))
    repo.write("lib/other.py", OTHER + "\n\ndef more():\n    raise RuntimeError('and one more')\n")
    steps.append(repo.commit("a file no other record's list names changes"))

    cache = tmp_path / "cache"
    updated = extract(str(repo.path), ref=steps[0], output_root=tmp_path / "updated",
                      cache_dir=cache, jobs=1).folder
    fresh_before = live_records(extract(str(repo.path), ref=steps[0], output_root=tmp_path / "f0",
                                        cache_dir=cache, jobs=1).folder)
    for step, sha in enumerate(steps[1:], start=1):
        before = record_texts(updated)
        update(str(repo.path), ref=sha, output_root=tmp_path / "updated", cache_dir=cache, jobs=1)
        fresh = live_records(extract(str(repo.path), ref=sha, output_root=tmp_path / f"f{step}",
                                     cache_dir=cache, jobs=1).folder)
        now = live_records(updated)
        assert differing(now, fresh, ["related", "evidence", "entry_points"]) == {}, step
        changed_facts: set[SiteKey] = set(differing(fresh_before, fresh, FACTS))
        after = record_texts(updated)
        rewritten = {site_key(r) for r in now.values()
                     if after.get(f"{r.id}.yaml") != before.get(f"{r.id}.yaml")}
        assert rewritten <= changed_facts, (step, sorted(rewritten - changed_facts))
        fresh_before = fresh
    kept = [r for key, r in fresh_before.items() if key[0] == "lib/kept.py"
            and "registry" in key[-1]]
    assert [item.reason for item in kept[0].related] == ["same_shape", "same_scope"]
