"""The corpus of pasted errors (tests/serve/lookup/pastes/): its figures per class, the jax pastes.

    python scripts/paste_corpus.py                  # per class: right first, top 3, nothing,
                                                    # confident and wrong (today's engine)
    python scripts/paste_corpus.py --part working   # issue 48's real pastes, working half:
                                                    # per class and library, each miss in a line
    python scripts/paste_corpus.py --part sealed    # the sealed half: run once, at the end
    python scripts/paste_corpus.py --write-misses   # also rewrite misses.yaml, the items
                                                    # the harness marks xfail, with why
    python scripts/paste_corpus.py capture-jax --python VENV/bin/python
                                                    # run jax_programs/ in a virtualenv with
                                                    # jax and jaxlib; rewrite jax.yaml

The lookups are the harness's own (tests/serve/lookup/test_paste_corpus.py): the installed `crawler
lookup --json`, one process per paste, against the catalogues unpacked in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.serve.lookup.test_paste_corpus import (  # noqa: E402
    CLASSES,
    PARTS,
    PASTES,
    Outcome,
    figures,
    load_corpus,
    run_all,
    unpack_catalogues,
)

PROGRAMS = PASTES / "jax_programs"
# what a user's machine shows instead of this one's folders
SITE = "/home/user/.venv/lib/python3.11/site-packages/"
HOME = "/home/user/project/"


def print_figures(outcomes: list[Outcome], title: str = "class") -> None:
    print(f"{title:<12} {'items':>5} {'first':>6} {'exact':>6} {'top 3':>6} {'nothing':>8} "
          f"{'confident+wrong':>16} {'as asked':>9} {'sent away':>10}")
    for name, row in figures(outcomes).items():
        print(f"{name:<12} {row['items']:>5} {row['first']:>6} {row['exact_first']:>6} "
              f"{row['top3']:>6} {row['nothing']:>8} {row['confident_wrong']:>16} "
              f"{row['as_expected']:>9} {row['sent_away']:>10}")


def print_libraries(outcomes: list[Outcome]) -> None:
    """Per library: items, right first, as the class asks, confident and wrong, sent away."""
    print(f"{'library':<12} {'items':>5} {'first':>6} {'as asked':>9} {'confident+wrong':>16} "
          f"{'sent away':>10}")
    for library in sorted({o.item["library"] for o in outcomes}):
        mine = [o for o in outcomes if o.item["library"] == library]
        print(f"{library:<12} {len(mine):>5} {sum(o.first for o in mine):>6} "
              f"{sum(o.as_expected for o in mine):>9} {sum(o.confident_wrong for o in mine):>16} "
              f"{sum(o.sent_away for o in mine):>10}")


def write_misses(outcomes: list[Outcome]) -> None:
    lines = ["# Items today's lookup misses: the harness marks each xfail(strict=True) with this",
             "# reason. Written by `python scripts/paste_corpus.py --write-misses`; delete a line",
             "# when the engine gets the item right (a strict xfail that passes fails the suite)."]
    for outcome in sorted(outcomes, key=lambda o: o.item["id"]):
        if not outcome.as_expected:
            lines.append(f"{outcome.item['id']}: {json.dumps(outcome.describe())}")
    (PASTES / "misses.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def capture_jax(python: str) -> None:
    """Each program of jax_programs/errors.py run for real, its error pasted in several forms."""
    version = subprocess.run([python, "-c", "import jax; print(jax.__version__)"], check=True,
                             capture_output=True, text=True).stdout.strip()
    names = [n for n in re.findall(r"^def (\w+)\(", (PROGRAMS / "errors.py").read_text(), re.M)]
    items = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "errors.py").write_bytes((PROGRAMS / "errors.py").read_bytes())
        (work / "capture.py").write_bytes((PROGRAMS / "capture.py").read_bytes())
        for number, name in enumerate(names):
            items.extend(_jax_items(python, version, work, name, number))
    header = (f"# jax errors made by running jax {version} (jax_programs/errors.py), each pasted in "
              "several forms.\n# Written by `python scripts/paste_corpus.py capture-jax`; this "
              "machine's folders are replaced by a user's.\n")
    import yaml

    text = yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=100)
    (PASTES / "jax.yaml").write_text(header + text, encoding="utf-8")
    print(f"{len(items)} jax pastes of {len(names)} programs, jax {version}")


def _run(python: str, work: Path, *args: str, env: dict[str, str] | None = None) -> str:
    environment = {**os.environ, "JAX_PLATFORMS": "cpu", "COLUMNS": "100", **(env or {})}
    result = subprocess.run([python, *args], cwd=work, env=environment, capture_output=True,
                            text=True, timeout=300)
    return _neutral(result.stdout + result.stderr, work, python)


def _neutral(text: str, work: Path, python: str) -> str:
    site = subprocess.run([python, "-c", "import jax, os; print(os.path.dirname(os.path.dirname("
                           "jax.__file__)))"], capture_output=True, text=True).stdout.strip()
    return text.replace(site + "/", SITE).replace(str(work) + "/", HOME).replace(str(work), HOME)


def _jax_items(python: str, version: str, work: Path, name: str, number: int) -> list[dict]:
    raised = json.loads(_run(python, work, "capture.py", name,
                             env={"JAX_TRACEBACK_FILTERING": "off"}).strip().splitlines()[-1])
    site = raised["file"].split("site-packages/", 1)[-1]
    expect = {"path": site, "function": raised["function"], "exception": raised["class"].rsplit(".", 1)[-1],
              "line": raised["line"]}
    call = f"import errors; errors.{name}()"
    first = f"{raised['class']}: {raised['message']}"
    forms = {
        "traceback": _run(python, work, "-c", call),
        "message": first.splitlines()[0],
    }
    extra = number % 6  # each program adds one more form, so every form has several programs
    if extra == 0:
        (work / f"test_{name}.py").write_text(f"import errors\n\n\ndef test_{name}():\n"
                                              f"    errors.{name}()\n")
        output = _run(python, work, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"test_{name}.py")
        forms["pytest"] = "\n".join(line for line in output.splitlines() if line.startswith("E "))
        forms["title"] = next(line for line in output.splitlines() if line.startswith("FAILED"))
    elif extra == 1:
        forms["ipython"] = _run(python, work, "-m", "IPython", "--colors=Linux", "--no-banner",
                                "-c", call)
    elif extra == 2:
        forms["rich"] = _run(python, work, "-c", "import rich.traceback; rich.traceback.install("
                             "width=100); " + call)
    elif extra == 3:
        forms["logging"] = _run(python, work, "-c", "import logging, errors\nlogging.basicConfig("
                                "format='%(asctime)s %(levelname)s %(name)s: %(message)s')\ntry:\n"
                                f"    errors.{name}()\nexcept Exception:\n    logging.getLogger("
                                "'train').exception('step failed')")
    elif extra == 4:
        forms["chained"] = _run(python, work, "-c", f"import errors\ntry:\n    errors.{name}()\n"
                                "except Exception as error:\n    raise RuntimeError('training "
                                "step failed') from error")
        forms["group"] = _run(python, work, "-c", "import asyncio, errors\nasync def main():\n"
                              "    async with asyncio.TaskGroup() as group:\n        group."
                              f"create_task(asyncio.to_thread(errors.{name}))\nasyncio.run(main())")
    else:
        forms["wrapped"] = "\n".join(piece for line in first.splitlines()
                                     for piece in textwrap.wrap(line, 80, drop_whitespace=False,
                                                                break_on_hyphens=False) or [""])
    # the last Python frame is the user's own: compiled code (jaxlib's C++) raised it
    foreign = "site-packages/" not in raised["file"]
    told = {"class": "foreign", "note": "raised by compiled code (jaxlib), not by jax's Python "
            "code: the unfiltered traceback's last frame is the user's own"} if foreign else \
        {"class": "same"}
    return [{"id": f"jax-{name}-{form}", "source": f"made by running jax {version}: "
             f"jax_programs/errors.py {name}", "library": "jax", "form": form,
             "class": told["class"], "paste": paste.rstrip("\n"),
             **({"note": told["note"]} if foreign else {"expect": expect})}
            for form, paste in forms.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["figures", "capture-jax"], default="figures")
    parser.add_argument("--python", help="capture-jax: the python of a virtualenv with jax")
    parser.add_argument("--write-misses", action="store_true")
    parser.add_argument("--part", choices=PARTS, default="own",
                        help="own: wild.yaml and jax.yaml; working or sealed: issue 48's real "
                        "pastes (real/), the sealed half to be run once, at the end")
    parser.add_argument("--only", action="append", default=[], metavar="LIBRARY",
                        help="only this library's items (repeatable)")
    args = parser.parse_args(argv)
    if args.command == "capture-jax":
        if not args.python:
            parser.error("capture-jax needs --python")
        capture_jax(args.python)
        return 0
    items = [item for item in load_corpus(part=args.part)
             if not args.only or item["library"] in args.only]
    with tempfile.TemporaryDirectory() as scratch:
        catalogues = unpack_catalogues(Path(scratch), {item["library"] for item in items})
        outcomes = run_all(items, catalogues)
    print_figures(outcomes)
    if args.part != "own":
        print_libraries(outcomes)
    by_form = Counter(o.item["form"] for o in outcomes if o.first)
    print("right first by form:", dict(sorted(by_form.items())))
    missed = [o for o in outcomes if not o.as_expected]
    print(f"{len(missed)} of {len(outcomes)} items not as expected; classes: {', '.join(CLASSES)}")
    if args.part != "own":
        for outcome in sorted(missed, key=lambda o: o.item["id"]):
            print(f"  {outcome.item['id']} ({outcome.item['class']}, {outcome.item['form']}): "
                  f"{outcome.describe()}")
    if args.write_misses and args.part == "own":
        write_misses(outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
