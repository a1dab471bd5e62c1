"""Issue 44: a release tag moved (`git tag -f`) or deleted between two walks stayed in the
manifest's `releases.walked` at its old commit, with no note.

The second walk says, one line each, which walked tag moved (from, to) or went, and its manifest
lists them under `releases.moved`; the records' release ranges stay what the tags held when they
were walked (a walk never goes back), and every annotation stays as it was written.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crawler.store import manifest_file, schemas
from crawler.store.safe_yaml import load_yaml_file
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT, child_env
from tests.helpers.update_output import Output


def history(repo: GitRepo, out: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "crawler", "history", str(repo.path), "--tags", "v*", "-o",
            str(out), "--cache-dir", str(out.parent / "cache"), "-j", "1", "--no-evidence"]
    return subprocess.run(argv, cwd=ROOT, env=child_env(), capture_output=True, text=True,
                          timeout=300)


def test_a_moved_and_a_deleted_tag_are_noted(make_repo, tmp_path: Path) -> None:
    repo: GitRepo = make_repo("lib")
    commits = {}
    for number in range(3):
        repo.write(f"pkg/m{number}.py", f"def f():\n    raise ValueError('error {number}')\n")
        commits[number] = repo.commit(f"release {number}")
        repo.tag(f"v1.{number}", annotated=number == 1)
    out = tmp_path / "out"
    first = history(repo, out)
    assert first.returncode == 0, first.stderr
    output = Output(repo, out, tmp_path / "cache")
    output.folder = next(path.parent for path in out.rglob("manifest.yaml"))
    record = output.find("error 0")
    block = output.annotate(record.id, "Written by hand for error 0.")
    before = output.path(record.id).read_bytes()
    manifest = manifest_file.load_manifest(output.folder)
    assert manifest is not None and manifest.releases is not None
    assert [(r.tag, r.commit) for r in manifest.releases.walked] == [
        ("v1.0", commits[0]), ("v1.1", commits[1]), ("v1.2", commits[2])]

    repo.write("pkg/m3.py", "def g():\n    raise ValueError('error 3')\n")
    later = repo.commit("after the releases")
    repo.git("tag", "-f", "v1.0", commits[1])  # moved
    repo.git("tag", "-d", "v1.1")  # gone
    second = history(repo, out)

    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    moved = [line for line in lines if line.startswith("tag v1.")]
    assert moved == [
        f"tag v1.0 moved from {commits[0][:12]} to {commits[1][:12]} since it was walked: the "
        f"records' releases still say what v1.0 held at {commits[0][:12]}",
        f"tag v1.1 is gone (it named {commits[1][:12]}) since it was walked: the records' "
        f"releases still say what v1.1 held at {commits[1][:12]}"], second.stdout
    data, _ = load_yaml_file(output.folder / "manifest.yaml")
    assert schemas.passes(data, "manifest"), data["releases"]
    manifest = manifest_file.load_manifest(output.folder)
    assert manifest is not None and manifest.releases is not None
    assert [(m.tag, m.walked, m.now) for m in manifest.releases.moved] == [
        ("v1.0", commits[0], commits[1]), ("v1.1", commits[1], None)]
    assert [(r.tag, r.commit) for r in manifest.releases.walked] == [
        ("v1.0", commits[0]), ("v1.1", commits[1]), ("v1.2", commits[2])]
    assert manifest.pin.sha == later
    # the releases the records were given stay what the tags held when walked
    assert output.find("error 0").versions is not None
    assert output.find("error 0").versions.first == "v1.0"
    assert output.find("error 1").versions.first == "v1.1"
    assert output.find("error 3").versions.first is None
    assert output.path(record.id).read_bytes() == before and block in before.decode()
