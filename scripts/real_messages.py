"""Check records against the messages their raises really print: does each regex fullmatch `str(exc)`?

Given an output folder and the source tree it was extracted from (the same commit), each record's
real message is evaluated in two ways, and its regex must fullmatch it:

  a. construct: the record's module is imported from the source tree, and the raise's own
     exception expression is evaluated with a stand-in value for each name the function binds
     (`Sample`: its text is the name, and it answers attributes, calls and arithmetic with more
     stand-ins); a message held in a local (`variable`, `dynamic`) is the record's template with
     each placeholder's expression as its value. What the class does to the text (`__init__`,
     `__str__`, KeyError's repr) is then really run.
  b. trace: the project's own tests run under a trace hook on the source tree's frames alone
     (`sys.settrace`, line events off), which notes where each exception is first raised (file,
     line, class, `str(exc)`); an exception raised on a record's lines, of its class, is checked.

Each way runs in a child process (with a time limit) so that imports and tests cannot touch the
check itself. Printed per repository: records, sites evaluated by each way, matched, mismatched
(each with path:line, template and the real message), kinds; the mismatches go to a JSON-lines
file. With --before, the same source's records by an earlier crawler are compared: `dynamic`
counts and the records whose template changed, with examples.

    PYTHONPATH=. python scripts/real_messages.py OUTPUT/local/local/click --source /tmp/click \\
        --import-root src --pytest tests --mismatches mismatches.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from real_messages_ways import MESSAGE_CHARS, SKIPPED_MODULES, Site

WAYS = Path(__file__).resolve().with_name("real_messages_ways.py")


def sites_of(folder: Path) -> tuple[list[Site], collections.Counter[str]]:
    """The folder's active records as Sites, and the count of records by message kind."""
    from crawler.serve.lookup.sources import load_records

    records, problems = load_records(folder)
    for problem in problems:
        print(f"skipped: {problem}", file=sys.stderr)
    kinds: collections.Counter[str] = collections.Counter(r.site.message.kind for r in records)
    sites = [_site(r.id, r.site) for r in records if r.status != "removed"]
    return sorted(sites, key=lambda s: (s.path, s.line, s.id)), kinds


def _site(record_id: str, site: Any) -> Site:
    from crawler.parse.message.templates import pieces_of

    message = site.message
    pieces = pieces_of(message)
    filled = None if pieces is None else "".join(p.text or "x" if p.is_placeholder else p.text
                                                 for p in pieces)
    return Site(record_id, site.path, site.line, site.end_line, site.exception, site.factory,
                message.kind, message.template, message.regex, message.argument,
                message.composed_by is not None or message.kind == "class_default", filled,
                message.not_followed is not None or message.reason is not None,
                pieces is not None and not any(p.text for p in pieces if not p.is_placeholder))


def _child(args: list[str], cwd: Path, timeout: float, python: str) -> None:
    command = [python, str(WAYS), *args]
    try:
        subprocess.run(command, cwd=cwd, timeout=timeout, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"stopped after {timeout:.0f} s: {' '.join(args[:1])}", file=sys.stderr)


@dataclass(frozen=True)
class Mismatch:
    """One real message its record's regex does not fullmatch."""

    way: str
    id: str
    path: str
    line: int
    exception: str
    kind: str
    template: str
    regex: str
    message: str
    declared: bool  # the record says it was not followed: a mismatch it warns of


def by_construction(sites: list[Site], results: list[dict[str, Any]]
                    ) -> tuple[int, set[str], list[Mismatch], collections.Counter[str]]:
    """(evaluated, the sites matched, mismatches, why the others were not evaluated). A raise whose message
    has alternatives (`ngettext`, `a if c else b`) is one record per alternative: the message one
    sample gives matches when any of them does."""
    known = {s.id: s for s in sites}
    alternatives: dict[tuple[str, int, int, str], list[Site]] = collections.defaultdict(list)
    for site in sites:
        alternatives[_raise_of(site)].append(site)
    evaluated = 0
    matched: set[str] = set()
    mismatches: list[Mismatch] = []
    why: collections.Counter[str] = collections.Counter()
    for result in results:
        site = known[result["id"]]
        if result["status"] != "message":
            why[re.sub(r"'[^']*'|\d+", "_", result["text"])[:90]] += 1
            continue
        evaluated += 1
        if any(re.fullmatch(s.regex, result["text"]) for s in alternatives[_raise_of(site)]):
            matched.add(site.id)
        else:
            mismatches.append(_mismatch("construct", site, result["text"]))
    return evaluated, matched, mismatches, why


