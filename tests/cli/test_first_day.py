"""Issue 45, what a newcomer hit on the first day: `check` on a record in review with nothing
to review, `update --check -q`, where `validate` and `check` print, `history --since`, the
identity `update` reads from the manifest."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import CliRunner

from crawler.cli.commands import main
from tests.helpers.gitrepo import GitRepo


def run(*args: str | Path) -> tuple[int, str, str]:
    """The command through click's runner: exit code, stdout and stderr apart."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.stdout, result.stderr


def reworded(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> tuple[GitRepo, Path, Path]:
    """A repository extracted, then its one message reworded and committed (not updated):
    the repository, the output root and the record's file."""
    repo = make_repo("lib")
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n")
    repo.commit("first")
    out = tmp_path / "out"
    assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no data set {name!r}')\n")
    repo.commit("reworded")
    [record] = out.rglob("errors/*.yaml")
    return repo, out, record


def test_a_record_in_review_without_an_annotation_is_not_listed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A reworded record is needs_review; with no annotation there is nothing to look at, so
    `check` does not list it and exits 0. Annotated, the same record is listed (exit 1)."""
    repo, out, record = reworded(make_repo, tmp_path)
    assert run("update", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    assert yaml.safe_load(record.read_text(encoding="utf-8"))["status"] == "needs_review"
    code, stdout, stderr = run("check", out)
    assert (code, stderr) == (0, ""), stdout
    assert "0 to review" in stdout and "needs_review" not in stdout
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("  what_it_means: null\n",
                                   "  what_it_means: The dataset is not in the registry.\n", 1),
                      encoding="utf-8")
    code, stdout, _ = run("check", out)
    assert code == 1 and f"{record}: needs_review: the message changed" in stdout, stdout


def test_update_check_quiet_says_the_folder_is_stale(make_repo: Callable[[str], GitRepo],
                                                      tmp_path: Path) -> None:
    """`-q` leaves out the summary, never the finding: a stale folder is one line on stdout
    (it printed nothing, exit 1); an up-to-date one prints nothing."""
    repo, out, _ = reworded(make_repo, tmp_path)
    code, stdout, stderr = run("update", repo.path, "-o", out, "--check", "-q", "-j", "1",
                               "--no-evidence")
    assert (code, stdout, stderr) == (1, "stale: 2 files would change\n", ""), (stdout, stderr)
    assert run("update", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    assert run("update", repo.path, "-o", out, "--check", "-q", "-j", "1",
               "--no-evidence") == (0, "", "")


def test_validate_and_check_print_what_they_find_on_stdout(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """One convention, ruff's: a command's findings are its output, on stdout, with -q too;
    stderr is for errors that stop it. validate printed its problems on stderr, check its
    findings on stdout and its unreadable files on stderr."""
    repo = make_repo("lib")
    repo.write("lib/core.py", "def load(name):\n    raise KeyError(f'no dataset {name!r}')\n")
    repo.commit("first")
    out = tmp_path / "out"
    assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    [record] = out.rglob("errors/*.yaml")
    record.write_text(record.read_text(encoding="utf-8").replace("status: active", "status: lost"),
                      encoding="utf-8")
    for command in ("validate", "check"):
        for quiet in ((), ("-q",)):
            code, stdout, stderr = run(command, out, *quiet)
            assert (code, stderr) == (1, ""), (command, stdout, stderr)
            assert f"{record}:" in stdout and "status" in stdout, (command, stdout)


def tagged(make_repo: Callable[[str], GitRepo], releases: int) -> tuple[GitRepo, dict[str, str]]:
    """A library with a release tag per version, one raise more in each: the tags' commits."""
    repo = make_repo("lib")
    commits = {}
    for number in range(1, releases + 1):
        repo.write(f"lib/m{number}.py", f"def f{number}(x):\n    raise ValueError(f'bad {number} {{x}}')\n")
        commits[f"v{number}.0"] = repo.commit(f"release {number}")
        repo.tag(f"v{number}.0")
    repo.write("lib/after.py", "def g(x):\n    raise KeyError(f'no key {x}')\n")
    repo.commit("after the last release")
    return repo, commits


def test_history_since_lists_the_tags_it_walks_not_every_one_before(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """Tags before --since are left out in one line, with their count, the first and the last
    (the web framework's were 63 lines, one a tag); --json still lists each."""
    repo, _ = tagged(make_repo, 6)
    out = tmp_path / "out"
    code, stdout, stderr = run("history", repo.path, "--tags", "v*", "--since", "v5.0", "-o", out,
                               "-j", "1", "--no-evidence")
    assert code == 0, (stdout, stderr)
    steps = stderr.splitlines()  # one line a step: the two tags, then the commit after them
    assert [step.split(" ")[1] for step in steps] == ["v5.0", "v6.0", "HEAD"], steps
    assert stdout.splitlines()[0] == ("left out 4 tags (v1.0 to v4.0): before v5.0, where the "
                                      "walk starts"), stdout
    assert stdout.splitlines()[1].startswith("2 release tags walked in version order, v5.0 to v6.0")
    done = CliRunner().invoke(main, ["history", str(repo.path), "--tags", "v*", "--since", "v5.0",
                                     "-o", str(tmp_path / "again"), "-j", "1", "--no-evidence",
                                     "--json"])
    assert [item["tag"] for item in json.loads(done.stdout)["ignored"]] == [
        "v1.0", "v2.0", "v3.0", "v4.0"]


def test_a_walk_over_an_extracts_folder_dates_first_seen_by_the_first_release(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`extract` at the newest commit, then `history`: each record's history.first_seen is the
    commit of its first release (versions.first), as a walk from nothing gives; it stayed the
    extract's commit. The record of no release keeps the commit where it was first seen."""
    repo, commits = tagged(make_repo, 3)
    head = repo.head()
    walked = {}
    for name, first in (("extracted", True), ("walked", False)):
        out = tmp_path / name
        if first:
            assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
        code, stdout, stderr = run("history", repo.path, "--tags", "v*", "-o", out, "-q", "-j",
                                   "1", "--no-evidence")
        assert code == 0, (stdout, stderr)
        records = [yaml.safe_load(path.read_text(encoding="utf-8"))
                   for path in sorted(out.rglob("errors/*.yaml"))]
        seen = {r["extracted"]["qualname"]: (r["versions"]["first"] if r.get("versions") else None,
                                             r["history"]["first_seen"]) for r in records}
        walked[name] = seen
    assert walked["extracted"] == walked["walked"], walked
    assert walked["walked"] == {"f1": ("v1.0", commits["v1.0"]), "f2": ("v2.0", commits["v2.0"]),
                                "f3": ("v3.0", commits["v3.0"]), "g": (None, head)}, walked


def test_update_reads_the_identity_extract_was_given_from_the_manifest(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`extract --name` and `--web-url`, then `update SOURCE` alone: the records in that folder
    move on, their permalinks still the web page's (update looked for the folder the source
    alone names and said to run extract first). An option that names another identity: one
    line, exit 1, nothing written."""
    repo, out, _ = reworded(make_repo, tmp_path)
    named = tmp_path / "named"
    web = "https://git.example.org/acme/lib"
    code, stdout, stderr = run("extract", repo.path, "-o", named, "-q", "-j", "1",
                               "--no-evidence", "--commit", "HEAD~1", "--web-url", web)
    assert code == 0, (stdout, stderr)
    [record] = named.rglob("errors/*.yaml")
    assert record.parent.parent == named / "git.example.org" / "acme" / "lib"
    before = {path: path.read_bytes() for path in named.rglob("*") if path.is_file()}
    code, stdout, stderr = run("update", repo.path, "-o", named, "-q", "-j", "1", "--no-evidence",
                               "--name", "acme/other")
    assert code == 1 and len(stderr.splitlines()) == 1, (stdout, stderr)
    assert f"records are in {record.parent.parent} (identity git.example.org/acme/lib, {web})" \
        in stderr, stderr
    assert {path: path.read_bytes() for path in named.rglob("*") if path.is_file()} == before
    code, stdout, stderr = run("update", repo.path, "-o", named, "-q", "-j", "1", "--no-evidence")
    assert (code, stderr) == (0, ""), (stdout, stderr)
    data = yaml.safe_load(record.read_text(encoding="utf-8"))
    assert data["extracted"]["message"]["template"] == "no data set {name}"
    assert data["extracted"]["url"].startswith(f"{web}/-/blob/"), data["extracted"]["url"]
    assert sorted(path.name for path in named.iterdir()) == ["git.example.org"]


def test_the_shell_completion_the_readme_gives_completes_commands(tmp_path: Path) -> None:
    """The README's lines for each shell print a script, and bash's completes `crawler ex`."""
    for shell in ("bash", "zsh", "fish"):
        env = {**os.environ, "_CRAWLER_COMPLETE": f"{shell}_source"}
        script = subprocess.run(["crawler"], env=env, capture_output=True, text=True, timeout=60)
        assert script.returncode == 0 and "_CRAWLER_COMPLETE" in script.stdout, script
    env = {**os.environ, "_CRAWLER_COMPLETE": "bash_complete", "COMP_WORDS": "crawler ex",
           "COMP_CWORD": "1"}
    done = subprocess.run(["crawler"], env=env, capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.stdout.split() == ["plain,export", "plain,extract"], done


def test_the_schema_gives_each_annotation_slot_a_description_and_its_items_a_type(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A newcomer learnt from `validate` that solutions is a list: the schema says what goes in
    each slot, and what an item of a list slot is (a text, or an object for a structured one:
    every annotation valid before stays valid). A number as an item is named by validate."""
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "record.schema.json")
                        .read_text(encoding="utf-8"))
    slots = schema["properties"]["annotation"]["properties"]
    assert all(slot.get("description") for slot in slots.values()), slots
    for name in ("solutions", "defensive_patterns", "prevention", "related"):
        assert slots[name]["items"]["type"] == ["string", "object"], name
        assert slots[name]["items"]["description"], name
    _, out, record = reworded(make_repo, tmp_path)
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("  solutions: []\n", "  solutions:\n  - Give a known name.\n"
                                   "  - text: Or list them first.\n    code: names()\n", 1),
                      encoding="utf-8")
    assert run("validate", out)[0] == 0
    record.write_text(text.replace("  solutions: []\n", "  solutions:\n  - 3\n", 1), encoding="utf-8")
    code, stdout, _ = run("validate", out)
    assert code == 1 and f"{record}:" in stdout and "annotation.solutions" in stdout, stdout


