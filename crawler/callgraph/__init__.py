"""The public calls that reach each raise: a repository-wide call graph, built once every file is read.

This package owns the entry points of a record: the names users import
(`entry_points.public_names`), the graph over every file's call edges (`entry_points.Graph`:
names through imports and re-exports, methods through the class hierarchy, `super()`, properties
and dunders where the receiver's type is known), the calls a static reader cannot follow,
offered as a named stop rather than an invented edge (`entry_points.dynamic_callees`,
`held_callees`), the functions a library keeps in registries or attaches to classes and the
calls that run them, also named on a chain (`registries`), and the summary of a graph kept for
the next update (`graph_cache`). The edges themselves are read per file by
`crawler.parse.call_edges` (what a file keeps: `crawler.parse.registrations`); when a run sets
them on records is `crawler.pipeline.entry_stage`.

The contract, in one example: `pkg/__init__.py` re-exports `run` and `Runner` from a private
module whose `_check` raises. Every public call that reaches the raise is listed with one
shortest chain, the library's own catch is named (`caught_by`), a chain that crosses a call
only a run can tell says so (`stops`), and a private caller (`_private`) is no entry point.

>>> from crawler.callgraph.entry_points import Graph
>>> from crawler.parse.message.text_calls import read_call_facts
>>> package = b'''from ._impl import run, Runner
... __all__ = ["run", "Runner"]
... '''
>>> impl = b'''def run(x):
...     return _check(x)
...
... def _check(x):
...     if x < 0:
...         raise ValueError("x must be positive")
...     return x
...
... def _private():
...     return _check(-1)
...
... class Runner:
...     def go(self, x):
...         try:
...             return _check(x)
...         except ValueError:
...             return None
...     def apply(self, name, x):
...         return getattr(self, "do_" + name)(x)
...     def do_check(self, x):
...         return _check(x)
... '''
>>> graph = Graph([read_call_facts(package, "pkg", True)[0],
...                read_call_facts(impl, "pkg._impl", False)[0]])
>>> found = graph.entry_points("pkg._impl._check", "builtins.ValueError", 6)
>>> for entry in found.items:
...     print(entry.name, "stops:", entry.stops, "caught_by:", entry.caught_by)
...     print("   ", " -> ".join(entry.chain))
pkg.Runner.do_check stops: None caught_by: None
    pkg._impl.Runner.do_check -> pkg._impl._check
pkg.Runner.go stops: None caught_by: pkg._impl.Runner.go
    pkg._impl.Runner.go -> pkg._impl._check
pkg.run stops: None caught_by: None
    pkg._impl.run -> pkg._impl._check
pkg.Runner.apply stops: getattr(self, 'do_' + name) caught_by: None
    pkg._impl.Runner.apply -> pkg._impl.Runner.do_check -> pkg._impl._check
>>> found.left_out
0

docs/entry_points.md says what the pass resolves and where it stops.

May import: `crawler.parse` (each file's call facts, read in the workers), `crawler.records`,
`crawler.store` (the result cache's table, where the graph is kept).
Line budget: 1,530 lines.
"""
