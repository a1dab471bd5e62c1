"""The `pages` table as datasette serves it (issue 35), measured in headless Chromium.

The export is served by `datasette serve DB -m DB.metadata.json` on 127.0.0.1 (a free port,
stopped by its id) with one thing added to the metadata the export wrote: a script that, once
the page has loaded, writes the rendered heights of the table's rows and cells into the DOM,
which Chromium's `--dump-dom` then prints. A listing row stays a few lines high; each row links
to a page of its own that shows the permalink, the message, the whole snippet and the annotation.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.datasette_server import serving
from tests.helpers.gitrepo import GitRepo
from tests.helpers.outputkit import annotate
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium's own background traffic is switched off: the tests touch no network.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--window-size=1400,1000", "--virtual-time-budget=5000")
MEASURE = """
addEventListener("load", () => {
  const height = (element) => Math.round(element.getBoundingClientRect().height);
  const rows = [...document.querySelectorAll("table.rows-and-columns tbody tr")].map(height);
  const cells = {}, texts = {};
  for (const td of document.querySelectorAll("table.rows-and-columns tbody td")) {
    if (!td.getClientRects().length) continue;  // hidden: not shown on this page
    const name = td.className.split(" ")[0].slice(4);
    cells[name] = height(td);
    texts[name] = td.innerText;
  }
  document.body.setAttribute("data-measured", JSON.stringify({rows, cells, texts}));
});
"""
LIBRARY = "class Shape:\n    def check(self, dims):\n" + "".join(
    f"        step_{n} = len(dims) + {n}\n" for n in range(30)) + (
    "        if len(dims) > 3:\n"
    "            raise ValueError(\n"
    "                f'expected at most 3 dimensions, got {len(dims)}')\n"
    "        return step_0\n")
MEANING = "A shape with more than three dimensions was given."


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with a GitHub remote whose raise sits deep in a long function, extracted
    and annotated, exported by the installed crawler to errors.db."""
    base = tmp_path_factory.mktemp("pages")
    repo = GitRepo(base / "lib")
    repo.write("lib/shape.py", LIBRARY)
    repo.commit("first")
    repo.git("remote", "add", "origin", "https://github.com/example/lib.git")
    for argv in (["extract", "lib", "-o", "out", "-q", "-j", "1"], ["export", "out", "-o", "errors.db"]):
        if argv[0] == "export":
            [record] = (base / "out").glob("*/*/*/errors/*.yaml")
            annotate(record, MEANING)
        subprocess.run([CRAWLER, *argv], cwd=base, env=child_env(), check=True,
                       capture_output=True, timeout=120)
    return base / "errors.db"


@pytest.fixture(scope="module")
def served(database: Path) -> Iterator[str]:
    """datasette on 127.0.0.1 with the export's metadata and the measuring script; stopped by
    its id."""
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH: `apt-get install chromium` (.ci/run installs it)")
    metadata = json.loads((database.parent / "errors.db.metadata.json").read_text(encoding="utf-8"))
    script = "data:text/javascript;base64," + base64.b64encode(MEASURE.encode()).decode()
    metadata["extra_js_urls"] = [script]
    measured = database.parent / "measured.metadata.json"
    measured.write_text(json.dumps(metadata), encoding="utf-8")
    with serving(database, measured) as base:
        yield base


def rendered(url: str, profile: Path) -> tuple[str, dict[str, Any]]:
    """The DOM headless Chromium renders at `url` (a new empty profile), and what the
    measuring script wrote into it."""
    assert CHROMIUM is not None
    profile.mkdir()
    result = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                             url], capture_output=True, text=True, timeout=120, check=True)
    found = re.search(r'data-measured="([^"]*)"', result.stdout)
    assert found, result.stdout[-2000:]
    return result.stdout, json.loads(html.unescape(found[1]))


@pytest.fixture(scope="module")
def listing(served: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The `pages` listing as Chromium renders it, once for the module."""
    return rendered(served + "/errors/pages", tmp_path_factory.mktemp("listing") / "profile")


def test_a_listing_row_is_a_few_lines_high_and_links_to_its_page(
        listing: tuple[str, dict[str, Any]]) -> None:
    dom, measured = listing
    [row] = measured["rows"]
    assert 40 < row < 120, measured  # the whole 36-line function would be over 500 px
    assert "snippet_short" in measured["cells"] and "snippet" not in measured["cells"]
    assert len(re.findall(r'<a href="/errors/pages/[0-9a-f]{16}">', dom)) == 1
    shown = measured["texts"]["snippet_short"]
    assert shown.startswith("if len(dims) > 3:") and "raised here" in shown and "step_29" not in shown


def test_a_record_page_shows_permalink_message_snippet_and_annotation(
        served: str, listing: tuple[str, dict[str, Any]], tmp_path: Path) -> None:
    [link] = re.findall(r'<a href="(/errors/pages/[0-9a-f]{16})">', listing[0])
    dom, measured = rendered(served + link, tmp_path / "page")
    cells = measured["cells"]
    assert cells["snippet"] > 500 and "snippet_short" not in cells, cells  # all 36 lines
    assert all(cells[name] > 0 for name in ("title", "permalink", "what_it_means")), cells
    permalink = re.search(r'<a href="(https://github.com/example/lib/blob/[0-9a-f]{40}/'
                          r'lib/shape.py#L\d+-L\d+)">', dom)
    assert permalink, dom[-3000:]
    assert "ValueError: expected at most 3 dimensions, got {len(dims)}" in html.unescape(dom)
    texts = measured["texts"]
    assert MEANING in texts["what_it_means"] and "step_0 = " in texts["snippet"], texts
