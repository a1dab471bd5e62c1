"""The entry-point pass, one construct at a time, on packages the tests write into a git
repository: each asserts the exact public names and chains, and each construct a static
reader cannot follow asserts the note that says where the chain stops."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest

from crawler.callgraph.entry_points import MAX_DEPTH, MAX_ENTRIES, MAX_LEFT_OUT, Graph
from crawler.parse.call_edges import read_calls
from crawler.parse.module_names import module_name
from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env


def test_module_functions_through_imports_aliases_and_all(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.api import load as load_file\n__all__ = ['load_file']\n",
        "pkg/api.py": """\
            from pkg import _impl as impl
            from pkg._impl import check as verify
            def load(path):
                return impl.read(path)
            def _private(path):
                return verify(path)
            """,
        "pkg/_impl.py": """\
            def read(path):
                return check(path)
            def check(path):
                raise ValueError(path)
            """})
    assert entries(graph, "pkg._impl.check") == [
        ("pkg.load_file", ("pkg.api.load", "pkg._impl.read", "pkg._impl.check"), None, None)]


def test_a_name_imported_inside_a_function_is_followed(make_repo: Callable[[str], GitRepo]) -> None:
    """`from pkg._impl import check` inside the function that calls it (an import put off until
    the call: click's, jax's, this crawler's own `file_tasks`): the call reaches `check`, and a
    nested def sees its maker's import; the same name elsewhere in the module stays unbound."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.api import load, dump\n",
        "pkg/api.py": """\
            def load(path):
                from pkg._impl import check
                return check(path)
            def dump(path):
                import pkg._impl as impl
                def inner():
                    return impl.check(path)
                return inner()
            def other(path):
                return check(path)
            """,
        "pkg/_impl.py": """\
            def check(path):
                raise ValueError(path)
            """})
    assert [name for name, *_ in entries(graph, "pkg._impl.check")] == ["pkg.load", "pkg.dump"]


def test_methods_through_self_inherited_and_overridden(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Base:
            def run(self):
                return self.step()
            def step(self):
                return 1
        class Child(Base):
            def step(self):
                raise ValueError('no step')
        class Grandchild(Child):
            pass
        """})
    assert entries(graph, "pkg.Child.step") == [
        ("pkg.Child.step", ("pkg.Child.step",), None, None),
        ("pkg.Base.run", ("pkg.Base.run", "pkg.Child.step"), None, None)]


def test_super_call(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Base:
            def _validate(self):
                raise ValueError('invalid')
        class Child(Base):
            def save(self):
                return super()._validate()
        """})
    assert entries(graph, "pkg.Base._validate") == [
        ("pkg.Child.save", ("pkg.Child.save", "pkg.Base._validate"), None, None)]


def test_constructors_init_and_post_init(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        from dataclasses import dataclass
        from pkg._shapes import Shape
        @dataclass
        class Point:
            x: int
            def __post_init__(self):
                if self.x < 0:
                    raise ValueError('negative')
        def make():
            return Shape(3)
        """, "pkg/_shapes.py": """\
        class Shape:
            def __init__(self, sides):
                raise ValueError('sides')
        """})
    assert entries(graph, "pkg.Point.__post_init__") == [
        ("pkg.Point", ("pkg.Point", "pkg.Point.__post_init__"), None, None)]
    assert entries(graph, "pkg._shapes.Shape.__init__") == [
        ("pkg.Shape", ("pkg._shapes.Shape", "pkg._shapes.Shape.__init__"), None, None),
        ("pkg.make", ("pkg.make", "pkg._shapes.Shape", "pkg._shapes.Shape.__init__"), None, None)]


def test_property_and_dunder_by_syntax_on_typed_values(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Table:
            def __getitem__(self, key):
                raise ValueError(key)
            @property
            def size(self):
                raise ValueError('size')
        def first(table: Table):
            return table[0]
        def measure(table: 'Table | None'):
            return table.size
        """})
    assert entries(graph, "pkg.Table.__getitem__") == [
        ("pkg.Table.__getitem__", ("pkg.Table.__getitem__",), None, None),
        ("pkg.first", ("pkg.first", "pkg.Table.__getitem__"), None, None)]
    assert entries(graph, "pkg.Table.size") == [
        ("pkg.Table.size", ("pkg.Table.size",), None, None),
        ("pkg.measure", ("pkg.measure", "pkg.Table.size"), None, None)]


