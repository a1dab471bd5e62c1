"""Produce the paste-form samples of this folder by really running `widgets.py`'s raises.

    python tests/serve/lookup/paste_forms/make_samples.py

Each sample is what a user would copy: a plain traceback, pytest's long output (`E   ` lines)
and its short summary line, IPython's coloured traceback (IPython must be installed: it is
not a dependency, only this script needs it), Rich's boxed traceback, `logging.exception`'s
output and a JSON formatter's (the traceback escaped in one line), chained exceptions, an
exception group, a process pool's remote traceback, a terminal hard-wrapped at 40 columns
(`fold`), and a first line alone. The temporary folder they ran in is written as
/home/user/proj, and the standard library's as /usr/lib/pythonX.Y, so no machine's path is
kept. Re-running rewrites the `*.txt` files; the test reads them as they are.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = {
    "plain": "import widgets\nwidgets.paint('green')\n",
    "chained": "import widgets\nwidgets.assemble(5)\n",
    "handling": ("import widgets\ntry:\n    widgets.paint('green')\nexcept ValueError:\n"
                 "    widgets.fit('gear', 9, 3)\n"),
    "group": "import widgets\nwidgets.check_all(['green', 'red', 'pink'])\n",
    "logged": ("import logging, widgets\nlogging.basicConfig(format='%(asctime)s %(levelname)s "
                "%(name)s: %(message)s')\ntry:\n    widgets.fit('gear', 7, 3)\nexcept ValueError:\n"
                "    logging.exception('fitting failed')\n"),
    "json_logged": ("import json, logging, widgets\nclass JSON(logging.Formatter):\n"
                    "    def format(self, record):\n        return json.dumps({'level': "
                    "record.levelname, 'message': record.getMessage(), 'exc_info': "
                    "self.formatException(record.exc_info)})\nhandler = logging.StreamHandler()\n"
                    "handler.setFormatter(JSON())\nlogging.getLogger().addHandler(handler)\ntry:\n"
                    "    widgets.fit('gear', 7, 3)\nexcept ValueError:\n"
                    "    logging.exception('fitting failed')\n"),
    "remote": ("import concurrent.futures, widgets\nif __name__ == '__main__':\n"
               "    with concurrent.futures.ProcessPoolExecutor(1) as pool:\n"
               "        pool.submit(widgets.fit, 'gear', 7, 3).result()\n"),
    "boxed": ("import widgets\nfrom rich.console import Console\nfrom rich.traceback import install\n"
             "install(console=Console(width=80, stderr=True, force_terminal=False))\n"
             "widgets.fit('gear', 7, 3)\n"),
}
PYTEST = textwrap.dedent("""\
    import widgets

    def test_fit():
        widgets.fit('gear', 7, 3)

    def test_paint():
        assert widgets.paint('green')
""")


def run(folder: Path, *argv: str) -> str:
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "100", "PYTHONPATH": str(folder)})
    # the standard library's folder (a process pool's frames) as a user's machine has it
    stdlib = f"/usr/lib/python{sys.version_info.major}.{sys.version_info.minor}"
    return (done.stdout + done.stderr).replace(str(folder), "/home/user/proj").replace(
        sysconfig.get_paths()["stdlib"], stdlib)


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        shutil.copy(HERE / "widgets.py", folder)
        samples = {}
        for name, source in SCRIPTS.items():
            (folder / f"{name}.py").write_text(source, encoding="utf-8")
            samples[name] = run(folder, sys.executable, f"{name}.py")
        (folder / "test_widgets.py").write_text(PYTEST, encoding="utf-8")
        tested = run(folder, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE",
                     "-o", "addopts=", "test_widgets.py")
        samples["pytest"] = tested
        samples["pytest_summary"] = next(line for line in tested.splitlines()
                                         if line.startswith("FAILED test_widgets.py::test_fit"))
        samples["ipython"] = run(folder, sys.executable, "-m", "IPython", "--colors=Linux",
                                 "--no-banner", "-c", "import widgets; widgets.paint('green')")
        samples["wrapped"] = subprocess.run(["fold", "-w", "40"], input=samples["handling"],
                                            capture_output=True, text=True, check=True).stdout
        samples["first_line"] = samples["plain"].rstrip("\n").splitlines()[-1]
    for name, text in samples.items():
        (HERE / f"{name}.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
