"""A screenshot of the SQLite export's `pages` view as datasette serves it, in headless Chromium.

Starts `datasette serve DB -m DB.metadata.json` on 127.0.0.1 (a free port), has Chromium load
the pages view (or a page given by --path), writes the PNG, and stops datasette by its id.

    python scripts/screenshot_pages.py errors.sqlite --out pages.png
    python scripts/screenshot_pages.py errors.sqlite --path '/errors/pages?exception=builtins.ValueError'
    python scripts/screenshot_pages.py errors.sqlite --path '/errors/find_by_runtime_message?message=...'

Needs datasette (`pip install '.[test]'`) and a Chromium binary (`--chromium`, default
`chromium` on PATH); nothing in the test suite depends on a browser.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from crawler.serve.export.datasette_metadata import metadata_path

# Chromium's own background traffic is switched off: a closed network refuses it anyway.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(database: Path, port: int) -> subprocess.Popen[bytes]:
    """datasette on 127.0.0.1:port, in its own process group, once it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "datasette", "serve", str(database), "-m", str(metadata_path(database)),
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/-/versions.json", timeout=1).read()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                stop(process)
                raise SystemExit(f"{database}: datasette did not start") from None
            time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=10)


def screenshot(chromium: str, url: str, out: Path, size: str) -> None:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                        f"--window-size={size}", f"--screenshot={out.resolve()}", url],
                       check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", type=Path, help="a `crawler export --format sqlite` database")
    parser.add_argument("--out", type=Path, default=Path("pages.png"))
    parser.add_argument("--path", default=None,
                        help="the page to load [default: /<db>/pages?_size=5]")
    parser.add_argument("--size", default="1400,1800", help="window WIDTH,HEIGHT")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    if not metadata_path(args.database).is_file():
        raise SystemExit(f"{metadata_path(args.database)}: no metadata beside the database; "
                         "export it again with `crawler export --format sqlite`")
    port = free_port()
    process = serve(args.database, port)
    try:
        path = args.path or f"/{args.database.stem}/pages?_size=5"
        screenshot(args.chromium, f"http://127.0.0.1:{port}{path}", args.out, args.size)
    finally:
        stop(process)
    print(args.out.resolve())


if __name__ == "__main__":
    main()
