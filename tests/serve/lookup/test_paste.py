"""What users paste, looked up with the installed `crawler` as they would: every paste form of
`paste_forms/` (real output of `widgets.py`'s raises, see make_samples.py) finds its record
first with exit 0; match kinds, ties, class kinship, earned confidence, the plain "no raise
site" answer, old wordings and removed sites of a `crawler history` catalogue, and the index
made by extract."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import jsonschema
import pytest

from crawler.catalogue.merge import merge
from crawler.parse.visitor import find_raise_sites
from crawler.records import Pin
from crawler.serve.lookup import index as lookup_index
from crawler.serve.lookup import paste as paste_module
from crawler.serve.lookup.paste import read_paste
from crawler.serve.lookup.ranking import NO_SITE
from crawler.serve.lookup.sources import LookupIndex
from tests.helpers.gitrepo import GitRepo

FORMS = Path(__file__).parent / "paste_forms"
CRAWLER = shutil.which("crawler") or "crawler"
PIN = Pin(source=".", host="local", owner="o", name="n", ref="HEAD", sha="a" * 40)
SCHEMA = json.loads((Path(__file__).parents[3] / "schemas" / "lookup.schema.json").read_text(
    encoding="utf-8"))
# each sample: the raise that printed its last exception (widgets.py's line), and a form it has
SAMPLES = {
    "plain": (21, "traceback"), "first_line": (21, "message"), "chained": (29, "chained"),
    "handling": (14, "chained"), "group": (21, "group"), "logged": (14, "logging"),
    "boxed": (14, "rich"), "pytest": (21, "pytest"), "pytest_summary": (14, "pytest"),
    "ipython": (21, "ipython"), "wrapped": (14, "traceback"), "json_logged": (14, "json"),
    "remote": (14, "remote"),
}


def crawler(*args: str) -> tuple[int, str]:
    done = subprocess.run([CRAWLER, *args], capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode, done.stdout


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`widgets.py` in a repository, extracted by the installed command: the output folder."""
    where = tmp_path_factory.mktemp("widgets ü")
    repo = GitRepo(where / "repo")
    repo.write("widgets.py", (FORMS / "widgets.py").read_text(encoding="utf-8"))
    repo.commit("widgets")
    code, _ = crawler("extract", str(repo.path), "-o", str(where / "out"), "-q")
    assert code == 0
    return where / "out"


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_every_paste_form_finds_its_raise_first(widgets: Path, sample: str) -> None:
    line, form = SAMPLES[sample]
    pasted = (FORMS / f"{sample}.txt").read_text(encoding="utf-8")
    code, out = crawler("lookup", pasted, str(widgets), "--json")
    answer = json.loads(out)
    first = answer["matches"][0]
    assert (code, answer["exit"], answer["verdict"]) == (0, 0, "found")
    assert (first["rank"], first["path"], first["line"], first["tie"]) == (1, "widgets.py", line,
                                                                          False)
    assert first["confident"] and first["match"] in ("exact", "exact prefix")
    assert form in answer["paste"]["forms"]
    jsonschema.validate(answer, SCHEMA)


def test_a_cut_summary_line_is_an_exact_prefix_with_its_coverage(widgets: Path) -> None:
    pasted = (FORMS / "pytest_summary.txt").read_text(encoding="utf-8")
    _, out = crawler("lookup", pasted, str(widgets), "--json")
    answer = json.loads(out)
    first = answer["matches"][0]
    assert first["match"] == "exact prefix" and 0.2 < first["coverage"] < 0.5
    (reported,) = answer["paste"]["exceptions"]
    assert (reported["exception"], reported["cut"]) == ("widgets.FrameError", True)


def test_the_frames_of_a_traceback_are_kept(widgets: Path) -> None:
    _, out = crawler("lookup", (FORMS / "plain.txt").read_text(encoding="utf-8"), str(widgets),
                     "--json")
    frames = json.loads(out)["paste"]["exceptions"][0]["frames"]
    assert [(f["path"], f["line"], f["function"]) for f in frames] == [
        ("/home/user/proj/plain.py", 2, "<module>"), ("/home/user/proj/widgets.py", 21, "paint")]


def test_a_message_from_elsewhere_gets_the_plain_answer(widgets: Path) -> None:
    """numpy's broadcasting error (its C code): no raise site of widgets.py prints it."""
    pasted = "ValueError: operands could not be broadcast together with shapes (3,) (4,) "
    code, out = crawler("lookup", pasted, str(widgets))
    assert (code, out.strip()) == (1, NO_SITE)
    _, out = crawler("lookup", pasted, str(widgets), "--json")
    answer = json.loads(out)
    assert (answer["verdict"], answer["exit"], answer["says"], answer["matches"]) == (
        "none", 1, NO_SITE, [])


def test_extract_leaves_the_index_ready(widgets: Path) -> None:
    """The first lookup after an extract reads no record file: the index holds every one."""
    folder = next(widgets.rglob("manifest.yaml")).parent
    index = folder / lookup_index.INDEX_FILE
    with closing(sqlite3.connect(index)) as connection:
        stored = {row[0] for row in connection.execute("SELECT name FROM files")}
    assert stored == {path.name for path in (folder / "errors").iterdir()}
    assert lookup_index.refresh(folder) == 0  # nothing for a lookup to read again


SOURCE = b'''
class FrameError(ValueError):
    pass


def f(a, b, msg, e, extra_msg):
    raise FrameError(f"frame {a} holds at most {b} widgets")
    raise KeyError(f"frame {a} holds at most {b} widgets")
    raise TypeError(f"colour {a} is unknown")
    raise LookupError(f"colour {a} is unknown")
    raise ValueError(msg)
    raise RuntimeError(f"{str(e)}\\n{extra_msg}")
    raise OSError("cannot open the frame store\\nSee https://widgets.example/v2/errors#store")
'''


