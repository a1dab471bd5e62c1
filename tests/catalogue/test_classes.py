"""The repository-wide pass: class defaults, re-exports, the exception class list."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from crawler.catalogue import classes
from crawler.records import TextSlot
from tests.helpers.classes import by_function, messages, resolve_sources, visit_package
from tests.helpers.gitrepo import GitRepo

PACKAGES = Path(__file__).resolve().parents[1] / "packages"


@pytest.fixture
def resolved() -> classes.Resolved:
    return classes.resolve(visit_package(PACKAGES / "clspkg"))


def test_class_defaults(resolved: classes.Resolved) -> None:
    sites = by_function(resolved)
    expected = {
        "bad": ("clspkg.errors.BadThing", "class_default",
                "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "bad_module_alias": ("clspkg.errors.BadThing", "class_default",
                             "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "sub": ("clspkg.errors.Sub", "class_default",
                "thing {name} is over the limit of {limit}", "clspkg/errors.py:7"),
        "templated": ("clspkg.errors.Templated", "class_default", "templated failure",
                      "clspkg/errors.py:16"),
        "templated_bare": ("clspkg.errors.Templated", "class_default", "templated failure",
                           "clspkg/errors.py:16"),
        "templated_custom": ("clspkg.errors.Templated", "literal", "custom text", None),
        "coded": ("clspkg.errors.Coded", "class_default", "code {code} failed",
                  "clspkg/errors.py:25"),
        "plain": ("clspkg.errors.Plain", "dynamic", "{m}", None),
        "plain_literal": ("clspkg.errors.Plain", "literal", "plain literal", None),
        "legacy": ("clspkg.errors.Legacy", "class_default", "legacy: {w}",
                   "clspkg/errors.py:35"),
    }
    got = {name: (s[0].exception_qualname, s[0].message.kind, s[0].message.template,
                  s[0].message.defined_at) for name, s in sites.items() if name in expected}
    assert got == expected
    assert "builtin_no_message" not in sites
    assert resolved.from_pending == 2
    (missing,) = sites["missing_key"]
    assert (missing.message.display, missing.message.regex) == (
        "repr", "^['\"]no key (?P<k>[\\s\\S]*?)['\"]$")
    (located,) = sites["located"]
    assert (located.message.kind, located.message.template, located.message.defined_at) == (
        "class_default", "{where}: empty file {path}; restore it", "clspkg/errors.py:55")
    (with_code,) = sites["with_code"]
    assert (with_code.message.display, with_code.message.regex) == (
        "str", "^bad (?P<x>[\\s\\S]*?)$")


def test_exception_classes(resolved: classes.Resolved) -> None:
    listed = {entry["qualname"]: entry for entry in resolved.exception_classes}
    assert sorted(listed) == [f"clspkg.errors.{name}" for name in (
        "BadThing", "BaseError", "Coded", "Legacy", "Located", "MissingKey", "Plain", "Sub",
        "Templated", "WithCode")]
    assert listed["clspkg.errors.Sub"]["bases"] == ["clspkg.errors.BadThing"]
    assert listed["clspkg.errors.BaseError"]["bases"] == ["builtins.Exception"]
    assert listed["clspkg.errors.Legacy"]["line"] == 33
    assert listed["clspkg.errors.Sub"]["template_from"] == "init"


@pytest.fixture
def importable() -> Iterator[None]:
    sys.path.insert(0, str(PACKAGES))
    try:
        yield
    finally:
        sys.path.remove(str(PACKAGES))
        for name in [n for n in sys.modules if n == "clspkg" or n.startswith("clspkg.")]:
            del sys.modules[name]


def test_class_default_regexes_match_the_real_messages(resolved: classes.Resolved,
                                                       importable: None) -> None:
    api = importlib.import_module("clspkg.api")
    checked = 0
    for name, sites in by_function(resolved).items():
        function = getattr(api, name, None)
        if function is None:
            continue
        with pytest.raises(Exception) as caught:
            function()
        message = str(caught.value)
        assert any(re.fullmatch(s.message.regex, message) for s in sites), (name, message)
        checked += 1
    assert checked == 13


# ---------------------------------------------------------------- composing str(exc) (issue 16)


def test_a_transform_that_cannot_be_read_is_named_and_the_raise_keeps_its_template() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
class Formatted(Exception):
    def __init__(self, message):
        super().__init__(format_error(message))


class Coded(Exception):
    def __init__(self, message):
        super().__init__(f"E{compute_code()}: {message}")


def formatted(x):
    raise Formatted(f"bad {x}")


def coded(x):
    raise Coded(f"bad {x}")


def no_text():
    raise Formatted
'''}))
    (formatted,) = got["formatted"]
    assert (formatted.template, formatted.kind, formatted.composed_by, formatted.not_followed) == (
        "bad {x}", "fstring", None, "pkg.errors.Formatted.__init__")
    (coded,) = got["coded"]  # a call that does not take the message stays a placeholder
    assert (coded.template, coded.placeholders, coded.composed_by, coded.not_followed) == (
        "E{compute_code()}: bad {x}", ("compute_code()", "x"), "pkg.errors.Coded.__init__", None)
    assert "no_text" not in got  # no text of its own to keep: no record, as before


def test_display_follows_the_class_not_the_builtin() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
class ClickLike(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class NoSuchOption(ClickLike):
    def __init__(self, option_name, message=None, possibilities=None, ctx=None):
        if message is None:
            message = f"No such option: {option_name}"
        super().__init__(message)
        self.option_name = option_name


class BadOptionUsage(ClickLike):
    def __init__(self, option_name, message, ctx=None):
        super().__init__(message)
        self.option_name = option_name


class MissingKey(KeyError):
    def __str__(self):
        return str(self.args[0])


class PlainMissing(KeyError):
    pass


def no_such(opt):
    raise NoSuchOption(opt, possibilities=["--a"], ctx=None)


def bad_usage(opt):
    raise BadOptionUsage(opt, f"Option {opt} requires an argument.", None)


def missing(k):
    raise MissingKey(f"no key {k}")


def plain_missing(k):
    raise PlainMissing(f"no key {k}")
'''}))
    assert [(t.template, t.display, t.regex) for t in got["bad_usage"]] == [
        ("Option {opt} requires an argument.", "str",
         "^Option (?P<opt>[\\s\\S]*?) requires an argument\\.$")]
    # the raise leaves `message` None, so only `if message is None:`'s text can run
    assert {(t.template, t.display) for t in got["no_such"]} == {("No such option: {opt}", "str")}
    (missing,) = got["missing"]
    assert (missing.display, missing.regex) == ("str", "^no key (?P<k>[\\s\\S]*?)$")
    (plain,) = got["plain_missing"]
    assert (plain.display, plain.regex) == ("repr", "^['\"]no key (?P<k>[\\s\\S]*?)['\"]$")


def test_super_follows_the_raised_class_s_mro_through_a_diamond() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
class Base(Exception):
    def __init__(self, message):
        super().__init__(f"[base] {message}")


class Left(Base):
    def __init__(self, message):
        super().__init__(f"left: {message}")


class Right(Base):
    def __init__(self, message):
        super().__init__(f"right: {message}")


class Both(Left, Right):
    pass


def both(x):
    raise Both(f"value {x}")
'''}))
    (both,) = got["both"]  # Both, Left, Right, Base: Left's super() is Right
    assert (both.template, both.composed_by) == ("[base] right: left: value {x}",
                                                 "pkg.errors.Base.__init__")
    assert both.defined_at == "pkg/errors.py:9"


def test_class_text_survives_the_result_cache() -> None:
    from crawler.parse.file_tasks import visit_file
    from crawler.store import _outcome_json

    source = (PACKAGES / "layered" / "base.py").read_bytes()
    outcome = visit_file("layered/base.py", "0" * 40, source)
    again = _outcome_json.outcome_from_data(json.loads(_outcome_json.outcome_json(outcome)))
    assert [c.init_args for c in again.classes] == [c.init_args for c in outcome.classes]
    assert [c.class_attributes for c in again.classes] == [c.class_attributes
                                                          for c in outcome.classes]
    assert any(c.init_target == "layered.base.LibError" for c in again.classes)


def test_call_arguments_and_none_guards_survive_the_result_cache() -> None:
    """The class pass picks `if message is None:`'s branch from the raise's arguments: both
    must come back from the cache as the visit made them."""
    from crawler.parse.file_tasks import visit_file
    from crawler.records import CallArgument
    from crawler.store import _outcome_json

    source = (PACKAGES.parent / "cases" / "none_defaults.py").read_bytes()
    outcome = visit_file("none_defaults.py", "0" * 40, source)
    again = _outcome_json.outcome_from_data(json.loads(_outcome_json.outcome_json(outcome)))
    assert [s.arguments for s in again.sites] == [s.arguments for s in outcome.sites]
    assert again.sites[1].arguments == (CallArgument(None, "opt"), CallArgument(None, "None", True),
                                        CallArgument(None, '["--all"]'))
    guards = {(c.name, slot.name, slot.if_none) for c in again.classes for slot in c.init_args
              if slot.if_none}
    assert guards == {("NoSuchOption", "0", "message")}  # Either assigns in both branches
    assert [c.init_args for c in again.classes] == [c.init_args for c in outcome.classes]


def test_lookup_of_a_real_message_with_its_class_suffix_finds_its_record_first() -> None:
    from crawler.records import ErrorRecord, record_id
    from crawler.serve.lookup import sources as lookup
    from tests.helpers import runtime_harness

    (case,) = [c for c in runtime_harness.all_cases() if c.name == "classes"]
    records = [ErrorRecord(id=record_id("local/x/y", site.key(), index), status="active",
                           repo="local/x/y", commit="0" * 40, url=None, site=site)
               for index, site in enumerate(runtime_harness.records(case))]
    message = ("ConcretizationError: Abstract tracer value encountered where concrete value is "
               "expected: Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>\nThe axis argument "
               "Traced<ShapedArray(int32[])> must be static.\n\nSee "
               "https://docs.example.org/errors.html#example.errors.ConcretizationError")
    first = lookup.lookup(message, records)[0]
    assert (first.exact, first.wording.qualname.rpartition(".")[2]) == (True, "concrete")
    assert first.captures["x"] == "Traced<ShapedArray(int32[])>"
    # the raise's own argument, as records held it before: its regex cannot match the suffix
    own = re.compile("^The axis argument (?P<x>[\\s\\S]*?) must be static\\.$")
    assert own.fullmatch(message.partition(": ")[2]) is None


def test_two_base_inits_or_args_set_by_hand_are_not_followed() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
class BadStatusLine(Exception):
    def __init__(self, line):
        if not line:
            line = repr(line)
        self.args = line,
        self.line = line


class RemoteDisconnected(ConnectionResetError, BadStatusLine):
    def __init__(self, *pos, **kw):
        BadStatusLine.__init__(self, "")
        ConnectionResetError.__init__(self, *pos, **kw)


def remote():
    raise RemoteDisconnected("Remote end closed connection without response")


def status(line):
    raise BadStatusLine(f"bad line {line}")


class URLError(OSError):
    def __init__(self, reason, filename=None):
        self.args = reason,
        self.reason = reason

    def __str__(self):
        return '<urlopen error %s>' % self.reason


def url(host):
    raise URLError(f"unknown host {host}")
'''}))
    (remote,) = got["remote"]
    assert (remote.template, remote.not_followed) == (
        "Remote end closed connection without response", "pkg.errors.RemoteDisconnected.__init__")
    (status,) = got["status"]
    assert (status.template, status.not_followed) == (
        "bad line {line}", "pkg.errors.BadStatusLine.__init__")
    (url,) = got["url"]  # its __str__ does not read self.args: composed all the same
    assert (url.template, url.composed_by, url.not_followed) == (
        "<urlopen error unknown host {host}>", "pkg.errors.URLError.__str__", None)


def test_a_str_that_loses_the_raise_s_text_or_is_an_alias_of_repr() -> None:
    got = messages(resolve_sources({"pkg/errors.py": '''
class ArgumentError(Exception):
    def __init__(self, argument, message):
        self.argument_name = str(argument)
        self.message = message

    def __str__(self):
        return "argument %(argument_name)s: %(message)s" % dict(
            message=self.message, argument_name=self.argument_name)


class Error(Exception):
    def __init__(self, msg=''):
        self.message = msg
        Exception.__init__(self, msg)

    def __repr__(self):
        return self.message

    __str__ = __repr__


class NoSection(Error):
    def __init__(self, section):
        Error.__init__(self, 'No section: %r' % (section,))
        self.section = section
        self.args = (section, )


def conflicting(action, name):
    raise ArgumentError(action, "conflicting subparser: %s" % name)


def no_section(section):
    raise NoSection(section)
'''}))
    # `% dict(message=self.message, ...)`: each key stands for its value, so __str__ composes
    (conflicting,) = got["conflicting"]
    assert (conflicting.template, conflicting.composed_by, conflicting.not_followed) == (
        "argument {str(argument)}: conflicting subparser: {name}",
        "pkg.errors.ArgumentError.__str__", None)
    (no_section,) = got["no_section"]
    assert (no_section.template, no_section.composed_by) == (
        "No section: {section}", "pkg.errors.Error.__str__")


def test_a_str_that_keeps_the_base_s_str_in_a_local_composes() -> None:
    """`parent_str = super().__str__()`, then a `return` that adds to it: sphinx's
    ExtensionError (sphinx/errors.py at v9.1.0) and docker's APIError (`message =
    super().__str__()`); `Base.__str__(self)` as GitPython's UnmergedEntriesError spells it.
    Before, the local was no placeholder the class pass could fill: not followed, and the raise
    kept a regex of its two arguments' tuple, which the real message never matches."""
    got = messages(resolve_sources({"pkg/errors.py": '''
class SphinxError(Exception):
    category = 'Sphinx error'


class ExtensionError(SphinxError):
    def __init__(self, message, orig_exc=None, modname=None):
        super().__init__(message)
        self.message = message
        self.orig_exc = orig_exc
        self.modname = modname

    def __str__(self):
        parent_str = super().__str__()
        if self.orig_exc:
            return f'{parent_str} (exception: {self.orig_exc})'
        return parent_str


class APIError(Exception):
    def __init__(self, message, response=None, explanation=None):
        super().__init__(message)
        self.explanation = explanation

    def __str__(self):
        message = Exception.__str__(self)
        return f'{message} ("{self.explanation}")'


def load_extension(extname, err):
    raise ExtensionError('Could not import extension %s' % extname, err) from err


def unknown(name):
    raise ExtensionError(f'Unknown event name: {name}')


def api(url):
    raise APIError(f'no such image {url}', explanation='pull first')
'''}))
    assert sorted((m.template, m.composed_by, m.not_followed) for m in got["load_extension"]) == [
        ("Could not import extension {extname}", "pkg.errors.ExtensionError.__str__", None),
        ("Could not import extension {extname} (exception: {orig_exc})",
         "pkg.errors.ExtensionError.__str__", None)]
    (unknown,) = got["unknown"]  # no second argument: the branch without it
    assert (unknown.template, unknown.composed_by) == (
        "Unknown event name: {name}", "pkg.errors.ExtensionError.__str__")
    (api,) = got["api"]
    assert (api.template, api.composed_by) == (
        'no such image {url} ("pull first")', "pkg.errors.APIError.__str__")


def test_a_base_s_changed_suffix_reaches_files_that_raise_a_subclass(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    from crawler.pipeline import extract, update
    from crawler.store import record_files

    base = '''class Mixin:
    def __init__(self, message):
        super().__init__(f"{message}\\nSee SUFFIX")


class DocsError(Mixin, TypeError):
    pass
'''
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/base.py", base.replace("SUFFIX", "the docs"))
    repo.write("pkg/errors.py", "from pkg.base import DocsError\n\n\nclass Leaked(DocsError):\n"
                                "    pass\n")
    repo.write("pkg/use.py", "from pkg.errors import Leaked\n\n\ndef use(name):\n"
                             "    raise Leaked(f'leaked {name}')\n")
    repo.commit("first")
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = extract(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    (record,) = first.merged.records
    assert record.site.message.template == "leaked {name}\nSee the docs"
    repo.write("pkg/base.py", base.replace("SUFFIX", "https://docs.example/errors"))
    repo.commit("the base's suffix moves")
    second = update(str(repo.path), output_root=out, cache_dir=cache, jobs=1)
    assert second.parsed == 2  # the changed base, and the unchanged file raising its subclass
    live = [record_files.load_record(p) for p in record_files.iter_record_paths(first.folder)]
    assert [r.site.message.template for r in live if r.status != "removed"] == [
        "leaked {name}\nSee https://docs.example/errors"]


STAR_FILES = {
    "starpkg/__init__.py": "",
    "starpkg/_exceptions.py": (
        "class BaseSAX(Exception):\n"
        "    def __init__(self, msg, exception=None):\n"
        "        self._msg = msg\n"
        "        self._exception = exception\n"
        "        Exception.__init__(self, msg)\n\n"
        "    def __str__(self):\n"
        "        return self._msg\n\n\n"
        "class ReaderNotAvailable(BaseSAX):\n"
        "    pass\n"),
    "starpkg/other.py": "class ReaderNotAvailable(LookupError):\n    pass\n",
    # the last star import that has the name wins, as in Python
    "starpkg/reader.py": ("from starpkg.other import *\n"
                          "from starpkg._exceptions import *\n\n\n"
                          "def make(kind):\n"
                          "    raise ReaderNotAvailable(f'{kind} not supported', None)\n"),
    "starpkg/api.py": ("from starpkg.reader import ReaderNotAvailable\n\n\n"
                       "def other():\n"
                       "    raise ReaderNotAvailable('no parsers found', None)\n"),
}


def test_a_class_reached_through_a_star_import_shows_its_message(tmp_path: Path) -> None:
    """xml.sax's expatreader raises SAXReaderNotAvailable, which it has only through `from
    xml.sax._exceptions import *`: its class's __str__ shows the message alone, not the args
    tuple. Found wrong by scripts/real_messages.py (3 standard-library sites)."""
    resolved = resolve_sources(STAR_FILES)
    sites = {site.function: site for site in resolved.sites}
    assert {name: site.exception_qualname for name, site in sites.items()} == {
        "make": "starpkg._exceptions.ReaderNotAvailable",
        "other": "starpkg._exceptions.ReaderNotAvailable"}
    for path, text in STAR_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        for module, call in (("starpkg.reader", "make"), ("starpkg.api", "other")):
            function = getattr(importlib.import_module(module), call)
            with pytest.raises(Exception) as caught:
                function("expat") if call == "make" else function()
            assert re.fullmatch(sites[call].message.regex, str(caught.value)), str(caught.value)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "starpkg" or n.startswith("starpkg.")]:
            del sys.modules[name]


TRACER_FILES = {
    "tracerpkg/__init__.py": "",
    "tracerpkg/errors.py": (
        "class _ErrorMixin:\n"
        "    _error_page = 'https://docs.example.org/errors.html'\n"
        "    _module_name = 'tracerpkg.errors'\n\n"
        "    def __init__(self, message):\n"
        "        error_page = self._error_page\n"
        "        module_name = self._module_name\n"
        "        class_name = self.__class__.__name__\n"
        "        error_msg = f'{message}\\nSee {error_page}#{module_name}.{class_name}'\n"
        "        super().__init__(error_msg)\n\n\n"
        "class TracerTypeError(_ErrorMixin, TypeError):\n"
        "    pass\n\n\n"
        "class ConcretizationTypeError(TracerTypeError):\n"
        "    def __init__(self, tracer, context=''):\n"
        "        super().__init__(\n"
        "            'Abstract tracer value encountered where concrete value is expected: '\n"
        "            f'{tracer}\\n{context}\\n')\n"),
    "tracerpkg/core.py": (
        "from tracerpkg.errors import ConcretizationTypeError\n\n\n"
        "def to_int(tracer):\n"
        "    raise ConcretizationTypeError(tracer, 'The problem arose with the `int` function.')\n\n\n"
        "def to_bool(tracer):\n"
        "    raise TypeError('Abstract tracer value encountered where concrete value is expected: '\n"
        "                    f'{tracer}')\n"),
}


def test_crawler_lookup_of_a_real_suffixed_message_finds_its_record_first(tmp_path: Path) -> None:
    """A message as the user sees it (class name, the class's own text and its `See ...#...`
    suffix), from the raise really run, pasted into `crawler lookup` on an extracted folder."""
    from click.testing import CliRunner

    from crawler.cli.commands import main

    repo = GitRepo(tmp_path / "repo")
    for path, text in TRACER_FILES.items():
        repo.write(path, text)
    repo.commit("tracer errors")
    run = subprocess.run([sys.executable, "-c",
                          "import traceback, tracerpkg.core as c\n"
                          "try:\n    c.to_int('traced array with shape float32[]')\n"
                          "except Exception as e:\n"
                          "    print(''.join(traceback.format_exception_only(e)), end='')"],
                         cwd=repo.path, capture_output=True, text=True, check=True)
    message = run.stdout
    # as Python prints it: the class by its module, the class's own text and suffix
    assert message.startswith("tracerpkg.errors.ConcretizationTypeError: ")
    assert message.rstrip().endswith("#tracerpkg.errors.ConcretizationTypeError")
    out = tmp_path / "out"
    runner = CliRunner()
    extracted = runner.invoke(main, ["extract", str(repo.path), "-o", str(out), "-q"])
    assert extracted.exit_code == 0, extracted.output
    found = runner.invoke(main, ["lookup", message, str(out), "--json"])
    assert found.exit_code == 0, found.output
    first, *others = json.loads(found.output)["matches"]
    assert (first["exact"], first["path"], first["qualname"]) == (True, "tracerpkg/core.py",
                                                                   "to_int")
    # the plain TypeError's template fits the text too, but neither ties with nor passes it
    assert first["rank"] == 1 and not first["tie"] and all(o["rank"] > 1 for o in others)
    assert first["template"].endswith(
        "\nSee https://docs.example.org/errors.html#tracerpkg.errors.ConcretizationTypeError")


def test_class_digests_sharing_their_bases_are_the_digests_of_the_whole_mro() -> None:
    """The class pass keeps each class's JSON across the digests of one pass: each digest is
    still sha256 of the whole MRO dumped at once, and a change to a base reaches its subclasses."""
    files = visit_package(PACKAGES / "clspkg")
    index = classes.ClassIndex(files)

    def whole(qualname: str) -> str:  # the MRO's parts dumped in one list, as before the memo
        parts = [classes._digest_part(index, name) for name in classes.linearize(index, qualname)]
        text = json.dumps(parts, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]

    shared: dict[str, str] = {}
    names = [q for q in sorted(index.classes) if index.is_exception(q)]
    assert len(names) >= 5 and any(len(classes.linearize(index, q)) > 2 for q in names)
    for qualname in names:
        assert classes.digest(index, qualname, shared) == whole(qualname), qualname
        assert classes.digest(index, qualname) == whole(qualname), qualname
    entries = {e["qualname"]: e["composes"] for e in classes.resolve(files).exception_classes}
    assert entries == {q: whole(q) for q in names}


def _as_digested(slot: TextSlot) -> dict[str, object]:
    """`asdict`, without `if_given` and `guards` where they are unset (fields added after the
    digests were kept)."""
    data = asdict(slot)
    if data["if_given"] is None:
        del data["if_given"]
    if not data["guards"]:
        del data["guards"]
    return data


def test_a_class_digest_part_is_the_json_of_its_slots_as_asdict_gives_them() -> None:
    """`_digest_part` writes the slots without `asdict`'s copies: the JSON, so the digest, is
    the same as `asdict`'s."""
    index = classes.ClassIndex(visit_package(PACKAGES / "clspkg"))
    with_slots = 0
    for qualname, cls in sorted(index.classes.items()):
        slots = (*cls.init_args, *cls.self_attributes, *cls.class_attributes, *cls.methods)
        with_slots += bool(slots)
        expected = [cls.qualname, cls.name, cls.has_init, cls.params, cls.keywords,
                    cls.init_target, classes.place(cls), *(_as_digested(slot) for slot in slots)]
        assert classes._json(classes._digest_part(index, qualname)) == \
            classes._json(expected), qualname
    assert with_slots >= 3