def test_decorator_partial_and_higher_order_calls(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        import functools
        from functools import partial
        def _checked(func):
            @functools.wraps(func)
            def wrapper(*args):
                _guard(args)
                return func(*args)
            return wrapper
        def _guard(args):
            raise ValueError('guard')
        @_checked
        def api(x):
            return x
        def _one(x):
            raise ValueError(x)
        def each(xs):
            return list(map(_one, xs))
        def bound():
            call = partial(_one, 1)
            return call()
        """})
    assert entries(graph, "pkg._guard") == [
        ("pkg.api", ("pkg.api", "pkg._checked.<locals>.wrapper", "pkg._guard"), None, None)]
    assert entries(graph, "pkg._one") == [("pkg.bound", ("pkg.bound", "pkg._one"), None, None),
                                          ("pkg.each", ("pkg.each", "pkg._one"), None, None)]


def test_receivers_typed_by_attribute_parameter_and_held_class(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Loader:
            def load(self, name):
                raise ValueError(name)
        class FileLoader(Loader):
            def load(self, name):
                raise ValueError('file ' + name)
        class Generator:
            def __init__(self, env):
                raise ValueError('generator')
        class Environment:
            generator_class = Generator
            def __init__(self, loader: Loader):
                self.loader = loader
            def get(self, name):
                return self.loader.load(name)
            def compile(self):
                return self.generator_class(self)
        """})
    assert entries(graph, "pkg.FileLoader.load") == [
        ("pkg.FileLoader.load", ("pkg.FileLoader.load",), None, None),
        ("pkg.Environment.get", ("pkg.Environment.get", "pkg.FileLoader.load"), None, None)]
    assert entries(graph, "pkg.Generator.__init__") == [
        ("pkg.Generator", ("pkg.Generator", "pkg.Generator.__init__"), None, None),
        ("pkg.Environment.compile",
         ("pkg.Environment.compile", "pkg.Generator", "pkg.Generator.__init__"), None, None)]


def test_getattr_and_registry_stop_the_chain_with_a_note(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Visitor:
            def visit(self, node):
                return getattr(self, f'visit_{node}')()
            def _visit_never(self):
                return 0
            def _leave(self):
                raise ValueError('leave')
        def _to_json(x):
            raise ValueError('json')
        _ENCODERS = {'json': _to_json}
        def encode(kind, x):
            return _ENCODERS[kind](x)
        """})
    assert entries(graph, "pkg.Visitor._leave") == []  # no static caller, no dynamic one fits
    graph = graph_of(make_repo("repo2"), {"pkg/__init__.py": """\
        class Visitor:
            def visit(self, node):
                return getattr(self, f'visit_{node}')()
            def visit_bad(self):
                raise ValueError('bad')
        def _to_json(x):
            raise ValueError('json')
        _ENCODERS = {'json': _to_json}
        def encode(kind, x):
            return _ENCODERS[kind](x)
        """})
    assert entries(graph, "pkg.Visitor.visit_bad") == [
        ("pkg.Visitor.visit_bad", ("pkg.Visitor.visit_bad",), None, None),
        ("pkg.Visitor.visit", ("pkg.Visitor.visit", "pkg.Visitor.visit_bad"),
         "getattr(self, f'visit_{node}')", None)]
    assert entries(graph, "pkg._to_json") == [
        ("pkg.encode", ("pkg.encode", "pkg._to_json"),
         "_ENCODERS[...](...) calls a function registered in _ENCODERS", None)]


def test_caught_by_the_library_itself(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Error(ValueError):
            pass
        def parse(text):
            try:
                return _parse(text)
            except ValueError:
                return None
        def strict(text):
            try:
                return _parse(text)
            except KeyError:
                return None
        def _parse(text):
            raise Error(text)
        """})
    assert entries(graph, "pkg._parse", "pkg.Error") == [
        ("pkg.parse", ("pkg.parse", "pkg._parse"), None, "pkg.parse"),
        ("pkg.strict", ("pkg.strict", "pkg._parse"), None, None)]


