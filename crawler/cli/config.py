"""The configuration file: the options a site repeats on every run, read once.

`crawler.toml` (its keys at the top) or, when there is none, the `[tool.crawler]` table of
`pyproject.toml`, in the folder the command is run from: the first of the two found is the
only one read (as ruff reads `ruff.toml` before `pyproject.toml`). An option given on the
command line wins over the file, the file over the built-in default. Keys, and the commands
that take each:

    output = "catalogue"            # extract, update, history, batch (-o); check, validate,
                                    # export, adopt read it when OUTPUT is left out (lookup
                                    # does not: give it OUTPUT)
    name = "github.com/acme/lib"    # extract, update, history (--name)
    web-url = "https://git.example.org/acme/lib"   # extract, update (--web-url)
    include = ["src/*"]             # extract (--include), a glob or a list of them
    exclude = ["docs/*"]            # extract (--exclude)
    jobs = 2                        # extract, update, history, batch (-j)
    tags = "v*"                     # history (--tags)

A relative `output` is read from the file's folder. An unknown key or a value of the wrong
type is one line naming the file and the key (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from crawler.cli.options import UsageLine

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the same parser, as a package, before 3.11
    import tomli as tomllib

CONFIG_FILE = "crawler.toml"
PYPROJECT = "pyproject.toml"

_WRITERS = ("extract", "update", "history", "batch")
# lookup is left out: its quick path (`fast_lookup`) answers before the file could be read
_READERS = ("check", "validate", "export", "adopt")


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} is a text, not {value!r}")
    return value


def _globs(key: str, value: Any) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise ValueError(f"{key} is a glob or a list of globs, not {value!r}")
    return values


def _jobs(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{key} is a number of worker processes, 1 or more, not {value!r}")
    return value


# key -> (how its value is read, the parameter it sets, the commands that take it)
_KEYS: dict[str, tuple[Callable[[str, Any], Any], str, tuple[str, ...]]] = {
    "output": (_text, "output_root", _WRITERS),
    "name": (_text, "name", ("extract", "update", "history")),
    "web-url": (_text, "web_url", ("extract", "update")),
    "include": (_globs, "include", ("extract",)),
    "exclude": (_globs, "exclude", ("extract",)),
    "jobs": (_jobs, "jobs", _WRITERS),
    "tags": (_text, "tags", ("history",)),
}


def find_config(folder: Path) -> tuple[Path, Mapping[str, Any]] | None:
    """The configuration read in `folder`: its file and its table; None when there is none
    (a `pyproject.toml` without `[tool.crawler]` is none)."""
    for name in (CONFIG_FILE, PYPROJECT):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise UsageLine(f"{path}: cannot be read as TOML ({error})") from None
        if name == CONFIG_FILE:
            return path, data
        tool = data.get("tool")
        table = tool.get("crawler") if isinstance(tool, dict) else None
        if table is None:
            continue
        if not isinstance(table, dict):
            raise UsageLine(f"{path}: [tool.crawler] is a table of options, not {table!r}")
        return path, table
    return None


def default_map(folder: Path) -> dict[str, dict[str, Any]]:
    """click's `default_map` from the configuration in `folder`: per command, its parameters'
    values; empty without a configuration. A bad key or value: one line (exit 2)."""
    found = find_config(folder)
    if found is None:
        return {}
    path, table = found
    where = f"[tool.crawler] of {path}" if path.name == PYPROJECT else str(path)
    defaults: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise UsageLine(f"{where}: unknown key {key!r}; the keys are {', '.join(_KEYS)}")
        read, parameter, commands = _KEYS[key]
        try:
            value = read(key, value)
        except ValueError as error:
            raise UsageLine(f"{where}: {error}") from None
        if key == "output":
            value = path.parent / value  # an absolute one stays as it is
            for command in _READERS:
                defaults.setdefault(command, {})["output"] = value
        for command in commands:
            defaults.setdefault(command, {})[parameter] = value
    return defaults
