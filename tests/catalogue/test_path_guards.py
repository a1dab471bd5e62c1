"""A message method's paths, each with the `if` tests it decides, cut to those a raise runs.

`class_text.method_slot` reads a `__str__` once into one template per path, with the tests the
path decides (`TextSlot.guards`); the class pass keeps the paths whose tests the raise's call
does not decide against them (`guards.open_paths`). The code here is pyyaml's and pydantic's
shape, run for real: every message a raise prints is matched by its own records' regexes.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

from crawler.parse.message import flow
from crawler.parse.message.guards import decided
from crawler.records import RaiseSite
from tests.helpers.classes import by_function, resolve_sources

# pyyaml's lib/yaml/error.py at d51d8a1 (Mark's snippet left out), and raises of its scanner's shape
MARKED = '''
__all__ = ['Mark', 'YAMLError', 'MarkedYAMLError']

class Mark:

    def __init__(self, name, line, column):
        self.name = name
        self.line = line
        self.column = column

    def __str__(self):
        where = "  in \\"%s\\", line %d, column %d"   \\
                % (self.name, self.line+1, self.column+1)
        return where

class YAMLError(Exception):
    pass

class MarkedYAMLError(YAMLError):

    def __init__(self, context=None, context_mark=None,
            problem=None, problem_mark=None, note=None):
        self.context = context
        self.context_mark = context_mark
        self.problem = problem
        self.problem_mark = problem_mark
        self.note = note

    def __str__(self):
        lines = []
        if self.context is not None:
            lines.append(self.context)
        if self.context_mark is not None  \\
            and (self.problem is None or self.problem_mark is None
                    or self.context_mark.name != self.problem_mark.name
                    or self.context_mark.line != self.problem_mark.line
                    or self.context_mark.column != self.problem_mark.column):
            lines.append(str(self.context_mark))
        if self.problem is not None:
            lines.append(self.problem)
        if self.problem_mark is not None:
            lines.append(str(self.problem_mark))
        if self.note is not None:
            lines.append(self.note)
        return '\\n'.join(lines)
'''

SCANNER = '''
from .error import MarkedYAMLError, Mark

class ScannerError(MarkedYAMLError):
    pass

def problem_only():
    raise ScannerError(None, None, "mapping keys are not allowed here", Mark("<doc>", 0, 5))

def two_marks_apart():
    raise ScannerError("while scanning a simple key", Mark("<doc>", 0, 0),
            "could not find expected ':'", Mark("<doc>", 2, 0))

def two_marks_alike():
    raise ScannerError("while scanning a simple key", Mark("<doc>", 0, 0),
            "could not find expected ':'", Mark("<doc>", 0, 0))

def with_note(note):
    raise ScannerError(problem="found a tab", note="see the spec")
'''

# pyyaml's constructor.py takes the class through a star import
CONSTRUCTOR = '''
from .error import *

class ConstructorError(MarkedYAMLError):
    pass

def undefined(tag):
    raise ConstructorError(None, None,
            "could not determine a constructor for the tag %r" % tag,
            Mark("<doc>", 1, 2))
'''

# pydantic's PydanticErrorMixin (pydantic/errors.py at 2151025): two returns, `if`/`else`
PYDANTIC = '''
DEV_ERROR_DOCS_URL = 'https://errors.pydantic.dev/2.12/u/'


class PydanticErrorMixin:

    def __init__(self, message, *, code):
        self.message = message
        self.code = code

    def __str__(self):
        if self.code is None:
            return self.message
        else:
            return f'{self.message}\\n\\nFor further information visit {DEV_ERROR_DOCS_URL}{self.code}'


class PydanticUserError(PydanticErrorMixin, RuntimeError):
    pass


def coded():
    raise PydanticUserError('At least one of `by_alias` or `by_name` must be set to True.',
                            code='validate-by-alias-and-name-false')


def uncoded():
    raise PydanticUserError('A non-annotated attribute was detected.', code=None)


def either(code):
    raise PydanticUserError('Field defined on a base class was overridden.', code=code)
'''


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """The sources above as an importable package `yamlish` (and `pydanticish`)."""
    root = tmp_path / "src"
    for path, text in {"yamlish/__init__.py": "", "yamlish/error.py": MARKED,
                       "yamlish/scanner.py": SCANNER, "yamlish/constructor.py": CONSTRUCTOR,
                       "pydanticish/__init__.py": "", "pydanticish/errors.py": PYDANTIC}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] in ("yamlish", "pydanticish")]:
            del sys.modules[name]


def _templates(package: Path) -> tuple[dict[str, list[str]], dict[str, list[RaiseSite]]]:
    """Each function's templates, and its sites, as the class pass gives them."""
    sources = {p.relative_to(package).as_posix(): p.read_text(encoding="utf-8")
               for p in sorted(package.rglob("*.py"))}
    sites = by_function(resolve_sources(sources))
    return {name: [site.message.template for site in found] for name, found in sites.items()}, sites


