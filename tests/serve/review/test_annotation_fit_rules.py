"""The rule's parts that issue 50's false alarms asked for, each with the real annotations of
issue 50's corpus (tests/serve/review/annotations/real/, the working half and the first sealed
half, which is spent and so is development data) that it accepts and those it still lists, by
item id. Each right annotation accepted here was listed before these parts (docs/measurements/
annotations.md, "the one rule, told what says nothing")."""

from __future__ import annotations

import pytest

from crawler.records import ErrorRecord
from crawler.serve.review.annotation_fit import (
    FUNCTION_WORDS,
    LISTED_MARGIN,
    MIN_LEAD,
    Fit,
    Index,
    keyed_names,
    lead,
    message_names,
    name_words,
    zone_weights,
)
from crawler.serve.review.annotation_names import annotation_text, code_mentions
from crawler.store import repo_output
from tests.serve.review.annotations.corpus import REAL, unpack_file

Library = tuple[Index, dict[str, ErrorRecord], dict[str, str]]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> object:
    """A library of the corpus by name (`sealed/requests`): its index, records and texts."""
    built: dict[str, Library] = {}

    def get(name: str) -> Library:
        if name not in built:
            corpus, folder = unpack_file(REAL / f"{name}.yaml",
                                         tmp_path_factory.mktemp(name.replace("/", "-")))
            loaded = repo_output.load_folder(folder, quick=True)
            built[name] = (Index(loaded.records, loaded.manifest),
                           {record.id: record for record in loaded.records},
                           {item["id"]: annotation_text(item["annotation"])
                            for item in corpus["records"]})
        return built[name]
    return get


def judged(library: object, name: str, record: str, written_for: str) -> Fit:
    """Record `record` of library `name` given the annotation written for `written_for`."""
    index, records, texts = library(name)  # type: ignore[operator]
    fit = index.judge(records[record], texts[written_for])
    assert fit is not None
    return fit


def test_the_words_of_names_are_their_parts_of_four_letters_or_more() -> None:
    assert name_words({"ReadTimeout", "date", "m:parser", "w:when", "url", "HTTPError"}) == {
        "w:read", "w:timeout", "w:date", "w:parser", "w:http", "w:error"}


# a word of the page that the own record's names say is no evidence for another record
@pytest.mark.parametrize(("name", "record"), [
    # the read timeout's page says "read timeout"; its record's exception is ReadTimeout, and
    # the sibling whose message is "Invalid timeout ... (connect, read) timeout tuple" led by them
    ("sealed/requests", "a2802b0ada8618bb"),
    # the page says "request"; its record is PreparedRequest's (`rewind_body` said it)
    ("sealed/requests", "72398ff1be5d1de0"),
    # "date" of isoparse's `date`, which `parser.parse`'s message says
    ("sealed/python-dateutil", "f92a9d82077708f3"),
])
def test_a_word_its_own_records_names_say_is_no_evidence(library: object, name: str,
                                                         record: str) -> None:
    fit = judged(library, name, record, record)
    assert not fit.listed, fit.better


def test_what_sets_another_record_apart_still_lists_it(library: object) -> None:
    """The read timeout's record given the annotation of the sibling that refuses a bad
    `timeout=`: its words `connect`, `tuple`, `single` are no name's of the own record."""
    fit = judged(library, "sealed/requests", "a2802b0ada8618bb", "f76433ba6012a62b")
    assert fit.sure and fit.better[0].id == "f76433ba6012a62b"
    assert {"w:connect", "w:tuple"} <= set(fit.better[0].names)
    assert "w:read" not in fit.better[0].names  # the own record's ReadTimeout says it
    # and `_parse_isodate_uncommon` given relativedelta's page: its months and years
    fit = judged(library, "sealed/python-dateutil", "f92a9d82077708f3", "c4e93f5ae93dcebe")
    assert fit.listed and {"w:months", "w:years"} <= set(fit.better[0].names)


def test_a_messages_prose_is_words_and_its_code_names() -> None:
    code = keyed_names("def validate_options(options):\n"
                       '    """Validates the format options."""  # and sql\n'
                       "    ofrmt = options.get('output_format')\n"
                       "    if ofrmt not in [None, 'sql', 'python']:\n"
                       "        raise SQLParseError(f'Unknown output format: {ofrmt}')\n")
    assert {"sql", "python", "output_format", "ofrmt", "options"} <= code
    assert not {"Validates", "format", "and"} & code  # the docstring's and comment's prose
    assert message_names("Unknown output format: ", code) == set()
    assert message_names("Invalid value for strip_comments: ", code) == {"strip_comments"}
    assert message_names("Did not attempt to load JSON data because the request Content-Type "
                         "was not 'application/json'.", set()) == {"JSON"}


