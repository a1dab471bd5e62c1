"""Count the records whose message has no words: `dynamic` ones, and active ones with fewer than
two literal words.

A literal word is a run of two or more letters in the template's literal text, outside its
placeholders, once a class's appended `See https://...` line is left out (it is on every message
of the class and tells none apart). Given an output folder of one repository (the folder holding
`errors/`), prints the counts; `--list` also prints each wordless record (path:line, kind,
template, and the reason a `dynamic` one was not followed), `--json` the counts as JSON.

    python scripts/message_words.py OUTPUT/local/<sha>/jax --list
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

WORD = re.compile(r"[A-Za-z]{2,}")
SEE_LINE = re.compile(r"(?m)^\s*See https?://\S*\s*$")

try:  # the C loader when PyYAML has it: 5,000 records in seconds, not a minute
    LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - a PyYAML built without libyaml
    LOADER = yaml.SafeLoader


def literal_text(message: dict[str, Any]) -> str:
    """The template with each placeholder and the `See https://...` line taken out."""
    text = message.get("template") or ""
    for name in sorted(message.get("placeholders") or [], key=len, reverse=True):
        text = text.replace("{" + name + "}", "\0")
    return SEE_LINE.sub("", text)


def literal_words(message: dict[str, Any]) -> list[str]:
    """The literal words of a record's message (see the module's docstring)."""
    return WORD.findall(literal_text(message))


def records(folder: Path) -> list[dict[str, Any]]:
    """Every record of the folder, as loaded: {'status', 'extracted': {...}}."""
    errors = folder / "errors" if (folder / "errors").is_dir() else folder
    found = []
    for path in sorted(errors.glob("*.yaml")):
        found.append(yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER))
    return found


def counts(loaded: list[dict[str, Any]]) -> dict[str, Any]:
    """Records, `dynamic` ones, and active ones with fewer than two literal words."""
    active = [r for r in loaded if r.get("status") != "removed"]
    dynamic = [r for r in loaded if r["extracted"]["message"]["kind"] == "dynamic"]
    wordless = [r for r in active if len(literal_words(r["extracted"]["message"])) < 2]
    return {"records": len(loaded), "active": len(active), "dynamic": len(dynamic),
            "dynamic_active": sum(1 for r in dynamic if r.get("status") != "removed"),
            "fewer_than_two_words": len(wordless), "_dynamic": dynamic, "_wordless": wordless}


def _line(record: dict[str, Any]) -> str:
    extracted = record["extracted"]
    message = extracted["message"]
    reason = message.get("reason")
    because = f"  ({reason})" if reason else ""
    return (f"{extracted['path']}:{extracted['line']}  {message['kind']}  "
            f"{message['template']!r}{because}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a repository's output folder (holds errors/)")
    parser.add_argument("--list", action="store_true", help="print each wordless record")
    parser.add_argument("--json", action="store_true", help="the counts as JSON")
    options = parser.parse_args(argv)
    found = counts(records(options.folder))
    shown = {k: v for k, v in found.items() if not k.startswith("_")}
    if options.json:
        print(json.dumps(shown))
    else:
        print("  ".join(f"{k}: {v}" for k, v in shown.items()))
    if options.list:
        print("# dynamic")
        for record in sorted(found["_dynamic"], key=lambda r: _line(r)):
            print(_line(record))
        print("# fewer than two literal words")
        for record in sorted(found["_wordless"], key=lambda r: _line(r)):
            print(_line(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
