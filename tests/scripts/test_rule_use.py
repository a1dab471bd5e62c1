"""scripts/rule_use.py on a real extract: each rule counted once per record that used it, and per
library; a `dynamic` record under `dynamic`, a class-composed one under its class rule (and the rules of
its raise statement's own reading, not those its class's text went through)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
SOURCE = '''\
class Refused(Exception):
    def __init__(self, name):
        super().__init__(f"{name} was refused")


def check(value, n):
    message = f"bad value {value}"
    if n > 2:
        message += ", and too many"
    if n < 0:
        raise ValueError(message)
    if n == 0:
        raise Refused(value)
    raise TypeError(describe(value))
'''


def test_rule_use_counts_records_and_libraries(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("lib/core.py", SOURCE)
    commit = repo.commit("lib")
    out = tmp_path / "out"
    crawler = Path(sys.executable).parent / "crawler"
    subprocess.run([crawler, "extract", str(repo.path), "--commit", commit, "-o", str(out / "lib"),
                    "-j", "1", "--no-evidence"], check=True, capture_output=True)
    listing = tmp_path / "list.txt"
    listing.write_text(f"lib {repo.path} {commit}\n", encoding="utf-8")
    counts = tmp_path / "counts.json"
    done = subprocess.run([sys.executable, ROOT / "scripts" / "rule_use.py", str(listing),
                           str(out), "--json", str(counts)],
                          check=True, capture_output=True, text=True)
    found = json.loads(counts.read_text(encoding="utf-8"))
    assert found["libraries"] == {"lib": 4}  # two paths of `message`, the class, `describe`
    used = {rule: entry["records"] for rule, entry in found["rules"].items() if entry["records"]}
    # the class's own f-string is read with the class, not at the raise: not counted for it
    assert used == {"text.fstring": 2, "text.literal": 2, "flow.assignment": 2,
                    "flow.branches": 2, "flow.augmented-assignment": 2,
                    "class.init-message": 1, "dynamic": 1}
    assert "| `flow.branches` | 2 | 1 | lib |" in done.stdout
