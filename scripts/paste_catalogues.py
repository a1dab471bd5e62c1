"""Build the catalogues the pasted-error corpus (tests/serve/lookup/pastes/) is measured against.

The tests must not touch the network, so each catalogue is made beforehand by the installed
`crawler` itself, from a local git directory (a clone or a bare mirror: this script fetches
nothing), and stored as test data: tests/serve/lookup/pastes/catalogues/<library>.tar.xz holds its
output folder (manifest.yaml and errors/), with every record's `snippet` emptied (the source
of the enclosing function is no part of a lookup, and it is most of the bytes).

Libraries with release tags are walked with `crawler history` (so old wordings and removed
sites are known), a bounded run of their last releases up to the pinned one; jax, whose pastes
all come from one release, is one `crawler extract` of that release's tag; the standard
library of this interpreter is extracted once, from a git repository made of a copy of its .py
files (the test suites left out).

    python scripts/paste_catalogues.py --git click=CLICK_GIT --git requests=REQUESTS_GIT \\
        --git attrs=ATTRS_GIT --git jax=JAX_GIT --stdlib
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "serve" / "lookup" / "pastes" / "catalogues"


@dataclass(frozen=True)
class Walk:
    """How one library's catalogue is made: its identity, release tags and pinned release."""

    name: str  # the output identity, HOST/OWNER/NAME
    tags: str  # the glob of its release tags
    since: str | None  # the first release walked; None: one `crawler extract` of `commit`
    commit: str  # the pinned release, the walk's last step
    evidence: bool = True
    # tags the glob selects that are not the library's releases (another package's tag kept in
    # its repository), walked from a copy of the git directory without them
    skip: tuple[str, ...] = ()