def test_untyped_receiver_only_where_one_family_has_the_name(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class A:
            def render(self):
                raise ValueError('a')
        class B:
            def render(self):
                raise ValueError('b')
        class C:
            def finish(self):
                raise ValueError('c')
        def show(thing):
            return thing.render()
        def done(thing):
            return thing.finish()
        """})
    assert entries(graph, "pkg.A.render") == [("pkg.A.render", ("pkg.A.render",), None, None)]
    assert entries(graph, "pkg.C.finish") == [("pkg.C.finish", ("pkg.C.finish",), None, None),
                                             ("pkg.done", ("pkg.done", "pkg.C.finish"), None, None)]


def test_bounds_on_entries_and_chain_length(make_repo: Callable[[str], GitRepo]) -> None:
    callers = "".join(f"def api{i:02}():\n    return _fail()\n" for i in range(MAX_ENTRIES + 2))
    steps = "".join(f"def _step{i}():\n    return _step{i + 1}()\n" for i in range(MAX_DEPTH))
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": f"""\
def _fail():
    raise ValueError('fail')
{callers}
def deep():
    return _step0()
{steps}
def _step{MAX_DEPTH}():
    raise ValueError('deep')
"""})
    found = graph.entry_points("pkg._fail", "ValueError", 0)
    assert [e.name for e in found.items] == [f"pkg.api{i:02}" for i in range(MAX_ENTRIES)]
    assert found.left_out == 2
    assert entries(graph, f"pkg._step{MAX_DEPTH}") == []  # deep is MAX_DEPTH + 1 calls away
    assert entries(graph, f"pkg._step{MAX_DEPTH - 1}")[0][1][0] == "pkg.deep"


def test_facts_survive_the_result_cache_json(tmp_path: Path) -> None:
    import json

    from crawler.store._outcome_json import facts_from_data
    from crawler.store.cache import ENCODER
    text = "from pkg._a import b as b\nclass A(B):\n    x: 'C'\n    def m(self):\n        try:\n" \
           "            self.x.go()\n        except KeyError:\n            pass\n"
    facts = read_calls(text, "pkg.mod")
    assert facts is not None and facts.functions[0].catches == ((6, 6, ("KeyError",)),)
    assert facts.exported == ("b",)
    assert facts_from_data(json.loads(ENCODER.encode(facts))) == facts


def test_star_imports_that_read_each_other(make_repo: Callable[[str], GitRepo]) -> None:
    """`os` and `posixpath` star-import each other: every name is resolved once, a cycle ends."""
    star_all = "".join(f"from pkg.m{i} import *\n" for i in range(6))
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": star_all,
        **{f"pkg/m{i}.py": star_all + f"def f{i}(x):\n    return nowhere(x) or f{i + 1}(x)\n"
           for i in range(5)},
        "pkg/m5.py": star_all + "def f5(x):\n    raise ValueError(x)\n"})
    assert entries(graph, "pkg.m5.f5")[:2] == [
        ("pkg.f5", ("pkg.m5.f5",), None, None),
        ("pkg.f4", ("pkg.m4.f4", "pkg.m5.f5"), None, None)]
    assert graph.definition("pkg.m0.nowhere") is None


def test_star_imports_of_modules_without_source_bind_nothing(
        make_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    """scipy's `spatial/__init__.py` star-imports compiled modules (`_ckdtree`, `_qhull`) beside
    its own: a name is looked for in the modules the repository has, and the compiled ones, which
    bind nothing a reader can see, are passed over. Read as names of their package they grew the
    name at every star import (`spatial._ckdtree._qhull._ckdtree...`): 2**100 resolutions, and
    scipy's extract grew past 7 GiB."""
    stars = "".join(f"from spatial.{m} import *\n" for m in ("_ckdtree", "_qhull", "_voronoi", "kdtree"))
    original, calls = Graph._definition, []

    def counted(self: Graph, name: str) -> str | None:
        calls.append(name)
        assert len(calls) < 1_000, f"still resolving after 1,000 names: {name[:80]}"
        return original(self, name)

    monkeypatch.setattr(Graph, "_definition", counted)
    graph = graph_of(make_repo("repo"), {
        "spatial/__init__.py": stars,
        "spatial/kdtree.py": "from spatial._ckdtree import cKDTree\n"
                             "def query(x):\n    raise ValueError(x)\n",
        "spatial/distance.py": "import spatial\ndef cdist(x):\n    return spatial.query(x)\n"})
    assert graph.definition("spatial.query") == "spatial.kdtree.query"
    assert graph.definition("spatial.nowhere") is None
    assert graph.definition("spatial._ckdtree.cKDTree") is None
    assert graph.definition("spatial.kdtree.cKDTree") is None
    assert entries(graph, "spatial.kdtree.query")[0][:2] == ("spatial.query", ("spatial.kdtree.query",))


def test_closures_are_reached_by_what_calls_them(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        import functools
        def limited(n):
            def decorator(f):
                @functools.wraps(f)
                def wrapper(*args):
                    if len(args) > n:
                        raise ValueError('too many')
                    return f(*args)
                return wrapper
            return decorator
        @limited(2)
        def add(a, b):
            return a + b
        def make_checker():
            def check(value):
                raise TypeError(value)
            return check
        def parse(text):
            def fail():
                raise KeyError(text)
            fail()
        """})
    # the factory's wrapper raises when the decorated function is called, not the factory
    # (from `limited` itself a chain would cross two closures handed on: one stop at most)
    assert entries(graph, "pkg.limited.<locals>.decorator.<locals>.wrapper") == [
        ("pkg.add", ("pkg.add", "pkg.limited.<locals>.decorator.<locals>.wrapper"), None, None)]
    assert entries(graph, "pkg.limited.<locals>.decorator", "TypeError") == [
        ("pkg.limited", ("pkg.limited", "pkg.limited.<locals>.decorator"),
         "what limited() returns, called later", None)]
    assert entries(graph, "pkg.make_checker.<locals>.check", "TypeError") == [
        ("pkg.make_checker", ("pkg.make_checker", "pkg.make_checker.<locals>.check"),
         "what make_checker() returns, called later", None)]
    assert entries(graph, "pkg.parse.<locals>.fail", "KeyError") == [
        ("pkg.parse", ("pkg.parse", "pkg.parse.<locals>.fail"), None, None)]
    assert "pkg.add" not in graph.callers.get("pkg.limited", [])  # decorating runs at import


def test_self_calls_credit_only_the_overrides_the_class_uses(
        make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Base:
            def run(self):
                return self.step()
            def step(self):
                return 1
        class Left(Base):
            def go(self):
                return self.run()
            def step(self):
                raise ValueError('left')
        class Right(Base):
            def go(self):
                return self.run()
        class Far(Right):
            def step(self):
                raise ValueError('far')
        """})
    # Base.run meets either override; Left.go only Left's; Right.go only its subclass Far's
    assert entries(graph, "pkg.Left.step") == [
        ("pkg.Left.step", ("pkg.Left.step",), None, None),
        ("pkg.Base.run", ("pkg.Base.run", "pkg.Left.step"), None, None),
        ("pkg.Left.go", ("pkg.Left.go", "pkg.Base.run", "pkg.Left.step"), None, None)]
    assert entries(graph, "pkg.Far.step") == [
        ("pkg.Far.step", ("pkg.Far.step",), None, None),
        ("pkg.Base.run", ("pkg.Base.run", "pkg.Far.step"), None, None),
        ("pkg.Right.go", ("pkg.Right.go", "pkg.Base.run", "pkg.Far.step"), None, None)]


