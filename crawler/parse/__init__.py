"""What runs in worker processes: one file's bytes to its raise sites, classes and test assertions.

This package sees one file at a time and nothing else: it parses the file with LibCST (in
limited, recycled worker processes, since untrusted source can crash the parser), walks its
statements, and gives each `raise` that carries a message its `RaiseSite`, with the exact
lines, the enclosing class and function, the guarding `if`, and the message as a template
(`crawler.parse.message`). What one file cannot settle is handed on, not guessed: a raise of a
class that composes its own message is `pending`, a call of another module's function is a
`CrossCall`, for the repository-wide passes (`crawler.catalogue`).

The contract, in one example: a message read exactly, one followed into a helper of the module
(`defined_at` says where its text is written), one that cannot be read (`dynamic`, its
expression's source as the placeholder), a bare `raise` counted and not recorded, and a
message-less raise of the module's own class left `pending` for the class pass.

>>> from crawler.parse.visitor import find_raise_sites
>>> source = b'''def check(x, n):
...     if n < 0:
...         raise ValueError(f"n must be positive, got {n!r}")
...     try:
...         return _scale(x, n)
...     except ZeroDivisionError:
...         raise
...     raise TypeError(describe(x))
...
... def _scale(x, n):
...     raise ValueError(_message(n))
...
... def _message(n):
...     return f"cannot scale by {n}"
...
... class Empty(Exception):
...     def __init__(self):
...         super().__init__("nothing to read")
...
... def read():
...     raise Empty
... '''
>>> found = find_raise_sites("pkg/mod.py", source, "pkg.mod", None)
>>> for site in found.sites:
...     message = site.message
...     print(site.line, site.qualname, message.kind, repr(message.template), message.defined_at,
...           site.condition)
3 check fstring 'n must be positive, got {n}' None n < 0
8 check dynamic '{describe(x)}' None None
11 _scale fstring 'cannot scale by {n}' pkg/mod.py:13 None
>>> found.counts
RaiseCounts(raise_statements=5, bare_raise=1, reraise=0, without_message=1)
>>> [(site.line, site.exception_qualname, site.message.kind) for site in found.pending]
[(21, 'pkg.mod.Empty', 'pending')]
>>> [(cls.qualname, [t.template for t in cls.templates]) for cls in found.classes]
[('pkg.mod.Empty', ['nothing to read'])]

A file that does not parse is a reason in the manifest, never a failed run (what a worker
returns, `file_tasks.visit_file`):

>>> from crawler.parse.file_tasks import visit_file
>>> visit_file("pkg/bad.py", "0" * 40, b"def (:").failure.reason
'parse_failed'

Its modules: the file's walk and records (`visitor`: one parse and one pass, over
`raise_visitor`'s statement walk shared with the assertions' in `_walk`; `site_records`,
`class_records`), exact lines from `ast` held equal to LibCST's (`positions`), Python's own
parser for any source, one thread at a time (`python_ast`), nodes' exact source and the `if`
tests a raise runs under (`_source`), imports and qualified names (`names`; the dotted module a
file defines and the builtins' names in `module_names`),
message expressions to templates (`message`, a subpackage), skeleton reads of a changed file
(`skeleton`, with what a stub's records take from the functions and constants they follow:
`followed`), what a module exposes to another module's raise (`exposed`), call edges and guards
for the entry-point graph (`call_edges`, `call_guards`, and what a file keeps for a later call in
`registrations`), the assertions of test files
(`assertions`), and the worker processes that run all of it (`workers`, which also starts them;
the fork server in `forkserver`, with `orphan` and `spawn_quiet` preloaded by the fork server).

May import: `crawler.records`, `crawler.errors`. Nothing here sees more than one file.
Line budget: 10,350 lines.
"""
