"""Registries and methods attached at run time (issue 49), on packages the tests write into a
git repository in two library shapes each: a jax-like primitive whose rules are kept for it
(`prim.def_impl(f)`, `@prim.def_abstract_eval`, `ad.jvps[prim] = f`, `register_lowering(prim,
f)`, `prim = standard_primitive(shape_rule)`) and run by `prim.bind(...)`; an argparse-like
container that keeps classes in a table (`self.register('action', 'store', _StoreAction)`) and
calls what `_registry_get` gives back. Each asserts the exact names, chains and the stop that
says the chain crosses a registry."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable

from crawler.callgraph.entry_points import Graph
from crawler.parse.call_edges import read_calls
from crawler.store._outcome_json import facts_from_data
from crawler.store.cache import ENCODER
from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo

CORE = """\
    class Primitive:
        def __init__(self, name):
            self.name = name
        def def_impl(self, impl):
            self.impl = impl
            return impl
        def def_abstract_eval(self, rule):
            self.abstract_eval = _effect_free(rule)
            return rule
        def bind(self, *args, **params):
            return find_trace().process(self, args, params)

    def _effect_free(rule):
        def wrapped(*args, **params):
            return rule(*args, **params), set()
        return wrapped

    def standard_primitive(shape_rule, name):
        prim = Primitive(name)
        prim.def_abstract_eval(shape_rule)
        return prim

    def find_trace():
        return None
    """

AD = """\
    jvps = {}
    def process_jvp(prim, args, params):
        rule = jvps.get(prim)
        return rule(*args, **params)
    """

LOWERING = """\
    _lowerings = {}
    def register_lowering(prim, rule):
        _lowerings[prim] = rule
        return rule
    """

PRIMITIVES = """\
    from jaxlike._src.core import Primitive, standard_primitive
    from jaxlike._src import ad, lowering

    def _dot_shape_rule(lhs, rhs):
        if lhs != rhs:
            raise TypeError("dot requires contracting dimensions to agree")
        return lhs

    dot_p = standard_primitive(_dot_shape_rule, "dot")

    def _dot_jvp(primals, tangents):
        raise NotImplementedError("dot jvp")

    ad.jvps[dot_p] = _dot_jvp

    def _cos_lowering(ctx, x):
        raise ValueError("no cos lowering on this platform")

    cos_p = Primitive("cos")
    lowering.register_lowering(cos_p, _cos_lowering)

    @cos_p.def_impl
    def _cos_impl(x):
        raise ValueError("cos impl")

    def dot(lhs, rhs):
        return dot_p.bind(lhs, rhs)

    def cos(x):
        return cos_p.bind(x)
    """

CHECKPOINT = """\
    from jaxlike._src.core import Primitive

    def _remat_rule(*args):
        raise NotImplementedError("effects not supported in remat")

    remat_p = Primitive("remat")
    remat_p.def_impl(_remat_rule)

    def checkpoint(fun):
        def remat_fun(*args):
            return remat_p.bind(*args)
        return remat_fun
    """


def jax_like(make_repo: Callable[[str], GitRepo]) -> Graph:
    return graph_of(make_repo("jaxlike"), {
        "jaxlike/__init__.py": "from jaxlike._src.checkpoint import checkpoint\n",
        "jaxlike/numpy.py": "from jaxlike._src.prims import dot as dot, cos as cos\n",
        "jaxlike/_src/__init__.py": "",
        "jaxlike/_src/core.py": CORE,
        "jaxlike/_src/ad.py": AD,
        "jaxlike/_src/lowering.py": LOWERING,
        "jaxlike/_src/prims.py": PRIMITIVES,
        "jaxlike/_src/checkpoint.py": CHECKPOINT})


def test_a_rule_kept_for_a_primitive_is_run_by_that_primitive_s_bind(
        make_repo: Callable[[str], GitRepo]) -> None:
    """A shape rule handed to the primitive's maker, a jvp rule stored in a table under the
    primitive, a lowering handed beside it to a registering call, an impl registered by a
    decorator: each is reached by its own primitive's `bind`, never by another's, and the
    chain says it crosses a registry. The table's own read (`jvps.get(prim)`, `prim` any
    primitive) reaches none of them."""
    graph = jax_like(make_repo)
    dot_stop = "dot_p.bind(...) runs a function registered for dot_p"
    cos_stop = "cos_p.bind(...) runs a function registered for cos_p"
    assert entries(graph, "jaxlike._src.prims._dot_shape_rule") == [
        ("jaxlike.numpy.dot", ("jaxlike._src.prims.dot", "jaxlike._src.prims._dot_shape_rule"),
         dot_stop, None)]
    assert entries(graph, "jaxlike._src.prims._dot_jvp") == [
        ("jaxlike.numpy.dot", ("jaxlike._src.prims.dot", "jaxlike._src.prims._dot_jvp"), dot_stop, None)]
    assert entries(graph, "jaxlike._src.prims._cos_lowering") == [
        ("jaxlike.numpy.cos", ("jaxlike._src.prims.cos", "jaxlike._src.prims._cos_lowering"),
         cos_stop, None)]
    assert entries(graph, "jaxlike._src.prims._cos_impl") == [
        ("jaxlike.numpy.cos", ("jaxlike._src.prims.cos", "jaxlike._src.prims._cos_impl"), cos_stop, None)]
    assert graph.kept.by_object == {
        "jaxlike._src.checkpoint.remat_p": ["jaxlike._src.checkpoint._remat_rule"],
        "jaxlike._src.prims.cos_p": ["jaxlike._src.prims._cos_impl", "jaxlike._src.prims._cos_lowering"],
        "jaxlike._src.prims.dot_p": ["jaxlike._src.prims._dot_jvp", "jaxlike._src.prims._dot_shape_rule"]}
    assert "jaxlike._src.ad.process_jvp" not in graph.callers["jaxlike._src.prims._dot_jvp"]
    assert not graph.kept.tables  # every rule here is kept for its primitive, none by the table alone


def test_a_closure_that_binds_a_primitive_crosses_two_kinds_of_dynamic_call(
        make_repo: Callable[[str], GitRepo]) -> None:
    """`checkpoint(f)` returns a closure that binds `remat_p`, whose impl raises (jax's seed
    record): the chain crosses a closure called later and a registry, and names both."""
    graph = jax_like(make_repo)
    assert entries(graph, "jaxlike._src.checkpoint._remat_rule") == [
        ("jaxlike.checkpoint", ("jaxlike._src.checkpoint.checkpoint",
                                "jaxlike._src.checkpoint.checkpoint.<locals>.remat_fun",
                                "jaxlike._src.checkpoint._remat_rule"),
         "what checkpoint() returns, called later; "
         "remat_p.bind(...) runs a function registered for remat_p", None)]


ARGPARSE_LIKE = """\
    class _StoreAction:
        def __init__(self, option_strings, dest, nargs=None):
            if nargs == 0:
                raise ValueError("nargs for store actions must be != 0")

    class _CountAction:
        def __init__(self, option_strings, dest):
            raise ValueError("count takes no nargs")

    class _ActionsContainer:
        def __init__(self):
            self._registries = {}
            self.register("action", None, _StoreAction)
            self.register("action", "store", _StoreAction)
            self.register("action", "count", _CountAction)

        def register(self, registry_name, value, object):
            registry = self._registries.setdefault(registry_name, {})
            registry[value] = object

        def _registry_get(self, registry_name, value, default=None):
            return self._registries[registry_name].get(value, default)

        def _pop_action_class(self, kwargs, default=None):
            action = kwargs.pop("action", default)
            return self._registry_get("action", action, action)

        def add_argument(self, *args, **kwargs):
            action_class = self._pop_action_class(kwargs)
            return action_class(*args, **kwargs)

    class ArgumentParser(_ActionsContainer):
        pass
    """


def test_a_class_kept_in_a_table_by_a_registering_method_is_reached_through_its_getter(
        make_repo: Callable[[str], GitRepo]) -> None:
    """argparse's shape: `register` keeps its third parameter in `self._registries`; the item
    `_registry_get` reads, handed back by `_pop_action_class`, is called by `add_argument`.
    Every class the table keeps is offered, across the registry."""
    graph = graph_of(make_repo("argparselike"), {
        "argparselike/__init__.py": "from argparselike._core import ArgumentParser\n",
        "argparselike/_core.py": ARGPARSE_LIKE})
    stop = "_registries[...](...) calls a function registered in _registries"
    for action in ("_StoreAction", "_CountAction"):
        assert entries(graph, f"argparselike._core.{action}.__init__") == [
            ("argparselike.ArgumentParser.add_argument",
             ("argparselike._core._ActionsContainer.add_argument", f"argparselike._core.{action}",
              f"argparselike._core.{action}.__init__"), stop, None)]
    assert graph.kept.tables == {"argparselike._core._ActionsContainer._registries": [
        "argparselike._core._CountAction", "argparselike._core._StoreAction"]}


def test_a_decorator_factory_keeps_what_it_decorates_in_its_table(
        make_repo: Callable[[str], GitRepo]) -> None:
    """`@register("json")` of a factory whose returned decorator stores its parameter in a
    module's table: `ENCODERS[kind](x)` reaches the decorated function (a second library's
    registering shape: click's and werkzeug's converters, markdown's extensions)."""
    graph = graph_of(make_repo("codecs"), {
        "codecs_pkg/__init__.py": "from codecs_pkg._impl import encode\n",
        "codecs_pkg/_impl.py": """\
            ENCODERS = {}
            def register(kind):
                def decorator(fn):
                    ENCODERS[kind] = fn
                    return fn
                return decorator
            @register("json")
            def _to_json(x):
                raise ValueError("not serializable")
            def encode(kind, x):
                return ENCODERS[kind](x)
            """})
    assert entries(graph, "codecs_pkg._impl._to_json") == [
        ("codecs_pkg.encode", ("codecs_pkg._impl.encode", "codecs_pkg._impl._to_json"),
         "ENCODERS[...](...) calls a function registered in ENCODERS", None)]