def test_bindings_that_grow_the_name_they_resolve_end(make_repo: Callable[[str], GitRepo]) -> None:
    """`from pkg.a import b as a` with no module pkg.a binds pkg.a to pkg.a.b, so resolving
    pkg.a.c asked for pkg.a.b.c, then pkg.a.b.b.c, ...: no name repeats, and jax's release
    jax-v0.4.35 ended a walk with a RecursionError. Two bindings that grow each other too."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.a import b as a\nfrom pkg.q import r as p\n"
                           "from pkg.p import s as q\n\n\n"
                           "def f():\n    a.c.d()\n    p.x()\n    raise ValueError('bad')\n"})
    assert graph.definition("pkg.a.c.d") is None
    assert graph.definition("pkg.p.x") is None
    assert entries(graph, "pkg.f") == [("pkg.f", ("pkg.f",), None, None)]


def test_a_name_bound_under_itself_is_extracted_as_a_user_runs_it(tmp_path: Path) -> None:
    """The installed command, on a repository with such a binding: records, no traceback."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/__init__.py", "from pkg.a import b as a\n\n\n"
                                  "def f():\n    a.c.d()\n    raise ValueError('bad thing')\n")
    repo.commit()
    run = subprocess.run(["crawler", "extract", str(repo.path), "-o", str(tmp_path / "out"), "-q"],
                         capture_output=True, text=True, env=child_env())
    assert (run.returncode, run.stderr) == (0, "")
    assert len(list((tmp_path / "out").rglob("errors/*.yaml"))) == 1


def test_a_caller_no_public_name_reaches_is_not_walked(make_repo: Callable[[str], GitRepo]) -> None:
    """A lowering rule run only from a registry, and what only it calls, lead to no public
    caller: the walk leaves them out, and finds what a walk through them finds."""
    files = {"pkg/__init__.py": "from pkg.api import run\n__all__ = ['run']\n",
             "pkg/api.py": """\
                 from pkg._check import check
                 def run(x):
                     return check(x)
                 """,
             "pkg/_check.py": """\
                 def check(x):
                     if x < 0:
                         raise ValueError(x)
                     return x
                 """,
             "pkg/_rules.py": """\
                 from pkg._check import check
                 def _lower(x):
                     return _emit(x)
                 def _emit(x):
                     return check(x)
                 RULES = {'lower': _lower}
                 """}
    graph = graph_of(make_repo("repo"), files)
    assert entries(graph, "pkg._check.check") == [
        ("pkg.run", ("pkg.api.run", "pkg._check.check"), None, None)]
    assert graph.useful == {"pkg.api.run", "pkg._check.check"}
    everything = graph_of(make_repo("whole"), files)
    everything.useful = set(everything.functions) | set(everything.classes)
    assert entries(everything, "pkg._check.check") == entries(graph, "pkg._check.check")


