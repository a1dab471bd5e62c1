"""The rule's index, checked against the rule written plainly: the bounded walk of `Index`
(records that cannot pass the own record's score left early) finds exactly the records whose
full score passes it, with the same scores, on the corpus's catalogues of click and attrs, each
annotation of the corpus judged on every record of its library; and the records' facts kept
between runs (`fact_cache`), used while the record and the rule's code are what they were."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from crawler.records import ErrorRecord
from crawler.serve.review import annotation_fit
from crawler.serve.review.annotation_fit import EPSILON, KEYWORD, Fit, Index, called_of
from crawler.serve.review.annotation_names import annotation_text, code_mentions
from crawler.serve.review.fact_cache import FACTS, RULE_SOURCES, FactCache, rule_digest
from crawler.store import repo_output
from crawler.store.cache import LoadCache
from tests.serve.review.annotations.corpus import LIBRARIES, unpack


def held(facts: dict[str, int], term: str) -> int:
    """The rule written plainly: how many kinds of a record's facts hold `term`; a keyword
    passed to a call is held once by a record holding the call."""
    if term.startswith(KEYWORD):
        return 1 if called_of(term) in facts else 0
    return facts.get(term, 0)


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
            for term in names:  # weighed when first asked: as from every record's facts
                assert index.weights(term) == {
                    i: held(facts, term) * index.idf[term] for i, facts in index.facts.items()
                    if held(facts, term) and annotation_fit.is_library(index.records[i])}
                for other, weight in index.weights(term).items():
                    full[other] = full.get(other, 0.0) + weight
            for record in loaded.records:  # each record's own score as the bar
                own = sum(index.idf[t] * held(index.facts[record.id], t) for t in names)
                expected = {i: s for i, s in full.items() if s > own + EPSILON}
                assert index._scores(names, own) == expected, (library, text, record.id)
                compared += 1
                passing += len(expected)
    assert compared > 3000 and passing > compared  # many bars, passed by many records


def test_a_judge_of_the_listed_alone_finds_each_listed_fit_as_the_full_judge(
        tmp_path: Path) -> None:
    """`judge(listed_only=True)`, whose bounded walk looks no lower than `LISTED_BAR` times the
    own score, gives the full judge's fit where it is listed (its rank, margins and names), and
    None where it is not: each annotation of the corpus on every fourth record of its library
    (most of them listed), and each on its own record (most not)."""
    listed = unlisted = 0
    for library in LIBRARIES:
        corpus, folder = unpack(library, tmp_path / library)
        loaded = repo_output.load_folder(folder)
        index = Index(loaded.records, loaded.manifest)
        texts = [annotation_text(item["annotation"]) for item in corpus["records"]]
        by_id = {r.id: r for r in loaded.records}
        for record, text in [*((r, t) for r in loaded.records[::4] for t in texts),
                             *((by_id[item["id"]], annotation_text(item["annotation"]))
                               for item in corpus["records"])]:
            full = index.judge(record, text)
            expected = full if full is not None and full.listed else None
            assert index.judge(record, text, listed_only=True) == expected, (record.id, text)
            listed += expected is not None
            unlisted += full is not None and expected is None
    assert listed > 500 and unlisted > 60  # 826 and 78


def judged_all(index: Index, records: list[ErrorRecord], texts: list[str]) -> list[Fit | None]:
    """The corpus's texts judged on every fourth record (each against every record): what the
    rule finds."""
    return [index.judge(record, text) for record in records[::4] for text in texts]


def test_kept_facts_are_used_until_the_record_or_the_rules_code_changes(tmp_path: Path) -> None:
    """A second run reads no record's facts and no annotation's text, and finds what an index
    built without the cache finds; an edited annotation and an edited record file are read
    again (its facts are the new ones), every record when the folder's module names change,
    and every record and text when the rule's code is edited or the kept entry is not what it
    should be."""
    corpus, folder = unpack("click", tmp_path / "click")
    texts = [annotation_text(item["annotation"]) for item in corpus["records"][:8]]
    loads = LoadCache(tmp_path / "cache")
    loaded = repo_output.load_folder(folder, loads=loads)
    records = list(loaded.records)
    plain = Index(records, loaded.manifest)
    expected = judged_all(plain, records, texts)

    first = FactCache(loads, folder)
    assert judged_all(Index(records, loaded.manifest, first), records, texts) == expected
    first.close()
    assert first.computed == len(records) > 50 and first.read_texts == len(set(texts)) > 5
    second = FactCache(LoadCache(tmp_path / "cache"), folder)  # another run's
    kept = Index(records, loaded.manifest, second)
    assert kept.facts == plain.facts and kept.own == plain.own
    assert judged_all(kept, records, texts) == expected
    assert second.computed == 0 and second.read_texts == 0
    # an annotation edited: its text is read again, and judged as without the cache
    edited_text = texts[0] + " It names `Context.fail` too."
    assert kept.judge(records[0], edited_text) == plain.judge(records[0], edited_text)
    assert second.read_texts == 1
    second.close()
    # other module names (a file added to the repository): every record's facts are read
    # again, the annotations' texts are not
    added = FactCache(loads, folder)
    added.open(plain.modules | {"added"}, {})
    assert all(added.get(added.key(record)) is None for record in records)
    assert [added.mentions(text) for text in texts] == [code_mentions(text) for text in texts]
    assert added.read_texts == 0

    # a record file edited by hand: its condition is another
    edited = next(r for r in records if r.site.condition and "nargs" in r.site.condition)
    path = folder / "errors" / f"{edited.id}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"condition: {edited.site.condition}\n",
                                 "condition: widget is None\n"), encoding="utf-8")
    reloaded = list(repo_output.load_folder(folder, loads=loads).records)
    third = FactCache(loads, folder)
    after = Index(reloaded, loaded.manifest, third)
    fresh = Index(reloaded, loaded.manifest)
    assert third.computed == 1
    assert after.facts == fresh.facts and after.facts != plain.facts
    assert "widget" in after.facts[edited.id] and "widget" not in plain.facts[edited.id]
    assert judged_all(after, reloaded, texts) == judged_all(fresh, reloaded, texts)
    third.close()

    # the rule's code edited: its digest is another, and no record's kept facts are used
    sources = tmp_path / "rule"
    sources.mkdir()
    for name in RULE_SOURCES:
        shutil.copy(Path(annotation_fit.__file__).parent / name, sources / name)
    assert rule_digest(sources) == rule_digest()
    with (sources / RULE_SOURCES[0]).open("a", encoding="utf-8") as source:
        source.write("# edited\n")
    other_rule = FactCache(loads, folder, rule=rule_digest(sources))
    judged_all(Index(reloaded, loaded.manifest, other_rule), reloaded, texts)
    assert other_rule.computed == len(reloaded) and other_rule.read_texts == len(set(texts))

    # a kept entry that is not facts is ignored, and what is found is the same
    mentions = {hashlib.sha256(t.encode()).hexdigest(): [["x"], [], 1] for t in texts}
    for broken in ({"facts": {k: [{"x": "1"}, []] for k in map(third.key, reloaded)},
                    "mentions": mentions}, {"facts": [], "mentions": []}, {"other": 1}):
        table = LoadCache(tmp_path / "cache")
        spoiled = FactCache(table, folder)
        spoiled.open(fresh.modules, {})  # the entry's key, as the index opens it
        table.put_entry(FACTS, *spoiled.parts, entry=broken)
        table.flush()
        again = FactCache(LoadCache(tmp_path / "cache"), folder)
        index = Index(reloaded, loaded.manifest, again)
        assert judged_all(index, reloaded, texts) == judged_all(fresh, reloaded, texts)
        assert again.computed == len(reloaded) and again.read_texts == len(set(texts))
        assert index.facts == fresh.facts


def test_the_words_a_record_s_names_say_are_asked_of_the_index_as_read_off_the_names(
        tmp_path: Path) -> None:
    """`Index.word_names` answers, for a record's facts and for its function's zone, exactly
    what reading every name of theirs (`name_words`) gives, for every word of the library."""
    asked = said = 0
    for library in LIBRARIES:
        _, folder = unpack(library, tmp_path / library)
        loaded = repo_output.load_folder(folder)
        index = Index(loaded.records, loaded.manifest)
        words = set(index.word_names) | {t for t in index.idf if t.startswith("w:")}
        for record_id in index.records:
            for held in (index.facts[record_id], index.own[record_id]):
                read = annotation_fit.name_words(held)
                asked_of = annotation_fit._Said(index.word_names, held)
                assert {w for w in words if w in asked_of} == read & words, record_id
                asked += len(words)
                said += len(read)
    assert asked > 100_000 and said > 1000