WALKS = {
    "click": Walk("github.com/pallets/click", "*", "7.0", "8.5.0"),
    "requests": Walk("github.com/psf/requests", "v2.*", "v2.20.0", "v2.34.2"),
    "attrs": Walk("github.com/python-attrs/attrs", "*", "19.1.0", "26.1.0"),
    "jax": Walk("github.com/jax-ml/jax", "jax-v*", None, "jax-v0.10.2", evidence=False),
}
# The corpus of issue 48 (real/): fourteen libraries the lookup was never tuned on, split before
# any change to the lookup into a working half (develop and debug) and a sealed half (measured
# once). Each walks its releases from about four years back to its newest release; lookup needs
# no test evidence, so these walks read none.
REAL_WALKS = {
    # working half
    "flask": Walk("github.com/pallets/flask", "*", "1.0", "3.1.3", evidence=False),
    # 1.4 and 2.0 releases (the 1.3 and 2.1 lines' tags dated among them stay out)
    "sqlalchemy": Walk("github.com/sqlalchemy/sqlalchemy", "rel_[12]_[04]_*", "rel_1_4_0",
                       "rel_2_0_52", evidence=False),
    "networkx": Walk("github.com/networkx/networkx", "networkx-*", "networkx-2.0",
                     "networkx-3.6.1", evidence=False),
    "httpx": Walk("github.com/encode/httpx", "*", "0.18.0", "0.28.1", evidence=False),
    "xarray": Walk("github.com/pydata/xarray", "v*", "v0.16.0", "v2026.07.0", evidence=False),
    "celery": Walk("github.com/celery/celery", "v*", "v5.0.0", "v5.6.3", evidence=False),
    "pydantic": Walk("github.com/pydantic/pydantic", "v*", "v1.8", "v2.13.4", evidence=False),
    # sealed half
    "werkzeug": Walk("github.com/pallets/werkzeug", "*", "0.15.0", "3.1.8", evidence=False),
    "jinja": Walk("github.com/pallets/jinja", "*", "2.10", "3.1.6", evidence=False),
    "aiohttp": Walk("github.com/aio-libs/aiohttp", "v*", "v3.6.0", "v3.14.3", evidence=False),
    "marshmallow": Walk("github.com/marshmallow-code/marshmallow", "*", "3.0.0", "3.23.0",
                        evidence=False),
    "pyyaml": Walk("github.com/yaml/pyyaml", "*", "3.10", "6.0.3", evidence=False),
    "dask": Walk("github.com/dask/dask", "20*", "2022.01.0", "2026.7.1", evidence=False,
                 skip=("2023.3.2.1",)),  # distributed's release tag: its tree has no dask/
    "urllib3": Walk("github.com/urllib3/urllib3", "*", "1.26.0", "2.7.0", evidence=False),
    # second sealed set
    "pillow": Walk("github.com/python-pillow/Pillow", "*", "5.0.0", "12.3.0", evidence=False),
    # releases only (no beta tags): most threads are of tornado 3 and 4
    "tornado": Walk("github.com/tornadoweb/tornado", "v[0-9].[0-9].[0-9]", "v3.0.0", "v6.5.7",
                    evidence=False),
    # final releases only (the glob leaves out the b and rc tags)
    "sphinx": Walk("github.com/sphinx-doc/sphinx", "v[5-9].[0-9].[0-9]", "v5.0.0", "v9.1.0",
                   evidence=False),
    # from 1.1 (2017): most of the tracker's pastes are of sympy 1.1 to 1.9
    "sympy": Walk("github.com/sympy/sympy", "sympy-1.*", "sympy-1.1", "sympy-1.14.0",
                  evidence=False),
    # third sealed set; final releases only (each glob leaves the a, b, rc and dev tags out)
    "seaborn": Walk("github.com/mwaskom/seaborn", "v0.[0-9]*.[0-9]", "v0.8.0", "v0.13.2",
                    evidence=False),
    "docker-py": Walk("github.com/docker/docker-py", "[0-9].[0-9]*.[0-9]", "2.0.0", "7.2.0",
                      evidence=False),
    # alembic's tags (rel_1_13_2) name no version: they walk by date
    "alembic": Walk("github.com/sqlalchemy/alembic", "rel_[01]_*", "rel_0_9_0", "rel_1_19_1",
                    evidence=False),
    "scrapy": Walk("github.com/scrapy/scrapy", "[12].[0-9]*.[0-9]", "1.0.0", "2.18.0",
                   evidence=False),
    # fourth sealed set
    "paramiko": Walk("github.com/paramiko/paramiko", "[1-4].[0-9]*.[0-9]", "2.0.0", "4.0.0",
                     evidence=False),
    # releases only: the glob takes some beta, rc and dev tags, which are skipped
    "pymongo": Walk("github.com/mongodb/mongo-python-driver", "[34].[0-9]*", "3.9.0", "4.17.0",
                    evidence=False, skip=("3.9.0b0", "3.9.0b1", "3.11.0b0", "3.11.0b1",
                                          "3.11.0rc0", "3.12.0b0", "3.12.0b1", "4.2.0b0",
                                          "4.4.0b0", "4.8.0b0", "4.13.0.dev0", "4.13.0.dev1",
                                          "4.16.0.dev0")),
    "fastapi": Walk("github.com/fastapi/fastapi", "0.[0-9]*.[0-9]", "0.65.0", "0.141.1",
                    evidence=False),
    "jsonschema": Walk("github.com/python-jsonschema/jsonschema", "v[0-9].[0-9]*.[0-9]",
                       "v3.0.0", "v4.26.0", evidence=False),
    # fifth sealed set (releases only: the globs take some alpha, beta, rc, dev and post tags)
    "pip": Walk("github.com/pypa/pip", "2[2-6].*", "22.0", "26.2.1", evidence=False,
                skip=("22.1b1", "24.1b1", "24.1b2")),
    "pytest": Walk("github.com/pytest-dev/pytest", "[789].*", "7.0.0", "9.1.1", evidence=False,
                   skip=("7.0.0.dev0", "7.0.0.post1", "7.0.0rc1", "7.1.0.dev0", "7.2.0.dev0",
                         "7.4.0.dev0", "8.0.0.dev0", "8.0.0rc1", "8.0.0rc2", "8.1.0.dev0",
                         "8.2.0.dev0", "8.3.0.dev0", "8.4.0.dev0", "8.5.0.dev0", "9.1.0.dev0",
                         "9.2.0.dev0")),
    "black": Walk("github.com/psf/black", "2[2-6].*", "22.1.0", "26.5.1", evidence=False,
                  skip=("23.1a1", "24.1a1", "26.1a1")),
    "starlette": Walk("github.com/encode/starlette", "0.[2-4]*", "0.20.0", "0.47.3",
                      evidence=False, skip=("0.26.0.post1", "0.32.0.post1")),
    # sixth sealed set; final releases only (the glob leaves out the a, b and rc tags)
    "redis-py": Walk("github.com/redis/redis-py", "v[4-8].[0-9]*.[0-9]", "v4.5.0", "v8.1.0",
                     evidence=False),
    # botocore releases almost daily: one release per minor version (1.X.0; the 1.42 line has
    # no 1.42.0 tag), then its newest release
    "botocore": Walk("github.com/boto/botocore", "1.[1-4][0-9].0", "1.13.0", "1.43.67",
                     evidence=False),
    # sixth sealed set: tqdm's v4 tags are all final releases (43 from v4.55.0, December 2020)
    "tqdm": Walk("github.com/tqdm/tqdm", "v4.*", "v4.55.0", "v4.69.1", evidence=False),
    # cryptography's repository was too large to bring here: its git directory is made from
    # the Python files of each release's manylinux abi3 wheel as published, put under src/ (the
    # repository's layout), one commit and tag per release: the first release of each major
    # version from 35.0.0 (September 2021; 45.0.0 was never published, 45.0.1 stands for it)
    # and the newest, 51.0.1 (18 tags). Its Rust code, which raises many of its errors, is in
    # no catalogue.
    "cryptography": Walk("github.com/pyca/cryptography", "[3-5][0-9].*", "35.0.0", "51.0.1",
                         evidence=False),
    # seventh sealed set: gunicorn's releases of the last five years (18 tags from 21.0.0, July
    # 2023, to 26.1.0; fewer than its last 20-25 releases, which reach back to 20.0.0 of 2019);
    # the glob takes final releases only
    "gunicorn": Walk("github.com/benoitc/gunicorn", "2[1-6].*", "21.0.0", "26.1.0",
                     evidence=False),
    # seventh sealed set: peewee's last 25 final releases (fewer than its releases of the last
    # five years), 3.18.1 of April 2025 to 4.3.0 of July 2026; the glob leaves out 3.18.0.post1
    # (and the two-digit patch tags, 3.14.10 and older, all before 3.18.1)
    "peewee": Walk("github.com/coleifer/peewee", "[34].[0-9]*.[0-9]", "3.18.1", "4.3.0",
                   evidence=False),
    # seventh sealed set: mako's tags (rel_1_3_12, read as 1.3.12) are all final releases. The
    # last ~5 years, fewer than the last 20-25 releases: the 19 from rel_1_2_0 (March 2022) to
    # rel_1_4_1 (August 2026)
    "mako": Walk("github.com/sqlalchemy/mako", "rel_1_*", "rel_1_2_0", "rel_1_4_1",
                 evidence=False),
    # seventh sealed set: pymysql's final releases (the glob leaves out the rc tags) of the last
    # ~5 years, fewer than the last 20-25: 9 from v1.0.0 (January 2021, the 1.0 line's first;
    # five years back falls in the two years between v1.0.2 and v1.0.3) to v1.2.0
    "pymysql": Walk("github.com/PyMySQL/PyMySQL", "v1.[0-9]*.[0-9]", "v1.0.0", "v1.2.0",
                    evidence=False),
    # eighth sealed set: uvicorn's last 25 final releases (fewer than its releases of the last
    # five years, 44 from 0.17.0 of January 2022), 0.24.0 of November 2023 to 0.35.0
    # of June 2025; the glob takes final releases only (it leaves out the .post1 tags)
    "uvicorn": Walk("github.com/encode/uvicorn", "0.[23][0-9].[0-9]", "0.24.0", "0.35.0",
                    evidence=False),
    # eighth sealed set: kombu's final releases (the glob leaves out the a, b and rc tags) of the
    # last five years, fewer than its last 20-25: the 21 from v5.2.3 (December 2021) to v5.6.2
    # (December 2025, the newest release tag)
    "kombu": Walk("github.com/celery/kombu", "v5.[2-6].[0-9]", "v5.2.3", "v5.6.2",
                  evidence=False),
    # eighth sealed set: websockets's releases of the last ~5 years, fewer than its last 20-25
    # (25 reach back to 9.0.2 of May 2021): the 21 from 10.2 (February 2022) to 17.0.1 (July
    # 2026); its tags (10.2, 11.0.3) are all final releases, and the glob leaves out 1.0 to 9.1
    "websockets": Walk("github.com/python-websockets/websockets", "1[0-9].*", "10.2", "17.0.1",
                       evidence=False),
    # eighth sealed set: setuptools's last 25 releases, fewer than its releases of the last five
    # years (hundreds): v78.1.0 (March 2025) to v84.0.0 (August 2026). The glob takes v70 to v89
    # tags, all final releases (its beta tags are v28, v63, v64 and v68); the v75.3.x backports
    # tagged in 2025-2026 sort before v78.1.0 by version and stay out
    "setuptools": Walk("github.com/pypa/setuptools", "v[78][0-9].*", "v78.1.0", "v84.0.0",
                       evidence=False),
}
WALKS.update(REAL_WALKS)
STDLIB_NAME = "github.com/python/cpython-3.11.7"
TEST_FOLDERS = ("test", "tests", "idle_test", "idlelib", "lib2to3")