def test_leaving_out_what_no_public_name_reaches_finds_the_same_on_a_real_package() -> None:
    """Every function of this project's own package, walked back with and without the callers
    no public name reaches: the same entry points, chains and counts."""
    from crawler.parse.message.text_calls import read_call_facts
    root = Path(__file__).resolve().parents[2]
    facts = []
    for path in sorted(p.relative_to(root).as_posix() for p in (root / "crawler").rglob("*.py")):
        read = read_call_facts((root / path).read_bytes(), module_name(path), path.endswith("__init__.py"))[0]
        assert read is not None
        facts.append(read)
    pruned, whole = Graph(facts), Graph(facts)
    whole.useful = set(whole.functions) | set(whole.classes)
    nodes = sorted(pruned.functions)
    assert len(nodes) > 1000
    assert len(pruned.useful) < len(whole.useful)
    found = [pruned.entry_points(node, "ValueError", 0) for node in nodes]
    assert sum(len(f.items) for f in found) > 1000
    assert found == [whole.entry_points(node, "ValueError", 0) for node in nodes]


def test_leaving_out_the_states_that_change_no_answer_finds_the_same_on_a_real_package() -> None:
    """Every function of this project's own package, walked back with the states that cannot
    change a walk's answer left out (`Graph._leading_on`) and with all followed: the same
    (with 3 first and 5 counted, so that most counts are full)."""
    from crawler.callgraph import entry_points
    from crawler.parse.message.text_calls import read_call_facts
    from tests.callgraph.test_entry_points_stop import unbounded
    root = Path(__file__).resolve().parents[2]
    facts = [read_call_facts((root / path).read_bytes(), module_name(path), path.endswith("__init__.py"))[0]
             for path in sorted(p.relative_to(root).as_posix() for p in (root / "crawler").rglob("*.py"))]
    with mock.patch.object(entry_points, "MAX_ENTRIES", 3), \
            mock.patch.object(entry_points, "MAX_LEFT_OUT", 5):
        bounded, whole = Graph(facts), unbounded(Graph(facts))
        nodes = sorted(bounded.functions)
        found = [bounded.entry_points(node, "ValueError", 0) for node in nodes]
        assert sum(f.left_out == 5 for f in found) > 1000  # walks whose count is full
        assert found == [whole.entry_points(node, "ValueError", 0) for node in nodes]


def test_a_public_modules_explicit_re_exports_are_public(make_repo: Callable[[str], GitRepo]) -> None:
    """`from pkg._src.draw import normal as normal` in `pkg/random.py` (PEP 484's explicit
    re-export, jax's way): `pkg.random.normal` is public; a name it imports plainly is not."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "",
        "pkg/random.py": """\
            from pkg._src.draw import normal as normal
            from pkg._src.draw import _check
            try:
                from pkg._src.draw import uniform as uniform
            except ImportError:
                pass
            """,
        "pkg/_src/__init__.py": "",
        "pkg/_src/draw.py": """\
            def normal(shape):
                return _check(shape)
            def uniform(shape):
                return _check(shape)
            def _check(shape):
                raise ValueError(shape)
            """})
    assert entries(graph, "pkg._src.draw._check") == [
        ("pkg.random.normal", ("pkg._src.draw.normal", "pkg._src.draw._check"), None, None),
        ("pkg.random.uniform", ("pkg._src.draw.uniform", "pkg._src.draw._check"), None, None)]
    assert "pkg._src.draw._check" not in graph.public


def fan_in(callers: int) -> str:
    """`_fail` and `callers` public functions that call it, `api000` first."""
    return "def _fail():\n    raise ValueError('fail')\n" + "".join(
        f"def api{i:03}():\n    return _fail()\n" for i in range(callers))


def asked_for(graph: Graph) -> list[str]:
    """The functions whose callers the graph's walks ask for from now on, in order."""
    edges, seen = graph._edges, []

    def recorded(callee: str) -> list:
        seen.append(callee)
        return edges(callee)
    graph._edges = recorded  # type: ignore[method-assign]
    return seen


def test_the_count_left_out_stops_at_its_bound(make_repo: Callable[[str], GitRepo]) -> None:
    """A raise that more public calls reach than the bound says "99 or more": one more or one
    fewer such caller leaves its record as it was."""
    for callers, left_out in ((MAX_ENTRIES + MAX_LEFT_OUT - 1, MAX_LEFT_OUT - 1),
                              (MAX_ENTRIES + MAX_LEFT_OUT, MAX_LEFT_OUT),
                              (MAX_ENTRIES + MAX_LEFT_OUT + 40, MAX_LEFT_OUT)):
        graph = graph_of(make_repo(f"repo{callers}"), {"pkg/__init__.py": fan_in(callers)})
        found = graph.entry_points("pkg._fail", "ValueError", 0)
        assert [e.name for e in found.items] == [f"pkg.api{i:03}" for i in range(MAX_ENTRIES)]
        assert found.left_out == left_out


