"""`crawler check --annotations`: an annotation that fits another record better is listed.

The corpus (annotations/*.yaml) holds annotations written by hand for records of click and
attrs, extracted at a pinned commit (annotations/catalogues/*.tar.xz, snippets included). Put on
their own records, the check lists at most 1 in 20; dealt to other records of the same
repository (a seeded derangement, tests/serve/review/annotations/corpus.py), it lists at least
90 % of them, and 95 % of those that came from another module. The issue's case (a remat error
annotated with a pytree registry text) is built on a repository the test makes, and so is each
case of issue 50's rule: raises of one function told apart by their messages and conditions, a
public call users make counted as the record's own, a call's keyword read as an argument, a
user's variable not read as the library's module, a record under examples/ that is no error of
the library; and `crawler check` as a user runs it: exit 1 on a sure finding only, a dismissal
that holds through a run and lapses when the annotation changes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from crawler.serve.review.annotation_fit import folder_fits
from crawler.store import repo_output
from tests.helpers.gitrepo import GitRepo
from tests.serve.review.annotations.corpus import LIBRARIES, derangement, unpack

pytestmark = pytest.mark.runs_long

SEED = 37


def crawler(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crawler", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def check_annotations(folder: Path) -> dict[str, Any]:
    """`crawler check --annotations --json` on `folder`: its JSON, after checking the exit code
    (1 when a finding is sure, 0 when all are suspects)."""
    done = crawler("check", "--annotations", "--json", folder)
    answer = json.loads(done.stdout)
    sure = [m for m in answer["annotation_mismatches"] if m["level"] == "sure"]
    assert done.returncode == (1 if sure else 0), done.stderr
    assert answer["findings"] == [] and answer["orphans"] == []  # only this check ran
    return answer


def write_annotation(record_file: Path, annotation: Mapping[str, Any]) -> None:
    """Replace a record's annotation block, as a person editing the file does."""
    text = record_file.read_text(encoding="utf-8")
    head, rest = text.split("\nannotation:\n", 1)
    tail = rest[rest.index("\nhistory:"):]
    block = yaml.safe_dump({"annotation": dict(annotation)}, sort_keys=False, allow_unicode=True,
                           width=100)
    record_file.write_text(f"{head}\n{block.rstrip()}{tail}", encoding="utf-8")


def annotate(folder: Path, records: list[dict[str, Any]], deal: Mapping[str, str]) -> None:
    """Give record `id` the annotation written for record `deal[id]`."""
    written = {item["id"]: item for item in records}
    for item in records:
        source = written[deal[item["id"]]]
        write_annotation(folder / "errors" / f"{item['id']}.yaml",
                         {"written_for": item["template"], **source["annotation"]})


SEEDS = range(1, 11)


def test_right_annotations_pass_and_dealt_to_other_records_are_listed(tmp_path: Path) -> None:
    """Right: at most 1 in 20 listed. Dealt, over seeds 1..10 and 37 (one folder per seed, one
    check): at least 90 % listed, and 95 % of those from another module.
    scripts/annotation_fit_rates.py gives the figures over 50 seeds."""
    records = flagged = dealt = dealt_listed = far = far_listed = 0
    for library in LIBRARIES:
        corpus, right = unpack(library, tmp_path / f"right ä {library}")
        items = corpus["records"]
        ids = [item["id"] for item in items]
        annotate(right, items, {i: i for i in ids})
        flagged += len(check_annotations(right)["annotation_mismatches"])
        records += len(ids)

        path = {item["id"]: item["path"] for item in items}
        deals = {seed: derangement(ids, seed) for seed in (*SEEDS, SEED)}
        for seed, deal in deals.items():
            _, folder = unpack(library, tmp_path / f"dealt ä {library}" / f"seed {seed}")
            annotate(folder, items, deal)
        mismatches = check_annotations(tmp_path / f"dealt ä {library}")["annotation_mismatches"]
        assert mismatches and all(m["reason"] == "annotation-mismatch" for m in mismatches)
        listed = {(Path(m["path"]).parents[2].name, m["id"]) for m in mismatches}
        for seed, deal in deals.items():
            mine = {i for folder, i in listed if folder == f"seed {seed}"}
            other_module = {i for i in ids if path[i] != path[deal[i]]}
            dealt, dealt_listed = dealt + len(ids), dealt_listed + len(mine)
            far, far_listed = far + len(other_module), far_listed + len(other_module & mine)
    assert records >= 40
    assert flagged * 20 <= records, flagged
    assert dealt_listed >= 0.9 * dealt, (dealt_listed, dealt)
    assert far_listed >= 0.95 * far, (far_listed, far)