def walk_history(library: str, git_dir: Path, work: Path) -> Path:
    """`crawler history` of one library (or its extract at one release, when it names no
    first release) into a folder of `work`; its repository folder."""
    walk = WALKS[library]
    output = work / library
    if walk.skip:
        copy = work / f"{library}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(git_dir), str(copy)], check=True)
        subprocess.run(["git", "-C", str(copy), "tag", "-d", *walk.skip], check=True,
                       capture_output=True)
        git_dir = copy
    command = ["crawler", "history", str(git_dir), "--tags", walk.tags, "--since", walk.since] \
        if walk.since else ["crawler", "extract", str(git_dir)]
    command += ["--commit", walk.commit, "--name", walk.name, "-o", str(output), "-q",
                "--cache-dir", str(work / "cache")]
    if not walk.evidence:
        command.append("--no-evidence")
    subprocess.run(command, check=True)
    return output / walk.name


def stdlib_repository(work: Path) -> Path:
    """A git repository of this interpreter's standard library .py files, tests left out."""
    root = Path(sysconfig.get_paths()["stdlib"])
    repo = work / "stdlib-src"
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("site-packages", "dist-packages") or \
                any(part in TEST_FOLDERS for part in relative.parts[:-1]):
            continue
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    git = ["git", "-C", str(repo), "-c", "user.name=paste corpus", "-c",
           "user.email=paste@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the standard library"], check=True)
    return repo