def test_a_walk_stops_where_the_first_ten_and_the_count_are_known(
        make_repo: Callable[[str], GitRepo]) -> None:
    """A raise that more public calls reach at the first step than the ten kept and the 99
    counted: the walk asks for no caller beyond them, and says what it says walked to the end.
    One caller fewer, and it goes on to the next step (where a public caller of a public
    caller is met), since the count is not known before."""
    for callers, asked in ((MAX_ENTRIES + MAX_LEFT_OUT, ["pkg._fail"]),
                           (MAX_ENTRIES + MAX_LEFT_OUT - 2, ["pkg._fail", "pkg.api000"])):
        source = fan_in(callers) + "def outer():\n    return api000()\n"
        graph = graph_of(make_repo(f"repo{callers}"), {"pkg/__init__.py": source})
        seen = asked_for(graph)
        found = graph.entry_points("pkg._fail", "ValueError", 0)
        assert seen == asked  # of the public callers, only api000 leads to another (`_leading_on`)
        assert [e.name for e in found.items] == [f"pkg.api{i:03}" for i in range(MAX_ENTRIES)]
        assert found.left_out == min(MAX_LEFT_OUT, callers + 1 - MAX_ENTRIES)


def test_a_walk_stops_within_a_step_once_the_count_is_full(make_repo: Callable[[str], GitRepo]) -> None:
    """Ten public callers one call away, then a private one that 120 public functions call: the
    count is full within the second step, so the private caller met after it is never asked
    for its callers; and the entry points are the ten, with "99 or more" left out. (Nor are
    the ten asked for theirs: no caller of theirs leads to a name, `_leading_on`.)"""
    source = (fan_in(MAX_ENTRIES) + "def _mid():\n    return _fail()\ndef _late():\n    return _fail()\n"
              + "".join(f"def b{i:03}():\n    return _mid()\n" for i in range(120))
              + "def c():\n    return _late()\n")
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": source})
    seen = asked_for(graph)
    found = graph.entry_points("pkg._fail", "ValueError", 0)
    assert seen == ["pkg._fail", "pkg._mid"]
    assert [e.name for e in found.items] == [f"pkg.api{i:03}" for i in range(MAX_ENTRIES)]
    assert found.left_out == MAX_LEFT_OUT


def test_a_package_defines_what_users_call_beyond_its_all(make_repo: Callable[[str], GitRepo]
                                                          ) -> None:
    """`__all__` is what `import *` takes, not all a user may call: sqlparse 0.6's `__init__`
    lists its submodules in `__all__` and defines `format` and `parse`, which every user calls.
    A name the module defines itself counts beside `__all__`; one it imports and leaves out of
    `__all__` does not (jinja2's `__init__` lists what it re-exports)."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": """\
            from pkg import engine
            from pkg.engine import run as run
            from pkg.engine import stack
            __all__ = ["engine"]
            def format(sql):
                return engine.run(sql)
            """,
        "pkg/engine.py": """\
            def run(sql):
                if not sql:
                    raise ValueError("no statement")
                return sql
            def stack(sql):
                return run(sql)
            """})
    names = [name for name, *_ in entries(graph, "pkg.engine.run")]
    assert "pkg.format" in names
    assert "pkg.stack" not in names and "pkg.engine.stack" in names  # imported, left out of __all__


def test_names_are_listed_by_how_public_they_are_then_by_chain(
        make_repo: Callable[[str], GitRepo]) -> None:
    """What the package itself gives (`pkg.load`) comes before a name of a subpackage
    (`pkg.io.read_all`), and that before a module's (`pkg.api.compile`), whatever their chains'
    lengths: a user imports the package's names first (jinja2's `Environment.from_string`
    before `jinja2.lexer.Lexer.tokenize`)."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.api import load\n__all__ = ['load']\n",
        "pkg/api.py": """\
            from pkg._checks import check
            from pkg._mid import step
            def compile(path):
                return check(path)
            def load(path):
                return step(path)
            """,
        "pkg/_mid.py": "from pkg._checks import check\ndef step(path):\n    return check(path)\n",
        "pkg/io/__init__.py": "from pkg.io.files import read_all\n__all__ = ['read_all']\n",
        "pkg/io/files.py": "from pkg._checks import check\ndef read_all(path):\n    return check(path)\n",
        "pkg/_checks.py": "def check(path):\n    raise ValueError(path)\n"})
    assert [name for name, *_ in entries(graph, "pkg._checks.check")] == [
        "pkg.load", "pkg.io.read_all", "pkg.api.compile"]