def _raise_of(site: Site) -> tuple[str, int, int, str]:
    return site.path, site.line, site.end_line, site.exception


def by_trace(sites: list[Site], events: list[dict[str, Any]]
             ) -> tuple[int, int, set[str], list[Mismatch]]:
    """(sites evaluated, distinct messages, the sites matched, mismatches) from the traced
    raises."""
    at: dict[tuple[str, int], list[Site]] = collections.defaultdict(list)
    for site in sites:
        for line in range(site.line, site.end_line + 1):
            at[(site.path, line)].append(site)
    evaluated: set[str] = set()
    failed: set[str] = set()
    mismatches: list[Mismatch] = []
    messages = 0
    for event in events:
        candidates = [s for s in at.get((event["path"], event["line"]), [])
                      if _same_class(s, event["classes"])]
        if not candidates or len(event["text"]) >= MESSAGE_CHARS:
            continue
        messages += 1
        hit = next((s for s in candidates if re.fullmatch(s.regex, event["text"])), None)
        if hit is not None:
            evaluated.add(hit.id)
            continue
        for site in candidates:
            evaluated.add(site.id)
            failed.add(site.id)
            mismatches.append(_mismatch("trace", site, event["text"]))
    return len(evaluated), messages, evaluated - failed, mismatches


def _same_class(site: Site, classes: list[str]) -> bool:
    name = site.exception.rpartition(".")[2]
    claims = not site.factory and name[:1].isupper() and name.isidentifier()
    return not claims or name in classes


def _mismatch(way: str, site: Site, message: str) -> Mismatch:
    return Mismatch(way, site.id, site.path, site.line, site.exception, site.kind, site.template,
                    site.regex, message, site.declared)