def test_a_method_attached_at_run_time_answers_a_call_on_its_class(
        make_repo: Callable[[str], GitRepo]) -> None:
    """`Tracer.__bool__ = _bool_error`, `setattr(Tracer, "tolist", _tolist)` at module level or
    in a function, and a class attribute assigned what a maker returns (`_bool = error_for(bool)`
    in jax's `ShapedArray`, held by a subclass of the annotated type): each answers a call of
    that method on an instance, as a method defined in the class does."""
    graph = graph_of(make_repo("attached"), {
        "tracers/__init__.py": "from tracers._core import Tracer, check, listed, forwarded\n",
        "tracers/_core.py": """\
            class AbstractValue:
                pass
            class ShapedArray(AbstractValue):
                _int = error_for(int)
            def error_for(fun):
                def error(self, arg):
                    raise TypeError("abstract value converted to a concrete one")
                return error
            class Tracer:
                aval: AbstractValue
                def __int__(self):
                    return self.aval._int(self)
            def _bool_error(self):
                raise TypeError("tracer converted to bool")
            def _tolist(self):
                raise TypeError("tolist of a tracer")
            Tracer.__bool__ = _bool_error
            def _set_methods():
                setattr(Tracer, "tolist", _tolist)
            def check(t: Tracer):
                return bool(t)
            def listed(t: Tracer):
                return t.tolist()
            def forwarded(t: Tracer):
                return int(t)
            """})
    assert entries(graph, "tracers._core._bool_error") == [
        ("tracers.Tracer.__bool__", ("tracers._core._bool_error",), None, None),
        ("tracers.check", ("tracers._core.check", "tracers._core._bool_error"), None, None)]
    assert entries(graph, "tracers._core._tolist") == [
        ("tracers.Tracer.tolist", ("tracers._core._tolist",), None, None),
        ("tracers.listed", ("tracers._core.listed", "tracers._core._tolist"), None, None)]
    assert entries(graph, "tracers._core.error_for.<locals>.error") == [
        ("tracers.Tracer.__int__", ("tracers._core.Tracer.__int__", "tracers._core.error_for",
                                   "tracers._core.error_for.<locals>.error"),
         "what error_for() returns, called later", None),
        ("tracers.forwarded", ("tracers._core.forwarded", "tracers._core.Tracer.__int__",
                               "tracers._core.error_for", "tracers._core.error_for.<locals>.error"),
         "what error_for() returns, called later", None)]


