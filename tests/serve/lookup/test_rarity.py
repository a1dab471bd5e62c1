"""Evidence by rarity (issue 48): a rare phrase is trusted whatever the run-time part around it;
a share of a paste explained by phrases every library prints is not."""

from __future__ import annotations

from pathlib import Path

from crawler.catalogue.merge import merge
from crawler.parse.visitor import find_raise_sites
from crawler.records import Pin
from crawler.serve.lookup.index import open_index
from crawler.serve.lookup.rarity import Rarity, common_phrases, literal_parts, phrases, runs
from crawler.serve.lookup.sources import LookupIndex, load_records, repository_folders
from tests.helpers.gitrepo import GitRepo
from tests.helpers.lookup_index import extract

PIN = Pin(source=".", host="local", owner="o", name="n", ref="HEAD", sha="a" * 40)


def index_of(source: bytes) -> LookupIndex:
    return LookupIndex(merge(PIN, [], find_raise_sites("m.py", source, "m").sites).records)


def test_a_templates_phrases_are_its_literal_parts_words() -> None:
    # celery's `Task.retry`: the parts between placeholders, `{{` read as a brace
    template = "Can't retry {self.name}[{request.id}] args:{S.args} kwargs:{S.kwargs}"
    assert literal_parts(template) == ["Can't retry ", "[", "] args:", " kwargs:"]
    assert phrases(template) == {"can t retry", "args", "kwargs"}
    assert phrases("{{literal}} braces {x}") == {"literal braces"}
    assert phrases("{message}") == frozenset()
    assert runs("a b c", 2) == {"a", "b", "c", "a b", "b c"}


def test_the_background_lists_pythons_and_every_librarys_wordings() -> None:
    common = common_phrases()
    # what every library prints, and Python's own wording of an attribute error
    assert {"must be", "got", "expected", "object has no attribute", "is not a valid"} <= common
    # one library's own sentence is not common
    assert "can t retry" not in common and "greenlet_spawn has not been called" not in common


def test_pythons_own_wording_explained_by_a_template_is_not_trusted() -> None:
    # a library's generic template fits `'str' object has no attribute 'decode'`, which Python
    # itself prints: listed as the closest, not the answer (the case)
    index = index_of(b'''
def get(obj, name):
    raise AttributeError(f"{obj!r} object has no attribute {name!r}")
''')
    answer = index.answer("AttributeError: 'str' object has no attribute 'decode'")
    assert answer.verdict == "closest" and answer.matches[0].wording.qualname == "get"
    # the same shape with a sentence of the library's own: trusted by its share
    own = index_of(b'''
def get(obj, name):
    raise AttributeError(f"{obj!r} carries no setting called {name!r}")
''')
    answer = own.answer("AttributeError: 'str' carries no setting called 'decode'")
    assert answer.found and not answer.matches[0].by_rarity


def test_a_rare_phrase_is_trusted_whatever_the_run_time_part_around_it() -> None:
    index = index_of(b'''
def retry(name, args, kwargs):
    raise MaxRetriesExceeded(f"Can't retry {name} args:{args} kwargs:{kwargs}")
''')
    long_args = repr(tuple(range(400)))
    answer = index.answer(f"MaxRetriesExceeded: Can't retry tasks.add args:{long_args} kwargs:{{}}")
    assert answer.found and answer.matches[0].by_rarity
    # the same words cut from their place (not a whole fit): not trusted by rarity
    answer = index.answer(f"MaxRetriesExceeded: Can't retry: {long_args}")
    assert not answer.found


def test_what_holds_a_phrase_is_counted_alike_in_records_and_the_stored_index(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "def a(x):\n    raise ValueError(f'no such widget {x} here')\n"
                       "def b(x):\n    raise ValueError(f'no such widget {x}')\n"
                       "def c(x):\n    raise KeyError(f'missing gadget {x}')\n")
    repo.commit()
    (folder,) = repository_folders(extract(repo, tmp_path / "out"))
    records, _ = load_records(folder)
    memory = LookupIndex(records)
    stored = open_index(folder)
    try:
        for words, held in ((frozenset({"no", "such", "widget"}), 2),
                            (frozenset({"widget", "here"}), 1),
                            (frozenset({"missing", "gadget"}), 1),
                            (frozenset({"widget", "gadget"}), 0), (frozenset(), 0)):
            assert memory.holding(words) == stored.holding(words) == held, words
        rarity = Rarity(stored.holding, common=frozenset())
        assert rarity.has_rare("no such widget {x} here")
        assert not rarity.has_rare("{x}")
        assert not Rarity(stored.holding, common=frozenset({"no such widget", "here"})
                          ).has_rare("no such widget {x} here")
    finally:
        stored.close()


def test_a_paste_that_is_a_templates_beginning_earns_trust_by_the_words_it_shows() -> None:
    # urllib3's `LocationParseError` raises (src/urllib3/util/url.py), their class's
    # `Failed to parse: {location}` written out: `Failed to parse` is the beginning of each of
    # them, and common (several libraries print it); the words the templates go on with are not
    # in the paste, and earn none of them trust
    index = index_of(b'''
def encode_target(target):
    raise LocationParseError(f"Failed to parse: {target} is not a valid request URI")


def parse_url(url):
    raise LocationParseError(f"Failed to parse: {url}")


def idna_encode(name):
    raise LocationParseError(f"Failed to parse: Name '{name}' is not a valid IDNA label")
''')
    title = index.answer("urllib3.exceptions.LocationParseError: Failed to parse")
    assert not title.found  # one of them, nothing in the paste says which
    # (github.com/joaomatosf/jexboss/issues/69's title; the paste shows `Failed to parse` alone)
    shown = index.answer("LocationParseError: Failed to parse: Name 'a..b' is not a valid IDNA")
    assert shown.found and shown.matches[0].wording.qualname == "idna_encode"
