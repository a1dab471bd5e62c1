"""Every rule of the message reader on the real code it accepts and rejects: one harness.

`crawler/parse/message/rule_examples.yaml` keeps, for each rule id of `rules.RULES`, snippets
copied from libraries of the corpus's working half (each cites `owner/repo path:line` at the
pinned commit of docs/corpus.md). An accepted snippet is read by the real visitor under a
trace: its templates are exactly the ones written, and the rule is among those its raise went
through. A rejected one is `dynamic` for the reason written, or gives the templates written
without the rule among those its raises went through. A snippet is the function around the raise
(its other raises too: a `dynamic` site is written as null), or lines of it, as they are.

The rules of the repository-wide passes (`call.other-module`, `call.callers`, `class.*`) need
every module at hand: each one's snippets (`files`) are written into a git repository of their
own, extracted by the installed `crawler`, and each record's rules read the way
`scripts/rule_use.py` reads them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from crawler.parse.message import rules
from crawler.parse.visitor import find_raise_sites
from scripts import rule_use
from tests.helpers.gitrepo import GitRepo

EXAMPLES: dict[str, dict[str, Any]] = yaml.safe_load(
    (Path(rules.__file__).parent / "rule_examples.yaml").read_text(encoding="utf-8"))


def _cases(catalogue: bool) -> Iterator[Any]:
    for rule, sides in EXAMPLES.items():
        for side in ("accepts", "rejects"):
            for index, example in enumerate(sides.get(side) or []):
                if ("files" in example) is catalogue:
                    yield pytest.param(rule, side, example, id=f"{rule}:{side}:{index}")


def _checked(rule: str, side: str, example: dict[str, Any],
             templates: list[str | None], reasons: list[str | None], used: set[str]) -> None:
    """`templates`: each site's, None for a `dynamic` one; `used`: the rules the raises noted."""
    if "dynamic" in example:  # rejected: every site `dynamic`, for the reason written
        assert side == "rejects"
        assert templates and all(t is None for t in templates), templates
        assert reasons == [example["dynamic"]] * len(reasons)
        return
    assert templates == example["templates"]
    if side == "accepts":
        assert rule in used, sorted(used)
    else:
        assert rule not in used, sorted(used)


@pytest.mark.parametrize(("rule", "side", "example"), list(_cases(catalogue=False)))
def test_a_rule_reads_its_examples_as_written(rule: str, side: str,
                                              example: dict[str, Any]) -> None:
    source = example["code"].encode()
    with rules.tracing() as traced:
        found = find_raise_sites("example.py", source, "example")
    used = set().union(*(noted for line, noted in traced if line))
    sites = found.sites
    templates = [None if s.message.kind == "dynamic" else s.message.template for s in sites]
    _checked(rule, side, example, templates, [s.message.reason for s in sites], used)


def _extracted(base: Path, files: dict[str, str]) -> dict[str, list[tuple[dict, set[str]]]]:
    """The records of a repository holding `files`, by path, each with the rules it used."""
    repo = GitRepo(base / "repo")
    for path, code in files.items():
        repo.write(path, code)
    commit = repo.commit("example")
    out = base / "out"
    subprocess.run([Path(sys.executable).parent / "crawler", "extract", str(repo.path),
                    "--commit", commit, "-o", str(out), "-j", "1", "--no-evidence"],
                   check=True, capture_output=True)
    folder = next(out.rglob("manifest.yaml")).parent
    records = {r["id"]: r for r in (yaml.safe_load(p.read_text(encoding="utf-8"))
                                    for p in folder.glob("errors/*.yaml"))}
    by_path: dict[str, list[tuple[dict, set[str]]]] = {}
    for record_id, used in rule_use.library_use(repo.path, commit, out):
        record = records[record_id]
        by_path.setdefault(record["extracted"]["path"], []).append((record, used))
    return by_path


@pytest.mark.parametrize(("rule", "side", "example"), list(_cases(catalogue=True)))
def test_a_repository_wide_rule_reads_its_examples_as_written(
        rule: str, side: str, example: dict[str, Any], tmp_path: Path) -> None:
    found = sorted(_extracted(tmp_path, example["files"])[example["raise_in"]],
                   key=lambda r: r[0]["extracted"]["line"])
    messages = [record["extracted"]["message"] for record, _ in found]
    templates = [None if m["kind"] == "dynamic" else m["template"] for m in messages]
    used = set().union(*(rules_used for _, rules_used in found))
    _checked(rule, side, example, templates, [m.get("reason") for m in messages], used)


def test_every_rule_has_an_accepted_and_a_rejected_example() -> None:
    """Both, or the rule says (`none_found`) where no real one was found and how it was looked
    for: a rule the corpus never rejects (or never uses) is listed, not given a made-up one."""
    assert sorted(EXAMPLES) == sorted(rules.RULES)
    missing = [f"{rule}: {side}" for rule in rules.RULES for side in ("accepts", "rejects")
               if not EXAMPLES[rule].get(side)]
    declared = [f"{rule}: {side}" for rule in rules.RULES
                for side in (EXAMPLES[rule].get("none_found") or {})]
    assert missing == declared
    assert all(str(note).strip() for rule in rules.RULES
               for note in (EXAMPLES[rule].get("none_found") or {}).values())


CITATION = re.compile(r"(?:[\w.-]+/[\w.-]+|this repository at [0-9a-f]{7}) \S+:\d+")


def test_every_example_cites_where_it_was_copied_from() -> None:
    uncited = [f"{rule}:{side}:{index}" for rule, sides in EXAMPLES.items()
               for side in ("accepts", "rejects")
               for index, example in enumerate(sides.get(side) or [])
               if not CITATION.fullmatch(str(example.get("from", "")))]
    assert uncited == []