def test_what_an_item_of_a_table_returns_is_typed_by_what_the_table_keeps(
        make_repo: Callable[[str], GitRepo]) -> None:
    """lark 1.3.1's parser front end: `_parser_creators['lalr'] = create_lalr_parser` (annotated
    `-> LALR_Parser`), `_parser_creators['cyk'] = CYK_FrontEnd` (a class), then `create_parser =
    _parser_creators.get(parser_type)`, `self.parser = create_parser(...)` and
    `self.parser.parse(...)`: the receiver is an instance of what the table's items make, so
    `parse` is each of those classes' (and no other class's, though several define it)."""
    kept = {"LALRParser": True, "CYKFrontEnd": True, "EarleyParser": False, "Unrelated": False}
    parsers = "".join(f"class {name}:\n    def parse(self, text):\n        raise ValueError('{name}')\n"
                      for name in kept)
    frontends = parsers + textwrap.dedent("""\
        _parser_creators = {}
        def create_lalr_parser(conf) -> LALRParser:
            return LALRParser()
        _parser_creators['lalr'] = create_lalr_parser
        _parser_creators['cyk'] = CYKFrontEnd
        class ParsingFrontend:
            def __init__(self, conf, kind):
                create_parser = _parser_creators.get(kind)
                self.parser = create_parser(conf)
            def parse(self, text):
                return self.parser.parse(text)
        """)
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": "", "pkg/frontends.py": frontends})
    for name, reached in kept.items():
        callers = {c for c, _, _ in graph.callers[f"pkg.frontends.{name}.parse"]}
        assert ("pkg.frontends.ParsingFrontend.parse" in callers) is reached, name


