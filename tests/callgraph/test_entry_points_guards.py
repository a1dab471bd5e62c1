"""Entry points weighed against a raise's guard: a library's own call whose constants (or the
defaults it leaves) make the guard false does not reach that raise; one that satisfies it, or
leaves it open, or meets a guard the pass does not read, still does. Each on a package the test
writes into a git repository, asserting the exact public names and chains."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from crawler.parse.call_edges import GUARD, SIGNATURE, read_calls
from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo


def line_of(text: str, needle: str) -> int:
    """The line of the first line holding `needle` in the dedented text."""
    lines = textwrap.dedent(text).splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def test_a_default_left_out_keeps_the_raise_from_running(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _attrib(default=None, factory=None):
            if factory is not None:
                if default is not None:
                    raise ValueError('both a default and a factory')
            raise TypeError('unguarded')
        def attrib():
            return _attrib()
        def attrib_with(value, make):
            return _attrib(value, make)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    both = line_of(source, "ValueError")
    assert entries(graph, "pkg._attrib", line=both) == [
        ("pkg.attrib_with", ("pkg.attrib_with", "pkg._attrib"), None, None)]
    # the function's other raise is not guarded: every caller reaches it
    assert entries(graph, "pkg._attrib", "TypeError", line_of(source, "TypeError")) == [
        ("pkg.attrib", ("pkg.attrib", "pkg._attrib"), None, None),
        ("pkg.attrib_with", ("pkg.attrib_with", "pkg._attrib"), None, None)]


def test_a_keyword_constant_and_an_early_return(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        _stack = []
        def _get_current_context(silent=False):
            if _stack:
                return _stack[-1]
            if silent:
                return None
            raise RuntimeError('no active context')
        def peek():
            return _get_current_context(silent=True)
        def current():
            return _get_current_context()
        def current_strict():
            return _get_current_context(silent=False)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._get_current_context", "RuntimeError", line_of(source, "raise")) == [
        ("pkg.current", ("pkg.current", "pkg._get_current_context"), None, None),
        ("pkg.current_strict", ("pkg.current_strict", "pkg._get_current_context"), None, None)]


def test_a_positional_constant_on_a_function_and_a_method(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _convert(value, strict=True):
            if strict and value is None:
                raise ValueError('no value')
            return value
        def lenient(value):
            return _convert(value, False)
        def given():
            return _convert(3)
        class Parser:
            def _check(self, value, strict):
                if not strict:
                    return value
                raise ValueError(value)
            def parse_loose(self, value):
                return self._check(value, False)
            def parse(self, value):
                return self._check(value, 1)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._convert", line=line_of(source, "no value")) == []
    assert entries(graph, "pkg.Parser._check", line=line_of(source, "raise ValueError(value)")) == [
        ("pkg.Parser.parse", ("pkg.Parser.parse", "pkg.Parser._check"), None, None)]


def test_a_constant_that_satisfies_the_guard_still_reaches(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _load(text, mode='strict'):
            if mode == 'strict' or mode is None:
                raise ValueError(text)
        def load(text):
            return _load(text, mode='strict')
        def load_default(text):
            return _load(text)
        def load_relaxed(text):
            return _load(text, 'relaxed')
        def load_any(text, mode):
            return _load(text, mode=mode)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._load", line=line_of(source, "raise")) == [
        ("pkg.load", ("pkg.load", "pkg._load"), None, None),
        ("pkg.load_any", ("pkg.load_any", "pkg._load"), None, None),
        ("pkg.load_default", ("pkg.load_default", "pkg._load"), None, None)]


def test_guards_the_pass_does_not_read_still_reach(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _size(items, strict=False):
            if strict or len(items) > 3:
                raise ValueError('too many')
        def _named(name, silent=None):
            if silent is None:
                silent = not name
            if not silent:
                raise KeyError(name)
        def _spread(items, strict=False):
            if strict:
                raise ValueError(items)
        def count(items):
            return _size(items, strict=False)
        def lookup(name):
            return _named(name, silent=True)
        def spread(options):
            return _spread([], **options)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    # `strict or len(items) > 3` is not a test of parameters only: not read
    assert entries(graph, "pkg._size", line=line_of(source, "too many")) == [
        ("pkg.count", ("pkg.count", "pkg._size"), None, None)]
    # `silent` is reassigned before its test: not read
    assert entries(graph, "pkg._named", "KeyError", line_of(source, "KeyError")) == [
        ("pkg.lookup", ("pkg.lookup", "pkg._named"), None, None)]
    # `**options` may pass `strict`: its default is not assumed
    assert entries(graph, "pkg._spread", line=line_of(source, "raise ValueError(items)")) == [
        ("pkg.spread", ("pkg.spread", "pkg._spread"), None, None)]


def test_an_order_against_a_number_and_membership_in_constants(
        make_repo: Callable[[str], GitRepo]) -> None:
    """`step < 1` weighed against the default a call leaves (more-itertools 11.1's `windowed`:
    `if step < 1: raise ValueError('step must be >= 1')`, called as `windowed(seq, n)` by
    `sliding_window`-like helpers; the standard library's `bisect_right`: `if lo < 0: raise
    ValueError('lo must be non-negative')`, `lo=0` left by `insort`-like callers), and
    `mode not in ("r", "w")` against a constant mode. An order of a value that is no number
    (None, a string: Python raises TypeError first) is left open."""
    source = """\
        def windowed(seq, n, fillvalue=None, step=1):
            if n < 0:
                raise ValueError('n must be >= 0')
            if step < 1:
                raise ValueError('step must be >= 1')
            return seq
        def pairs(seq):
            return windowed(seq, 2)
        def strided(seq, step):
            return windowed(seq, 2, step=step)
        def backwards(seq):
            return windowed(seq, 2, step=-1)
        def unknown(seq):
            return windowed(seq, 2, step=None)
        def _check_mode(mode="r"):
            if mode not in ("r", "w"):
                raise ValueError(f'mode must be r or w, not {mode}')
        def read():
            return _check_mode()
        def append():
            return _check_mode("a")
        def any_mode(mode):
            return _check_mode(mode)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    # step left at 1 (`pairs`) or given as None (`unknown`: left open); -1 runs it
    assert {e[0] for e in entries(graph, "pkg.windowed", line=line_of(source, "step must"))} == {
        "pkg.windowed", "pkg.strided", "pkg.backwards", "pkg.unknown"}
    # `n` is 2 in every call: `2 < 0` is false, so only the function itself is listed
    assert [e[0] for e in entries(graph, "pkg.windowed", line=line_of(source, "n must"))] == [
        "pkg.windowed"]
    assert {e[0] for e in entries(graph, "pkg._check_mode", line=line_of(source, "mode must"))} \
        == {"pkg.append", "pkg.any_mode"}


def test_a_check_the_caller_made_first_settles_the_callees_guard(
        make_repo: Callable[[str], GitRepo]) -> None:
    """more-itertools 11.1's `locate`: `if window_size < 1: raise ValueError(...)`, then
    `windowed(iterable, window_size, ...)`, whose own `if n < 0: raise` cannot run for it; the
    standard library's `bisect.insort_right` shape: a check of `lo` before the call that
    passes it. A caller that checks something else, or checks after the call, still reaches."""
    source = """\
        def windowed(seq, n, step=1):
            if n < 0:
                raise ValueError('n must be >= 0')
            return seq
        def locate(iterable, pred, window_size=None):
            if window_size is None:
                return iterable
            if window_size < 1:
                raise ValueError('window size must be at least 1')
            return windowed(iterable, window_size)
        def in_branch(iterable, size):
            if size >= 2:
                return windowed(iterable, size)
            return None
        def other_check(iterable, size, strict):
            if strict:
                raise ValueError('strict')
            return windowed(iterable, size)
        def checked_after(iterable, size):
            found = windowed(iterable, size)
            if size < 1:
                raise ValueError('too late')
            return found
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert {e[0] for e in entries(graph, "pkg.windowed", line=line_of(source, "n must"))} == {
        "pkg.windowed", "pkg.other_check", "pkg.checked_after"}


def test_the_simple_part_of_an_and_and_a_parameter_stored_later(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _check(cmp, eq):
            if cmp is not None and any((eq is not None,)):
                raise ValueError('mixed')
            if not (eq is None or len(eq) < 3):
                raise ValueError('long')
            cmp = bool(cmp)
        def plain(eq):
            return _check(None, eq)
        def given(eq):
            return _check(3, eq=None)
        def _loop(flag=False):
            for _ in range(2):
                if flag:
                    raise ValueError('looped')
                flag = True
        def loop():
            return _loop()
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._check", line=line_of(source, "mixed")) == [
        ("pkg.given", ("pkg.given", "pkg._check"), None, None)]
    assert entries(graph, "pkg._check", line=line_of(source, "long")) == [
        ("pkg.plain", ("pkg.plain", "pkg._check"), None, None)]
    # a parameter stored after the raise is still the argument there, but not in a loop
    assert entries(graph, "pkg._loop", line=line_of(source, "looped")) == [
        ("pkg.loop", ("pkg.loop", "pkg._loop"), None, None)]


def test_a_class_or_a_bool_passed_and_isinstance(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _fields(cls, base=None):
            if base is None and not isinstance(cls, type):
                raise TypeError('not a class')
            if cls is None:
                raise TypeError('none')
        def asdict(inst):
            return _fields(inst.__class__)
        def of_type(value):
            return _fields(type(value))
        def fields(cls):
            return _fields(cls)
        def _set_run(run):
            if not isinstance(run, bool):
                raise TypeError('run must be bool')
        def set_disabled(disabled):
            _set_run(not disabled)
        def set_run(run):
            _set_run(run)
        def set_off():
            _set_run(0)
        def _again(inst):
            kind = type(inst)
            return _fields(kind)
        def again(inst):
            return _again(inst)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._fields", "TypeError", line_of(source, "not a class")) == [
        ("pkg.fields", ("pkg.fields", "pkg._fields"), None, None)]
    # `not disabled` is a bool; 0 is an int, not a bool
    assert entries(graph, "pkg._set_run", "TypeError", line_of(source, "must be bool")) == [
        ("pkg.set_off", ("pkg.set_off", "pkg._set_run"), None, None),
        ("pkg.set_run", ("pkg.set_run", "pkg._set_run"), None, None)]
    assert entries(graph, "pkg._fields", "TypeError", line_of(source, "'none'")) == [
        ("pkg.fields", ("pkg.fields", "pkg._fields"), None, None)]


def test_a_parameter_passed_straight_through_one_level(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        def _lookup(name, missing_ok=False):
            if not missing_ok:
                raise KeyError(name)
        def find(name, missing_ok=False):
            return _lookup(name, missing_ok)
        def maybe(name):
            return find(name, missing_ok=True)
        def must(name):
            return find(name)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._lookup", "KeyError", line_of(source, "raise")) == [
        ("pkg.find", ("pkg.find", "pkg._lookup"), None, None),
        ("pkg.must", ("pkg.must", "pkg.find", "pkg._lookup"), None, None)]


def test_a_constructor_guard_weighs_the_class_call(make_repo: Callable[[str], GitRepo]) -> None:
    source = """\
        class _Field:
            def __init__(self, default=None, factory=None):
                if default is not None and factory is not None:
                    raise ValueError('both')
        def field():
            return _Field()
        def field_of(default, factory):
            return _Field(default, factory=factory)
        class Attribute:
            def __init__(self, name, cmp=None):
                _check(cmp)
            @classmethod
            def counted(cls, name):
                return cls(name, None)
        def _check(cmp):
            if cmp is not None:
                raise ValueError('cmp')
        def attribute(name, cmp):
            return Attribute(name, cmp)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    assert entries(graph, "pkg._Field.__init__", line=line_of(source, "raise")) == [
        ("pkg.field_of", ("pkg.field_of", "pkg._Field", "pkg._Field.__init__"), None, None)]
    # a constructor's parameter passed straight through: weighed at the class's callers
    # (`Attribute.counted` passes None)
    assert entries(graph, "pkg._check", line=line_of(source, "raise ValueError('cmp')")) == [
        ("pkg.Attribute", ("pkg.Attribute", "pkg.Attribute.__init__", "pkg._check"), None, None),
        ("pkg.attribute", ("pkg.attribute", "pkg.Attribute", "pkg.Attribute.__init__", "pkg._check"),
         None, None)]


def test_what_is_read_rides_in_the_calls() -> None:
    facts = read_calls(textwrap.dedent("""\
        def f(a, b=None, *, c=True):
            if a and not c:
                raise ValueError(a)
        def g(x):
            return f(x, 2, c=False)
        """), "pkg")
    assert facts is not None
    f, g = facts.functions
    assert [(c.kind, c.target, c.line) for c in f.calls if c.kind in (GUARD, SIGNATURE)] == [
        (SIGNATURE, '[["a","b"],["c"],{"b":null,"c":true},0,1,1,0,0,[]]', 1), (GUARD, "(a and (not c))", 3)]
    assert [c.args for c in g.calls if c.target == "pkg.f"] == [
        '[2,0,["c"],[[1,2],["c",false]],[],[[0,"x"]]]']


def test_a_call_that_runs_only_under_the_callers_own_tests(
        make_repo: Callable[[str], GitRepo]) -> None:
    """prettytable 3.18's options: each property setter calls `self._validate_option("align",
    val)` with its own name, and `_validate_option` sends each name to one validator
    (`if option == "border": self._validate_true_or_false(option, val) elif option in
    ("align",): self._validate_align(val)`); a validator's raise is reached only from the
    setters whose name leads to it. The same with no argument passed on (`_check()`)."""
    source = """\
        class Table:
            def _validate_option(self, option, val):
                if option == "border":
                    self._validate_true_or_false(option, val)
                elif option in ("align", "valign"):
                    self._validate_align(val)
                elif option == "clear":
                    self._check()
            def _validate_true_or_false(self, name, val):
                if val not in (True, False):
                    raise ValueError(f"{name} must be True or False")
            def _validate_align(self, val):
                raise ValueError(f"Alignment {val} is invalid")
            def _check(self):
                raise ValueError("cannot clear")
            def set_border(self, val):
                self._validate_option("border", val)
            def set_align(self, val):
                self._validate_option("align", val)
            def set_clear(self):
                self._validate_option("clear", None)
            def set_any(self, option, val):
                self._validate_option(option, val)
        """
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/table.py": source})
    def names(node: str, needle: str) -> set[str]:
        return {e[0] for e in entries(graph, node, line=line_of(source, needle))}
    assert names("pkg.table.Table._validate_true_or_false", "must be True") == {
        "pkg.table.Table.set_border", "pkg.table.Table.set_any"}
    assert names("pkg.table.Table._validate_align", "Alignment") == {
        "pkg.table.Table.set_align", "pkg.table.Table.set_any"}
    assert names("pkg.table.Table._check", "cannot clear") == {
        "pkg.table.Table.set_clear", "pkg.table.Table.set_any"}


def test_settled_runs_each_test_as_python_does() -> None:
    """`settled(guard, facts)`: False only where no value meets both."""
    from crawler.parse.call_guards import parsed, settled
    cases = [
        ("n < 0", "(not (n is None)) and (not (n < 1))", False),  # n >= 1
        ("n < 0", "(n >= 2)", False),
        ("n < 0", "(not (strict))", None),  # another parameter's test says nothing of n
        ("mode not in ('r', 'w')", "(mode == 'r')", False),
        ("x is None", "(x is not None)", False),
        ("x", "(not (x))", False),
        # None passes the facts (`or` stops early), and `None < 1` raises: the guard never holds
        ("x < 1", "(x is None) or (x > 5)", False),
        ("x < 1", "(x is None) or (x > 0)", None),  # 0.5
        ("isinstance(x, str)", "(not (isinstance(x, (str))))", False),
        ("a < 0 or b < 0", "(not (a < 0))", None),  # b may be negative
        ("a < 0 and b < 0", "(not (a < 0))", False),
        ("a < b < c", "(a > 0)", None),  # three parameters: left open
    ]
    for guard, facts, expected in cases:
        assert settled(parsed(guard), parsed(facts)) is expected, (guard, facts)