def test_the_paths_a_raise_runs_are_its_templates_and_match_what_it_prints(package: Path) -> None:
    templates, sites = _templates(package)
    assert templates["problem_only"] == ["mapping keys are not allowed here\n{problem_mark}"]
    # the two marks' comparison is not decided by the call: both paths, one record each
    assert sorted(templates["two_marks_apart"]) == sorted(templates["two_marks_alike"]) == [
        "while scanning a simple key\ncould not find expected ':'\n{problem_mark}",
        "while scanning a simple key\n{context_mark}\ncould not find expected ':'\n{problem_mark}"]
    assert templates["with_note"] == ["found a tab\nsee the spec"]
    assert templates["undefined"] == [  # its class through `from .error import *`
        "could not determine a constructor for the tag {tag}\n{problem_mark}"]
    assert templates["coded"] == ["At least one of `by_alias` or `by_name` must be set to True."
                                  "\n\nFor further information visit "
                                  "{DEV_ERROR_DOCS_URL}"
                                  "validate-by-alias-and-name-false"]
    assert templates["uncoded"] == ["A non-annotated attribute was detected."]
    assert templates["either"] == [  # `code` a variable: read as given, as in `__init__`s
        "Field defined on a base class was overridden.\n\nFor further information visit "
        "{DEV_ERROR_DOCS_URL}{code}"]
    composed = {site.message.composed_by for name in templates for site in sites[name]}
    assert composed == {"yamlish.error.MarkedYAMLError.__str__",
                        "pydanticish.errors.PydanticErrorMixin.__str__"}
    checked = 0
    for module, names in (("yamlish.scanner", ("problem_only", "two_marks_apart",
                                               "two_marks_alike")),
                          ("yamlish.constructor", ("undefined",)),
                          ("pydanticish.errors", ("coded", "uncoded"))):
        loaded = importlib.import_module(module)
        for name in names:
            arguments = ("tag:yaml.org,2002:x",) if name == "undefined" else ()
            with pytest.raises(Exception) as caught:
                getattr(loaded, name)(*arguments)
            printed = str(caught.value)
            assert any(re.fullmatch(s.message.regex, printed) for s in sites[name]), (name, printed)
            checked += 1
    with pytest.raises(Exception) as caught:
        importlib.import_module("yamlish.scanner").with_note(None)
    assert [s for s in sites["with_note"] if re.fullmatch(s.message.regex, str(caught.value))]
    assert checked == 6


def test_a_method_with_more_open_paths_than_a_message_has_alternatives_is_not_followed() -> None:
    """Five tests no call decides (a `**` argument says nothing of what each parameter holds):
    32 paths stay open, more than a message's eight alternatives; the raise keeps its own text
    and names the method. A variable argument is read as given (not None), as the class pass
    reads `if P is None:` in an `__init__`: only the two marks' comparison stays open."""
    source = MARKED + '''
class ScannerError(MarkedYAMLError):
    pass

def everything(arguments):
    raise ScannerError(**arguments)

def variables(context, context_mark, problem, problem_mark, note):
    raise ScannerError(context, context_mark, problem, problem_mark, note)
'''
    sites = by_function(resolve_sources({"y/error.py": source}))
    assert [s.message.not_followed for s in sites["everything"]] == [
        "y.error.MarkedYAMLError.__str__"]
    assert sorted(s.message.template for s in sites["variables"]) == [
        "{context}\n{context_mark}\n{problem}\n{problem_mark}\n{note}",
        "{context}\n{problem}\n{problem_mark}\n{note}"]


def _decide(test: str, none: dict[str, bool], literal: set[str]) -> bool | None:
    return decided(test, none.get, literal.__contains__)


