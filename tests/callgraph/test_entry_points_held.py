"""Calls of a held callable (`crawler.callgraph.entry_points`): a callable an instance holds
(`self.validator(...)`, `v(...)` for `v` in `self._validators`), of a type no reader knows,
reaches the `__call__` of its own module's classes whose named parameters take the call's
arguments, as a stop the chain names; a parameter called is no such call; a callable of a
known type reaches its class's `__call__` as a plain edge."""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo

VALIDATORS = """\
    import ast
    class InstanceOf:
        def __init__(self, type):
            self.type = type
        def __call__(self, inst, attr, value):
            if not isinstance(value, self.type):
                raise TypeError('wrong type')
    class Optional:
        def __init__(self, validator):
            self.validator = validator
        def __call__(self, inst, attr, value):
            if value is None:
                return
            self.validator(inst, attr, value)
    class And:
        def __init__(self, validators):
            self._validators = validators
        def __call__(self, inst, attr, value):
            for v in self._validators:
                v(inst, attr, value)
    class Unpacks:
        def __init__(self, validator):
            self.validator = validator
        def __call__(self, *args):
            self.validator(*args)
    class OneArgument:
        def __call__(self, value):
            raise ValueError('one')
    class AnyArguments:
        def __call__(self, *args):
            raise ValueError('any')
    class Keywords:
        def __call__(self, value, *, strict):
            raise ValueError('strict')
    class Hooks:
        def __init__(self, hooks):
            self.hooks = hooks
        def run(self, value):
            for hook in self.hooks:
                hook(value)
        def run_strict(self, value):
            hook = self.hooks
            return hook(value, strict=True)
    class Visitor(ast.NodeVisitor):
        def __call__(self, node):
            self.visit(node)
    def run(hook, value):
        return hook(value)
    class Number:
        number_class = float
        def convert(self, value):
            return self.number_class(value)
    class Default:
        def __init__(self, default):
            self.default = default
        def get(self):
            return self.default()
    """

OTHER = """\
    class Elsewhere:
        def __call__(self, inst, attr, value):
            raise TypeError('elsewhere')
    class Holder:
        def __init__(self, validator):
            self.validator = validator
        def __call__(self, inst, attr, value):
            self.validator(inst, attr, value)
    """


def test_a_callable_held_by_self_or_iterated_from_it_is_a_stop(
        make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/validators.py": VALIDATORS,
                                         "pkg/other.py": OTHER})
    held = "self.validator(...) calls what it holds"
    assert entries(graph, "pkg.validators.InstanceOf.__call__", "TypeError", 7) == [
        ("pkg.validators.InstanceOf.__call__", ("pkg.validators.InstanceOf.__call__",), None, None),
        ("pkg.validators.And.__call__",
         ("pkg.validators.And.__call__", "pkg.validators.InstanceOf.__call__"),
         "v(...) calls what it holds", None),
        ("pkg.validators.Optional.__call__",
         ("pkg.validators.Optional.__call__", "pkg.validators.InstanceOf.__call__"), held, None)]
    # iterated from an attribute and called with one argument; read off one, with a keyword
    assert entries(graph, "pkg.validators.OneArgument.__call__", line=28) == [
        ("pkg.validators.OneArgument.__call__", ("pkg.validators.OneArgument.__call__",), None, None),
        ("pkg.validators.Hooks.run", ("pkg.validators.Hooks.run", "pkg.validators.OneArgument.__call__"),
         "hook(...) calls what it holds", None)]
    assert entries(graph, "pkg.validators.Keywords.__call__", line=34) == [
        ("pkg.validators.Keywords.__call__", ("pkg.validators.Keywords.__call__",), None, None),
        ("pkg.validators.Hooks.run_strict",
         ("pkg.validators.Hooks.run_strict", "pkg.validators.Keywords.__call__"),
         "Hooks.hooks(...) calls what it holds", None)]


