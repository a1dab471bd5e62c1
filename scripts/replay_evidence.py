"""Replay weekly steps of a repository's history with test evidence on: at each step the updated
folder is compared with a fresh extract of the same commit, and each record file the update
rewrote with the facts the fresh extracts give it before and after.

Step 0 extracts the first week's commit; each later step runs `crawler update` to the week's
commit (the first commit on the branch's first-parent line at or after the date) and
`crawler extract` of it into a new folder with its own cache. Per step it prints:

- records: the updated folder's live records, and those with evidence;
- evidence_differs: records (matched by site, never by id) whose evidence differs between the
  updated folder and the fresh extract, or that one of them lacks;
- differs: records whose fields differ between the updated folder and the fresh extract, or that
  one of them lacks; by_field: how many records each field differs on (`site` by its parts,
  `site.snippet`; `missing in updated` / `missing in fresh` for the sites one side lacks).
  Every field of a record is compared but those an update keeps from the folder's past, which a
  fresh extract cannot know, and which are not facts of the commit:
  - `id`, `repo`, `url`: the identity. The two folders have one name, so `repo` is the same;
    an update keeps a record's id when it pairs a moved or reworded site, where an extract
    makes it from the site's key; `url` is pinned to `commit`. Ids a record holds (`related`)
    are compared through the sites they name.
  - `commit`: the commit a site was read at, which an update moves only when the site changes
    (an extract: the pin).
  - `history`: where a record came from (first seen, pairs made and flagged), the update's
    past.
  - `status` `needs_review` compared as `active`: a pair the update flagged for review, which a
    fresh extract, with no past to pair with, cannot flag. Any other status is compared.
- rewritten: record files the update wrote (new, or bytes changed);
- rewritten_unchanged: of those, the ones whose facts (status, site, evidence, related, entry
  points) are the same in the fresh extracts of the step's two commits: a rewrite for nothing.

The records behind each count are listed in DETAILS.txt under --work.

With `--fresh-store DIR`, each fresh extract is made once in DIR, by commit, and reused by a
later replay (a fresh extract does not depend on the updates): the extracts can run ahead, or
beside another replay. Step 0's updated folder is then a copy of the first commit's fresh
extract, which is what an extract into a new folder writes. A store is keyed by commit alone:
it holds one crawler code's extracts (or codes whose full extracts are the same). With
`--wait-fresh SECONDS`, a fresh extract not yet in the store is waited for (another process
making the store's extracts ahead) before it is made here.

    python scripts/replay_evidence.py /path/to/repo.git --start 2026-02-01 --weeks 13 \\
        --work /tmp/replay-evidence [--code /path/to/another/checkout] [--branch main] \\
        [--fresh-store /tmp/fresh-extracts]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's crawler and tests, not an installed one
sys.path.insert(0, str(ROOT / "scripts"))  # the weeks are picked as replay_history picks them

from replay_history import weekly_commits  # noqa: E402

from crawler.records import ACTIVE, NEEDS_REVIEW, ErrorRecord  # noqa: E402
from crawler.store import repo_output  # noqa: E402
from tests.helpers.folder_diff import SiteKey, differing, facts, live_records, site_key  # noqa: E402

NAME = "replay/repo"
FACTS = ("status", "site", "evidence", "related", "entry_points")  # not the commit read at
PAST = ("commit", "history")  # what an update keeps from the folder's past (the docstring)


def crawl(code: Path, command: str, source: str, sha: str, root: Path, cache: Path,
          jobs: int) -> dict:
    """One run of the crawler of checkout `code`, as a user runs it; its --json summary."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-m", "crawler", command, source, "--commit", sha,
                           "-o", str(root), "--cache-dir", str(cache), "--name", NAME, "--json",
                           "-j", str(jobs)], cwd=code, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"crawler {command} at {sha[:10]} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def folder_of(root: Path) -> Path:
    return root / "local" / NAME


def texts(folder: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in (folder / "errors").glob("*.yaml")}


def describe(key: SiteKey) -> str:
    path, line, _, column, exception, _, template = key
    return f"{path}:{line}:{column} {exception}({template!r})"


def field_differences(now: dict[SiteKey, ErrorRecord], new: dict[SiteKey, ErrorRecord]
                      ) -> dict[SiteKey, list[str]]:
    """The sites whose records differ between the updated folder (`now`) and a fresh extract
    (`new`), with the fields that do: every field but the identity and the update's past."""
    sites_now = {r.id: key for key, r in now.items()}
    sites_new = {r.id: key for key, r in new.items()}
    out: dict[SiteKey, list[str]] = {}
    for key in sorted(now.keys() | new.keys()):
        if key not in new:
            out[key] = ["missing in fresh"]
        elif key not in now:
            out[key] = ["missing in updated"]
        else:
            left, right = _compared(now[key], sites_now), _compared(new[key], sites_new)
            changed = [name for name in left if left[name] != right.get(name)]
            if changed:
                out[key] = changed
    return out


