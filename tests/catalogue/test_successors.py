"""The likeliest successors of a removed record: the score's parts, and a ranking that prunes
with an upper bound yet gives exactly what scoring every candidate would."""

from __future__ import annotations

from dataclasses import replace

from crawler.catalogue.successors import (
    SUCCESSOR_FLOOR,
    SuccessorIndex,
    _Profile,
    candidates,
    likeliest_successors,
    orphans,
    pair_score,
)
from crawler.parse.file_tasks import visit_file
from crawler.records import REMOVED, Annotation, ErrorRecord, empty_annotation
from tests.helpers.outputkit import REPO, blob_sha, module
from tests.helpers.update_output import BASE

OLD = BASE
NEW = (OLD.replace("x must be positive, got {x}", "negative values are not accepted here: {x}")
       + '\n\ndef size(y):\n    if not isinstance(y, int):\n'
         '        raise TypeError(f"y must be positive, got {y}")\n')


def records(path: str, text: str, status: str = "active") -> dict[str, ErrorRecord]:
    """Records of a file's sites, by template."""
    data = text.encode("utf-8")
    sites = visit_file(path, blob_sha(data), data).sites
    return {site.message.template: ErrorRecord(id=blob_sha(f"{path}:{i}".encode())[:16],
                                               status=status, repo=REPO, commit="a" * 40,
                                               url=None, site=site)
            for i, site in enumerate(sites)}


def test_a_message_reworded_in_place_resembles_its_old_self_most() -> None:
    old = records("lib/m.py", OLD, REMOVED)["x must be positive, got {x}"]
    new = records("lib/m.py", NEW)
    reworded = pair_score(old, new["negative values are not accepted here: {x}"])
    decoy = pair_score(old, new["y must be positive, got {y}"])
    assert reworded.template < 0.4 < decoy.template  # the decoy's words are nearer
    assert (reworded.context, reworded.qualname, reworded.exception, reworded.same_file) == (1, 1, 1, True)
    assert reworded.total > decoy.total and reworded.total > SUCCESSOR_FLOOR
    assert reworded.why() == "template 0.32, context 1.00; same function, exception, file"


def test_a_file_moved_to_another_package_is_followed_by_its_function_and_code() -> None:
    # The one score has no part for the path (the merge follows a file by git's renames, the
    # qualname and the code): the function and the code around the raise carry the move.
    old = records("jax/_src/tpu_info.py", OLD, REMOVED)["cannot load {path}"]
    moved = records("jax/experimental/tpu_info.py", OLD.replace("cannot load", "unable to load"))
    score = pair_score(old, moved["unable to load {path}"])
    assert not score.same_file and score.qualname == 1 and score.context == 1
    assert score.total > SUCCESSOR_FLOOR and score.signal == "function_moved"


def test_only_removed_annotated_records_are_orphans_and_only_empty_live_ones_candidates() -> None:
    written = Annotation(data={**empty_annotation().data, "what_it_means": "words"})
    old = records("lib/m.py", OLD, REMOVED)
    gone, bare = old["x must be positive, got {x}"], old["no path given"]
    gone = replace(gone, annotation=written)
    live = records("lib/m.py", NEW)
    taken = replace(live["cannot load {path}"], annotation=written)
    pool = [gone, bare, taken, *live.values()]
    assert orphans(pool) == [gone]
    assert taken not in candidates(pool) and bare not in candidates(pool)
    assert live["cannot load {path}"] in candidates(pool)


def _pool() -> list[ErrorRecord]:
    """Forty-odd records of like shapes: many near ties, for the ranking to get wrong."""
    pool = []
    for n, name in enumerate(("alpha", "beta")):
        pool += records(f"pkg/{name}.py", module(name, 8, offset=n)).values()
        pool += records(f"other/{name}.py", module(name, 4, extra=OLD)).values()
    pool += records("lib/m.py", NEW).values()
    return pool


def test_the_pruned_ranking_is_the_full_ranking() -> None:
    pool = _pool()
    index = SuccessorIndex(pool)
    for orphan in pool[::4]:
        scored = [(pair_score(orphan, r).total, r) for r in pool]
        full = sorted(scored, key=lambda item: (-item[0], item[1].site.path != orphan.site.path,
                                                item[1].id))
        for limit in (1, 3, 50):
            expected = [(r.id, round(s, 3)) for s, r in full if s >= 0.3][:limit]
            got = index.likeliest(orphan, limit=limit, floor=0.3)
            assert [(s.record.id, s.score) for s in got] == expected
        # the same, whatever the order the candidates come in
        assert likeliest_successors(orphan, pool[::-1], floor=0.3) == index.likeliest(orphan, floor=0.3)


def test_the_bound_is_never_below_the_score() -> None:
    pool = _pool()
    profiles = [_Profile(r) for r in pool]
    for old in profiles[::4]:
        for new in profiles:
            assert old.upper_bound(new) >= pair_score(old.record, new.record).total - 1e-12