def test_what_a_file_keeps_survives_the_result_cache() -> None:
    """The facts the result cache keeps (format 19) give back the same registrations, objects
    and kept parameters."""
    source = textwrap.dedent(PRIMITIVES) + textwrap.dedent(ARGPARSE_LIKE)
    facts = read_calls(source, "pkg.mod")
    assert facts is not None and facts.registrations and facts.objects
    assert any(f.keeps for f in facts.functions) and any(f.gives for f in facts.functions)
    assert facts_from_data(json.loads(ENCODER.encode(facts))) == facts
    made = read_calls("import re\n_pattern = re.compile('x')\n", "pkg.mod")
    assert made is not None and made.foreign == ("_pattern",)
    assert facts_from_data(json.loads(ENCODER.encode(made))) == made


def test_a_function_handed_to_a_constructor_is_offered_beside_the_held_callables(
        make_repo: Callable[[str], GitRepo]) -> None:
    """attrs' shape: `_Optional(validator)` keeps what it is handed in `self.validator` and
    calls it. `_Optional(_is_positive)` in a function keeps that function there, offered beside
    the callable classes of the module that a held call may be (both across the stop); one
    module-level instance made so (`POSITIVE = _Optional(_is_negative)`) keeps its function for
    that object, which `POSITIVE(value)` runs."""
    graph = graph_of(make_repo("validators"), {
        "validators/__init__.py": "from validators._impl import validate, validate_negative\n",
        "validators/_impl.py": """\
            class _Optional:
                def __init__(self, validator):
                    self.validator = validator
                def __call__(self, value):
                    if value is None:
                        return
                    self.validator(value)
            class _InstanceOf:
                def __call__(self, value):
                    raise TypeError("not an instance")
            def _is_positive(value):
                if value < 0:
                    raise ValueError("negative")
            def _is_negative(value):
                if value > 0:
                    raise ValueError("positive")
            NEGATIVE = _Optional(_is_negative)
            def validate(value):
                return _Optional(_is_positive)(value)
            def validate_negative(value):
                return NEGATIVE(value)
            """})
    held = "self.validator(...) calls what it holds"
    handed = "self.validator(...) calls a function handed to _Optional"
    # (a function handed to a call in a function is also read as called there: the static chain)
    assert entries(graph, "validators._impl._is_positive") == [
        ("validators.validate", ("validators._impl.validate", "validators._impl._is_positive"),
         None, None)]
    assert entries(graph, "validators._impl._is_negative") == [
        ("validators.validate_negative", ("validators._impl.validate_negative",
                                          "validators._impl._is_negative"),
         "NEGATIVE(...) runs a function registered for NEGATIVE", None)]
    assert ("validators._impl._is_positive", handed) in graph.resolve(
        "method", "S validators._impl._Optional", "validator",
        graph.functions["validators._impl._Optional.__call__"], '[1,[],[]]')
    assert [c for c, stop in graph.resolve(
        "method", "S validators._impl._Optional", "validator",
        graph.functions["validators._impl._Optional.__call__"], '[1,[],[]]') if stop == held] \
        == ["validators._impl._Optional.__call__", "validators._impl._InstanceOf.__call__"]


