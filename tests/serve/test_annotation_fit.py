"""`crawler check --annotations`: an annotation written for another error is listed.

The corpus (annotations/*.yaml) holds annotations written by hand for records of click and
attrs, extracted at a pinned commit (annotations/catalogues/*.tar.xz, snippets included). Put on
their own records, the check lists at most 1 in 20; dealt to other records of the same
repository (a seeded derangement), it lists at least 90 % of them, and every one that came from
another module. The issue's case (a remat error annotated with a pytree registry text) is built
on a repository the test makes.
"""

from __future__ import annotations

import json
import random
import subprocess
import tarfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.gitrepo import GitRepo

CORPUS = Path(__file__).parent / "annotations"
SEED = 37


def crawler(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["crawler", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def check_annotations(folder: Path) -> dict[str, Any]:
    """`crawler check --annotations --json` on `folder`: its JSON, after checking the exit code."""
    done = crawler("check", "--annotations", "--json", folder)
    answer = json.loads(done.stdout)
    assert done.returncode == (1 if answer["annotation_mismatches"] else 0), done.stderr
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


def unpack(library: str, where: Path) -> tuple[dict[str, Any], Path]:
    corpus = yaml.safe_load((CORPUS / f"{library}.yaml").read_text(encoding="utf-8"))
    with tarfile.open(CORPUS / corpus["catalogue"]) as packed:
        packed.extractall(where, filter="data")
    return corpus, next(path.parent for path in where.rglob("manifest.yaml"))


def annotate(folder: Path, records: list[dict[str, Any]], deal: Mapping[str, str]) -> None:
    """Give record `id` the annotation written for record `deal[id]`."""
    written = {item["id"]: item for item in records}
    for item in records:
        source = written[deal[item["id"]]]
        write_annotation(folder / "errors" / f"{item['id']}.yaml",
                         {"written_for": item["template"], **source["annotation"]})


def derangement(ids: list[str], seed: int) -> dict[str, str]:
    """Each id to another's, seeded: no record keeps its own annotation."""
    shuffled = list(ids)
    chooser = random.Random(seed)
    while any(a == b for a, b in zip(ids, shuffled, strict=True)):
        chooser.shuffle(shuffled)
    return dict(zip(ids, shuffled, strict=True))


SEEDS = range(1, 11)


def test_right_annotations_pass_and_dealt_to_other_records_are_listed(tmp_path: Path) -> None:
    """Right: at most 1 in 20 listed. Dealt, over seeds 1..10 (one folder per seed, one check):
    at least 90 % listed, at least 97 % of those from another module, and all of them with the
    seed 37. scripts/annotation_fit_rates.py gives the figures over 50 seeds."""
    records = flagged = dealt = dealt_listed = far = far_listed = 0
    for library in ("click", "attrs"):
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
            if seed == SEED:
                assert other_module and other_module <= mine, sorted(other_module - mine)
                continue
            dealt, dealt_listed = dealt + len(ids), dealt_listed + len(mine)
            far, far_listed = far + len(other_module), far_listed + len(other_module & mine)
    assert records >= 40
    assert flagged * 20 <= records, flagged
    assert dealt_listed >= 0.9 * dealt, (dealt_listed, dealt)
    assert far_listed >= 0.97 * far, (far_listed, far)


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
    assert {f["mention"] for f in mismatch["foreign"]} >= {"PyTreeDef.Tuple", "registry",
                                                            "tree_structure"}
    defined = [f["defined_in"] for f in mismatch["foreign"] if f["defined_in"]]
    assert defined and all(d == ["jax/_src/tree_util.py"] for d in defined), mismatch
    assert {"_check_differentiable", "RematTraced", "NotImplementedError", "checkpoint",
            "remat"} <= set(mismatch["missing"])
    assert mismatch["score"] < mismatch["threshold"]

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
