"""Write lookup's background of common phrases (crawler/serve/lookup/common_phrases.txt).

A phrase (`crawler.serve.lookup.rarity.phrases`: the words of one literal part of a template) is
common when the templates of at least `rarity.COMMON_LIBRARIES` libraries hold it within one
literal part, every wording a record had in the walked releases included; the file lists every
run of up to `rarity.LONGEST` words that is. The libraries are the stored
catalogues of the paste corpus (tests/serve/lookup/pastes/catalogues/), the standard library's
among them, each read from its archive; a set still sealed is named with `--leave-out` and not
read, so no phrase of it is known before its one measure.

    python scripts/common_phrases.py --leave-out seaborn,docker-py,alembic,scrapy
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crawler.serve.lookup.rarity import (  # noqa: E402
    BACKGROUND,
    COMMON_LIBRARIES,
    LONGEST,
    phrases,
    runs,
)

CATALOGUES = ROOT / "tests" / "serve" / "lookup" / "pastes" / "catalogues"
OUTPUT = ROOT / "crawler" / "serve" / "lookup" / BACKGROUND
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def library_phrases(archive: Path) -> set[str]:
    """Every run of up to LONGEST words of a phrase of every wording of every record in one
    catalogue archive."""
    found: set[str] = set()
    with tarfile.open(archive) as packed:
        for member in packed:
            if not (member.isfile() and "/errors/" in member.name and member.name.endswith(".yaml")):
                continue
            handle = packed.extractfile(member)
            record = yaml.load(handle.read(), Loader=_LOADER) if handle else None
            if not isinstance(record, dict):
                continue
            message = (record.get("extracted") or {}).get("message") or {}
            templates = [message.get("template") or ""]
            templates += [span.get("template") or "" for span in
                          ((record.get("history") or {}).get("templates") or ())]
            for template in templates:
                for phrase in phrases(template):
                    found |= runs(phrase, LONGEST)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leave-out", default="", help="libraries not to read (comma-separated)")
    args = parser.parse_args(argv)
    left_out = {name for name in args.leave_out.split(",") if name}
    archives = sorted(path for path in CATALOGUES.glob("*.tar.xz")
                      if path.name.split(".")[0] not in left_out)
    counts: Counter[str] = Counter()
    for archive in archives:
        found = library_phrases(archive)
        counts.update(found)
        print(f"{archive.name.split('.')[0]}: {len(found)} runs", file=sys.stderr)
    common = sorted((phrase, count) for phrase, count in counts.items()
                    if count >= COMMON_LIBRARIES)
    names = ", ".join(path.name.split(".")[0] for path in archives)
    lines = [f"# Runs of words the templates of at least {COMMON_LIBRARIES} of these {len(archives)} "
             f"libraries hold in one literal part (scripts/common_phrases.py): {names}",
             "# words<TAB>libraries", *(f"{phrase}\t{count}" for phrase, count in common)]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(common)} common runs of {len(counts)} written to {OUTPUT.relative_to(ROOT)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
