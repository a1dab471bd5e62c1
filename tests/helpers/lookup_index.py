"""A small repository extracted once per module, and a copy of its output root per test (out)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from crawler.cli.commands import main
from tests.helpers.gitrepo import GitRepo

SOURCE = {
    "a.py": "def a(shape):\n    raise ValueError(f'bad shape {shape}')\n",
    "b.py": "def b(key):\n    raise KeyError(f'missing column {key}')\n",
    "c.py": "def c(n):\n    raise TypeError('expected %d items' % n)\n",
}


def extract(repo: GitRepo, out: Path, *more: str) -> Path:
    return extracted(repo, out, *more)[0]


def extracted(repo: GitRepo, out: Path, *more: str) -> tuple[Path, str]:
    """`crawler extract`: the repository's folder and name."""
    result = CliRunner().invoke(main, ["extract", str(repo.path), "-o", str(out), "--json",
                                       "--no-evidence", *more])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    return Path(summary["folder"]), summary["repo"]