def compare(before: Path, after: Path, examples: int) -> list[str]:
    """Lines on what an earlier crawler made of the same source: dynamic counts, changed templates."""
    from crawler.serve.lookup.sources import load_records

    old_records, new_records = load_records(before)[0], load_records(after)[0]
    old, new = _by_raise(old_records), _by_raise(new_records)
    changed = [(old[k], new[k]) for k in sorted(old.keys() & new.keys())
               if [s.message.template for s in old[k]] != [s.message.template for s in new[k]]]
    kinds = collections.Counter(f"{o[0].message.kind}->{n[0].message.kind}" for o, n in changed)
    lines = [f"dynamic records: before {_count(old_records, 'dynamic')}, "
             f"after {_count(new_records, 'dynamic')}",
             f"records: before {len(old_records)}, after {len(new_records)}; raises at the same "
             f"place {len(old.keys() & new.keys())}",
             f"raises whose templates changed: {len(changed)} "
             f"({', '.join(f'{k} {n}' for k, n in kinds.most_common())})"]
    step = max(1, len(changed) // max(1, examples))
    for was, now in changed[::step][:examples]:
        lines.append(f"  {now[0].path}:{now[0].line} {now[0].exception}")
        lines.extend(f"    before {s.message.kind}: {s.message.template!r}" for s in was)
        lines.extend(f"    after  {s.message.kind}: {s.message.template!r}"
                     + (f" (composed_by {s.message.composed_by})" if s.message.composed_by
                        else "") for s in now)
    return lines


def _by_raise(records: list[Any]) -> dict[tuple[str, int, str], list[Any]]:
    """Each raise's sites (one per alternative of its message), by path, line and exception."""
    raises: dict[tuple[str, int, str], list[Any]] = collections.defaultdict(list)
    for record in sorted(records, key=lambda r: r.site.message.template):
        raises[(record.site.path, record.site.line, record.site.exception)].append(record.site)
    return raises


def _count(records: list[Any], kind: str) -> int:
    return sum(1 for r in records if r.site.message.kind == kind)


def check(options: argparse.Namespace) -> int:
    folder, source = options.folder.resolve(), options.source.resolve()
    import_root = (source / options.import_root).resolve()
    if not (folder / "manifest.yaml").is_file() or not source.is_dir():
        print(f"{options.folder}: not a repository's output folder, or {options.source} is no "
              "folder; give the folder that holds manifest.yaml and the tree it was made from",
              file=sys.stderr)
        return 2
    sites, kinds = sites_of(folder)
    total = sum(kinds.values())
    print(f"{folder.name}: {total} records; kinds: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    mismatches: list[Mismatch] = []
    with tempfile.TemporaryDirectory(prefix="real-messages-") as work:
        scratch = Path(work)
        given = scratch / "sites.json"
        given.write_text(json.dumps([asdict(s) for s in sites]), encoding="utf-8")
        if not options.no_construct:
            mismatches += _construct_way(sites, given, source, import_root, scratch, options)
        if options.pytest is not None or options.unittest is not None:
            mismatches += _trace_way(sites, given, source, import_root, scratch, options)
    if options.mismatches is not None:
        options.mismatches.write_text("".join(json.dumps(asdict(m)) + "\n" for m in mismatches),
                                      encoding="utf-8")
    for m in sorted(mismatches, key=lambda m: (m.declared, m.way, m.path, m.line)):
        flag = " (says not followed)" if m.declared else ""
        print(f"  {m.way}{flag} {m.path}:{m.line} {m.exception} ({m.kind}) {m.template!r}\n"
              f"      real: {m.message[:300]!r}")
    if options.before is not None:
        print("\n".join(compare(options.before.resolve(), folder, options.examples)))
    return 0


def _construct_way(sites: list[Site], given: Path, source: Path, import_root: Path,
                   scratch: Path, options: argparse.Namespace) -> list[Mismatch]:
    out = scratch / "constructed.json"
    _child(["construct", str(given), str(source), str(import_root), str(out),
            ",".join(options.skip_module)], scratch, options.timeout, options.python)
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    evaluated, matched, mismatches, why = by_construction(sites, results)
    print(f"  a. construct: evaluated {evaluated} of {len(results)}, "
          f"matched {_matched(matched, sites)}, "
          f"mismatched {_split(mismatches)}")
    for reason, count in why.most_common(options.reasons):
        print(f"       not evaluated {count}: {reason}")
    return mismatches


def _trace_way(sites: list[Site], given: Path, source: Path, import_root: Path, scratch: Path,
               options: argparse.Namespace) -> list[Mismatch]:
    out = scratch / "traced.json"
    runner, args = ("pytest", options.pytest) if options.pytest is not None \
        else ("unittest", options.unittest)
    cwd = source if runner == "pytest" else scratch
    _child(["trace", str(given), str(source), str(import_root), str(out), runner,
            *shlex.split(args)],
           cwd, options.timeout, options.python)
    events = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    evaluated, messages, matched, mismatches = by_trace(sites, events)
    print(f"  b. trace ({runner} {args}): evaluated {evaluated} sites with {messages} "
          f"distinct messages, matched {_matched(matched, sites)}, "
          f"mismatched {_split(mismatches)}")
    return mismatches


def _matched(ids: set[str], sites: list[Site]) -> str:
    """Matched sites, and how many of them by a regex that matches any text."""
    textless = sum(1 for s in sites if s.id in ids and s.textless)
    return f"{len(ids)} ({textless} with no text of their own)"


def _split(mismatches: list[Mismatch]) -> str:
    """Mismatched sites, and how many of them say they were not followed."""
    sites = {m.id: m.declared for m in mismatches}
    declared = sum(sites.values())
    return f"{len(sites)} ({len(sites) - declared} unflagged, {declared} say not followed)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the repository's output folder")
    parser.add_argument("--source", type=Path, required=True,
                        help="the source tree the folder was extracted from")
    parser.add_argument("--import-root", default=".",
                        help="the folder of the source tree that goes on sys.path (src)")
    parser.add_argument("--pytest", help="way b: pytest's arguments, run in the source tree "
                        "(split as a shell would: -k 'error or raise')")
    parser.add_argument("--unittest", help="way b: test module names, run with unittest")
    parser.add_argument("--no-construct", action="store_true", help="skip way a")
    parser.add_argument("--skip-module", action="append", default=list(SKIPPED_MODULES))
    parser.add_argument("--mismatches", type=Path, help="write the mismatches here (JSON lines)")
    parser.add_argument("--before", type=Path,
                        help="the same source's output folder by an earlier crawler")
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--reasons", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the ways run in: one with the project's "
                        "dependencies (a virtualenv's python)")
    return check(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