@pytest.fixture(scope="module")
def index() -> LookupIndex:
    sites = find_raise_sites("w.py", SOURCE, "w").sites
    return LookupIndex(merge(PIN, [], sites).records, bases={"FrameError": ("ValueError",),
                                                             "w.FrameError": ("ValueError",)})


def test_the_pasted_class_and_its_subclasses_come_first(index: LookupIndex) -> None:
    matches = index.lookup("ValueError: frame 3 holds at most 2 widgets")
    assert [(m.wording.exception, m.kinship, m.rank) for m in matches[:2]] == [
        ("FrameError", "subclass", 1), ("KeyError", "other", 2)]


def test_equal_texts_of_unrelated_classes_are_ties(index: LookupIndex) -> None:
    matches = index.lookup("colour mauve is unknown")
    assert [(m.rank, m.tie, m.kind) for m in matches[:2]] == [(1, True, "exact"),
                                                              (1, True, "exact")]
    assert {m.wording.exception for m in matches[:2]} == {"TypeError", "LookupError"}


def test_a_template_of_placeholders_is_never_the_answer(index: LookupIndex) -> None:
    long = ("the frame store was moved while widgets were being painted\nand the painter "
            "could not find it again after three tries")
    answer = index.answer(long)
    assert not answer.found
    assert all(m.wording.template not in ("{msg}", "{str(e)}\n{extra_msg}") or not m.confident
               for m in answer.matches)


def test_another_url_in_the_class_line_and_a_wrapped_line_still_match(index: LookupIndex) -> None:
    old = "OSError: cannot open the\nframe store\nSee https://old.example/v1/errors.html#store"
    (first, *_) = index.lookup(old)
    assert (first.wording.exception, first.kind, first.confident) == ("OSError", "exact", True)
    cut = index.lookup("OSError: cannot open the frame store")[0]
    assert (cut.kind, cut.confident, cut.coverage < 1) == ("exact prefix", True, True)


