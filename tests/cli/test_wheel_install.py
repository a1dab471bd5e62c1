"""Installed means complete: a wheel, installed non-editable in a fresh virtualenv, runs every
command on a small repository from a folder far from the checkout.

The virtualenv sees the packages of the environment that runs the tests, whichever way it was made
(a virtualenv, one with system site packages, the system's interpreter): a `.pth` file lists that
environment's site folders, which come after the virtualenv's own, so the wheel's copy of the crawler
is the one imported and its dependencies are the runner's. The wheel goes in with
`--no-index --no-deps` and nothing is downloaded to install it. (`--system-site-packages` showed
the base interpreter's packages, not a virtualenv runner's: `No module named 'fastjsonschema'`.)
Building the wheel takes
pip's isolated build environment (setuptools and wheel from the configured indexes): about two
minutes here, most of it waiting, hence `slow`; `.ci/run` runs every test, this one included.
"""

from __future__ import annotations

import json
import shutil
import site
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import ROOT

# What the wheel is built from: the project's own files, copied so no build folder is left here.
_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "crawler", "schemas")


def _runner_site_folders() -> list[str]:
    """The site folders this interpreter reads its installed packages from, in its order."""
    folders = set(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return [entry for entry in sys.path if entry in folders]


def _run(*args: str | Path, cwd: Path, ok: tuple[int, ...] = (0,)) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LC_ALL": "C.UTF-8"}  # no PYTHONPATH
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode in ok, (args, result.returncode, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin` folder of a virtualenv with the wheel installed, not editable."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in _SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                             str(base / "dist"), str(source)], capture_output=True, text=True,
                            timeout=900)
    if result.returncode != 0 and "No matching distribution" in result.stderr:
        pytest.skip(f"pip cannot fetch the build backend here: {result.stderr.strip()[-200:]}")
    assert result.returncode == 0, result.stderr
    [wheel] = (base / "dist").glob("*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True, timeout=300)
    [own] = (base / "venv").glob("lib/python*/site-packages")
    # plain folder lines: appended to sys.path after `own`, their own .pth files not read (so no
    # editable install of this checkout in the runner's environment is followed)
    (own / "runner-site-packages.pth").write_text(
        "".join(f"{folder}\n" for folder in _runner_site_folders()), encoding="utf-8")
    subprocess.run([str(base / "venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                    "--no-index", "--no-deps", "--force-reinstall", str(wheel)], check=True,
                   timeout=300)
    return base / "venv" / "bin"


@pytest.mark.slow
def test_the_installed_wheel_runs_every_command(installed: Path, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "lib")
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n"
                              "def shape(n):\n    raise ValueError(f'bad shape ({n}, 4)')\n")
    repo.commit("first")
    work = tmp_path / "elsewhere"
    work.mkdir()
    crawler, python = installed / "crawler", installed / "python"
    where = _run(python, "-c", "import crawler; print(crawler.__file__)", cwd=work)
    assert where.startswith(str(installed.parent)), where  # the wheel's copy, not this checkout
    checks = _run(python, "-c", "from crawler.store import schemas; "
                  "print(*(schemas._compiled(name).__module__ for name in ('record', 'manifest')))",
                  cwd=work)
    # the compiled schema checks are in the wheel, not compiled on every run
    assert checks.split() == ["crawler.schemas.record_check", "crawler.schemas.manifest_check"]
    licences = [path for path in installed.parent.glob("lib/python*/site-packages/"
                                                        "raise_site_crawler-*.dist-info/**/LICENSE")]
    assert licences and "MIT License" in licences[0].read_text(encoding="utf-8"), licences
    _run(crawler, "extract", repo.path, "-o", "out", "--name", "github.com/acme/lib", "-j", "1",
         "-q", cwd=work)
    _run(crawler, "validate", "out", cwd=work)
    found = _run(crawler, "lookup", "ValueError: bad shape (3, 4)", "out", cwd=work)
    assert "bad shape ({n}, 4)" in found, found
    for fmt, target in (("jsonl", "export.jsonl"), ("json", "export"), ("sqlite", "export.sqlite")):
        _run(crawler, "export", "out", "--format", fmt, "--to", target, "-q", cwd=work)
    lines = (work / "export.jsonl").read_text(encoding="utf-8").splitlines()
    index = json.loads((work / "export" / "index.json").read_text(encoding="utf-8"))
    assert index["repositories"][0]["repo"] == "https://github.com/acme/lib"
    db = sqlite3.connect(work / "export.sqlite")
    try:
        pages = db.execute("SELECT permalink FROM pages").fetchall()
    finally:
        db.close()
    assert len(pages) == len(lines) == 2
    assert all(url.startswith("https://github.com/acme/lib/blob/") for (url,) in pages)
    metadata = json.loads((work / "export.sqlite.metadata.json").read_text(encoding="utf-8"))
    assert "find_by_runtime_message" in metadata["databases"]["export"]["queries"]
