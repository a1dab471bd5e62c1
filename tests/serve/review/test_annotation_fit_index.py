"""The rule's index, checked against the rule written plainly: the bounded walk of `Index`
(records that cannot pass the own record's score left early) finds exactly the records whose
full score passes it, with the same scores, on the corpus's catalogues of click and attrs, each
annotation of the corpus judged on every record of its library."""

from __future__ import annotations

from pathlib import Path

from crawler.serve.review.annotation_fit import EPSILON, Index
from crawler.serve.review.annotation_names import annotation_text, code_mentions
from crawler.store import repo_output
from tests.serve.review.annotations.corpus import LIBRARIES, unpack


def test_the_bounded_walk_finds_every_record_scoring_higher_with_its_full_score(
        tmp_path: Path) -> None:
    compared = passing = 0
    for library in LIBRARIES:
        corpus, folder = unpack(library, tmp_path / library)
        loaded = repo_output.load_folder(folder)
        index = Index(loaded.records, loaded.manifest)
        texts = [annotation_text(item["annotation"]) for item in corpus["records"]]
        for text in texts:
            names = sorted(index.terms(code_mentions(text)), key=lambda t: (-index.idf[t], t))
            full: dict[str, float] = {}  # every library record's score, summed rarest first
            for term in names:
                for other, weight in index.postings[term].items():
                    full[other] = full.get(other, 0.0) + weight
            for record in loaded.records:  # each record's own score as the bar
                own = sum(index.idf[t] * index.facts[record.id].get(t, 0) for t in names)
                expected = {i: s for i, s in full.items() if s > own + EPSILON}
                assert index._scores(names, own) == expected, (library, text, record.id)
                compared += 1
                passing += len(expected)
    assert compared > 3000 and passing > compared  # many bars, passed by many records
