"""Where a repos.yaml may send a batch's writes: inside its own folder, or under the root of -o.

A repos.yaml may come from someone else; `output: ../../etc` or `/etc` must not let it write
anywhere on the machine. An output root given on the command line is the user's own choice.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.batch import driver
from crawler.batch.reposfile import load_batch
from crawler.errors import BatchError
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import within
from tests.helpers.processes import ROOT, child_env


def batch_file(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "repos.yaml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize("output", [
    "../../etc",
    "{outside}",  # absolute
    "out/../../elsewhere",
    "linked/out",  # a link inside the folder that leads out of it
])
def test_an_entry_output_that_leaves_the_files_folder_is_refused(tmp_path: Path, output: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    given = output.format(outside=outside)
    path = batch_file(folder, f"repos:\n  - source: ./a\n  - source: ./b\n    output: '{given}'\n")
    with pytest.raises(BatchError) as caught:
        load_batch(path, tmp_path / "cli-root")
    assert str(caught.value) == (
        f"{path}:4: repos[1] (source './b'): output: leaves the folder of this file (an "
        "absolute path, `..` or a link leading out), so nothing was run; give a folder inside "
        "it, or the output root with -o")
    assert list(outside.iterdir()) == []


def test_a_default_output_that_leaves_is_refused_naming_defaults(tmp_path: Path) -> None:
    path = batch_file(tmp_path / "batch", "defaults:\n  output: /\nrepos:\n  - source: ./a\n")
    with pytest.raises(BatchError, match=r"repos.yaml:2: defaults\.output: leaves the folder"):
        load_batch(path)


def test_outputs_inside_the_folder_or_under_the_given_root_are_taken(tmp_path: Path) -> None:
    folder = tmp_path / "batch"
    root = tmp_path / "chosen"
    path = batch_file(folder, "repos:\n"
                              "  - source: ./a\n"
                              "  - source: ./b\n    output: sub/out\n"
                              f"  - source: ./c\n    output: '{root / 'c'}'\n")
    with pytest.raises(BatchError, match=r"repos\[2\] .*output: leaves the folder"):
        load_batch(path, root)  # -o not given: the default root does not widen anything
    entries = load_batch(path, root, output_given=True)
    assert [e.output_root for e in entries] == [root, folder.resolve() / "sub/out", root / "c"]
    (folder / "away").symlink_to(tmp_path / "neither", target_is_directory=True)
    path.write_text("repos:\n  - source: ./a\n    output: away\n", encoding="utf-8")
    with pytest.raises(BatchError, match="leaves the folder"):
        load_batch(path, root, output_given=True)


def test_the_command_refuses_before_anything_runs(make_repo: Callable[[str], GitRepo],
                                                  tmp_path: Path) -> None:
    """The real `crawler batch`: one line, exit 1, nothing written, in the entry's folder or -o."""
    repo = make_repo("alpha")
    repo.write("alpha/mod.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    repo.commit()
    outside = tmp_path / "etc"
    outside.mkdir()
    path = batch_file(tmp_path / "deep" / "batch",
                      "repos:\n  - source: ../../alpha\n    output: ../../etc\n")
    cli_root = tmp_path / "cli-root"
    command = [sys.executable, "-m", "crawler", "batch", str(path), "-j", "1", "-q"]
    process = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True,
                             timeout=120)
    assert process.returncode == 1, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "repos[0] (source '../../alpha'): output: leaves the folder" in lines[0]
    assert list(outside.iterdir()) == []
    process = subprocess.run([*command, "-o", str(tmp_path)], cwd=ROOT, env=child_env(),
                             capture_output=True, text=True, timeout=120)  # the user's own root
    assert process.returncode == 0, process.stderr
    assert [p.name for p in outside.rglob("manifest.yaml")] == ["manifest.yaml"]
    assert not cli_root.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_manifest_under_the_roots_counts_as_absent(tmp_path: Path) -> None:
    folder = tmp_path / "out" / "github.com" / "acme" / "widgets"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "manifest.yaml")
    found = within(20, lambda: driver.scan_outputs({tmp_path / "out"}))  # an open would wait
    assert found == []