def history_module(load: str, dropped: bool) -> str:
    text = f'def load(x):\n    if x < 0:\n        raise ValueError(f"{load}")\n    return x\n'
    if dropped:
        text += ('\n\ndef drop(w):\n    if w:\n        raise RuntimeError("the dropped '
                 'feature is gone for good")\n')
    return text


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two releases: v1 says `negative size {x}` and has a `drop`; v2 rewords one, drops the
    other. `crawler history` walked them: the output folder."""
    where = tmp_path_factory.mktemp("history ä")
    repo = GitRepo(where / "repo")
    repo.write("pkg/a.py", history_module("negative size {x} for the buffer", True))
    repo.commit("v1")
    repo.tag("v1.0")
    repo.write("pkg/a.py", history_module("size {x} of the buffer is negative", False))
    repo.commit("v2")
    repo.tag("v2.0")
    code, _ = crawler("history", str(repo.path), "--tags", "v*", "-o", str(where / "out"), "-q")
    assert code == 0
    return where / "out"


def test_an_old_wording_shows_its_releases_and_todays(walked: Path) -> None:
    code, out = crawler("lookup", "ValueError: negative size -3 for the buffer", str(walked),
                        "--json")
    first = json.loads(out)["matches"][0]
    assert code == 0 and first["match"] == "exact" and first["status"] == "needs_review"
    assert first["past_wording"] == {"first": "v1.0", "last": "v1.0",
                                     "today": "size {x} of the buffer is negative",
                                     "successor": first["id"]}


def test_a_removed_site_is_shown_removed_with_its_last_release(walked: Path) -> None:
    code, out = crawler("lookup", "RuntimeError: the dropped feature is gone for good",
                        str(walked), "--json")
    first = json.loads(out)["matches"][0]
    assert (first["status"], first["last_release"], first["match"]) == ("removed", "v1.0",
                                                                          "exact")
    code, text = crawler("lookup", "the dropped feature is gone for good", str(walked))
    assert "removed: last in v1.0" in text



def test_a_paste_that_two_wordings_print_names_the_releases_of_both(tmp_path: Path) -> None:
    """v1 printed `vmap got arg 0 ...` literally, v2 on `{name} got arg {i} ...` with name
    'vmap': a v2 user's paste fits both, so the answer names both wordings' releases (jax's
    vmap message, walked over its releases, showed v1's alone)."""
    repo = GitRepo(tmp_path / "repo")
    for tag, text in (("v1.0", 'f"vmap got arg {i} of rank 0"'),
                      ("v2.0", 'f"{name} got arg {i} of rank 0"')):
        repo.write("pkg/a.py", f"def check(name, i):\n    raise ValueError({text})\n")
        repo.commit(tag)
        repo.tag(tag)
    code, _ = crawler("history", str(repo.path), "--tags", "v*", "-o", str(tmp_path / "out"), "-q")
    assert code == 0
    paste = "ValueError: vmap got arg 0 of rank 0"
    code, out = crawler("lookup", paste, str(tmp_path / "out"), "--json")
    (first,) = json.loads(out)["matches"][:1]
    assert code == 0 and first["template"] == "vmap got arg {i} of rank 0"
    assert first["past_wording"]["first"] == first["past_wording"]["last"] == "v1.0"
    assert first["also_fits"] == [{"template": "{name} got arg {i} of rank 0", "first": "v2.0",
                                   "last": None}]
    code, text = crawler("lookup", paste, str(tmp_path / "out"))
    assert "fits too: {name} got arg {i} of rank 0, printed by v2.0 to now" in text


def _decorated(form: str) -> str:
    """plain.txt (a real traceback) as a tool relays it: the lines each tool prints."""
    lines = (FORMS / "plain.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
    if form == "quoted":  # a mail or markdown quote
        return "\n".join(f"> {line}" for line in lines)
    if form == "internalerror":  # pytest's INTERNALERROR lines
        return "\n".join(f"INTERNALERROR> {line}" for line in lines)
    if form == "compose":  # docker compose's service column
        return "\n".join(f"web-1  | {line}" for line in lines)
    if form == "heroku":  # a log's column on every line, its time stamp counting up
        return "\n".join(f"2022-06-15T03:42:11.79412{n % 10}+00:00 app[web.1]: {line}"
                         for n, line in enumerate(lines)) + \
            "\n2022-06-15T03:42:11.796452+00:00 heroku[router]: at=info method=POST status=500"
    if form == "ray":  # a worker process's column
        return "\n".join(f"(_execute_read_task pid=2023) {line}" for line in lines)
    if form == "headless":  # the top cut off: indented frames first
        return "\n".join(lines[3:])
    if form == "sentry":  # Sentry: the message above the frames
        return "\n".join([lines[-1], "(2 additional frame(s) were not displayed)", "...",
                          *lines[1:-1]])
    raise AssertionError(form)


@pytest.mark.parametrize("form", ["quoted", "internalerror", "compose", "heroku", "ray", "headless",
                                  "sentry"])
def test_a_relayed_or_reordered_traceback_finds_its_raise_first(widgets: Path, form: str) -> None:
    code, out = crawler("lookup", _decorated(form), str(widgets), "--json")
    answer = json.loads(out)
    first = answer["matches"][0]
    assert (code, first["path"], first["line"], first["match"]) == (0, "widgets.py", 21, "exact")
    (reported,) = answer["paste"]["exceptions"]
    assert reported["text"] == "unknown colour 'green': choose red or blue"
    assert [frame["line"] for frame in reported["frames"]][-1] == 21
    jsonschema.validate(answer, SCHEMA)


def test_a_usage_error_after_usage_lines_and_a_class_named_in_prose_are_read(widgets: Path
                                                                             ) -> None:
    cli = "$ paint green\nUsage: paint [OPTIONS] COLOUR\n\nError: unknown colour 'green': choose red or blue"
    title = "I keep getting WidgetError: unknown colour 'green': choose red or blue"
    for pasted in (cli, title):
        code, out = crawler("lookup", pasted, str(widgets), "--json")
        first = json.loads(out)["matches"][0]
        assert (code, first["line"], first["match"]) == (0, 21, "exact")


def test_a_paste_beginning_with_a_dash_or_read_from_stdin_is_the_message(widgets: Path) -> None:
    """A pytest rule line first is no option (exit 2 before); `-` reads standard input."""
    pasted = "-" * 30 + " Captured stderr " + "-" * 30 + "\n" + \
        (FORMS / "plain.txt").read_text(encoding="utf-8")
    code, out = crawler("lookup", pasted, str(widgets), "--json", "-n", "3")
    assert code == 0 and json.loads(out)["matches"][0]["line"] == 21
    done = subprocess.run([CRAWLER, "lookup", "-", str(widgets), "--json"], input=pasted,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["matches"][0]["line"] == 21
    code, _ = crawler("lookup", "x", str(widgets), "--no-such-option")
    assert code == 2  # a typed option that does not exist is still a usage error


TYPESET = b'''
class ShapeError(TypeError):
    pass


def g(name, shape, what, fun):
    raise LookupError(f'No such command "{name}". Try \\'tool --help\\'... for more')
    raise ValueError(f"the widget \\u201c{name}\\u201d is gone")
    raise ShapeError(f"Abstract value {shape} where a concrete one is expected\\nThe {fun} function "
                     "was called on it")
    raise ShapeError(f"Abstract value {shape} where a concrete one is expected\\n{what}")
    raise RuntimeError(f"Abstract painter {name} has no brush")
'''


@pytest.fixture(scope="module")
def typeset() -> LookupIndex:
    sites = find_raise_sites("t.py", TYPESET, "t").sites
    return LookupIndex(merge(PIN, [], sites).records, bases={"ShapeError": ("TypeError",)})


@pytest.mark.parametrize(("pasted", "exception", "name"), [
    # a tracker curled the quotes, made `--` a dash and `...` an ellipsis
    ("LookupError: No such command \u201chelp\u201d. Try \u2018tool \u2013help\u2019\u2026 for more",
     "LookupError", "help"),
    # the code prints curly quotes, the user typed straight ones (and a non-breaking space)
    ('ValueError: the widget "bolt"\u00a0is gone', "ValueError", "bolt"),
])
def test_typographic_characters_are_read_as_the_plain_ones_on_both_sides(
        typeset: LookupIndex, pasted: str, exception: str, name: str) -> None:
    answer = typeset.answer(pasted)
    first = answer.matches[0]
    assert answer.found and first.kind == "exact" and first.wording.exception == exception
    assert first.captures == {"name": name} and first.explained > 0.7


def test_a_title_cut_to_one_word_puts_the_pasted_class_first(typeset: LookupIndex) -> None:
    """A paste cut short is the beginning of every template it prefixes, however long: how much
    of each it shows is no score (the rest is unseen, not missing) but the order among them
    (a message is the likelier cut there the shorter it is); the class pasted decides first,
    and such a beginning comes before templates that only share a word with it."""
    answer = typeset.answer("FAILED t.py::test_g - t.ShapeError: Abstract...")
    assert not answer.found  # one word explains nothing for sure
    assert [(m.wording.exception, m.kind, m.rank) for m in answer.matches] == [
        ("ShapeError", "exact prefix", 1), ("ShapeError", "exact prefix", 2),
        ("RuntimeError", "exact prefix", 3)]
    assert answer.matches[0].wording.template.endswith("{what}")


def test_a_message_printed_before_its_traceback_head_is_read() -> None:
    """Werkzeug's debugger page prints the class, the message, then the traceback, whose head
    has no colon and whose frames are not indented."""
    pasted = ("RuntimeError\nRuntimeError: The session is unavailable because no secret key was "
              "set.\n\nTraceback (most recent call last)\n"
              'File "/venv/lib/python3.8/site-packages/flask/app.py", line 2464, in __call__\n'
              "return self.wsgi_app(environ, start_response)\n")
    paste = read_paste(pasted)
    first = paste.reported[0]
    assert "message first" in paste.forms
    assert first.exception == "RuntimeError"
    assert first.text == "The session is unavailable because no secret key was set."
    assert [frame.function for frame in first.frames] == ["__call__"]


def test_a_traceback_cut_before_its_last_line_keeps_its_frames() -> None:
    pasted = ('Traceback (most recent call last):\n  File "/x/lib/app.py", line 55, in f\n'
              '    raise KeyError(key)\n')
    first = read_paste(pasted).reported[0]
    assert (first.exception, first.text, first.cut) == (None, "", True)
    assert [frame.line for frame in first.frames] == [55]
    cut = read_paste('  File "/x/lib/app.py", line 55, in f\n    raise ValueError("bad shape for')
    assert (cut.reported[0].exception, cut.reported[0].texts) == ("ValueError", ("bad shape for",))


def tagged_and_walked(repo: GitRepo, tag: str, out: Path) -> Path:
    """The repository's last change committed and tagged `tag`, and `crawler history` walked
    over its v* tags into `out`."""
    repo.commit(tag)
    repo.tag(tag)
    code, _ = crawler("history", str(repo.path), "--tags", "v*", "-o", str(out), "-q")
    assert code == 0
    return out


def test_a_removed_site_found_by_an_old_wording_gives_the_sites_last_release(
        tmp_path: Path) -> None:
    """v1 words it one way, v2 another, v3 drops the raise: a paste of v1's wording is the
    removed record, last in v2.0 (not v1.0, the old wording's last release)."""
    repo = GitRepo(tmp_path / "repo")
    for tag, text in (("v1.0", "the legacy loader cannot read {x}"),
                      ("v2.0", "the legacy loader does not read {x} any more")):
        repo.write("pkg/a.py", f'def load(x):\n    raise RuntimeError(f"{text}")\n')
        repo.commit(tag)
        repo.tag(tag)
    repo.write("pkg/a.py", "def load(x):\n    return x\n")
    out = tagged_and_walked(repo, "v3.0", tmp_path / "out")
    paste = "RuntimeError: the legacy loader cannot read 'a.cfg'"
    code, out_json = crawler("lookup", paste, str(out), "--json")
    first = json.loads(out_json)["matches"][0]
    assert (first["status"], first["last_release"]) == ("removed", "v2.0")
    assert first["past_wording"]["last"] == "v1.0"
    code, text = crawler("lookup", paste, str(out))
    assert "the site was removed after v2.0" in text


def test_a_removed_site_is_shown_with_its_likeliest_successor(tmp_path: Path) -> None:
    """v1 raises in pkg/old.py; v2 moves the function to pkg/new.py and rewords the message at
    once: the walk closes one record and opens another. A paste of v1's words finds the
    removed record, shown with the live one as its likeliest successor."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/old.py", 'def connect(url):\n    raise ConnectionError(f"cannot reach {url}")\n')
    repo.commit("v1")
    repo.tag("v1.0")
    (repo.path / "pkg" / "old.py").unlink()
    repo.write("pkg/new.py", "import os\n\n\ndef connect(url):\n    if os.environ:\n"
               '        raise ConnectionError(f"the server at {url} did not answer in time")\n')
    out = tagged_and_walked(repo, "v2.0", tmp_path / "out")
    paste = "ConnectionError: cannot reach db.local: the server at db.local did not answer"
    code, out_json = crawler("lookup", paste, str(out), "--json")
    said = json.loads(out_json)
    removed = [m for m in said["matches"] if m["status"] == "removed"]
    assert removed and removed[0]["successor"]["path"] == "pkg/new.py"
    jsonschema.validate(said, SCHEMA)
    code, text = crawler("lookup", paste, str(out))
    assert "likeliest successor:" in text and "pkg/new.py" in text


def test_a_quote_of_a_quote_and_a_shared_margin_are_read_off() -> None:
    # networkx's Trac session, quoted three times in a mail thread
    quoted = ("> > > G.edges(3) # node 3 throws exception\n"
              "> > > Traceback (most recent call last):\n"
              '> > >   File "/networkx/networkx/graph.py", line 468, in edges_iter\n'
              '> > >     raise NetworkXError, "nbunch is not a node or a sequence of nodes."\n'
              "> > > networkx.exception.NetworkXError: nbunch is not a node or a sequence of "
              "nodes.")
    found = read_paste(quoted)
    assert "quoted" in found.forms and "traceback" in found.forms
    assert found.reported[0].exception == "networkx.exception.NetworkXError"
    assert found.reported[0].text == "nbunch is not a node or a sequence of nodes."
    assert [frame.function for frame in found.reported[0].frames] == ["edges_iter"]
    # every line indented alike (networkx's girvan thread; sqlalchemy's and attrs' code
    # blocks): the margin is not the program's
    indented = read_paste("    Traceback (most recent call last):\n"
                          '      File "/env/sqlalchemy/sql/schema.py", line 9, in __new__\n'
                          "    sqlalchemy.exc.InvalidRequestError: Table 'users' is already "
                          "defined")
    assert indented.reported[0].exception == "sqlalchemy.exc.InvalidRequestError"
    assert indented.reported[0].frames[0].function == "__new__"
    # a margin only some lines have is the program's: a traceback's frames keep theirs
    plain = read_paste('Traceback (most recent call last):\n  File "a.py", line 1, in f\n'
                       "    raise ValueError('x')\nValueError: x")
    assert plain.reported[0].frames[0].source == "raise ValueError('x')"


def test_a_pytest_source_cut_inside_its_raise_reads_the_raise_literals() -> None:
    # httpx's thread: pytest's long report of the failing source, the page's copy cut before
    # its `E` lines, the raise's message in adjacent literals over two lines
    source = ("        if http2:\n"
              "            try:\n"
              "                import h2  # noqa\n"
              "            except ImportError:  # pragma: nocover\n"
              ">               raise ImportError(\n"
              "                    \"Using http2=True, but the 'h2' package is not installed. \"\n"
              '                    "Make sure to install httpx using `pip')
    found = read_paste(source)
    assert "pytest" in found.forms
    first = found.reported[0]
    assert (first.exception, first.cut) == ("ImportError", True)
    assert first.text == ("Using http2=True, but the 'h2' package is not installed. Make sure "
                          "to install httpx using `pip")
    # flask's traceback cut inside its raise's one source line: the same reading
    cut = read_paste('Traceback (most recent call last):\n  File "/site/flask/app.py", line 55, '
                     "in wrapper_func\n    raise AssertionError('A setup function was called "
                     "after")
    assert cut.reported[0].text == "A setup function was called after"
    # a `>` line that raises a value, not a literal, or calls something: the paste as it was
    for other in (">       raise error\nE   ValueError: x", ">       client.get(url)\n"
                  "        return 1"):
        assert "ImportError" not in [r.exception for r in read_paste(other).reported]
    shown = read_paste(">       client.get(url)\n        return 1")
    assert shown.reported[0].exception is None and not shown.reported[0].cut


def test_a_logged_error_among_a_programs_log_lines_is_read_off_its_record() -> None:
    # alembic's command line (its logger's `LEVEL [name] message`), as Flask-Migrate logs it
    logged = ("$ flask db migrate\n"
              "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
              "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
              "ERROR [root] Error: Target database is not up to date.")
    texts = read_paste(logged).reported[0].texts
    # the last record first, its `Error: ` peeled too; then the records before it
    assert texts[1:4] == ("Error: Target database is not up to date.",
                          "Target database is not up to date.", "Will assume transactional DDL.")
    index = LookupIndex(merge(PIN, [], find_raise_sites("api.py", b'''
def run(heads, current):
    if set(heads) != set(current):
        raise CommandError("Target database is not up to date.")
''', "api").sites).records)
    answer = index.answer(logged)
    assert answer.found and answer.matches[0].wording.qualname == "run"
    # the heads of scrapy's (`date [logger] LEVEL: `) and celery's (`[date: LEVEL/process] `)
    for line, message in (
            ("2017-11-18 21:46:29 [scrapy.core.scraper] ERROR: Error processing {'a': 1}",
             "Error processing {'a': 1}"),
            ("[2019-01-01 10:00:00,000: ERROR/MainProcess] Task add raised: KeyError('x')",
             "Task add raised: KeyError('x')")):
        assert message in read_paste(f"started\n{line}").reported[0].texts
        assert read_paste(line).reported[0].text == message


def test_a_traceback_a_log_relayed_line_by_line_is_read_without_the_logs_column() -> None:
    # paramiko's own log format, from github.com/paramiko/paramiko/issues/980 (cut there)
    column = "ERR [20170603-18:40:31.{}] thr=1   paramiko.transport: "
    pasted = "\n".join([
        "DEB [20170603-18:40:31.080] thr=1   paramiko.transport: starting thread (client mode)",
        column.format(393) + "Exception: Error reading SSH protocol banner",
        column.format(393) + "Traceback (most recent call last):",
        column.format(393) + '  File "C:\\Python35\\lib\\site-packages\\paramiko\\transport.py", '
                             "line 1893, in _check_banner",
        column.format(393) + "    buf = self.packetizer.readline(timeout)",
        column.format(408) + '  File "C:\\Python35\\lib\\site-packages\\paramiko\\packet.py", '
                             "line 331, in readline"])
    paste = read_paste(pasted)
    assert "logging" in paste.forms
    first = paste.reported[0]
    assert [(frame.line, frame.function) for frame in first.frames] == [
        (1893, "_check_banner"), (331, "readline")]
    assert any("Error reading SSH protocol banner" in text for text in first.texts)


def test_what_is_no_logs_column_is_left_as_it_is() -> None:
    # pytest's `E` lines hold a traceback of their own; one frame in a line of prose is no column
    pytest_lines = ('E     File "/x/lib/app.py", line 5, in f\nE     File "/x/lib/app.py", line 9, '
                    'in g\nE   ValueError: bad shape')
    assert "pytest" in read_paste(pytest_lines).forms
    prose = ('I get this:  File "/x/lib/app.py", line 5, in f\nValueError: bad shape')
    assert "logging" not in read_paste(prose).forms



def test_the_same_logs_other_lines_go_only_after_the_relayed_traceback_begins() -> None:
    column = "2022-06-15T03:42:11.79412{}+00:00 app[web.1]: "
    before = ["2022-06-15T03:42:10.000001+00:00 heroku[web.1]: Starting process",
              "2022-06-15T03:42:10.000002+00:00 heroku[web.1]: State changed from starting to up"]
    after = "2022-06-15T03:42:11.796452+00:00 heroku[router]: at=info status=500"
    frames = ['  File "/app/.heroku/python/lib/python3.9/site-packages/aiohttp/helpers.py", '
              "line 701, in __enter__", "    raise RuntimeError(",
              '  File "/app/.heroku/python/lib/python3.9/site-packages/aiohttp/helpers.py", '
              "line 701, in __enter__",
              "RuntimeError: Timeout context manager should be used inside a task"]
    lines = [*before, *(column.format(n) + line for n, line in enumerate(frames)), after]
    forms: list[str] = []
    # the lines before the traceback are kept, what the log says after it is dropped
    assert paste_module._without_log_column(lines, forms) == [*before, *frames]
    assert forms == ["logging"]
    first = read_paste("\n".join(lines)).reported[0]
    assert first.text == "Timeout context manager should be used inside a task"


def test_a_traceback_or_message_a_json_log_escaped_is_read_decoded() -> None:
    # one line of caikit's JSON log, starlette's chained traceback escaped in its "exception"
    # value, the excerpt cut inside it (github.com/caikit/caikit/issues/736)
    logged = (
        '{"channel": "SERVR-HTTP", "exception": "Traceback (most recent call last):\\n  File '
        '\\"/usr/local/lib/python3.11/site-packages/starlette/formparsers.py\\", line 236, in '
        'parse\\n    boundary = params[b\\"boundary\\"]\\n               ~~~~~~^^^^^^^^^^^^^\\n'
        "KeyError: b'boundary'\\n\\nDuring handling of the above exception, another exception "
        'occurred:\\n\\nTraceback (most recent call last):\\n  File \\"/usr/local/lib/python3.11/'
        'site-packages/starlette/formparsers.py\\", line 238, in parse\\n    raise '
        'MultiPartException(\\"Missing boundary in multipart.\\")\\nstarlette.formparsers.'
        'MultiPartException: Missing boundary in multipart.\\n\\nDuring handling of the above '
        'exception, another exception occurred:\\n\\nTraceback (most recent call last):\\n  File '
        '\\"/usr/local/lib/python3.11/site-packages/caikit/runtime/http_server/http_server.py\\", '
        'line 607, in _handler')
    paste = read_paste(logged)
    assert {"json", "chained"} <= set(paste.forms)
    raised = next(found for found in paste.reported if found.text)
    assert (raised.exception, raised.text) == ("starlette.formparsers.MultiPartException",
                                               "Missing boundary in multipart.")
    assert [(frame.line, frame.function) for frame in raised.frames] == [(238, "parse")]
    assert raised.frames[0].source == 'raise MultiPartException("Missing boundary in multipart.")'
    # an application's JSON error body printed over lines, fastapi's message in its "msg"
    # (github.com/JiayuXu0/FastAPI-Template/issues/5)
    body = ('{\n    "code": 500,\n    "msg": "ResponseValidationError: 1 validation errors:\\n  '
            "{'type': 'string_type', 'loc': ('response', 'msg'), 'msg': 'Input should be a valid "
            "string', 'input': None}\\n\"\n}")
    first = read_paste(body).reported[0]
    assert (first.exception, first.text.split("\n")[0]) == ("ResponseValidationError",
                                                            "1 validation errors:")


def test_a_json_line_holding_no_report_is_left_as_it_is() -> None:
    # a JSON log record of one line (github.com/AudiusProject/apps/pull/752), a JSON error body
    # whose message spans no lines (github.com/argais/cloudtrail_aws_es/issues/1)
    record = ('{"levelno": 20, "level": "INFO", "msg": "handle flask request", "method": "GET", '
              '"path": "/v1/tracks/search", "status": 200, "timestamp": "2020/08/14 14:00:14", '
              '"duration": 105, "ip": "192.168.176.1", "host": "localhost", "params": "query=1"}')
    lambda_body = ('{\n  "stackTrace": [\n    [\n      "/var/task/s3_lambda_es.py",\n      64,\n'
                   '      "lambda_handler",\n      "bucket = event[\'Records\'][0][\'s3\'][\'bucket\']'
                   '[\'name\']"\n    ]\n  ],\n  "errorType": "KeyError",\n  "errorMessage": '
                   '"\'s3\'"\n}')
    for pasted in (record, lambda_body):
        paste = read_paste(pasted)
        assert "json" not in paste.forms and paste.reported[-1].text == pasted
    # a line with escaped line breaks that read as no report, and JSON inside a message's line
    assert read_paste('{"event": "started\\nlistening on :8000"}').forms == ("message",)
    inside = 'ValueError: bad body {"a": "Traceback (most recent call last):\\n"}'
    assert read_paste(inside).reported[0].text == inside.split(": ", 1)[1]


def test_a_remote_tracebacks_quotes_are_its_delimiters() -> None:
    # blackd's log of a process pool's error (github.com/psf/black/issues/1922), cut after the
    # remote traceback's closing quotes
    remote = '\n'.join([
        "ERROR:root:Exception during handling a request",
        "concurrent.futures.process._RemoteTraceback:", '"""',
        "Traceback (most recent call last):",
        '  File "src/black/__init__.py", line 1346, in assert_equivalent',
        '  File "src/black/parsing.py", line 195, in parse_ast',
        "SyntaxError: non-default argument follows default argument (<unknown>, line 10)", "",
        "During handling of the above exception, another exception occurred:", "",
        "Traceback (most recent call last):",
        '  File "src/black/__init__.py", line 1348, in assert_equivalent',
        "AssertionError: cannot use --safe with this file; failed to parse source file AST: "
        "non-default argument follows default argument (<unknown>, line 10)",
        "This could be caused by running Black with an older Python version that does not "
        "support new syntax used in your source file.", '"""'])
    first = read_paste(remote).reported[0]
    assert first.exception == "AssertionError" and first.text.endswith("in your source file.")
    # Pillow's, raised in a worker and re-raised by the caller after "The above exception was
    # the direct cause" (github.com/machineonamission/mediaforge/issues/14)
    pillow = "\n".join([
        "concurrent.futures.process._RemoteTraceback: ", '"""',
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.8/dist-packages/PIL/ImageFile.py", line 259, in load',
        "    raise OSError(", "OSError: image file is truncated (11 bytes not processed)", '"""', "",
        "The above exception was the direct cause of the following exception:", "",
        "Traceback (most recent call last):",
        '  File "main.py", line 304, in improcess'])
    texts = [found.text for found in read_paste(pillow).reported]
    assert "image file is truncated (11 bytes not processed)" in texts
    # a docstring's quotes among the source lines pytest shows are no delimiters (jsonschema's,
    # github.com/internetarchive/openlibrary-client/issues/293)
    source = ["    def resolve_from_url(self, url):", '        """',
              "        Resolve the given remote URL.", '        """',
              "        url, fragment = urldefrag(url)"]
    assert paste_module._without_remote_quotes(source, []) == source


def test_a_logs_stamp_column_is_read_off_lines_without_frames() -> None:
    # pytest's usage error behind an openSUSE build's column (github.com/Kozea/Pyphen/issues/42)
    # and behind Jenkins's (github.com/couchbaselabs/mobile-testkit/issues/1201); pip's behind
    # docker build's (github.com/docker/docs/issues/12736)
    obs = ("+ pytest-3.8 --ignore=_build.python38 -v\n"
           "[   32s] ERROR: usage: pytest-3.8 [options] [file_or_dir] [file_or_dir] [...]\n"
           "[   32s] pytest-3.8: error: unrecognized arguments: --isort --flake8\n"
           "[   32s]   inifile: /home/abuild/rpmbuild/BUILD/Pyphen-0.13.0/pyproject.toml")
    jenkins = ("02:28:35 Running ALL tests+ pytest --ci --xattrs testsuites/syncgateway/\n"
               "02:28:36 usage: pytest [options] [file_or_dir] [file_or_dir] [...]\n"
               "02:28:36 pytest: error: unrecognized arguments: --xattrs\n"
               "02:28:36   inifile: /var/jenkins/workspace/cen7-sync-gateway/pytest.ini\n"
               "02:28:36 Build step 'Execute shell' marked build as failure")
    for pasted, usage in ((obs, "usage: pytest-3.8 [options]"), (jenkins, "usage: pytest [op")):
        texts = read_paste(pasted).reported[0].texts
        assert any(text.startswith(usage) and "\n  inifile: " in text for text in texts)
    docker = ("#12 7.813 ERROR: Could not find a version that satisfies the requirement "
              "cloud-init==20.4\n#12 7.814 ERROR: No matching distribution found for cloud-init==20.4")
    assert "No matching distribution found for cloud-init==20.4" in read_paste(docker
                                                                               ).reported[0].texts


def test_what_is_no_stamp_column_is_left_as_it_is() -> None:
    # the errno aiohttp's message begins with (github.com/aio-libs/aiohttp/issues/1376), a
    # table's index, a log record `_LOGGING` reads
    errno = ("[Errno 101] Cannot connect to host konachan.com:80 ssl:False [Can not connect to "
             "konachan.com:80 [Network is unreachable]]\n[Errno 101] Cannot connect to host "
             "cykably.at:80 ssl:False [Can not connect to cykably.at:80 [Network is unreachable]]")
    table = "   a  b\n0  1  2\n1  3  4"
    # a message's numbered lines: scipy's `fpchec` conditions (scipy/interpolate/_fitpack2.py),
    # which the corpus run's lookup of scipy's own messages found cut as a column
    numbered = ("ValueError: The input parameters have been rejected by fpchec. This means that at "
                "least one of the following conditions is violated:\n\n1) k+1 <= n-k-1 <= m\n"
                "2) t(1) <= t(2) <= ... <= t(k+1)\n   t(n-k) <= t(n-k+1) <= ... <= t(n)\n"
                "3) t(k+1) < t(k+2) < ... < t(n-k)\n4) t(k+1) <= x(i) <= t(n-k)\n"
                "5) The conditions specified by Schoenberg and Whitney must hold\n"
                "   for at least one subset of data points, i.e., there must be a\n"
                "   subset of data points y(j) such that\n"
                "       t(j) < y(j) < t(j+k+1), j=1,2,...,n-k-1\n")
    record = ("2019-01-01 10:00:00,000 INFO started\n2019-01-01 10:00:01,000 ERROR root: failed\n"
              "2019-01-01 10:00:02,000 INFO stopped")
    for pasted in (errno, table, record, numbered):
        lines = pasted.split("\n")
        assert paste_module._without_log_column(lines, []) == lines


def test_a_log_line_above_a_traceback_is_read_as_a_report_too() -> None:
    # celery's worker log: the chord's error above the task's own traceback, then a cut one
    # (github.com/celery/celery/issues/6220)
    celery = "\n".join([
        "[2023-06-18 20:17:06,033: ERROR/ForkPoolWorker-7] Chord '24e551a7-abd7-4967-9c66-"
        "2c9550e576a2' raised: ChordError(\"Dependency 8dd88f14-95d4-4d85-bc0b-9ea49ce2633c "
        "raised Exception('Error task called')\")",
        "Traceback (most recent call last):",
        '  File "/Users/mjo/git/hr-outcomes-service/mods/workflows/tasks.py", line 106, in '
        "generic_error_task", "    raise Exception('Error task called')",
        "Exception: Error task called", "",
        "During handling of the above exception, another exception occurred:", "",
        "Traceback (most recent call last):",
        '  File "/Users/mjo/.virtualenvs/ff-hr/lib/python3.11/site-packages/celery/backends/'
        'redis.py", line 528, in on_chord_part_return'])
    reported = read_paste(celery).reported
    assert reported[0].text == "" and reported[1].text.endswith("Error task called")
    assert "Dependency 8dd88f14-95d4-4d85-bc0b-9ea49ce2633c raised Exception('Error task " \
           "called')" in reported[-1].texts
    # a web UI's API error log above a cut traceback of anyio's WouldBlock, starlette's message
    # a value of its dict (github.com/zombieyang/sd-ppp/issues/28)
    webui = "\n".join([
        "*** API error: GET: http://127.0.0.1:7860/sdppp_download?name=sdppp_0 {'error': "
        "'RuntimeError', 'detail': '', 'body': '', 'errors': 'File at path D:/User-files/"
        "Pictures/OUTPUT/00001-1856313608-a%20photo.png does not exist.'}",
        "    Traceback (most recent call last):",
        '      File "d:\\repos\\stable-diffusion-webui\\venv\\lib\\site-packages\\anyio\\streams'
        '\\memory.py", line 93, in receive_nowait', "        raise WouldBlock",
        "    anyio.WouldBlock"])
    assert "File at path D:/User-files/Pictures/OUTPUT/00001-1856313608-a%20photo.png does not " \
           "exist." in read_paste(webui).reported[-1].texts
    # nothing above the head: no report more
    assert len(read_paste("\n".join(celery.split("\n")[1:6])).reported) == 1


def test_a_dicts_values_that_read_as_words_are_texts() -> None:
    # fastapi's response body (github.com/fastapi/fastapi/issues/5290)
    assert "Not authenticated" in read_paste('{ "detail": "Not authenticated" }').reported[0].texts
    # IPython's input line above a traceback: a value without a space is a key or a token
    # (github.com/marshmallow-code/marshmallow/issues/320)
    ipython = "\n".join([
        "In [6]: schema = MySchema(only=('b',)).load({'b': 'data'})",
        "Traceback (most recent call last):",
        '  File "schema.py", line 534, in load', "ValueError: Invalid fields for <MySchema>: b"])
    assert not any("data" in found.texts for found in read_paste(ipython).reported)


def test_a_web_servers_request_log_line_is_no_message_text() -> None:
    # Django's development server after redis-py's traceback (github.com/ionelmc/django-
    # redisboard/issues/44); Werkzeug's after Flask's message (github.com/mikeizbicki/cmc-
    # csci040/issues/218)
    django = "\n".join([
        '  File "/usr/local/lib/python3.8/site-packages/redis/connection.py", line 212, in '
        "_read_from_socket", '    raise TimeoutError("Timeout reading from socket")',
        "redis.exceptions.TimeoutError: Timeout reading from socket",
        '[28/Jul/2020 09:55:48] "GET /redisboard/redisserver/ HTTP/1.1" 500 145'])
    assert read_paste(django).reported[0].text == "Timeout reading from socket"
    werkzeug = ("RuntimeError: The session is unavailable because no secret key was set.  Set "
                "the secret_key on the application to something unique and secret.\n"
                '127.0.0.1 - - [08/Dec/2021 19:44:10] "POST /create_user HTTP/1.1" 500 -')
    assert read_paste(werkzeug).reported[0].text.endswith("unique and secret.")
    # aiohttp's access log behind a logger's head, a method it could not read (`UNKNOWN`),
    # after its BadStatusLine (github.com/jbilcke-hf/FacePoke/issues/9)
    aiohttp = "\n".join([
        "aiohttp.http_exceptions.BadStatusLine: 400, message:", "  Invalid method encountered:",
        "", "    bytearray(b'\\x16\\x03\\x01\\x06\\x94\\x01')", "                 ^",
        "2024-10-09 01:08:57,935 - aiohttp.access - INFO - 127.0.0.1 [09/Oct/2024:01:08:57 "
        '+0800] "UNKNOWN / HTTP/1.0" 400 248 "-" "-"'])
    assert read_paste(aiohttp).reported[0].text.endswith("\n                 ^")
    # a request and a response as curl shows them (github.com/flask-restful/flask-restful/pull
    # /975), a response's head (github.com/pallets/werkzeug/issues/2550): left as they are
    curl = ["> POST /todos HTTP/1.1", "> Host: localhost:5000", "< HTTP/1.1 415 UNSUPPORTED "
            "MEDIA TYPE", "HTTP/1.1 400 BAD REQUEST", "Server: Werkzeug/2.2.2 Python/3.10.6"]
    assert paste_module._without_request_log(curl) == curl
    alone = ['127.0.0.1 - - [08/Dec/2021 19:44:10] "POST /create_user HTTP/1.1" 500 -']
    assert paste_module._without_request_log(alone) == alone