@pytest.mark.parametrize(("name", "record"), [
    # every page of sqlparse's options calls `sqlparse.format(sql, ...)`: the sibling whose
    # message is "Unknown output format: {ofrmt}" held `format` (its prose) and `sql` (a string
    # of its condition) as names
    ("sealed/sqlparse", "0938bf0b5fa9b9a8"),
    ("sealed/sqlparse", "53bfcae76f8242a8"),
    ("sealed/sqlparse", "eaa01bdbb539072a"),
    # the page quotes the content type `application/json`, which the sibling's message says
    ("sealed/werkzeug", "bd7ea479f33f7263"),
])
def test_a_messages_prose_word_is_no_name_a_page_calls(library: object, name: str,
                                                       record: str) -> None:
    fit = judged(library, name, record, record)
    assert not fit.listed, fit.better


def test_a_message_still_tells_its_siblings_apart_by_its_words(library: object) -> None:
    """The JSON decoding error given the page of the sibling that refuses a body not declared
    JSON; the option `strip_comments` given the output format's page."""
    fit = judged(library, "sealed/werkzeug", "bd7ea479f33f7263", "f516e72482bc0c2d")
    assert fit.sure and fit.better[0].id == "f516e72482bc0c2d"
    assert {"w:content", "w:type"} <= set(fit.better[0].names)
    fit = judged(library, "sealed/sqlparse", "0938bf0b5fa9b9a8", "cfcbeb7f3012786c")
    assert fit.sure and fit.better[0].id == "cfcbeb7f3012786c"
    assert {"w:format", "w:output", "sql"} == set(fit.better[0].names)


def test_a_name_shaped_like_code_leads_by_itself() -> None:
    assert lead(["truncate_strings"], {"truncate_strings"}) == MIN_LEAD
    assert lead(["ConnectionError"], {"ConnectionError"}) == MIN_LEAD
    assert lead(["format"], {"format"}) == 1  # a plain name, or a word: chance
    assert lead(["w:format", "m:formatter"], {"w:format", "m:formatter"}) == 2


@pytest.mark.parametrize(("name", "record", "written_for", "by"), [
    # `truncate_strings` is the sibling's option alone
    ("sealed/sqlparse", "b157aece3e03e20f", "53bfcae76f8242a8", ("truncate_strings",)),
    # the connection error's page on the read timeout's record: its exception alone
    ("sealed/requests", "a2802b0ada8618bb", "cf30d0dfa1069c45", ("ConnectionError",)),
])
def test_a_moved_annotation_is_listed_by_one_name_shaped_like_code(
        library: object, name: str, record: str, written_for: str, by: tuple[str, ...]) -> None:
    fit = judged(library, name, record, written_for)
    assert fit.sure and fit.better[0].names == by


def test_the_function_words_of_english_are_none_of_a_messages() -> None:
    assert {"when", "with", "after", "does", "must", "like", "first"} <= FUNCTION_WORDS
    assert not {"date", "value", "timeout", "request", "empty", "integer"} & FUNCTION_WORDS


@pytest.mark.parametrize(("name", "record"), [
    # a sibling's message ("String does not contain a date") said `does` and `date`, and the
    # page says "does not" of a string and "date" of what it holds
    ("sealed/python-dateutil", "6388e66f5608a99e"),
    # `after` of "Convert ... after", `like` of "a value like" against `Lexer.get_tokens`
    ("sealed/sqlparse", "eaa01bdbb539072a"),
])
def test_a_function_word_is_no_evidence(library: object, name: str, record: str) -> None:
    fit = judged(library, name, record, record)
    assert not fit.listed, fit.better


def test_the_words_that_say_something_still_list_a_moved_annotation(library: object) -> None:
    fit = judged(library, "sealed/sqlparse", "eaa01bdbb539072a", "98c5c204988a8a90")
    assert fit.sure and {"w:positive", "w:integer", "wrap_after"} <= set(fit.better[0].names)



def test_what_does_not_parse_as_python_is_read_as_prose() -> None:
    """A message quoted in backticks, a template's tags, are no code: their words are words, and
    a token shaped like code among them is a name; Python still reads as code."""
    quoted = code_mentions("The message names both, e.g. `expected token 'in', got 'items'`, "
                           "or `[Errno 111] Connection refused`.")
    assert quoted.names == ()
    assert {"expected", "token", "items", "errno", "connection", "refused"} <= quoted.words
    tags = code_mentions("```\n{% for item in items %}{{ item }}{% endfor %}\n```\n"
                         "with `{% macro button(label) %}` and `default_filter`")
    assert tags.names == ("default_filter",)
    assert {"items", "endfor", "macro", "button", "label"} <= tags.words
    code = code_mentions("Call `env.get_template(name)`:\n```\ntmpl = env.from_string(s)\n```")
    assert set(code.names) == {"env.get_template", "name", "env.from_string", "s"}
    assert "tmpl" in code.user_names and not {"get", "template", "from"} & code.words