CHECKPOINT = '''\
from jax._src import core


class RematTraced(core.Tracer):
    def _check_differentiable(self, jaxpr, effects):
        disallowed = [e for e in effects if not core.is_remat_allowed(e)]
        if disallowed:
            raise NotImplementedError(
                "Effects not supported in partial-eval of `checkpoint`/`remat`: "
                f"{disallowed}")
        return jaxpr
'''

TREE = '''\
class PyTreeRegistry:
    def __init__(self):
        self.nodes = {}


def registry():
    return _default_registry


class PyTreeDef:
    def __init__(self, registry, children):
        self.registry = registry
        self.children = children

    @staticmethod
    def Tuple(children):
        registries = {child.registry for child in children}
        if len(registries) > 1:
            raise ValueError("Children of PyTreeDef.Tuple must share one registry")
        return PyTreeDef(registries.pop(), children)


def tree_structure(tree, registry=None):
    if registry is None:
        raise TypeError("tree_structure needs a registry")
    return PyTreeDef(registry, [])


_default_registry = PyTreeRegistry()
'''

WRONG = {  # the published page's annotation: well written, for the pytree error
    "what_it_means": "`PyTreeDef.Tuple` builds a tuple treedef from child treedefs, and every "
                     "child must be bound to the same registry. A child made under another "
                     "`registry()` cannot be combined.",
    "solutions": ["Build every child with `tree_structure` under the same registry."],
    "example_fix": "reg = registry()\nleft = tree_structure(a, registry=reg)\n"
                   "right = tree_structure(b, registry=reg)\n"
                   "both = PyTreeDef.Tuple([left, right])\n",
    "defensive_patterns": ["Keep one `registry()` for a whole program."],
    "when_it_happens": "When `PyTreeDef.Tuple` receives treedefs from two registries.",
}

RIGHT = {
    "what_it_means": "A function under `jax.checkpoint` (`remat`) has effects that partial "
                     "evaluation of `checkpoint` cannot replay, so `_check_differentiable` "
                     "rejects them.",
    "solutions": ["Move the effectful call out of the `checkpoint`-ed function."],
    "example_fix": "f = jax.checkpoint(pure_part)\ny = f(x)\nlog(y)   # the effect, outside\n",
    "when_it_happens": "When `RematTraced._check_differentiable` finds `disallowed` effects.",
}


def remat_repository(make_repo: Callable[[str], GitRepo], template_word: str = "Effects") -> GitRepo:
    repo = make_repo("jax")
    repo.write("jax/_src/ad_checkpoint.py", CHECKPOINT.replace("Effects", template_word))
    repo.write("jax/_src/tree_util.py", TREE)
    repo.write("jax/_src/core.py", "class Tracer:\n    pass\n")
    repo.commit("a checkpoint module and a tree module")
    return repo


