"""What the call reader reads where a value is stored, deleted or chosen
(`crawler.parse.call_edges`): the calls inside an assignment's target (`d[key(k)] = v`,
`make().x = v`, `a, d[f(k)] = ...`), the special method an item's assignment or deletion
calls on a receiver of a known class (`__setitem__`, `__delitem__`, never `__getitem__`), and
the class of `x or Default()`.

Each shape is Python's own semantics, read in every library; the examples are the real code
that showed them missing:
- a call in a target's key: bottle 0.13.4, `BaseResponse.__setitem__`:
  `self._headers[_hkey(name)] = [_hval(value)]` (the header's check `_hkey` raises);
  `HeaderDict.__setitem__`: `dict.__setitem__(self, _hkey(key), [_hval(value)])` was read
  already, as a call's arguments are;
- `x or Default()`: lark 1.3.1, `create_lalr_parser`:
  `cls = (options and options._plugins.get('LALR_Parser')) or LALR_Parser`, then `cls(...)`;
  stack_data 0.6, `FrameInfo.__init__`: `self.options = options or Options()`; werkzeug 3.1,
  `FileStorage.__init__`: `self.stream = stream or BytesIO()`. A module-level alias of the same
  shape (`scan = c_scan or py_scan`) was read already, its last operand being the fallback.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers.entry_points import graph_of
from tests.helpers.gitrepo import GitRepo

HEADERS = """\
    def _hkey(key):
        if '\\n' in key:
            raise ValueError('Header names must not contain control characters')
        return key.title()
    class Headers:
        def __init__(self):
            self._dict = {}
        def __setitem__(self, key, value):
            raise TypeError('read only')
        def __getitem__(self, key):
            raise KeyError(key)
        def __delitem__(self, key):
            raise KeyError('no such header')
    class Response:
        def __init__(self):
            self._headers = {}
            self.headers = Headers()
        def __setitem__(self, name, value):
            self._headers[_hkey(name)] = [value]
        def set_twice(self, name, value):
            first, self._headers[_hkey(name)] = value, [value]
        def replace(self, name, value):
            self.headers[name] = value
        def drop(self, name):
            del self.headers[name]
    def make():
        return Response()
    def tag(value):
        make().tagged = _hkey(value)
    """

PARSERS = """\
    class LALRParser:
        def __init__(self, conf):
            if conf is None:
                raise ValueError('no parser configuration')
    class Options:
        def check(self):
            raise ValueError('bad options')
    class Grammar:  # a second `check`: a call on a value of no known class is not read by name
        def check(self):
            raise ValueError('bad grammar')
    def create_parser(conf, options=None):
        cls = (options and options.plugins.get('LALRParser')) or LALRParser
        return cls(conf)
    class Frame:
        def __init__(self, options=None):
            self.options = options or Options()
        def run(self):
            self.options.check()
    def checked(options=None):
        options = options or Options()
        options.check()
    def unpacked(pair):
        options, other = pair  # rebound by unpacking: no more the Options it was
        options = Options()
        options, other = pair
        options.check()
    """


def callers(graph: object, node: str) -> set[str]:
    return {caller for caller, _, _ in graph.callers[node]}  # type: ignore[attr-defined]


def test_the_calls_in_an_assignments_target_are_read(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/http.py": HEADERS})
    assert callers(graph, "pkg.http._hkey") == {
        "pkg.http.Response.__setitem__", "pkg.http.Response.set_twice", "pkg.http.tag"}
    # `make().tagged = ...`: the call that gives what the attribute is set on is read too
    assert "pkg.http.tag" in callers(graph, "pkg.http.make")


def test_an_items_assignment_and_deletion_call_their_own_special_method(
        make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/http.py": HEADERS})
    assert callers(graph, "pkg.http.Headers.__setitem__") == {"pkg.http.Response.replace"}
    assert callers(graph, "pkg.http.Headers.__delitem__") == {"pkg.http.Response.drop"}
    assert callers(graph, "pkg.http.Headers.__getitem__") == set()  # neither reads an item


def test_a_value_or_a_default_has_the_defaults_class(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/parsers.py": PARSERS})
    assert callers(graph, "pkg.parsers.LALRParser") == {"pkg.parsers.create_parser"}
    assert callers(graph, "pkg.parsers.Options.check") == {
        "pkg.parsers.Frame.run", "pkg.parsers.checked"}  # not `unpacked`: rebound by unpacking