def test_a_top_level_export_farther_than_ten_module_names_is_listed_first(
        make_repo: Callable[[str], GitRepo]) -> None:
    """Eleven functions of a public module call the raise's function; the one name the package
    exports reaches it two calls farther. The walk goes on past the ten nearest until the ten
    best by how public they are are known: the export comes first, then the module's names,
    nearest and by name (jinja2's `Environment.from_string` beside `jinja2.lexer`'s methods)."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.api import load\n__all__ = ['load']\n",
        "pkg/api.py": "from pkg._checks import check\nfrom pkg._mid import step2\n"
                      + "".join(f"def m{i:02}(path):\n    return check(path)\n" for i in range(11))
                      + "def load(path):\n    return step2(path)\n",
        "pkg/_mid.py": "from pkg._checks import check\n"
                       "def step1(path):\n    return check(path)\n"
                       "def step2(path):\n    return step1(path)\n",
        "pkg/_checks.py": "def check(path):\n    raise ValueError(path)\n"})
    found = graph.entry_points("pkg._checks.check", "ValueError", 2)
    assert [e.name for e in found.items] == ["pkg.load", *(f"pkg.api.m{i:02}" for i in range(9))]
    assert found.items[0].chain == ("pkg.api.load", "pkg._mid.step2", "pkg._mid.step1",
                                    "pkg._checks.check")
    assert found.left_out == 2


def test_names_as_public_and_as_close_are_listed_by_name_whatever_the_order_of_the_source(
        make_repo: Callable[[str], GitRepo]) -> None:
    """Twelve exports one call away and a module's name, defined in the reverse of their names'
    order and exported in a shuffled `__all__`: the ten listed are the exports by name, the same
    list in two processes with different hash seeds."""
    order = [f"api{i:02}" for i in range(12)]
    files = {
        "pkg/__init__.py": f"from pkg.api import {', '.join(order)}\n"
                           f"__all__ = {sorted(order, key=lambda n: (int(n[3:]) * 7) % 12)!r}\n",
        "pkg/api.py": "from pkg._checks import check\n"
                      + "".join(f"def {name}(path):\n    return check(path)\n" for name in reversed(order))
                      + "def helper(path):\n    return check(path)\n",
        "pkg/_checks.py": "def check(path):\n    raise ValueError(path)\n"}
    repo = make_repo("repo")
    graph = graph_of(repo, files)
    found = graph.entry_points("pkg._checks.check", "ValueError", 2)
    assert [e.name for e in found.items] == [f"pkg.{name}" for name in order[:MAX_ENTRIES]]
    assert found.left_out == 3  # api10, api11 and pkg.api.helper
    script = ("import sys\nfrom pathlib import Path\nfrom crawler.callgraph.entry_points import Graph\n"
              "from crawler.parse.call_edges import read_calls\n"
              "from crawler.parse.module_names import module_name\n"
              "root = Path(sys.argv[1])\n"
              "facts = [read_calls(p.read_bytes(), module_name(p.relative_to(root).as_posix()),"
              " p.name == '__init__.py') for p in sorted(root.rglob('*.py'))]\n"
              "found = Graph(facts).entry_points('pkg._checks.check', 'ValueError', 2)\n"
              "print([e.name for e in found.items], found.left_out)\n")
    printed = {subprocess.run([sys.executable, "-c", script, str(repo.path)], check=True,
                              capture_output=True, text=True, timeout=60,
                              env={**child_env(), "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2")}
    assert printed == {f"{[f'pkg.{name}' for name in order[:MAX_ENTRIES]]} 3\n"}


def test_a_method_is_public_under_the_class_that_inherits_it(make_repo: Callable[[str], GitRepo]
                                                             ) -> None:
    """A package exports classes whose methods a private base defines (pint's `UnitRegistry`
    and its facets' registries): users call `pkg.Ok.load`, and that is its entry point. The
    spelling holds only where `self` can be that class: `_Base.run` is spelled `pkg.Ok.run`,
    whose `self.step()` never runs `Wide.step`, so Wide's raise does not list it; a spelling
    with no fewer dots than the class's own (`pkg.Wide.step`) leaves the own one."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg._impl import Ok, Wide\n__all__ = ['Ok', 'Wide']\n",
        "pkg/_impl.py": """\
            class _Base:
                def load(self, path):
                    if not path:
                        raise ValueError("no path")
                    return path
                def run(self):
                    return self.step()
                def step(self):
                    return 1
            class Ok(_Base):
                pass
            class Wide(_Base):
                def step(self):
                    raise ValueError("too wide")
            """})
    assert graph.public["pkg._impl._Base.load"] == "pkg.Ok.load"
    assert graph.public["pkg._impl._Base.run"] == "pkg.Ok.run"
    assert [name for name, *_ in entries(graph, "pkg._impl._Base.load")] == ["pkg.Ok.load"]
    assert entries(graph, "pkg._impl.Wide.step") == [
        ("pkg.Wide.step", ("pkg._impl.Wide.step",), None, None)]