def record_of(folder: Path, qualname: str) -> tuple[Path, dict[str, Any]]:
    for path in sorted((folder / "errors").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data["extracted"]["qualname"] == qualname:
            return path, data
    raise AssertionError(f"no record of {qualname}")


def extracted(repo: GitRepo, output: Path) -> Path:
    done = crawler("extract", repo.path, "-o", output, "-q")
    assert done.returncode == 0, done.stderr
    return next(path.parent for path in output.rglob("manifest.yaml"))


def test_remat_error_annotated_for_pytree_registries_is_listed_with_the_names(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    folder = extracted(remat_repository(make_repo), tmp_path / "out ä")
    remat, remat_data = record_of(folder, "RematTraced._check_differentiable")
    tree, tree_data = record_of(folder, "PyTreeDef.Tuple")
    write_annotation(remat, {"written_for": remat_data["extracted"]["message"]["template"], **WRONG})
    write_annotation(tree, {"written_for": tree_data["extracted"]["message"]["template"], **WRONG})
    [mismatch] = check_annotations(folder)["annotation_mismatches"]
    assert mismatch["id"] == remat_data["id"] and mismatch["reason"] == "annotation-mismatch"
    assert mismatch["level"] == "sure" and mismatch["margin"] >= mismatch["sure_from"], mismatch
    # the records that fit it better: the pytree module's, the page's own among them
    better = {b["id"]: b for b in mismatch["better"]}
    assert {b["path"] for b in better.values()} == {"jax/_src/tree_util.py"}, mismatch
    assert {"PyTreeDef", "Tuple", "registry"} <= set(better[tree_data["id"]]["names"]), mismatch

    write_annotation(remat, {"written_for": remat_data["extracted"]["message"]["template"], **RIGHT})
    assert check_annotations(folder)["annotation_mismatches"] == []


def test_confirmed_annotation_is_not_listed_until_its_template_changes(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = remat_repository(make_repo)
    folder = extracted(repo, tmp_path / "out ä")
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    template = data["extracted"]["message"]["template"]
    write_annotation(remat, {"written_for": template, **WRONG, "fits": {"confirmed": template}})
    block = remat.read_text(encoding="utf-8").split("\nannotation:\n", 1)[1].split("\nhistory:")[0]
    assert check_annotations(folder)["annotation_mismatches"] == []
    assert crawler("validate", folder).returncode == 0

    repo.write("jax/_src/ad_checkpoint.py", CHECKPOINT.replace("Effects", "Side effects"))
    repo.commit("reworded")
    done = crawler("update", repo.path, "--commit", "HEAD", "-o", tmp_path / "out ä", "-q")
    assert done.returncode == 0, done.stderr
    kept = remat.read_text(encoding="utf-8").split("\nannotation:\n", 1)[1].split("\nhistory:")[0]
    assert kept == block  # the person's block, fits included, byte for byte
    [mismatch] = check_annotations(folder)["annotation_mismatches"]
    assert mismatch["id"] == data["id"] and mismatch["template"].startswith("Side effects")


def annotated(folder: Path, annotation: Mapping[str, Any], *qualnames: str) -> dict[str, str]:
    """Give each record of `qualnames` the annotation; their ids by qualname."""
    ids = {}
    for qualname in qualnames:
        path, data = record_of(folder, qualname)
        write_annotation(path, {"written_for": data["extracted"]["message"]["template"], **annotation})
        ids[qualname] = data["id"]
    return ids


SIBLINGS = '''\
def load(path, mode):
    if not path:
        raise ValueError("path must not be empty")
    if mode not in ("r", "w"):
        raise ValueError(f"unknown file mode {mode}, expected r or w")
    return open(path, mode)


def save(path, data):
    if data is None:
        raise TypeError("nothing to save")
    return path
'''

EMPTY = {
    "what_it_means": "`load` was called with an empty path: there is no file to open.",
    "solutions": ["Check where the path comes from; an unset setting gives an empty string."],
    "when_it_happens": "When `pkg.load(\"\", \"r\")` is called, or the path is empty.",
}

MODE = {
    "what_it_means": "The mode given to `load` is unknown: only \"r\" and \"w\" are accepted.",
    "solutions": ["Pass `mode=\"r\"` to read or `mode=\"w\"` to write."],
    "example_fix": "pkg.load(\"data.txt\", mode=\"r\")\n",
}


def judged_in_process(folder: Path) -> dict[str, Any]:
    """Each listed fit of the folder by its record's id, judged in this process."""
    loaded = repo_output.load_folder(folder, quick=True)
    return {fit.record.id: fit for fit in folder_fits(list(loaded.records), loaded.manifest)}


def test_raises_of_one_function_are_told_apart_by_their_messages_and_conditions(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`load` raises two errors: each annotation on its own record passes; swapped, each is
    listed with its sibling, which holds the annotation's words (`empty`, `mode`) in its
    message or condition. They share the snippet, so before, the swap passed."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", "from pkg.files import load, save\n")
    repo.write("pkg/files.py", SIBLINGS)
    repo.commit("load and save")
    folder = extracted(repo, tmp_path / "out ä")
    empty, empty_data = record_of_template(folder, "path must not be empty")
    mode, mode_data = record_of_template(folder, "unknown file mode")
    give(empty, empty_data, EMPTY)
    give(mode, mode_data, MODE)
    assert check_annotations(folder)["annotation_mismatches"] == []
    give(empty, empty_data, MODE)
    give(mode, mode_data, EMPTY)
    fits = judged_in_process(folder)
    assert fits[empty_data["id"]].listed and fits[mode_data["id"]].listed, fits
    assert fits[empty_data["id"]].better[0].id == mode_data["id"]
    assert fits[mode_data["id"]].better[0].id == empty_data["id"]
    assert all(fit.better[0].sibling for fit in fits.values() if fit.listed)
    assert "w:empty" in fits[mode_data["id"]].better[0].names


def record_of_template(folder: Path, start: str) -> tuple[Path, dict[str, Any]]:
    for path in sorted((folder / "errors").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data["extracted"]["message"]["template"].startswith(start):
            return path, data
    raise AssertionError(f"no record of {start!r}")


def give(path: Path, data: dict[str, Any], annotation: Mapping[str, Any]) -> None:
    write_annotation(path, {"written_for": data["extracted"]["message"]["template"], **annotation})


HEADERS = '''\
def _parse(text):
    header, _, body = text.partition("\\n")
    if not header.startswith("#"):
        raise ValueError("the first line must be a header")
    return body
'''

PUBLIC = '''\
from pkg._headers import _parse


def loads(text):
    if text is None:
        raise TypeError("loads() needs a text, not None")
    return _parse(text)
'''

HEADER = {  # written for _parse's raise, as a page names it: through the public call
    "what_it_means": "`pkg.loads` reads the first line of the text as its header; it must "
                     "start with `#`.",
    "when_it_happens": "When `pkg.loads(text)` is given a text whose first line is no header.",
    "example_fix": "import pkg\ndoc = pkg.loads(\"# title\\nbody\")\n",
}


def test_the_public_call_users_make_is_the_records_own(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`pkg.loads` is how users reach `_parse`'s raise (its entry point): an annotation that
    names it, and never `_parse`, fits `_parse`'s record. Before, it was listed: the function
    where the error happens was never named."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", PUBLIC)
    repo.write("pkg/_headers.py", HEADERS)
    repo.commit("loads and its parser")
    folder = extracted(repo, tmp_path / "out ä")
    path, data = record_of(folder, "_parse")
    assert "pkg.loads" in [e["name"] for e in data["extracted"]["entry_points"]]
    give(path, data, HEADER)
    assert check_annotations(folder)["annotation_mismatches"] == []
    loads, loads_data = record_of(folder, "loads")
    give(loads, loads_data, HEADER)  # on the public function's own raise it is another error
    [mismatch] = check_annotations(folder)["annotation_mismatches"]
    assert mismatch["id"] == loads_data["id"] and mismatch["better"][0]["id"] == data["id"]


CLIENT = '''\
from pkg.exceptions import Timeout


def _check_url(url):
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not a web address: {url}")
    return url


def get(url, timeout=None):
    return _check_url(url)


def wait(seconds, limit=10):
    if seconds > limit:
        raise Timeout("waited longer than the limit")
    return seconds
'''

ADDRESS = {  # written for _check_url's raise, met through `pkg.get`; its example passes a timeout
    "what_it_means": "`pkg.get` only fetches web addresses: a `url` that does not start with "
                     "http:// or https:// is not a web address.",
    "example_fix": "pkg.get(\"https://example.com/data\", timeout=10)\n",
    "when_it_happens": "When `get` is given a file path or a bare host name as its url.",
}


def test_a_calls_keyword_is_an_argument_not_the_librarys_exception(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`timeout=10` in the example names get's argument, not the `Timeout` exception `wait`
    raises: the annotation passes on `_check_url`'s record, which users meet through
    `pkg.get`. Before, `timeout` was read as `Timeout`, an exception class defined in another
    module, and the annotation was listed. On wait's record it is listed."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", "from pkg.client import get, wait\n")
    repo.write("pkg/exceptions.py", "class Timeout(Exception):\n    pass\n")
    repo.write("pkg/client.py", CLIENT)
    repo.commit("get and wait")
    folder = extracted(repo, tmp_path / "out ä")
    path, data = record_of(folder, "_check_url")
    give(path, data, ADDRESS)
    assert check_annotations(folder)["annotation_mismatches"] == []
    fit = judged_in_process(folder)[data["id"]]
    assert "Timeout" not in fit.names and "get" in fit.names, fit
    wait, wait_data = record_of(folder, "wait")
    give(wait, wait_data, ADDRESS)
    [mismatch] = check_annotations(folder)["annotation_mismatches"]
    assert mismatch["id"] == wait_data["id"] and mismatch["better"][0]["id"] == data["id"]


FILTERS = '''\
def do_title(value):
    if not isinstance(value, str):
        raise TypeError("title needs a string")
    return value.title()
'''

ENVIRONMENT = '''\
def _lookup(table, name, kind):
    if name not in table:
        raise KeyError(f"no {kind} named {name!r}")
    return table[name]


class Environment:
    def __init__(self):
        self.filters = {}

    def call_filter(self, name, value):
        return _lookup(self.filters, name, "filter")(value)
'''

UNKNOWN_FILTER = {  # written for _lookup's raise; `env` is the user's environment
    "what_it_means": "No filter named so is registered in the environment.",
    "solutions": ["Register it first: `env.filters[\"shout\"] = shout`."],
    "when_it_happens": "When `env.call_filter(\"shout\", text)` runs before `env.filters` "
                       "holds it.",
}


def test_a_users_variable_is_not_the_librarys_module(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`env.filters` is the attribute of the user's environment, not the library's `filters`
    module (where `do_title` raises): the annotation passes on `_lookup`'s record, met through
    `Environment.call_filter`. Before, `filters` was read as the module, defined away from the
    record, and the annotation was listed. On do_title's record it is listed."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", "from pkg.environment import Environment\n")
    repo.write("pkg/filters.py", FILTERS)
    repo.write("pkg/environment.py", ENVIRONMENT)
    repo.commit("an environment and its filters")
    folder = extracted(repo, tmp_path / "out ä")
    path, data = record_of(folder, "_lookup")
    give(path, data, UNKNOWN_FILTER)
    assert check_annotations(folder)["annotation_mismatches"] == []
    assert "m:filters" not in judged_in_process(folder)[data["id"]].names
    title, title_data = record_of(folder, "do_title")
    give(title, title_data, UNKNOWN_FILTER)  # on the module's own raise it is another error
    [mismatch] = check_annotations(folder)["annotation_mismatches"]
    assert mismatch["id"] == title_data["id"] and mismatch["better"][0]["id"] == data["id"]


APP = '''\
from pkg.files import load


def app(*argv):
    if not argv:
        raise SystemExit("usage: app PATH")
    return load(argv[0], "r")
'''


def test_a_raise_under_examples_is_no_error_of_the_library(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """An example program's raise holds what a user's code holds (`load`, `path`): it never
    fits an annotation of the library better than the library's own record."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", "from pkg.files import load, save\n")
    repo.write("pkg/files.py", SIBLINGS)
    repo.write("examples/app.py", APP)
    repo.commit("files, and an example program")
    folder = extracted(repo, tmp_path / "out ä")
    app, app_data = record_of(folder, "app")
    usage = {"what_it_means": "`app` was run without a path: the example's usage line says "
                              "`app PATH`, the path `load` opens."}
    give(app, app_data, usage)  # on the example's own record: judged as any record
    assert check_annotations(folder)["annotation_mismatches"] == []
    save, save_data = record_of(folder, "save")
    give(save, save_data, usage)  # the example's record is no candidate for the library's
    fit = judged_in_process(folder)[save_data["id"]]
    assert app_data["id"] not in [b.id for b in fit.better], fit


PROSE = {  # right, two lines of prose: it names no code at all
    "what_it_means": "The wrapped function has side effects that partial evaluation cannot "
                     "replay.\nMove the effectful work out of the wrapped function.",
}


def test_a_prose_annotation_that_names_nothing_is_not_listed(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """Issue 45: a right two-line prose annotation, no code name in it, must not fail `check`."""
    folder = extracted(remat_repository(make_repo), tmp_path / "out ä")
    annotated(folder, PROSE, "RematTraced._check_differentiable")
    assert check_annotations(folder)["annotation_mismatches"] == []
    done = crawler("check", folder)
    assert (done.returncode, done.stderr) == (0, ""), done
    assert "0 to review" in done.stdout and "0 annotations that do not fit" in done.stdout, done


def test_check_fails_on_a_sure_finding_and_a_dismissal_holds_until_the_annotation_changes(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """`crawler check` as a site's CI runs it: exit 1 on the sure finding; `--dismiss ID` writes
    the dismissal beside the manifest (never into the record), after which check exits 0,
    through an update that changed nothing of the record; when the annotation's text changes
    the dismissal lapses and check exits 1 again. An id that is no annotated record is one
    line and exit 1, and nothing is written."""
    repo = remat_repository(make_repo)
    out = tmp_path / "out ä"
    folder = extracted(repo, out)
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    give(remat, data, WRONG)
    done = crawler("check", out)
    assert done.returncode == 1 and "annotation-mismatch (sure, margin" in done.stdout, done
    assert f"crawler check --dismiss {data['id']}" in done.stdout and "Traceback" not in done.stderr

    wrong = crawler("check", "--dismiss", "0123456789abcdef", out)
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1, wrong
    assert "0123456789abcdef" in wrong.stderr and not (folder / "dismissed.yaml").exists()

    before = remat.read_bytes()
    done = crawler("check", "--dismiss", data["id"], out)
    assert done.returncode == 0 and "dismissed" in done.stdout, done
    assert remat.read_bytes() == before  # the annotation is never written to dismiss it
    kept = yaml.safe_load((folder / "dismissed.yaml").read_text(encoding="utf-8"))
    assert set(kept["dismissed"]) == {data["id"]}
    assert "1 dismissed" in crawler("check", out).stdout

    repo.write("jax/_src/core.py", "class Tracer:\n    pass\n\n\nclass Other:\n    pass\n")
    repo.commit("another class, nothing of the remat record")
    done = crawler("update", repo.path, "--commit", "HEAD", "-o", out, "-q")
    assert done.returncode == 0, done.stderr
    done = crawler("check", "--json", out)
    assert done.returncode == 0, done.stdout
    assert [d["id"] for d in json.loads(done.stdout)["dismissed"]] == [data["id"]]

    give(remat, data, {**WRONG, "solutions": ["Build every child under one `registry()`."]})
    done = crawler("check", out)
    assert done.returncode == 1 and "annotation-mismatch (sure" in done.stdout, done
    assert "0 dismissed" in done.stdout


def test_a_suspect_is_listed_and_check_exits_0(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A finding under the sure level is listed as a suspect, and `check` does not fail on it."""
    repo = make_repo("pkg")
    repo.write("pkg/__init__.py", "from pkg.files import load, save\n")
    repo.write("pkg/files.py", SIBLINGS)
    repo.commit("load and save")
    folder = extracted(repo, tmp_path / "out ä")
    mode, mode_data = record_of_template(folder, "unknown file mode")
    # its own message's `file` against the sibling's `empty` and `path`: twice, not three times
    half = {"what_it_means": "the path was empty and the file could not be saved"}
    give(mode, mode_data, half)
    answer = check_annotations(folder)
    [mismatch] = answer["annotation_mismatches"]
    assert mismatch["level"] == "suspect", mismatch
    assert mismatch["listed_from"] <= mismatch["margin"] < mismatch["sure_from"]
    done = crawler("check", folder)
    assert done.returncode == 0 and "annotation-mismatch (suspect" in done.stdout, done


def test_a_broken_dismissals_file_is_said_and_loses_no_finding(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A `dismissed.yaml` a person broke by hand is one line naming it, exit 1, and every finding
    is listed as though nothing were dismissed; `--dismiss` refuses to write over it."""
    repo = remat_repository(make_repo)
    out = tmp_path / "out ä"
    folder = extracted(repo, out)
    remat, data = record_of(folder, "RematTraced._check_differentiable")
    give(remat, data, WRONG)
    (folder / "dismissed.yaml").write_text("dismissed:\n  - just a list\n", encoding="utf-8")
    done = crawler("check", out)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done
    assert "dismissed.yaml: not a list of dismissals" in done.stdout, done
    assert "annotation-mismatch (sure" in done.stdout and "0 dismissed" in done.stdout, done
    done = crawler("check", "--dismiss", data["id"], out)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done
    assert "dismissed.yaml" in done.stderr
    assert (folder / "dismissed.yaml").read_text(encoding="utf-8") == "dismissed:\n  - just a list\n"
