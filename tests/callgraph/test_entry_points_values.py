"""Methods called on what a call gives back: another package's function's value keeps that
package's methods, and the standard library's calls that give back a value of a type they are
handed (`typing.cast`, `copy.copy`) keep the library's. Each shape is a real library's, cut down
to the calls the pass reads."""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo


def test_a_method_on_another_packages_value_is_not_the_librarys(
        make_repo: Callable[[str], GitRepo]) -> None:
    """redis-py 7 (redis/background.py, redis/connection.py): a local `logger =
    logging.getLogger(__name__)` and `logger.debug(...)`; paramiko 3.4 (paramiko/agent.py):
    `sock = socket.socket(...)`, `conn, addr = sock.accept()`. Neither is the library's own
    `debug` or `accept`, which one class family defines."""
    graph = graph_of(make_repo("repo"), {
        "redis/__init__.py": "from redis.connection import Connection\nfrom redis.json import JSONCommands\n",
        "redis/json.py": """\
            class JSONCommands:
                def debug(self, subcommand, key=None):
                    raise ValueError("debug subcommand not recognized")
            """,
        "redis/connection.py": """\
            import logging
            import socket
            class Connection:
                def enable(self):
                    logger = logging.getLogger(__name__)
                    logger.debug("enabled")
                def listen(self):
                    sock = socket.socket()
                    conn, addr = sock.accept()
            class Transport:
                def accept(self, timeout=None):
                    raise ValueError("no channel")
            """})
    assert [name for name, *_ in entries(graph, "redis.json.JSONCommands.debug")] == [
        "redis.JSONCommands.debug"]
    assert "redis.Connection.listen" not in [
        name for name, *_ in entries(graph, "redis.connection.Transport.accept")]


def test_cast_and_copy_keep_the_librarys_type(make_repo: Callable[[str], GitRepo]) -> None:
    """click 8.3 (click/core.py): `t.cast(Group, ctx.command).list_commands(ctx)`; attrs 25
    (attr/_make.py): `new = copy.copy(self)`, then `new._setattrs(...)`; requests 2.32
    (requests/cookies.py): `new_jar = copy.copy(jar)`, then `new_jar.set_cookie(...)`."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.core import complete, Attribute\n",
        "pkg/core.py": """\
            import copy
            import typing as t
            class Group:
                def list_commands(self, ctx):
                    raise ValueError("no commands")
            class Other:
                def list_commands(self, ctx):
                    return []
            def complete(ctx):
                return t.cast(Group, ctx.command).list_commands(ctx)
            class Attribute:
                def evolve(self, **changes):
                    new = copy.copy(self)
                    new._setattrs(changes.items())
                    return new
                def _setattrs(self, name_values_pairs):
                    raise ValueError("frozen")
            """})
    assert [name for name, *_ in entries(graph, "pkg.core.Group.list_commands")][:1] == ["pkg.complete"]
    assert "pkg.Attribute.evolve" in [name for name, *_ in entries(graph, "pkg.core.Attribute._setattrs")]


def test_a_method_down_an_attribute_path(make_repo: Callable[[str], GitRepo]) -> None:
    """werkzeug 3.1 (routing/map.py): `MapAdapter.match` calls `self.map._matcher.match(...)`,
    `map` annotated a `Map`, whose `__init__` sets `self._matcher = StateMachineMatcher(...)`;
    click 8.3 (exceptions.py): `UsageError.show` calls `self.ctx.command.get_help_option(...)`.
    Two families define `match`, so no name alone finds it; a path to no class of the library
    (`self.map.rules.match`, a list) is an untyped receiver, as it was."""
    graph = graph_of(make_repo("repo"), {
        "wz/__init__.py": "from wz.map import Map, MapAdapter\n",
        "wz/matcher.py": """\
            class StateMachineMatcher:
                def match(self, domain, path):
                    raise ValueError("no rule matched")
            """,
        "wz/rules.py": """\
            class Rule:
                def match(self, path):
                    raise ValueError("not this rule")
            """,
        "wz/map.py": """\
            from wz.matcher import StateMachineMatcher
            class Map:
                def __init__(self, rules=None):
                    self._matcher = StateMachineMatcher()
                    self.rules = []
            class MapAdapter:
                def __init__(self, map: Map):
                    self.map = map
                def match(self, path_info=None):
                    return self.map._matcher.match("", path_info)
                def first(self, path):
                    return self.map.rules.match(path)
            """})
    matched = [name for name, *_ in entries(graph, "wz.matcher.StateMachineMatcher.match")]
    assert "wz.MapAdapter.match" in matched
    assert [name for name, *_ in entries(graph, "wz.rules.Rule.match")] == ["wz.rules.Rule.match"]


def test_a_class_a_class_attribute_holds_whatever_its_annotation(
        make_repo: Callable[[str], GitRepo]) -> None:
    """falcon 4.3 (falcon/app.py): `_STATIC_ROUTE_TYPE: ClassVar[type[routing.StaticRoute]] =
    routing.StaticRoute`, then `self._STATIC_ROUTE_TYPE(prefix, directory)` in
    `add_static_route`; rich 14 (rich/logging.py): `HIGHLIGHTER_CLASS: ClassVar[Type[
    Highlighter]] = ReprHighlighter`, then `self.HIGHLIGHTER_CLASS()`: the class assigned is
    called, not the annotation's base. Annotated without a value, `ClassVar[type[C]]` is C's
    class object."""
    graph = graph_of(make_repo("repo"), {
        "pkg/__init__.py": "from pkg.app import App, Handler\n",
        "pkg/routing.py": """\
            class StaticRoute:
                def __init__(self, prefix, directory):
                    raise ValueError("prefix must start with '/'")
            """,
        "pkg/highlighter.py": """\
            class Highlighter:
                def __init__(self):
                    pass
            class ReprHighlighter(Highlighter):
                def __init__(self):
                    raise ValueError("no repr")
            """,
        "pkg/app.py": """\
            from typing import ClassVar, Type
            from pkg import routing
            from pkg.highlighter import Highlighter, ReprHighlighter
            class App:
                _STATIC_ROUTE_TYPE: ClassVar[type[routing.StaticRoute]] = routing.StaticRoute
                def add_static_route(self, prefix, directory):
                    return self._STATIC_ROUTE_TYPE(prefix, directory)
            class Handler:
                HIGHLIGHTER_CLASS: ClassVar[Type[Highlighter]] = ReprHighlighter
                def __init__(self):
                    self.highlighter = self.HIGHLIGHTER_CLASS()
            class Bare:
                route_type: ClassVar[type[routing.StaticRoute]]
                def go(self):
                    return self.route_type("/", ".")
            """})
    routes = [name for name, *_ in entries(graph, "pkg.routing.StaticRoute.__init__")]
    assert "pkg.App.add_static_route" in routes and "pkg.app.Bare.go" in routes
    assert "pkg.Handler" in [name for name, *_ in entries(graph, "pkg.highlighter.ReprHighlighter.__init__")]