def test_documentation_folders_give_no_entry_points_whatever_their_suffix(
        make_repo: Callable[[str], GitRepo]) -> None:
    """typer keeps its tutorials' programs in `docs_src/`: what they define is no name a user
    of the library calls, as little as what `examples/` or `docs/` define; a library whose
    folder only starts with such a word after no `_` (`docsearch`) or another word
    (`tools_x`) stays public."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "def check(x):\n    raise ValueError(x)\n",
        "docs_src/tutorial001.py": "from pkg import check\ndef main(x):\n    return check(x)\n",
        "examples/app.py": "from pkg import check\ndef run(x):\n    return check(x)\n",
        "doc_examples/app.py": "from pkg import check\ndef run(x):\n    return check(x)\n",
        "docsearch/__init__.py": "from pkg import check\ndef find(x):\n    return check(x)\n",
        "tools_x/__init__.py": "from pkg import check\ndef tool(x):\n    return check(x)\n"})
    assert [name for name, *_ in entries(graph, "pkg.check")] == [
        "pkg.check", "docsearch.find", "tools_x.tool"]


def test_a_method_an_example_defines_is_no_callee_of_the_library(
        make_repo: Callable[[str], GitRepo]) -> None:
    """pyparsing 3.3.2: `self.expr._parse(...)` on an untyped receiver was sent to
    `examples/bigquery_view_parser.py`'s `BigQueryViewParser._parse`, the one class of the
    checkout defining `_parse` apart from the library's own family: a method looked for by its
    name is looked for among the library's modules alone."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "def run(expr):\n    return expr._parse('x')\n",
        "examples/app.py": "class Parser:\n    def _parse(self, text):\n"
                           "        raise ValueError(text)\n",
        "pkg/own.py": "class Loader:\n    def _load(self, text):\n        raise ValueError(text)\n"
                      "def load(source):\n    return source._load('x')\n"})
    assert {c for c, _, _ in graph.callers["examples.app.Parser._parse"]} == set()
    assert {c for c, _, _ in graph.callers["pkg.own.Loader._load"]} == {"pkg.own.load"}


def test_a_method_of_an_object_another_package_made_is_not_the_librarys(
        make_repo: Callable[[str], GitRepo]) -> None:
    """pyparsing 3.3.2's `_to_pep8_name(s, _re_sub_pattern=re.compile(...))` calls
    `_re_sub_pattern.sub(...)`, which was sent by name to pyparsing's own `Regex.sub` (two of the
    third sealed set's wrong pairs); the same with a module-level `_pattern = re.compile(...)`.
    An object a call of another package made has that package's methods; one the library's own
    call made is still read as before."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": """\
            import re
            from pkg.regex import Regex, make
            _pattern = re.compile(r"\\d")
            _own = make()
            def clean(text):
                return _pattern.sub("", text)
            def own(text):
                return _own.sub(text)
            def to_pep8(s, _re_sub_pattern=re.compile(r"([a-z])([A-Z])")):
                return _re_sub_pattern.sub(r"\\1_\\2", s)
            """,
        "pkg/regex.py": """\
            class Regex:
                def sub(self, text):
                    raise ValueError(text)
            def make():
                return Regex()
            """})
    callers = {c for c, _, _ in graph.callers["pkg.regex.Regex.sub"]}
    assert "pkg.clean" not in callers and "pkg.to_pep8" not in callers and "pkg.own" in callers


def test_a_class_a_class_holds_as_an_explicit_alias_is_re_exported_through_it(
        make_repo: Callable[[str], GitRepo]) -> None:
    """pint's `__init__` has `Quantity = UnitRegistry.Quantity`, and `UnitRegistry` holds
    `Quantity: TypeAlias = Quantity` (PEP 613: the class itself, not an instance of
    `TypeAlias`): users call `pkg.Quantity`, and its methods are named so. A plain annotation
    stays an instance's type."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg._reg import Registry\nQuantity = Registry.Quantity\n"
                           "Unit = Registry.unit\n__all__ = ['Registry', 'Quantity', 'Unit']\n",
        "pkg/_reg.py": """\
            from typing import TypeAlias
            class _Quantity:
                def __pow__(self, other):
                    raise ValueError("no power")
            class _Unit:
                def name(self):
                    raise ValueError("no name")
            class Registry:
                Quantity: TypeAlias = _Quantity
                unit: _Unit
            """})
    assert graph.public["pkg._reg._Quantity"] == "pkg.Quantity"
    assert [name for name, *_ in entries(graph, "pkg._reg._Quantity.__pow__")] == ["pkg.Quantity.__pow__"]
    assert "pkg._reg._Unit" not in graph.public  # `unit: _Unit` is an instance: no class re-exported