def test_what_a_held_callable_does_not_reach(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/validators.py": VALIDATORS,
                                         "pkg/other.py": OTHER})
    # another module's `__call__` (`Holder` is in other.py, `InstanceOf` in validators.py);
    # a call that unpacks `*args` (`Unpacks`); a base that is not the library's (`Visitor`:
    # `self.visit` is `ast.NodeVisitor`'s); a parameter called (`run`); an attribute that holds
    # a builtin (`Number.number_class`); a `__call__` that names no parameter (`AnyArguments`,
    # for `Default.get`'s call with none): none of these is connected
    callers = {c for c, _, _ in graph.callers["pkg.validators.InstanceOf.__call__"]}
    assert callers == {"pkg.validators.Optional.__call__", "pkg.validators.And.__call__"}
    assert {c for c, _, _ in graph.callers["pkg.validators.OneArgument.__call__"]} == {
        "pkg.validators.Hooks.run"}
    assert graph.callers["pkg.validators.AnyArguments.__call__"] == []
    assert entries(graph, "pkg.other.Elsewhere.__call__", "TypeError", 3) == [
        ("pkg.other.Elsewhere.__call__", ("pkg.other.Elsewhere.__call__",), None, None),
        ("pkg.other.Holder.__call__", ("pkg.other.Holder.__call__", "pkg.other.Elsewhere.__call__"),
         "self.validator(...) calls what it holds", None)]


def test_a_callable_of_a_known_type_is_its_class_call(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "",
        "pkg/types.py": """\
            import typing as t
            T = t.TypeVar('T')
            class ParamType(t.Generic[T]):
                def __call__(self, value):
                    return self.convert(value)
                def convert(self, value):
                    raise ValueError('bad value')
            def convert_type(ty) -> ParamType[t.Any]:
                return ParamType()
            """,
        "pkg/core.py": """\
            import typing as t
            from pkg import types
            class Parameter:
                def __init__(self, type):
                    self.type: types.ParamType[t.Any] = types.convert_type(type)
                def process(self, value):
                    return self.type(value)
            def prompt(value, value_proc=None):
                if value_proc is None:
                    value_proc = types.convert_type(str)
                return value_proc(value)
            """})
    assert entries(graph, "pkg.types.ParamType.convert", line=7) == [
        ("pkg.types.ParamType.convert", ("pkg.types.ParamType.convert",), None, None),
        ("pkg.types.ParamType.__call__", ("pkg.types.ParamType.__call__",
                                          "pkg.types.ParamType.convert"), None, None),
        ("pkg.core.Parameter.process", ("pkg.core.Parameter.process", "pkg.types.ParamType.__call__",
                                        "pkg.types.ParamType.convert"), None, None),
        ("pkg.core.prompt", ("pkg.core.prompt", "pkg.types.ParamType.__call__",
                             "pkg.types.ParamType.convert"), None, None)]


def test_a_module_of_newer_syntax_is_in_the_graph(make_repo: Callable[[str], GitRepo]) -> None:
    """jax's core (`class Tracer[TraceType: Trace](...)`, `type Ref = ...`) is Python 3.12
    syntax: read with its type parameters blanked line for line, its calls are edges as any
    module's, on every interpreter the crawler runs on, and each line is where it was."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.api import run\n",
        "pkg/core.py": """\
            type Ref = int | str


            class Tracer[TraceType: (
                    int,
                    str)](object):
                def check(self, value):
                    if value is None:
                        raise ValueError("no value")


            def trace[T](value: T) -> T:
                Tracer().check(value)
                return value
            """,
        "pkg/api.py": "from pkg.core import trace\n\n\ndef run(value):\n    return trace(value)\n",
    })
    assert graph.functions["pkg.core.Tracer.check"].line == 7
    assert entries(graph, "pkg.core.Tracer.check") == [  # the package's own name first
        ("pkg.run", ("pkg.api.run", "pkg.core.trace", "pkg.core.Tracer.check"), None, None),
        ("pkg.core.Tracer.check", ("pkg.core.Tracer.check",), None, None),
        ("pkg.core.trace", ("pkg.core.trace", "pkg.core.Tracer.check"), None, None)]
