"""The benchmark's figures as a table: each measure's ratio to its base, and its target."""

from __future__ import annotations

from typing import Any

EM_RULES = "EM101,EM102,EM103"

# measure: (what its ratio is to, the target of that ratio or None); issue 17's targets. The
# default command (`crawler extract`, test evidence read) comes first: it is what users run.
TARGETS: dict[str, tuple[str, float | None]] = {
    "extract_default": ("floor", 0.70),
    "rerun_default": ("extract_default", 0.03),
    "rerun": ("extract_default", None),
    "regen": ("extract_default", 0.10),
    "extract_1": ("floor", 0.50),
    "extract_n": ("floor", 0.30),
}
PEAK_TARGET_MIB = 1024  # peak resident memory of the crawler and of any worker


def ratios(results: dict[str, Any]) -> dict[str, float]:
    """Each measure's wall and CPU time over the floor's, and over its target's base."""
    floor = results["floor"]["seconds"]
    found = {name: results[name]["seconds"] / floor for name in results if name != "floor"}
    found["ast"] = results["floor"]["ast_seconds"] / floor
    floor_cpu = results["floor"]["cpu_seconds"]
    for name in results:
        if name != "floor" and "cpu_seconds" in results[name]:
            found[f"{name}_cpu"] = results[name]["cpu_seconds"] / floor_cpu
    for name, (base, _) in TARGETS.items():
        if name in results and base != "floor" and base in results:
            found[f"{name}/{base}"] = results[name]["seconds"] / results[base]["seconds"]
    return found


def peak_mib(results: dict[str, Any]) -> tuple[float, float]:
    """The largest peak resident memory of any measure: (the crawler's, a worker's)."""
    measured = [figures for figures in results.values() if "rss_mib" in figures]
    return (max((f["rss_mib"] for f in measured), default=0.0),
            max((f["worker_rss_mib"] for f in measured), default=0.0))


LABELS = {
    "extract_default": "extract (the default: test evidence read), {jobs} workers",
    "rerun_default": "the same extract again, nothing changed",
    "rerun": "update, nothing changed",
    "regen": "update, old -> new",
    "extract_1": "extract --no-evidence, 1 worker",
    "extract_n": "extract --no-evidence, {jobs} workers",
    "floor": "bare libcst.parse_module, 1 process (floor)",
    "ast": "ast.parse, 1 process (reference)",
    "ruff_em": f"ruff {EM_RULES}",
}


def table(results: dict[str, Any], jobs: int) -> str:
    """The measures as a text table: the default command's first, each with its ratio and target."""
    floor = results["floor"]
    found = ratios(results)
    rows: list[tuple[str, ...]] = [("measure", "seconds", "ratio", "target", "CPU s",
                                    "CPU / floor", "peak MiB (self / worker)")]
    for name, label in LABELS.items():
        if name == "ast":
            rows.append((label, f"{floor['ast_seconds']:.2f}", f"{found['ast']:.2f} of floor",
                         "", "", "", ""))
            continue
        if name not in results:
            continue
        rows.append(_row(name, label.format(jobs=jobs), results, found))
    own, worker = peak_mib(results)
    rows.append(("peak memory, any measure", "", "", f"< {PEAK_TARGET_MIB} MiB", "", "",
                 f"{own:.0f} / {worker:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    head = (f"{floor['files']} files, {floor['bytes'] / 1e6:.1f} MB; LibCST refused "
            f"{floor['parse_failed']}, ast refused {floor['ast_failed']}")
    return head + "\n" + "\n".join(lines)


def _row(name: str, label: str, results: dict[str, Any], found: dict[str, float]
         ) -> tuple[str, ...]:
    figures, floor = results[name], results["floor"]
    base, goal = TARGETS.get(name, ("floor", None))
    if base == "floor" or base not in results:
        base = "floor"
        ratio = f"{figures['seconds'] / floor['seconds']:.2f} of floor"
    else:
        ratio = f"{found[f'{name}/{base}']:.3f} of {base}"
    target = "" if goal is None or name == "floor" else f"<= {goal:g}"
    memory = (f"{figures['rss_mib']:.0f} / {figures['worker_rss_mib']:.0f}"
              if "rss_mib" in figures else "")
    cpu = figures.get("cpu_seconds")
    cpu_cells = ((f"{cpu:.2f}", f"{cpu / floor['cpu_seconds']:.2f}") if cpu is not None
                 else ("", ""))
    return (label, f"{figures['seconds']:.2f}", ratio, target, *cpu_cells, memory)