def test_a_page_quoting_its_message_is_not_listed_by_the_quotes_words(library: object) -> None:
    """jinja2's `expected token 'in', got 'items'`, read as names, made `items` and `token`
    names of the lexer's `tokeniter`, which led by them (margin 0.60)."""
    fit = judged(library, "working/jinja2", "cdf3116867d6720a", "cdf3116867d6720a")
    assert not fit.listed, fit.better
    assert {"w:expected", "w:token"} <= set(fit.names)


def test_a_word_of_a_short_message_weighs_more_than_one_of_a_long_one() -> None:
    zones = {"short": {"w:invalid", "w:fields"},
             "long": {f"w:{n}" for n in range(14)}, "mean": {f"w:{n}" for n in range(8)}}
    weights = zone_weights(zones)
    assert weights["short"] > weights["mean"] > weights["long"]
    assert weights["mean"] == pytest.approx(1.0)
    assert zone_weights({}) == {}


@pytest.mark.parametrize(("name", "record", "written_for"), [
    # the sibling's "... instance ... request" message (9 words) against the own record's 27:
    # the own long message held `instance`, `request` by chance (margins 0.40 before)
    ("working/httpx", "3a61517dbae21d19", "0878204ed8b6472a"),
    ("working/httpx", "e288c7f2ace922ed", "0878204ed8b6472a"),
    # `iterator`, `async` of the short sibling's message (0.47 before)
    ("working/httpx", "eddd9dc2f7f208b7", "4c857867f261709d"),
    # networkx's "Adjacency matrix not square" against the long shape message (0.43 before)
    ("working/networkx", "2243c55c9d3f5981", "7a7106fafc86b26c"),
])
def test_a_moved_annotation_is_listed_by_its_short_siblings_words(
        library: object, name: str, record: str, written_for: str) -> None:
    fit = judged(library, name, record, written_for)
    assert fit.listed and fit.better[0].id == written_for and fit.better[0].sibling


def test_a_long_siblings_chance_words_list_a_right_annotation_no_more(library: object) -> None:
    """`select_template`'s page says "tried" and "list", which the sibling's long message says
    (margin 0.50 before); one moved annotation the weights lose: raise_for_status's long
    message given the page of a short sibling that names `status_code` (0.60 before)."""
    fit = judged(library, "working/jinja2", "dd4f8efdece1fa33", "dd4f8efdece1fa33")
    assert not fit.listed, fit.better
    lost = judged(library, "working/httpx", "0878204ed8b6472a", "3a61517dbae21d19")
    assert not lost.listed and lost.better[0].id == "3a61517dbae21d19"


def test_what_an_example_imports_from_the_standard_library_is_no_name_of_the_library() -> None:
    mentions = code_mentions("```\nfrom datetime import datetime, timedelta, timezone\n"
                             "import jwt, asyncio\nfrom . import helpers\n"
                             "exp = datetime.now(tz=timezone.utc) + timedelta(hours=1)\n"
                             "asyncio.run(main())\njwt.encode({'exp': exp}, key)\n```")
    assert not {"datetime", "timedelta", "timezone", "timezone.utc", "asyncio", "asyncio.run",
                "datetime.now"} & set(mentions.names)
    assert {"jwt", "jwt.encode", "key", "helpers"} <= set(mentions.names)


def test_a_keyword_is_kept_with_the_call_it_is_passed_to() -> None:
    mentions = code_mentions("```\njwt.decode(token, key, algorithms=['HS256'])\n"
                             "URL.build(scheme='http', host=h).with_path(p)\n```"
                             " and `allow_int=True`")
    assert {"algorithms@jwt.decode", "scheme@URL.build", "host@URL.build",
            "allow_int"} <= set(mentions.names)
    assert not {"algorithms", "scheme", "host"} & set(mentions.names)


@pytest.mark.parametrize(("name", "record"), [
    # the pages of raises under `URL.build` pass it `scheme=`, `authority=`, `user=`, ...,
    # which `URL.build`'s own record held as its parameters and led by (0.79, 0.73 before)
    ("sealed3/yarl", "827a564603d5b140"),
    ("sealed3/yarl", "6fb61014c6bb4ead"),
    # `jwt.decode(..., algorithms=[...])`: `PyJWS.decode_complete` led by `algorithms` (0.56)
    ("sealed3/pyjwt", "b3f09d1c76af6000"),
    # `h11.Request(method=..., target=..., headers=...)`: `write_request` led (0.71)
    ("sealed2/h11", "a8b244c083744e0a"),
    # `arrow.Arrow.span_range(..., tz=...)`: `Arrow.replace` and `is_between` (0.66)
    ("sealed2/arrow", "9840e063db3105db"),
])
def test_a_keyword_passed_to_a_call_is_every_record_the_call_reaches(library: object, name: str,
                                                                     record: str) -> None:
    fit = judged(library, name, record, record)
    assert not fit.listed, fit.better
    assert any(shown.endswith("=)") for shown in fit.names)


