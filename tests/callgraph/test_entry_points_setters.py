"""A property's setter runs where its attribute is assigned, its getter where it is read: two
nodes, as Python gives both defs one `__qualname__`. Shapes of cerberus 1.3 (validator.py:
`allow_unknown`'s setter builds a `DefinitionSchema`, which raises on a bad one, while its getter
only reads the config) and prettytable 3.18 (`PrettyTable.__init__` assigns `self.align = ...`,
whose setter validates), cut down to the calls the pass reads."""

from __future__ import annotations

from collections.abc import Callable

from crawler.pipeline.entry_stage import Keys, entry_points_of, node_in
from crawler.records import RaiseSite, Template
from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo

FILES = {
    "val/__init__.py": "from val.validator import Validator\nfrom val.table import Table\n",
    "val/schema.py": """\
        class SchemaError(Exception):
            pass
        class DefinitionSchema:
            def __init__(self, validator, schema):
                raise SchemaError("unknown rule")
        """,
    "val/validator.py": """\
        from val.schema import DefinitionSchema
        class Validator:
            def __init__(self, allow_unknown=False):
                self._config = {}
                self.allow_unknown = allow_unknown
            @property
            def allow_unknown(self):
                return self._config.get("allow_unknown", False)
            @allow_unknown.setter
            def allow_unknown(self, value):
                if not isinstance(value, bool):
                    DefinitionSchema(self, {"allow_unknown": value})
                self._config["allow_unknown"] = value
            def validate(self, document):
                return self.allow_unknown or document
        """,
    "val/table.py": """\
        class Table:
            def __init__(self, align=None):
                self._align = {}
                self.align = align
            @property
            def align(self):
                if not self._align:
                    raise ValueError("no alignment set")
                return self._align
            @align.setter
            def align(self, val):
                if val not in ("l", "c", "r", None):
                    raise ValueError(f"Alignment {val} is invalid, use l, c or r")
                self._align = val
            def get_string(self):
                return self.align
        """,
}


def table_site(line: int) -> RaiseSite:
    """A raise in `val/table.py` at `line`, named `Table.align` as Python names both defs."""
    return RaiseSite(path="val/table.py", line=line, end_line=line, column=16, class_name="Table",
                     function="align", qualname="Table.align", exception="ValueError",
                     exception_qualname="builtins.ValueError",
                     message=Template(kind="literal", template="t", placeholders=(), regex="^t$"),
                     cause=None, condition=None, snippet="", snippet_line=line)


def test_an_assignment_runs_the_setter_and_a_read_the_getter(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), FILES)
    assert "val.validator.Validator.allow_unknown.<setter>" in graph.functions
    built = [name for name, *_ in entries(graph, "val.schema.DefinitionSchema.__init__", "SchemaError")]
    assert "val.Validator" in built  # `__init__` assigns it
    assert "val.Validator.validate" not in built  # `validate` only reads it
    setter = [name for name, *_ in entries(graph, "val.table.Table.align.<setter>")]
    getter = [name for name, *_ in entries(graph, "val.table.Table.align")]
    assert "val.Table" in setter and "val.Table.get_string" not in setter
    assert "val.Table.get_string" in getter and "val.Table" not in getter


def test_a_raise_in_a_setter_is_placed_on_the_setters_node(make_repo: Callable[[str], GitRepo]) -> None:
    """The record says `Table.align` (Python's `__qualname__` of both defs); its line says which,
    and users set it as `table.align = x`, the spelling of the property."""
    graph = graph_of(make_repo("repo"), FILES)
    in_setter = [e.name for e in entry_points_of(graph, table_site(13)).items]
    in_getter = [e.name for e in entry_points_of(graph, table_site(8)).items]
    assert in_setter[0] == "val.Table.align" and "val.Table" in in_setter  # `t.align = x`, `Table()`
    assert "val.Table.get_string" in in_getter and "val.Table" not in in_getter


def test_an_update_reads_the_setters_node_for_a_raise_in_it(make_repo: Callable[[str], GitRepo]) -> None:
    """What an update compares (`Keys.of`) is keyed by the setter's node for a raise in the
    setter, so a change that reaches only the setter is seen there."""
    graph = graph_of(make_repo("repo"), FILES)
    site = table_site(13)
    assert node_in(graph, site) == "val.table.Table.align.<setter>"
    assert (Keys(graph).of(site) or "").startswith("val.table.Table.align.<setter>\0")
