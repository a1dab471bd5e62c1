"""How many records and how many libraries use each rule of the message reader.

    python scripts/rule_use.py LIST ROOT [--only A,B] [--json OUT]

LIST is `scripts/produce_outputs.py`'s (`NAME PATH COMMIT [IDENTITY]` a line) and ROOT the
output root it wrote (one folder a library). For each library, each file that has records is
read once more at COMMIT (`git show`) by the real visitor, in this process, under
`crawler.parse.message.rules.tracing`: each raise statement's reading notes the rules it went
through. A record takes the rules of the raise statement at its line (its file and line). Two
rules are read off the record instead, since the repository-wide class pass composes them:

- a message composed by a class (`composed_by` names the method): `class.init-message` for an
  `__init__`, else `class.str-method` (the rules of the class's own text, read with the class
  statement, are not counted for it);
- a raise that passes no text of its own (`argument` null) and takes its class's template: the
  rule the manifest's `template_from` names (`init`: `class.init-message`, `attribute`:
  `class.default-message`).

Two more are read off the record, for the repository-wide passes that complete a worker's
reading: `call.other-module` when a function it went through (`via`) is of another module
(`crawler.catalogue.factories`), `call.callers` when its text is written elsewhere (`defined_at`:
another file, or a line the raise statement's own reading noted no rule for) and neither a
function nor a class composed it (`crawler.catalogue.callers`: the text a caller passes).

A record read as `dynamic` is counted under `dynamic` (no rule gave its text), and a record of
another kind that no rule was noted for under `(none)`: both are printed, so that a gap shows.
The table printed is Markdown: rule, records, libraries, and the libraries when fewer than two.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

from crawler.parse.message.rules import RULES, tracing
from crawler.parse.module_names import module_name
from crawler.parse.python_ast import ast_parse
from crawler.parse.visitor import find_raise_sites

CLASS_ORIGIN = {"init": "class.init-message", "attribute": "class.default-message"}


def _load(path: Path) -> dict:
    with path.open("rb") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


def _inputs(listing: Path) -> list[tuple[str, Path, str]]:
    rows = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, path, commit = line.split()[:3]
            rows.append((name, Path(path), commit))
    return rows


def _traced_lines(repository: Path, commit: str, path: str) -> dict[int, set[str]]:
    """The rules each raise statement of the file at `commit` used, by its line."""
    data = subprocess.run(["git", "-C", str(repository), "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout
    by_line: dict[int, set[str]] = defaultdict(set)
    with tracing() as traced:
        find_raise_sites(path, data, module_name(path), None, ast_parse(data))
    for line, used in traced:
        if line:
            by_line[line] |= used
    return by_line


def library_use(repository: Path, commit: str, folder: Path) -> list[tuple[str, set[str]]]:
    """Each record of one extracted library (its id) and the rules its message used."""
    manifests = list(folder.rglob("manifest.yaml"))
    if len(manifests) != 1:
        raise SystemExit(f"rule_use: {folder}: expected one manifest, found {len(manifests)}")
    manifest = _load(manifests[0])
    origin = {c["qualname"]: c.get("template_from") for c in manifest.get("exception_classes") or []}
    records = [_load(p) for p in sorted(manifests[0].parent.glob("errors/*.yaml"))]
    records = [r for r in records if r.get("status") != "removed"]
    traced: dict[str, dict[int, set[str]]] = {}
    used: list[tuple[str, set[str]]] = []
    for record in records:
        extracted, message = record["extracted"], record["extracted"]["message"]
        if message["kind"] == "dynamic":
            used.append((record["id"], {"dynamic"}))
            continue
        path = extracted["path"]
        if path not in traced:
            traced[path] = _traced_lines(repository, commit, path)
        rules = set(traced[path].get(extracted["line"], ()))
        composed, via = message.get("composed_by"), message.get("via")
        own = module_name(path) + "."
        if via and not all(name.startswith(own) for name in via.split(", ")):
            rules.add("call.other-module")  # `crawler.catalogue.factories` followed it
        elif not via and not composed and message.get("defined_at") \
                and (message["defined_at"].rsplit(":", 1)[0] != path or not rules):
            rules.add("call.callers")  # `crawler.catalogue.callers`: a caller's text
        if composed:
            rules.add("class.init-message" if composed.endswith(".__init__")
                      else "class.str-method")
        elif message.get("argument") is None:
            rule = CLASS_ORIGIN.get(origin.get(extracted.get("exception_qualname") or "") or "")
            if rule is not None:
                rules.add(rule)
        used.append((record["id"], rules or {"(none)"}))
    return used


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("list", type=Path)
    parser.add_argument("root", type=Path)
    parser.add_argument("--only", default="", help="these names of the list only")
    parser.add_argument("--json", type=Path, help="write the counts here too")
    args = parser.parse_args(argv)
    only = {name for name in args.only.split(",") if name}
    records: Counter[str] = Counter()
    libraries: dict[str, set[str]] = defaultdict(set)
    totals: dict[str, int] = {}
    for name, repository, commit in _inputs(args.list):
        if only and name not in only:
            continue
        use = library_use(repository, commit, args.root / name)
        totals[name] = len(use)
        for _, rules in use:
            for rule in rules:
                records[rule] += 1
                libraries[rule].add(name)
        print(f"{name}: {len(use)} records", file=sys.stderr)
    print(f"{sum(totals.values())} records of {len(totals)} libraries\n")
    print("| rule | records | libraries | used by (fewer than two) |")
    print("| --- | ---: | ---: | --- |")
    for rule in [*RULES, "dynamic", "(none)"]:
        users = sorted(libraries.get(rule, ()))
        few = ", ".join(users) if len(users) < 2 else ""
        print(f"| `{rule}` | {records[rule]} | {len(users)} | {few} |")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "libraries": totals,
            "rules": {rule: {"records": records[rule], "libraries": sorted(libraries[rule])}
                      for rule in [*RULES, "dynamic", "(none)"]}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
