"""The configuration file: `crawler.toml`, or `[tool.crawler]` in `pyproject.toml`, in the folder
a command runs from; the command line wins over it. Through the installed `crawler`, as a site's
scheduled job runs it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo


def crawler(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crawler", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def lib(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("lib")
    repo.write("src/lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n")
    repo.write("docs/conf.py", "raise ValueError('not the library')\n")
    repo.commit("first")
    repo.tag("v1.0")
    repo.write("src/lib/more.py", "def shape(n):\n    raise ValueError(f'bad shape {n}')\n")
    repo.commit("second")
    repo.tag("v1.1")
    return repo


def test_a_site_gives_its_options_once_in_crawler_toml(lib: GitRepo, tmp_path: Path) -> None:
    """output, name, exclude, jobs and tags from the file: extract, update, history, then check
    and export with OUTPUT left out, all in the file's folder."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "crawler.toml").write_text(
        'output = "catalogue"\nname = "github.com/acme/lib"\nexclude = ["docs/*"]\njobs = 1\n'
        'tags = "v*"\n', encoding="utf-8")
    done = crawler(site, "extract", lib.path, "--commit", "v1.0", "--json", "--no-evidence")
    assert done.returncode == 0, done.stderr
    folder = site / "catalogue" / "github.com" / "acme" / "lib"
    assert json.loads(done.stdout)["records"] == 1 and (folder / "manifest.yaml").is_file()
    assert crawler(site, "update", lib.path, "--commit", "v1.1", "-q").returncode == 0
    assert len(list(folder.glob("errors/*.yaml"))) == 2  # docs/ still excluded
    walked = crawler(site, "history", lib.path, "-q", "--no-evidence")
    assert walked.returncode == 0, walked.stderr  # over extract's folder: its options kept
    assert crawler(site, "check").returncode == 0
    assert crawler(site, "export", "--format", "jsonl", "-o", "records.jsonl", "-q").returncode == 0
    assert len((site / "records.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert not (site / "output").exists()


def test_the_command_line_wins_and_pyproject_is_read_without_crawler_toml(
        lib: GitRepo, tmp_path: Path) -> None:
    """[tool.crawler] of pyproject.toml when there is no crawler.toml; -o and --name given on
    the command line win over it; crawler.toml, when there, is the only file read."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pyproject.toml").write_text(
        '[project]\nname = "site"\n\n[tool.crawler]\noutput = "from-pyproject"\n'
        'include = "src/*"\n', encoding="utf-8")
    assert crawler(site, "extract", lib.path, "-q", "-j", "1", "--no-evidence").returncode == 0
    records = sorted((site / "from-pyproject").rglob("errors/*.yaml"))
    assert len(records) == 2 and all("path: src/lib/" in r.read_text(encoding="utf-8")
                                     for r in records)
    done = crawler(site, "extract", lib.path, "-q", "-j", "1", "--no-evidence", "-o", "given",
                   "--name", "acme/given")
    assert done.returncode == 0, done.stderr
    assert len(list((site / "given" / "local" / "acme" / "given").glob("errors/*.yaml"))) == 2
    (site / "crawler.toml").write_text('output = "from-crawler-toml"\n', encoding="utf-8")
    assert crawler(site, "extract", lib.path, "-q", "-j", "1", "--no-evidence").returncode == 0
    assert len(list((site / "from-crawler-toml").rglob("errors/*.yaml"))) == 3  # no include


@pytest.mark.parametrize(("text", "said"), [
    ('outptu = "x"\n', "unknown key 'outptu'; the keys are output, name, web-url"),
    ("jobs = 0\n", "jobs is a number of worker processes, 1 or more, not 0"),
    ('include = [1]\n', "include is a glob or a list of globs, not [1]"),
    ("output = \n", "cannot be read as TOML"),
])
def test_a_bad_file_is_one_line_naming_it_and_the_key(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "crawler.toml").write_text(text, encoding="utf-8")
    done = crawler(tmp_path, "validate")
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.startswith(f"Error: {tmp_path / 'crawler.toml'}: ") and said in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
