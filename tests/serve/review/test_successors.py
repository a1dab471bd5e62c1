"""`crawler check` ranks an orphan's successors by the merge's own pair score.

The case jax gave (2026-05-15): "Nesting `compute_on` with different compute types is not
supported yet" left `JaxprEqnContextManager.__enter__` in core.py, and in the same commit a
reworded check of the same thing, raising ValueError instead of NotImplementedError, appeared in
compute_on.py's `_compute_on_lowering`. The update cannot pair them (another file, another
function, no code kept), so the annotation waits on a removed record; `check` listed the real
successor fourth, behind raises that shared only the exception class, a file, a few common
words ("not supported yet") and a line of closing brackets. One real git history stands for it,
with those decoys beside the successor.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from crawler import pipeline
from crawler.catalogue.successors import pair_score
from crawler.cli.commands import main
from crawler.records import REMOVED
from crawler.serve.review.checks import review_output
from crawler.store import render
from tests.helpers.gitrepo import GitRepo
from tests.helpers.update_output import BLOCK

NESTING = ("Nesting `compute_on` with different compute types is not supported yet. "
           "Current compute_on type: {self.prev_compute_type}")
SUCCESSOR = "Nesting `compute_on` with different compute types is not allowed."

# The check as it stood in `__enter__`, lines kept around it.
NESTING_CHECK = '''\
        self.prev_compute_type = config.compute_on_context_manager.swap_local(
            self.context.compute_type
        )
        if (
            self.prev_compute_type is not None
            and self.prev_compute_type is not config_ext.unset
            and self.context.compute_type != self.prev_compute_type
        ):
            config.compute_on_context_manager.set_local(self.prev_compute_type)
            raise NotImplementedError(
                "Nesting `compute_on` with different compute types is not supported"
                f" yet. Current compute_on type: {self.prev_compute_type}"
            )
'''
CORE = '''\
class ShapeDtypeStruct:
    def like(self, x):
        if isinstance(x, HiVal):
            raise NotImplementedError("Passing a HiVal to `ShapeDtypeStruct.like` is not implemented.")
        return x


class JaxprEqnContextManager:
    def __init__(self, context):
        self.context = context

    def __enter__(self):
''' + NESTING_CHECK + '''        self.prev_threefry_partitionable = config.threefry_partitionable.swap_local(
            self.context.threefry_partitionable)
        if self.context.xla_metadata:
            self.prev_xla_metadata = config.xla_metadata_context_manager.get_local()
'''
# The check gone from `__enter__`, its other lines kept (reordered, as in jax).
CORE_LATER = CORE.replace(NESTING_CHECK, '''\
        self.prev_compute_type = config.compute_on_context_manager.swap_local(
            self.context.compute_type)
''')

COMPUTE_ON = '''\
def compute_on(compute_type):
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    return extend_compute_type(compute_type)
'''
# A week later: the successor in a new lowering rule, and decoys around it: the same exception
# as the old raise with the old message's common words, another ValueError of the file, and a
# guard that ends in a line of brackets like the old one.
COMPUTE_ON_LATER = COMPUTE_ON + '''

def _check_valid(c_type):
    if c_type not in {"device_host", "device", "tpu_sparsecore"}:
        raise ValueError(
            f"Invalid compute type {c_type}. Current supported values "
            "are `device_host`, `device` and `tpu_sparsecore`.")


def _clamp_push_rule(ctx, x_block_spec, min_block_spec, max_block_spec):
    if (
        min_block_spec is not no_block_spec
        and min_block_spec is not x_block_spec
    ):
        raise NotImplementedError("clamp with multiple differing inputs not supported yet.")
    return x_block_spec


def _run_scoped_lowering_rule(ctx, *consts, jaxpr, poison):
    if poison:
        raise NotImplementedError("Buffer poisoning is not supported on GPU yet.")
    return lower_jaxpr(ctx, jaxpr, consts)


def _compute_on_lowering(ctx, *args, jaxpr, compute_type, out_memory_spaces):
    if dispatch.jaxpr_has_primitive(jaxpr, "compute_on"):
        raise ValueError("Nesting `compute_on` with different compute types is "
                         "not allowed.")
    const_args_and_avals = core.jaxpr_const_args(jaxpr.jaxpr)
    const_args, const_avals = unzip2(const_args_and_avals)
    return lower(ctx, const_args, const_avals, args)
'''


def test_check_lists_a_moved_reworded_raise_of_another_class_first(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "jax")
    repo.write("jax/_src/core.py", CORE)
    repo.write("jax/_src/compute_on.py", COMPUTE_ON)
    repo.commit("first")
    root, cache = tmp_path / "out", tmp_path / "cache"
    folder = pipeline.extract(str(repo.path), ref=repo.head(), output_root=root, cache_dir=cache,
                              jobs=1).folder
    [nesting] = [r for r in pipeline.load_existing(folder) if r.site.message.template == NESTING]
    path = folder / "errors" / f"{nesting.id}.yaml"
    text = path.read_text(encoding="utf-8")
    block = render.annotation_block(text)
    assert block is not None
    path.write_text(text.replace(block, BLOCK.format(written_for=json.dumps(NESTING),
                                                     meaning="nested compute_on")),
                    encoding="utf-8")
    repo.write("jax/_src/core.py", CORE_LATER)
    repo.write("jax/_src/compute_on.py", COMPUTE_ON_LATER)
    repo.commit("move the nesting check into the lowering, reworded, as a ValueError")
    result = pipeline.update(str(repo.path), ref=repo.head(), output_root=root, cache_dir=cache,
                             jobs=1)
    assert list(result.merged.removed) == [nesting.id]  # the merge could not follow it

    [orphan] = review_output(root).orphans
    ranked = [s.record.site.message.template for s in orphan.successors]
    assert ranked[0] == SUCCESSOR, ranked
    best = orphan.successors[0]
    assert best.record.site.path == "jax/_src/compute_on.py"
    assert best.record.site.exception == "ValueError" and orphan.record.site.exception != "ValueError"
    # the score check shows is the merge's own score of that pair
    assert best.score == round(pair_score(orphan.record, best.record).total, 3)
    decoys = {s.record.site.message.template: s.score for s in orphan.successors[1:]}
    assert all(score < best.score for score in decoys.values()), decoys

    run = CliRunner().invoke(main, ["check", str(root), "--json"])
    assert run.exit_code == 1, run.output
    [listed] = json.loads(run.stdout)["orphans"]
    assert listed["id"] == nesting.id and listed["successors"][0]["id"] == best.record.id
    assert all(r.status != REMOVED for r in pipeline.load_existing(folder) if r.id == best.record.id)