def extract_stdlib(work: Path) -> Path:
    """`crawler extract` of the standard library copy; its repository folder."""
    output = work / "stdlib"
    subprocess.run(["crawler", "extract", str(stdlib_repository(work)), "--name", STDLIB_NAME,
                    "-o", str(output), "-q", "--cache-dir", str(work / "cache")], check=True)
    return output / STDLIB_NAME


# a record's snippet: the key and its block scalar, whose lines are indented deeper or blank
_SNIPPET = re.compile(r"^  snippet: [|>][-+0-9]*\n(?:(?:    .*)?\n)*", re.MULTILINE)


def without_snippet(text: str) -> str:
    """A record file's text with its snippet emptied (one line, the same key)."""
    return _SNIPPET.sub("  snippet: ''\n", text, count=1)


def pack(library: str, folder: Path, name: str) -> Path:
    """The repository folder's manifest and records, snippets emptied, as <library>.tar.xz
    holding NAME/manifest.yaml and NAME/errors/*.yaml (no lookup index: it is a cache)."""
    HERE.mkdir(parents=True, exist_ok=True)
    target = HERE / f"{library}.tar.xz"
    with tempfile.TemporaryDirectory() as staging:
        copy = Path(staging) / name
        (copy / "errors").mkdir(parents=True)
        shutil.copyfile(folder / "manifest.yaml", copy / "manifest.yaml")
        for record in sorted((folder / "errors").glob("*.yaml")):
            text = record.read_text(encoding="utf-8")
            (copy / "errors" / record.name).write_text(without_snippet(text), encoding="utf-8")
        with tarfile.open(target, "w:xz", preset=9) as archive:
            archive.add(copy, arcname=name, filter=_reproducible)
    return target


def _reproducible(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Members without this machine's owner or times: the same records pack the same."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", action="append", default=[], metavar="LIBRARY=GIT_DIR",
                        help=f"a local git directory of one of {', '.join(WALKS)}")
    parser.add_argument("--stdlib", action="store_true", help="extract this Python's stdlib too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="paste-catalogues-") as scratch:
        work = Path(scratch)
        for item in args.git:
            library, _, git_dir = item.partition("=")
            if library not in WALKS:
                parser.error(f"--git {item}: the library is one of {', '.join(WALKS)}")
            started = time.monotonic()
            folder = walk_history(library, Path(git_dir), work)
            target = pack(library, folder, WALKS[library].name)
            print(f"{library}: {time.monotonic() - started:.0f} s, {target.stat().st_size:,} bytes")
        if args.stdlib:
            started = time.monotonic()
            target = pack("stdlib", extract_stdlib(work), STDLIB_NAME)
            print(f"stdlib: {time.monotonic() - started:.0f} s, {target.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
