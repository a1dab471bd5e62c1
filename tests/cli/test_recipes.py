"""The recipe pages (docs/recipes/) as a user runs them: every ```sh block of the four pages, in
their order, in one folder, with the installed `crawler` on PATH and `$REPO` (the one
placeholder the pages state) set to a small git repository made here, with tags. Each block must
exit 0, and what each page promises is asserted after it: the records written, the annotation
kept byte for byte, no stale file after the weekly update, the rows each export holds. The
weekly page's GitHub Actions workflow and cron line are read from the page: their commands must
be the block the test runs, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "recipes"
PAGES = ("catalogue.md", "annotating.md", "weekly-update.md", "publishing.md")
CRAWLER = shutil.which("crawler")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PASTE = "ValueError: port must be a number, got 'http'"


def blocks(page: str, language: str) -> list[str]:
    """The page's fenced blocks of one language, in order."""
    text = (RECIPES / page).read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if lang == language]


def commands(block: str) -> list[str]:
    """A block's commands, one per line (a trailing backslash joins lines), comments left out."""
    joined = re.sub(r"\\\n\s*", "", block)
    lines = (line.strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_the_recipes_are_linked_from_the_readme_and_each_other() -> None:
    readme = (RECIPES.parent.parent / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## What a record looks like")]
    assert "docs/recipes/" in head
    index = (RECIPES / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"]({page})" in index
        assert blocks(page, "sh"), f"{page} has no sh block"
    assert "`$REPO` is your repository's address" in index


def test_the_workflow_runs_the_commands_the_test_runs() -> None:
    (block,) = blocks("weekly-update.md", "sh")
    weekly = commands(block)
    (workflow_text,) = blocks("weekly-update.md", "yaml")
    workflow = yaml.safe_load(workflow_text)
    # YAML 1.1 (PyYAML) reads the key `on` as true; GitHub reads it as the name `on`.
    triggers = workflow["on"] if "on" in workflow else workflow[True]
    assert triggers["schedule"][0]["cron"].split() == ["17", "6", "*", "*", "1"]
    steps = workflow["jobs"]["update"]["steps"]
    runs = [step["run"].strip() for step in steps if "run" in step]
    # The install needs the network: the one step the test does not run. It is the README's, from
    # a clone: the crawler's repository checked out beside the site's, then `pip install` of it.
    install = next(index for index, step in enumerate(steps) if "run" in step)
    clone = steps[install - 1]
    assert clone["uses"].startswith("actions/checkout@") and clone["with"]["repository"]
    assert runs[0] == f"pip install ./{clone['with']['path']}"
    assert runs[1:] == weekly
    assert workflow["jobs"]["update"]["env"]["REPO"]
    # The pull request of the moved records comes right after the update, before check can stop the job.
    named = ["run: " + step["run"].strip() if "run" in step else step["uses"].split("@")[0] for step in steps]
    assert named.index("peter-evans/create-pull-request") == named.index("run: " + weekly[0]) + 1

    (crontab,) = blocks("weekly-update.md", "crontab")
    variable, line = commands(crontab)
    assert variable.startswith("REPO=")
    fields = line.split(None, 5)
    assert fields[:5] == ["17", "6", "*", "*", "1"]
    cd, *chained = fields[5].split(" && ")
    assert shlex.split(cd)[0] == "cd"
    assert chained == weekly


def record_files(site: Path) -> dict[str, Path]:
    return {path.stem: path for path in site.glob("catalogue/*/*/*/errors/*.yaml")}


def annotation_bytes(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index("\nannotation:\n"): text.index("\nhistory:\n")]


@pytest.fixture
def upstream(tmp_path: Path) -> GitRepo:
    """The repository the recipes catalogue: a message reworded between v0.9 and v1.0, then a
    commit on main after v1.0 (a line inserted above the annotated raise, and a new raise)."""
    repo = GitRepo(tmp_path / "lib")
    repo.write("mylib/__init__.py", "")
    ports = (
        "def parse_port(text):\n"
        "    if not text.isdigit():\n"
        "        raise ValueError(f'port must be a number, got {text!r}')\n"
        "    port = int(text)\n"
        "    if port > 65535:\n"
        "        raise ValueError(f'{WORDING}')\n"
        "    return port\n"
    )
    repo.write("mylib/ports.py", ports.replace("{WORDING}", "port {port} too big"))
    repo.write("mylib/hosts.py", "def parse_host(text):\n    if not text:\n"
                                 "        raise ValueError('host must not be empty')\n    return text\n")
    repo.commit("v0.9")
    repo.tag("v0.9")
    repo.write("mylib/ports.py", ports.replace("{WORDING}", "port {port} is out of range (0-65535)"))
    repo.commit("v1.0")
    repo.tag("v1.0")
    return repo


def move_upstream(repo: GitRepo) -> None:
    ports = repo.path / "mylib" / "ports.py"
    repo.write("mylib/ports.py", '"""Ports."""\n' + ports.read_text(encoding="utf-8"))
    repo.write("mylib/hosts.py", "def parse_host(text):\n    if not text:\n"
                                 "        raise ValueError('host must not be empty')\n"
                                 "    if ' ' in text:\n"
                                 "        raise ValueError(f'host {text!r} has a space in it')\n"
                                 "    return text\n")
    repo.commit("after v1.0")


def editor(tmp_path: Path) -> Path:
    """A program that does what the person of the annotating page does in the editor: writes the
    page's annotation in place of the record's `annotation:` block."""
    (annotation,) = blocks("annotating.md", "yaml")
    script = tmp_path / "editor"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"annotation = {annotation!r}\n"
        "path = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        "start, end = text.index('\\nannotation:\\n') + 1, text.index('\\nhistory:\\n') + 1\n"
        "open(path, 'w', encoding='utf-8').write(text[:start] + annotation + text[end:])\n",
        encoding="utf-8")
    script.chmod(0o755)
    return script


def run_page(page: str, site: Path, env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    """Every sh block of the page, each in bash with errexit, in the site folder."""
    done = []
    for block in blocks(page, "sh"):
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=site, env=env,
                                text=True, capture_output=True, timeout=120)
        said = result.stdout + result.stderr
        assert result.returncode == 0, f"{page}: {block!r} exited {result.returncode}:\n{said}"
        done.append(result)
    return done


@pytest.mark.slow  # about 15 crawler processes of about 1.1 s of CPU each (mostly imports)
def test_every_command_of_the_recipes_runs(tmp_path: Path, upstream: GitRepo) -> None:
    if CRAWLER is None or shutil.which("datasette") is None:
        pytest.skip("the installed crawler and datasette are needed (pip install -e '.[test]')")
    site = tmp_path / "site"
    site.mkdir()
    env = child_env(REPO=str(upstream.path), EDITOR=str(editor(tmp_path)))
    env["PATH"] = str(Path(CRAWLER).parent) + ":" + env["PATH"]

    # 1. catalogue at v1.0: three records, found by lookup, with the releases that print them.
    toml, extract, checked, history = run_page("catalogue.md", site, env)
    assert "3 records (3 added" in extract.stdout + extract.stderr
    records = record_files(site)
    assert len(records) == 3
    assert PASTE.split(": ")[1].split(", got")[0] in checked.stdout
    loaded = {key: yaml.safe_load(path.read_text(encoding="utf-8")) for key, path in records.items()}
    by_template = {doc["extracted"]["message"]["template"]: doc for doc in loaded.values()}
    assert by_template["port must be a number, got {text}"]["versions"] == {"first": "v0.9", "last": None}
    reworded = by_template["port {port} is out of range (0-65535)"]["history"]["templates"]
    assert [(t["template"], t["first"], t["last"]) for t in reworded] == [
        ("port {port} too big", "v0.9", "v0.9"), ("port {port} is out of range (0-65535)", "v1.0", None)]

    # 2. annotating: the page's annotation lands on the record lookup names; validate and check pass.
    run_page("annotating.md", site, env)
    (annotated,) = [path for path in record_files(site).values()
                    if "what_it_means: |" in path.read_text(encoding="utf-8")]
    doc = yaml.safe_load(annotated.read_text(encoding="utf-8"))
    assert doc["annotation"]["written_for"] == doc["extracted"]["message"]["template"]
    assert doc["extracted"]["function"] == "parse_port" and doc["extracted"]["line"] == 3
    kept = annotation_bytes(annotated)

    # 3. the weekly update to main: the new raise added, the annotated one moved a line down with
    # its annotation byte for byte, nothing stale left, the database written.
    move_upstream(upstream)
    (weekly,) = run_page("weekly-update.md", site, env)
    assert len(record_files(site)) == 4
    assert annotation_bytes(annotated) == kept
    assert yaml.safe_load(annotated.read_text(encoding="utf-8"))["extracted"]["line"] == 4
    stale = subprocess.run(["crawler", "update", str(upstream.path), "--commit", "main", "--check"],
                           cwd=site, env=env, text=True, capture_output=True, timeout=120)
    assert stale.returncode == 0, stale.stdout + stale.stderr
    assert "4 records exported" in weekly.stdout + weekly.stderr

    # 4. publishing: every export holds the four records, datasette serves them, lookup --db answers.
    database, served, folder, lines, lookup = run_page("publishing.md", site, env)
    with sqlite3.connect(site / "site" / "errors.db") as db:
        assert db.execute("select count(*) from pages").fetchone() == (4,)
        assert db.execute("select count(*) from pages where annotated").fetchone() == (1,)
    rows = json.loads(served.stdout)
    assert sorted(row["title"] for row in rows) == sorted(
        f"ValueError: {doc['extracted']['message']['template']}"
        for doc in map(yaml.safe_load, (p.read_text(encoding="utf-8") for p in record_files(site).values())))
    assert len(list((site / "site" / "data" / "errors").glob("*.json"))) == 4
    jsonl = (site / "site" / "errors.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum(1 for line in jsonl if json.loads(line).get("id") in record_files(site)) == 4
    assert "port must be a number, got {text}" in lookup.stdout


def test_no_page_installs_the_crawler_from_a_package_index() -> None:
    """The crawler is not published: `pip install raise-site-crawler` fails for a user. Every
    page installs it from a clone, as the README does (`pip install .` there)."""
    root = RECIPES.parent.parent
    from_an_index = re.compile(r"pip install (-\S+ )*['\"]?raise-site-crawler")
    found = [f"{page.relative_to(root)}: {match.group(0)}"
             for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
             for match in from_an_index.finditer(page.read_text(encoding="utf-8"))]
    assert found == []


def test_every_relative_link_of_the_readme_and_docs_names_a_file() -> None:
    """The measurement logs moved to docs/measurements/: no link of the README or a doc is left
    pointing at a file that is not there."""
    root = RECIPES.parent.parent
    broken = []
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = re.sub(r"`[^`]*`", "", FENCE.sub("", page.read_text(encoding="utf-8")))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(root)}: {target}")
    assert broken == []


@pytest.mark.parametrize(("change", "command", "said"), [
    # written_for left null once the slots are written: check lists the record.
    (("  written_for: 'port must be a number, got {text}'\n", "  written_for: null\n"),
     "check", "annotation.written_for is empty"),
    # every way out in one string: solutions is a list, and validate names the file.
    (("  solutions:\n"
      "  - Pass the number only, without the scheme or the host (`'8080'`, not `'http:8080'`).\n"
      "  - Strip the spaces around a value read from a file or the environment before passing it.\n",
      "  solutions: Pass the number only, without the scheme or the host; strip the spaces around it.\n"),
     "validate", "annotation.solutions: "),
    # slots that explain another error: naming another module's code, they are listed by check.
    (("", "  what_it_means: |\n    `parse_host` was given an empty `text`: a host needs a name.\n"
      "  solutions:\n  - Give `parse_host` the host's name.\n"
      "  when_it_happens: When `parse_host` is called with an empty `text`.\n"),
     "check", "annotation-mismatch"),
])
def test_the_bad_examples_of_the_annotating_page_are_caught_as_it_says(
        tmp_path: Path, upstream: GitRepo, change: tuple[str, str], command: str, said: str) -> None:
    from click.testing import CliRunner

    from crawler.cli.commands import main

    out = tmp_path / "out"
    extracted = CliRunner().invoke(main, ["extract", str(upstream.path), "--commit", "v1.0",
                                          "-o", str(out), "-j", "1", "-q", "--no-evidence"])
    assert extracted.exit_code == 0, extracted.output
    (annotation,) = blocks("annotating.md", "yaml")
    (record,) = [path for path in out.glob("*/*/*/errors/*.yaml")
                 if yaml.safe_load(path.read_text(encoding="utf-8"))["extracted"]["message"]["template"]
                 == "port must be a number, got {text}"]
    text = record.read_text(encoding="utf-8")
    start, end = text.index("\nannotation:\n") + 1, text.index("\nhistory:\n") + 1
    record.write_text(text[:start] + annotation + text[end:], encoding="utf-8")
    for name in ("check", "validate"):  # the page's annotation passes both
        assert CliRunner().invoke(main, [name, str(out)]).exit_code == 0
    old, new = change
    if not old:  # every slot after written_for
        old = annotation[annotation.index("  what_it_means:"):]
    assert annotation.count(old) == 1
    record.write_text(text[:start] + annotation.replace(old, new) + text[end:], encoding="utf-8")
    result = CliRunner().invoke(main, [command, str(out)])
    assert result.exit_code == 1 and said in result.output, result.output