def test_what_the_docs_say_of_identity_index_and_lookup_is_what_happens(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """Issue 45's contradictions, as behaviour: the default identity of a local repository is
    its folder name with other characters than [A-Za-z0-9._-] made `-` (README); extract makes
    the lookup index (lookup_index's docstring said it never did); a record that breaks the
    schema is answered from, exit 0, and one that is no YAML is named, exit 1 (lookup --help
    said any record that cannot be read gave 1)."""
    repo = make_repo("my clöne")
    repo.write("m.py", "def f(x):\n    raise ValueError(f'bad widget size {x}')\n")
    repo.commit("first")
    out = tmp_path / "out"
    assert run("extract", repo.path, "-o", out, "-q", "-j", "1", "--no-evidence")[0] == 0
    [folder] = [path.parent for path in out.rglob("manifest.yaml")]
    assert folder.name == "my-cl-ne" and folder.parent.parent.name == "local", folder
    assert (folder / "lookup.sqlite").is_file()
    help_text = " ".join(run("lookup", "--help")[1].split())
    assert "A record that reads but breaks the schema answers as it is" in help_text, help_text
    [record] = folder.glob("errors/*.yaml")
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("  line: 2\n", "  line: two\n", 1), encoding="utf-8")
    code, stdout, _ = run("lookup", "ValueError: bad widget size 3", out)
    assert code == 0 and "m.py:two" in stdout, stdout
    record.write_text(text.replace("status: active", "status: [oops", 1), encoding="utf-8")
    code, _, stderr = run("lookup", "ValueError: bad widget size 3", out)
    assert code == 1 and f"skipped: {record}:" in stderr, stderr


def test_update_never_takes_another_repositorys_folder_by_the_source_as_typed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """Two repositories extracted as `.` from their own folders into one output root, one under
    --name: `update .` of the other, which has no folder, says to run extract first, and the
    named folder's records are left as they are (the source `.` names no repository)."""
    first, second = make_repo("first"), make_repo("second")
    for repo, text in ((first, "no dataset"), (second, "no table")):
        repo.write("m.py", f"def f(x):\n    raise KeyError(f'{text} {{x}}')\n")
        repo.commit("one")
    out = tmp_path / "out"
    assert crawler_in(first.path, "extract", ".", "-o", out, "--name", "acme/first").returncode == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    done = crawler_in(second.path, "update", ".", "-o", out)
    assert done.returncode == 1 and "run `crawler extract` first" in done.stderr, done
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def crawler_in(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crawler", *map(str, args), "-q", "-j", "1", "--no-evidence"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
