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