def _compared(record: ErrorRecord, sites: dict[str, SiteKey]) -> dict[str, object]:
    data = facts(record, sites)  # without the identity; related as the sites they name
    for name in PAST:
        data.pop(name)
    if data["status"] == NEEDS_REVIEW:
        data["status"] = ACTIVE
    site = data.pop("site")
    data.update((f"site.{name}", value) for name, value in site.items())
    return data


def step_figures(updated: Path, fresh: Path, fresh_before: Path | None,
                 before: dict[str, bytes]) -> tuple[dict, list[str]]:
    """One step's counts, and the records behind them, one line each."""
    now, new = live_records(updated), live_records(fresh)
    evidence = differing(now, new, ["evidence"])
    other = field_differences(now, new)
    by_field = Counter(name for names in other.values() for name in names)
    after = texts(updated)
    rewritten = {site_key(record) for record in repo_output.load_folder(updated).records
                 if after.get(record.id) != before.get(record.id)}  # removed ones too
    changed = set(differing(live_records(fresh_before), new, FACTS)) if fresh_before else set(new)
    idle = sorted(rewritten - changed)
    lines = [*(f"evidence differs: {describe(k)} {v}" for k, v in evidence.items()),
             *(f"differs: {describe(k)} {v}" for k, v in other.items()),
             *(f"rewritten, facts unchanged: {describe(k)}" for k in idle)]
    return {"records": len(now), "with_evidence": sum(bool(r.evidence) for r in now.values()),
            "fresh_records": len(new), "evidence_differs": len(evidence),
            "differs": len(other), "by_field": dict(sorted(by_field.items())),
            "rewritten": len(rewritten),
            "rewritten_unchanged": len(idle)}, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a git directory (bare or not) with the branch")
    parser.add_argument("--start", type=dt.date.fromisoformat, required=True)
    parser.add_argument("--weeks", type=int, default=13)
    parser.add_argument("--branch", default="main")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--code", type=Path, default=ROOT, help="the crawler checkout to run")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--fresh-store", type=Path, default=None,
                        help="make each fresh extract once here, by commit, and reuse it")
    parser.add_argument("--wait-fresh", type=float, default=0.0,
                        help="seconds to wait for a fresh extract another process makes")
    args = parser.parse_args()
    commits = weekly_commits(args.source, args.branch, args.start, args.weeks)
    print("commits:", " ".join(f"{day} {sha[:10]}" for day, sha in commits), flush=True)
    shutil.rmtree(args.work, ignore_errors=True)
    code = args.code.resolve()
    updated_root, cache = args.work / "updated", args.work / "cache"
    fresh_cache = args.work / "fresh-cache"
    rows, details = [], []
    fresh_before: Path | None = None
    for step, (day, sha) in enumerate(commits):
        before = texts(folder_of(updated_root)) if step else {}
        fresh_root = (args.work / f"fresh-{step:02d}" if args.fresh_store is None
                      else args.fresh_store / sha)
        if args.fresh_store is not None:
            waited = time.monotonic() + args.wait_fresh
            while not (args.fresh_store / f"{sha}.json").exists() and time.monotonic() < waited:
                time.sleep(5)
        if args.fresh_store is None or not (args.fresh_store / f"{sha}.json").exists():
            shutil.rmtree(fresh_root, ignore_errors=True)
            summary = crawl(code, "extract", args.source, sha, fresh_root, fresh_cache, args.jobs)
            if args.fresh_store is not None:
                (args.fresh_store / f"{sha}.json").write_text(json.dumps(summary), "utf-8")
        started = time.perf_counter()
        if step == 0 and args.fresh_store is not None:
            shutil.copytree(fresh_root, updated_root, symlinks=True)
        else:
            crawl(code, "update" if step else "extract", args.source, sha, updated_root, cache,
                  args.jobs)
        seconds = time.perf_counter() - started
        figures, lines = step_figures(folder_of(updated_root), folder_of(fresh_root),
                                      fresh_before, before)
        row = {"step": step, "date": day, "sha": sha[:10], "seconds": round(seconds, 1), **figures}
        rows.append(row)
        details += [f"step {step} ({day}) {line}" for line in lines]
        print(json.dumps(row), flush=True)
        if fresh_before is not None and args.fresh_store is None:  # only the last one is needed
            shutil.rmtree(fresh_before.parents[2], ignore_errors=True)
        fresh_before = folder_of(fresh_root)
    later = rows[1:]
    print("steps:", len(later), "evidence_differs:", [r["evidence_differs"] for r in later],
          "differs:", [r["differs"] for r in later],
          "rewritten_unchanged:", [r["rewritten_unchanged"] for r in later], flush=True)
    (args.work / "DETAILS.txt").write_text("\n".join(details) + "\n", encoding="utf-8")
    (args.work / "report.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