def test_a_keyword_counts_no_more_for_a_record_the_call_does_not_reach(library: object) -> None:
    """h11's `Data(data=...)`: `data` was a name the own record's code holds; passed to `Data`,
    which the record does not hold, it counts for the records `Data` reaches (listed now, 0.52,
    0.35 before)."""
    fit = judged(library, "sealed2/h11", "a5bb431cc9bd00e1", "a5bb431cc9bd00e1")
    assert fit.listed and "data" not in fit.names


@pytest.mark.parametrize(("name", "record"), [
    # pyyaml's CI action `.github/actions/dynamatrix/matrix_yaml_to_json.py` calls `print` and
    # `yaml.safe_load`, which every page of a loading error names: its `main` led (0.60, 0.52)
    ("sealed4/pyyaml", "d4fbd677f0a1ec9d"),
    ("sealed4/pyyaml", "e3e62d874cf94e12"),
])
def test_a_hidden_folders_tooling_fits_no_page_better(library: object, name: str,
                                                      record: str) -> None:
    fit = judged(library, name, record, record)
    assert not fit.listed, fit.better
    index, records, _ = library(name)  # type: ignore[operator]
    tooling = [r for r in records.values() if r.site.path.startswith(".github/")]
    assert tooling and not any(r.id in index.library for r in tooling)


# Of two raises of one function, only what one holds and the other lacks tells them apart: the
# words both messages say (`graph`, `changed`, `iteration`) counted for each, so a page written
# for the longer message was not listed on the shorter one (working half: within one function
# 47.2 -> 55.5 % listed; every spent set up, 43.7 -> 47.2 % the least)
@pytest.mark.parametrize(("name", "record", "written_for"), [
    # "Graph changed during iteration" given the page of "Graph contains a cycle or graph
    # changed during iteration": `contains`, `cycle` (margin 0.32 before)
    ("working/networkx", "24f8c81467ddd31a", "9356a66497e10a51"),
    # "Node {target} not reachable from {source}" given "Node {source} not found in graph"
    ("working/networkx", "6cddcf4806782434", "d4a41965dbac3956"),
    # the closed stream's raise given the page of the sync iterator on an async stream (0.45)
    ("working/httpx", "ae0d0a71baf41781", "4c857867f261709d"),
    # "`fields` option must be a list or tuple." given the page of "Cannot set both `fields`
    # and `additional` options for the same Schema." (0.43)
    ("working/marshmallow", "9afea75de639925b", "cddc41e92561293d"),
])
def test_siblings_are_told_apart_by_what_one_holds_and_the_other_lacks(
        library: object, name: str, record: str, written_for: str) -> None:
    fit = judged(library, name, record, written_for)
    assert fit.listed, fit.better
    assert any(b.id == written_for and b.sibling for b in fit.better)


@pytest.mark.parametrize(("name", "record"), [
    # `select_template`'s `raise TemplatesNotFound(names)`: its message is the variable the
    # sibling's condition (`if not names`) names, and the sibling raises the same class; its
    # page says "tried" and "list", the sibling's words (listed, margin 1.00, before the rule)
    ("working/jinja2", "dd4f8efdece1fa33"),
    # babel's `Locale.parse` raises "unknown locale {identifier}" twice, the same words: the
    # page names `resolve_likely_subtags`, which only the other's condition holds (margin 1.00)
    ("sealed3/babel", "c81af2d55bb0a871"),
])
def test_a_raise_holding_nothing_its_sibling_lacks_is_not_told_from_it(
        library: object, name: str, record: str) -> None:
    fit = judged(library, name, record, record)
    assert not any(b.sibling and b.margin >= LISTED_MARGIN for b in fit.better), fit.better


def test_a_right_page_naming_a_siblings_own_words_is_listed(library: object) -> None:
    """What the rule costs, kept in sight: marshmallow's "Class with name ... was not found.
    You may need to import the class." has a page saying the registry keeps classes "by class
    name and by full module path", three words of the sibling "Multiple classes ... Please use
    the full, module-qualified path." against one of its own (`import`): listed as a suspect,
    not sure (10 such right annotations of 677 in the working half and the spent sets)."""
    fit = judged(library, "working/marshmallow", "8cdc7bbcfe2069ec", "8cdc7bbcfe2069ec")
    assert fit.listed and not fit.sure
    assert fit.better[0].sibling and {"w:full", "w:module", "w:path"} <= set(fit.better[0].names)
