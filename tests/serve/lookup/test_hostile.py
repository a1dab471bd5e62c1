"""Lookup bounded whatever is pasted: each hostile paste of the issue, run through the installed
`crawler lookup` on standard input, answers within 1 s of CPU and 300 MiB, and says what of
the paste it left out. The catalogue is several hundred generated raise sites of every shape a
paste meets: templates that are only a placeholder, short literal runs (`bad {x}`), long ones,
messages ending in a line break, URLs.

Each lookup runs under a small measuring process (`MEASURE`): its `RUSAGE_CHILDREN` is the
lookup's alone (user and system CPU, peak resident memory); a lookup still running after
WAIT_SECONDS is killed there, and fails the test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.serve.lookup.paste import MAX_PASTE
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"
CPU_SECONDS = 1.0
PEAK_MIB = 300
WAIT_SECONDS = 60  # a lookup still running then is killed (by `subprocess.run`) and failed
MEASURE = (
    "import json, resource, subprocess, sys\n"
    "with open(sys.argv[1], 'rb') as paste:\n"
    "    try:\n"
    "        done = subprocess.run(sys.argv[3:], stdin=paste, capture_output=True,\n"
    "                              timeout=float(sys.argv[2]))\n"
    "        code, out, err = done.returncode, done.stdout, done.stderr\n"
    "    except subprocess.TimeoutExpired as late:\n"
    "        code, out, err = 'killed', late.stdout or b'', late.stderr or b''\n"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'cpu': used.ru_utime + used.ru_stime, 'peak_mib': used.ru_maxrss / 1024,\n"
    "                  'code': code, 'out': out.decode('utf-8', 'replace'),\n"
    "                  'err': err.decode('utf-8', 'replace')}))\n"
)
WORDS = ("invalid value for the option", "bad shape", "cannot convert", "unknown column",
         "expected a mapping", "timed out waiting for", "already closed", "not supported",
         "bad bad", "missing key", "could not parse", "too many values")


def _module(number: int) -> str:
    """Raises of the shapes a hostile paste meets, 100 a module."""
    lines = []
    for index in range(100):
        words = WORDS[(index + number) % len(WORDS)]
        other = WORDS[(index * 7 + number) % len(WORDS)]
        kind = index % 10
        if kind == 0:
            body = "raise ValueError(message)"  # only a placeholder: explains nothing
        elif kind == 1:
            body = f"raise ValueError(f'bad {{x}} {index}')"
        elif kind == 2:
            body = f"raise KeyError(f'{{x}} {words}')"
        elif kind == 3:
            body = f"raise TypeError(f'{words} {{x}}: {other} {{y}}')"
        elif kind == 4:
            body = f"raise ValueError('{words} ({index}) and {other}')"
        elif kind == 5:
            body = f"raise RuntimeError(f'{words} {{x}}\\n')"  # ends in a line break
        elif kind == 6:
            body = f"raise OSError(f'{words}: see https://example.org/{{x}}/{index}')"
        elif kind == 7:
            body = f"raise ValueError(f'{{x}} {{y}} {words} {index}')"
        elif kind == 8:
            body = f"raise LookupError(f'{words}')"
        else:
            body = f"raise ValueError(f'{words} {{x}} {other} {{y}} {index}')"
        lines.append(f"def f{index}(x, y, message):\n    {body}\n")
    return "\n\n".join(lines)


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """500 raise sites extracted, the lookup index built."""
    base = tmp_path_factory.mktemp("hostile")
    repo = GitRepo(base / "lib")
    for number in range(5):
        repo.write(f"m{number}.py", _module(number))
    repo.commit("raises of every shape")
    done = subprocess.run([CRAWLER, "extract", "lib", "-o", "out", "-q", "--no-evidence"],
                          cwd=base, env=child_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    subprocess.run([CRAWLER, "lookup", "x", "out"], cwd=base, env=child_env(),
                   capture_output=True, timeout=120, check=False)
    return base / "out"


def measured(catalogue: Path, paste: Path, *options: str) -> dict[str, object]:
    """`crawler lookup - CATALOGUE` on `paste`: its CPU, peak memory, exit code and output."""
    done = subprocess.run([sys.executable, "-c", MEASURE, str(paste), str(WAIT_SECONDS), CRAWLER,
                           "lookup", "-", str(catalogue), *options], env=child_env(),
                          capture_output=True, text=True, timeout=WAIT_SECONDS + 60, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


FRAME = ('  File "/usr/lib/python3/site-packages/pkg/mod.py", line 123, in function_name\n'
         "    result = call(arg, other=thing)\n")


def _traceback(size: int) -> bytes:
    """A traceback of about `size` characters: frames, then its exception line."""
    return ("Traceback (most recent call last):\n" + FRAME * (size // len(FRAME))
            + "ValueError: bad shape (3, 4) for the widget\n").encode()


HOSTILE: dict[str, Callable[[], bytes]] = {
    "50 MB on one line": lambda: b"x" * 50_000_000,
    "40 MB of bad bad": lambda: b"bad " * 10_000_000,
    "300 KB of repetitive text": lambda: (b"ValueError: invalid value for the option " * 8000)[:300_000],
    "4 MB of repetitive lines": lambda: (b"ValueError: invalid value for the option\n" * 100_000)[:4_000_000],
    "100,000 lone CR": lambda: b"\r" * 100_000,
    "40 MB traceback": lambda: _traceback(40_000_000),
    "100 KB of bad bad": lambda: b"bad " * 25_000,
    "10,000 lone CR": lambda: b"\r" * 10_000,
    "1 MB of NUL": lambda: b"\0" * 1_000_000,
    "4 MB of JSON log lines, each an escaped traceback": lambda: (json.dumps(
        {"exc_info": _traceback(300).decode()}).encode() + b"\n") * 10_000,
    "a JSON string of 100,000 escaped line breaks": lambda: json.dumps(
        "ValueError: bad shape" + "\n" * 100_000).encode(),
    "4 MB of lines behind a build log's column": lambda: b"[   32s] bad bad\n" * 250_000,
    # nested deeper than JSON's decoder goes, and deeper than a recursive walk of it may go
    "a JSON record of 100,000 nested lists": lambda: (
        b'{"exc_info": ' + b"[" * 100_000 + b'"ValueError: bad\\nshape"' + b"]" * 100_000 + b"}"),
    "a JSON record of 5,000 nested lists holding a traceback": lambda: (
        b'{"exc_info": ' + b"[" * 5_000 + json.dumps(_traceback(300).decode()).encode()
        + b"]" * 5_000 + b"}"),
    "256 KB of source code, many words": lambda: b"".join(
        Path(module.__file__).read_bytes() for module in (json, subprocess, shutil)
        if module.__file__)[:MAX_PASTE],
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_paste_is_answered_within_a_second_and_300_mib(
        catalogue: Path, tmp_path: Path, name: str) -> None:
    data = HOSTILE[name]()
    paste = tmp_path / "paste"
    paste.write_bytes(data)
    run = measured(catalogue, paste, "--json")
    assert run["code"] in (0, 1), (name, run["code"], run["cpu"], run["err"])
    assert run["cpu"] < CPU_SECONDS, (name, run["cpu"])
    assert run["peak_mib"] < PEAK_MIB, (name, run["peak_mib"])
    answer = json.loads(str(run["out"]))
    characters = len(data.decode().replace("\r\n", "\n").replace("\r", "\n"))
    # the cut is said: what was read (the paste's end) and what was left out of its beginning
    assert answer["paste"]["read"] == min(characters, MAX_PASTE)
    assert answer["paste"]["left_out"] == max(characters - MAX_PASTE, 0)


@pytest.mark.parametrize("name", ["50 MB on one line", "4 MB of repetitive lines",
                                  "256 KB of source code, many words"])
def test_a_hostile_paste_to_an_export_is_bounded_too(catalogue: Path, tmp_path: Path,
                                                    name: str) -> None:
    """`lookup --db`: the records held in memory (`LookupIndex`), asked as the index is. What
    the paste adds is bounded as on the output folder's path; `--db` itself goes through the
    whole command line and loads every record before it reads a word (0.65 s of CPU here for a
    one-word paste), so the whole run is held to that start plus the paste's budget."""
    database = tmp_path / "errors.db"
    done = subprocess.run([CRAWLER, "export", str(catalogue), "--format", "sqlite", "-o",
                           str(database), "-q"], env=child_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    paste = tmp_path / "paste"
    data = HOSTILE[name]()
    paste.write_bytes(data)
    word = tmp_path / "word"
    word.write_bytes(b"x")
    start = measured(catalogue, word, "--db", str(database), "--json")
    run = measured(catalogue, paste, "--db", str(database), "--json")
    assert run["code"] in (0, 1), (name, run["code"], run["cpu"], run["err"])
    added = float(run["cpu"]) - float(start["cpu"])  # type: ignore[arg-type]
    assert added < CPU_SECONDS and run["peak_mib"] < PEAK_MIB, (name, run["cpu"], start["cpu"],
                                                                     run["peak_mib"])
    read = json.loads(str(run["out"]))["paste"]["read"]
    assert read == min(len(data.decode().replace("\r", "\n")), MAX_PASTE)


def test_the_cut_is_said_in_the_text_answer_and_the_traceback_end_is_read(
        catalogue: Path, tmp_path: Path) -> None:
    """A traceback over the cap keeps its end: its exception line is read and answered."""
    paste = tmp_path / "paste"
    data = _traceback(MAX_PASTE * 2)
    paste.write_bytes(data)
    run = measured(catalogue, paste)
    out = str(run["out"]).splitlines()
    assert out[0] == (f"read the last {MAX_PASTE:,} characters of the paste: its first "
                      f"{len(data) - MAX_PASTE:,} were left out (a traceback ends with the "
                      "exception raised last)")
    assert any("bad shape" in line for line in out[1:]), out
    answer = json.loads(str(measured(catalogue, paste, "--json")["out"]))
    assert answer["paste"]["exceptions"][0]["text"] == "bad shape (3, 4) for the widget"
    assert answer["paste"]["forms"] == ["traceback"]


def test_a_long_real_traceback_is_read_whole(catalogue: Path, tmp_path: Path) -> None:
    """Tens of KB (a framework's deep traceback) are under the cap: nothing is left out."""
    paste = tmp_path / "paste"
    data = _traceback(80_000)
    paste.write_bytes(data)
    answer = json.loads(str(measured(catalogue, paste, "--json")["out"]))
    assert (answer["paste"]["read"], answer["paste"]["left_out"]) == (len(data), 0)
    assert len(answer["paste"]["exceptions"][0]["frames"]) == 80_000 // len(FRAME)


def test_the_library_reads_the_end_of_a_paste_over_the_cap() -> None:
    """`rank` as a library caller gives it a paste: cut to its end, the cut counted."""
    from crawler.serve.lookup.sources import LookupIndex

    answer = LookupIndex().answer("x" * (MAX_PASTE + 10) + "\nValueError: bad")
    assert answer.paste is not None
    assert (answer.paste.read, answer.paste.left_out) == (MAX_PASTE, 26)
    assert answer.paste.reported[0].text.endswith("\nValueError: bad")