def test_a_method_kept_in_an_attribute_of_its_instance_runs_where_the_attribute_is_called(
        make_repo: Callable[[str], GitRepo]) -> None:
    """pyyaml's parser keeps its next step in `self.state` (`self.state =
    self.parse_document_start`, ...) and runs it from `check_event` (`self.event =
    self.state()`); tqdm's notebook bar keeps its `display` in `self.disp` and calls it from
    `close`. Each method so kept is reached from where the attribute is called, across a stop
    that says so. Not kept so: another object's method (`self.other = reader.read`), nor a
    method stored on another object (`reader.hook = self.parse_end`)."""
    graph = graph_of(make_repo("loader"), {
        "loader/__init__.py": "from loader.parser import Parser, load\nfrom loader.bar import Bar\n",
        "loader/parser.py": """\
            class Reader:
                def read(self):
                    raise ValueError("not read")

            class Parser:
                def __init__(self, reader):
                    self.state = self.parse_stream_start
                    self.other = reader.read
                    reader.hook = self.parse_end

                def check_event(self):
                    return self.state()

                def parse_stream_start(self):
                    self.state = self.parse_block_mapping_key
                    return "start"

                def parse_block_mapping_key(self):
                    raise ValueError("expected <block end>, but found a scalar")

                def parse_end(self):
                    raise ValueError("ended")

                def read_other(self):
                    return self.other()

            def load(stream):
                parser = Parser(stream)
                while parser.check_event():
                    pass
            """,
        "loader/bar.py": """\
            class Bar:
                def __init__(self):
                    self.disp = self.display

                def display(self, msg=None):
                    raise ValueError("no widget")

                def close(self):
                    self.disp(msg="done")
            """})
    parser = "self.state(...) calls a method Parser keeps in it"
    assert entries(graph, "loader.parser.Parser.parse_block_mapping_key")[:3] == [
        ("loader.Parser.parse_block_mapping_key", ("loader.parser.Parser.parse_block_mapping_key",),
         None, None),
        ("loader.Parser.check_event", ("loader.parser.Parser.check_event",
                                       "loader.parser.Parser.parse_block_mapping_key"), parser, None),
        ("loader.load", ("loader.parser.load", "loader.parser.Parser.check_event",
                         "loader.parser.Parser.parse_block_mapping_key"), parser, None)]
    assert ("loader.Bar.close", ("loader.bar.Bar.close", "loader.bar.Bar.display"),
            "self.disp(...) calls a method Bar keeps in it", None) \
        in entries(graph, "loader.bar.Bar.display")
    # another object's method is not the instance's own; a method stored elsewhere is not kept here
    assert not any(name == "loader.Parser.read_other"
                   for name, *_ in entries(graph, "loader.parser.Reader.read"))
    assert [name for name, *_ in entries(graph, "loader.parser.Parser.parse_end")] == [
        "loader.Parser.parse_end"]