def test_a_test_is_decided_three_valued() -> None:
    none = {"context": True, "problem": False}
    assert _decide("self.context is None", none, set()) is True
    assert _decide("self.context is not None", none, set()) is False
    assert _decide("self.problem is not None", none, set()) is True
    assert _decide("self.mark is not None", none, set()) is None  # not known
    assert _decide("self.context", none, set()) is False  # None is false
    assert _decide("self.problem", none, set()) is None  # given, but maybe empty
    assert _decide("self.problem", none, {"problem"}) is True  # literal text, not empty
    assert _decide("not self.context", none, set()) is True
    assert _decide("self.context is not None and (self.mark.line != 1)", none, set()) is False
    assert _decide("self.problem is not None and (self.mark.line != 1)", none, set()) is None
    assert _decide("self.problem is None or self.context is None", none, set()) is True
    assert _decide("self.problem is None or self.mark", none, set()) is None
    assert _decide("len(self.context) > 2", none, set()) is None  # no rule reads it
    assert _decide("self.context is", none, set()) is None  # not an expression


def _definitions(source: str, name: str, items: bool = False) -> list[tuple[object, ...]]:
    """The definitions of `name` reaching the function's last statement, each as its parts'
    sources and the tests its path decides."""
    module = cst.parse_module(source)
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    body = function.body.body
    found = flow.definitions(name, ((body, len(body) - 1, "function"),), items=items, limit=64)
    assert found is not None
    return [(tuple(module.code_for_node(value.value if isinstance(value, flow.Element) else value)
                   for value, _ in definition),
             tuple((module.code_for_node(test), outcome)
                   for test, outcome in flow.decisions_of(definition)))
            for definition in found]


def test_an_if_chain_s_branches_decide_their_tests() -> None:
    got = _definitions('''def f(a, b):
    if a:
        msg = "one"
    elif b:
        msg = "two"
    else:
        msg = "three"
    return msg
''', "msg")
    assert got == [(('"one"',), (("a", True),)),
                   (('"two"',), (("a", False), ("b", True))),
                   (('"three"',), (("a", False), ("b", False)))]


def test_the_fall_through_decides_only_where_the_first_branches_bind() -> None:
    got = _definitions('''def f(a, b):
    lines = []
    if a:
        lines.append("x")
    if b is not None:
        lines.append("y")
    return lines
''', "lines", items=True)
    assert sorted(got) == sorted([
        (("[]", '"x"', '"y"'), (("b is not None", True), ("a", True))),
        (("[]", '"y"'), (("b is not None", True), ("a", False))),
        (("[]", '"x"'), (("b is not None", False), ("a", True))),
        (("[]",), (("b is not None", False), ("a", False)))])
    # `if a: pass` / `elif b: bind`: falling through is `a or not b`, no single outcome
    got = _definitions('''def f(a, b):
    msg = "none"
    if a:
        pass
    elif b:
        msg = "two"
    return msg
''', "msg")
    assert got == [(('"two"',), (("a", False), ("b", True))), (('"none"',), ())]


# jinja's TemplateNotFound (src/jinja2/exceptions.py at 5ef7011), cut to what its message reads
JINJA = '''
class TemplateNotFound(IOError, LookupError):

    message = None

    def __init__(self, name, message=None):
        IOError.__init__(self, name)

        if message is None:
            from .runtime import Undefined

            if isinstance(name, Undefined):
                name._fail_with_undefined_error()

            message = name

        self.message = message
        self.name = name
        self.templates = [name]

    def __str__(self):
        return str(self.message)


def named(template):
    raise TemplateNotFound(template)


def searched(template, plural, paths_str):
    raise TemplateNotFound(
        template,
        f"{template!r} not found in search {plural}: {paths_str}",
    )
'''


def test_str_of_an_attribute_is_its_text_and_an_unread_default_is_not_the_parameter() -> None:
    """`str(self.message)` shows the attribute's text where the call gives it; where the call
    leaves `message` None, the `if message is None: message = name` branch ran, whose value is
    not read: the raise keeps its own text and names the method, never `{message}`."""
    sites = by_function(resolve_sources({"j/exceptions.py": JINJA}))
    (searched,) = sites["searched"]
    assert (searched.message.template, searched.message.composed_by) == (
        "{template} not found in search {plural}: {paths_str}",
        "j.exceptions.TemplateNotFound.__str__")
    (named,) = sites["named"]
    assert (named.message.template, named.message.not_followed) == (
        "{template}", "j.exceptions.TemplateNotFound.__str__")
