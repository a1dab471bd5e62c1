"""The class pass over chains and cycles a repository makes as long as it likes: star imports,
re-exports, class hierarchies. Each is read without recursion, each node once: a cycle ends
where it comes back, and a chain of 1,000 modules or classes is followed to its end."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from crawler.callgraph.entry_points import Graph
from crawler.catalogue import classes
from crawler.parse.call_edges import read_calls
from crawler.parse.module_names import module_name
from crawler.records import RaiseSite
from tests.helpers.classes import resolve_sources

CHAIN = 1000


def sites_by_function(resolved: classes.Resolved) -> dict[str, RaiseSite]:
    return {site.function or "": site for site in resolved.sites}


def run_raise(tmp_path: Path, files: dict[str, str], module: str, function: str) -> BaseException:
    """What Python raises: the files written, imported, the function called."""
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    top = module.partition(".")[0]
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(Exception) as caught:
            getattr(importlib.import_module(module), function)()
        return caught.value
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == top or n.startswith(f"{top}.")]:
            del sys.modules[name]


# networkx's layout (cfc6b79f): the package star-imports its exceptions, then its algorithms;
# `algorithms` star-imports each algorithm module, and one of them imports the error back from
# the package (`from networkx import NetworkXError`). The name read in the package through its
# last star import leads to the algorithm module, whose binding leads back to the package.
NX_SHAPE = {
    "nxpkg/__init__.py": "from nxpkg.exception import *\nfrom nxpkg.algorithms import *\n",
    "nxpkg/exception.py": (
        "__all__ = ['PkgError']\n\n\n"
        "class PkgError(Exception):\n"
        "    def __init__(self, what):\n"
        "        super().__init__(f'graph {what} is not defined')\n"),
    "nxpkg/algorithms/__init__.py": "from nxpkg.algorithms.recip import *\n",
    "nxpkg/algorithms/recip.py": (
        "from nxpkg import PkgError\n\n"
        "__all__ = ['recip']\n\n\n"
        "def recip():\n"
        "    raise PkgError('empty')\n"),
    "nxpkg/use.py": (
        "import nxpkg\n\n\n"
        "def use():\n"
        "    raise nxpkg.PkgError('cyclic')\n"),
}


def test_networkx_s_layout_resolves_the_error_to_its_class(tmp_path: Path) -> None:
    """The name comes back to the package through the algorithm module's import: that path has
    nothing, and the package's earlier star import (the exceptions) has the class, as Python
    binds it. It crashed the pass with a RecursionError (`star_class` and `canonical`)."""
    sites = sites_by_function(resolve_sources(NX_SHAPE))
    assert {name: (site.exception_qualname, site.message.template, site.message.kind)
            for name, site in sites.items()} == {
        "recip": ("nxpkg.exception.PkgError", "graph empty is not defined", "class_default"),
        "use": ("nxpkg.exception.PkgError", "graph cyclic is not defined", "class_default")}
    raised = run_raise(tmp_path, NX_SHAPE, "nxpkg.algorithms.recip", "recip")
    assert (type(raised).__module__, str(raised)) == ("nxpkg.exception", "graph empty is not defined")


def star_cycle(count: int) -> dict[str, str]:
    """Modules m0 ... m{count-1}, each star-importing the next, the last the first; the error
    class is in `errors`, which only the last star-imports."""
    files = {"cyc/__init__.py": "", "cyc/errors.py": "class LoopError(Exception):\n    pass\n"}
    for i in range(count):
        star = f"cyc.m{(i + 1) % count}"
        extra = "from cyc.errors import *\n" if i == count - 1 else ""
        files[f"cyc/m{i}.py"] = f"from {star} import *\n{extra}"
    files["cyc/m0.py"] += "\n\ndef first():\n    raise LoopError('around the loop')\n"
    files["cyc/m0.py"] += "\n\ndef missing():\n    raise NowhereError('not in any module')\n"
    return files


@pytest.mark.parametrize("count", [2, CHAIN])
def test_a_cycle_of_star_imports_finds_the_class_or_nothing(count: int) -> None:
    sites = sites_by_function(resolve_sources(star_cycle(count)))
    assert sites["first"].exception_qualname == "cyc.errors.LoopError"
    assert sites["missing"].exception_qualname is None  # no module has it: never a guess
    assert sites["missing"].exception == "NowhereError"


def test_a_cycle_of_two_star_imports_is_what_python_binds(tmp_path: Path) -> None:
    raised = run_raise(tmp_path, star_cycle(2), "cyc.m0", "first")
    assert type(raised).__module__ == "cyc.errors"


def reexport_chain(count: int) -> dict[str, str]:
    """`r0.ChainError` is bound by an import from r1, ..., r{count-1} from the defining module."""
    files = {"rex/__init__.py": "", "rex/base.py": (
        "class ChainError(Exception):\n"
        "    def __init__(self, n):\n"
        "        super().__init__(f'chain broke at {n}')\n")}
    for i in range(count):
        source = f"rex.r{i + 1}" if i < count - 1 else "rex.base"
        files[f"rex/r{i}.py"] = f"from {source} import ChainError\n"
    files["rex/use.py"] = "from rex.r0 import ChainError\n\n\ndef use():\n    raise ChainError('three')\n"
    return files


def test_a_chain_of_1000_re_exports_is_followed_to_the_class() -> None:
    """Eight hops were the limit: a longer chain kept the name it was raised under."""
    site = sites_by_function(resolve_sources(reexport_chain(CHAIN)))["use"]
    assert (site.exception_qualname, site.message.template) == ("rex.base.ChainError",
                                                                "chain broke at three")


def test_a_binding_cycle_ends_where_it_comes_back() -> None:
    files = {"bc/__init__.py": "", "bc/a.py": "from bc.b import Gone\n",
             "bc/b.py": "from bc.a import Gone\n",
             "bc/use.py": "from bc.a import Gone\n\n\ndef use():\n    raise Gone('round')\n"}
    site = sites_by_function(resolve_sources(files))["use"]
    assert (site.exception_qualname, site.message.template) == ("bc.a.Gone", "round")


def class_chain(count: int) -> dict[str, str]:
    """C0 (an Exception with a template) in k0, each C{i} derived from C{i-1} in its own module."""
    files = {"hier/__init__.py": "", "hier/k0.py": (
        "class C0(Exception):\n"
        "    def __init__(self, name):\n"
        "        super().__init__(f'level {name} failed')\n")}
    for i in range(1, count):
        files[f"hier/k{i}.py"] = f"from hier.k{i - 1} import C{i - 1}\n\n\nclass C{i}(C{i - 1}):\n    pass\n"
    files["hier/use.py"] = (f"from hier.k{count - 1} import C{count - 1}\n\n\n"
                            f"def use():\n    raise C{count - 1}('top')\n")
    return files


@pytest.mark.slow  # 16 s: 4 the parse, 10 the digests' MROs, each cut at 32 bases
def test_a_class_hierarchy_of_1000_classes_across_modules_inherits_its_template() -> None:
    resolved = resolve_sources(class_chain(CHAIN))
    site = sites_by_function(resolved)["use"]
    assert (site.exception_qualname, site.message.template, site.message.kind) == (
        f"hier.k{CHAIN - 1}.C{CHAIN - 1}", "level top failed", "class_default")
    # the template C0's __init__ hands on, inherited through 999 bases (`compose` reads an MRO
    # of at most 32: a bound of its own, not the repository's)
    assert (site.message.defined_at, site.message.composed_by) == ("hier/k0.py:3", None)
    listed = {entry["qualname"]: entry for entry in resolved.exception_classes}
    assert len(listed) == CHAIN
    assert listed[f"hier.k{CHAIN - 1}.C{CHAIN - 1}"]["bases"] == [f"hier.k{CHAIN - 2}.C{CHAIN - 2}"]
    assert listed[f"hier.k{CHAIN - 1}.C{CHAIN - 1}"]["template"] == "level {name} failed"


def test_a_cycle_of_classes_reads_as_no_template_and_no_exception() -> None:
    """`class A(B)` in one module and `class B(A)` in the other: Python cannot import them; the
    pass reads each once and gives them nothing."""
    files = {"cl/__init__.py": "",
             "cl/a.py": "from cl.b import B\n\n\nclass A(B):\n    pass\n\n\n"
                        "def use():\n    raise A('as written')\n",
             "cl/b.py": "from cl.a import A\n\n\nclass B(A):\n    pass\n"}
    resolved = resolve_sources(files)
    site = sites_by_function(resolved)["use"]
    assert (site.exception_qualname, site.message.template, site.message.kind) == (
        "cl.a.A", "as written", "literal")
    assert resolved.exception_classes == []


def leaf_first_chain(count: int) -> dict[str, str]:
    """H0 (with a method that raises) ... H{count-1}, each in a module that sorts before its
    base's: the call graph orders the leaf first, with no base's order made yet."""
    files = {"z/__init__.py": "",
             f"z/m{count - 1:04d}.py": "class H0:\n    def check(self):\n        raise ValueError('c')\n"}
    for i in range(1, count):
        files[f"z/m{count - 1 - i:04d}.py"] = (f"from z.m{count - i:04d} import H{i - 1}\n\n\n"
                                              f"class H{i}(H{i - 1}):\n    pass\n")
    files["z/use.py"] = f"from z.m0000 import H{count - 1}\n\n\ndef go():\n    H{count - 1}().check()\n"
    return files


def test_the_call_graph_orders_a_chain_of_1000_classes_and_a_cycle() -> None:
    """`Graph.mro` recursed once per base: `crawler extract` on this layout ended in a
    RecursionError."""
    facts = [read_calls(text.encode(), module_name(path), path.endswith("__init__.py"))
             for path, text in sorted(leaf_first_chain(CHAIN).items())]
    graph = Graph([f for f in facts if f is not None])
    leaf = f"z.m0000.H{CHAIN - 1}"
    assert graph.mro(leaf) == [f"z.m{CHAIN - 1 - i:04d}.H{i}" for i in reversed(range(CHAIN))]
    assert graph.lookup(leaf, "check") == f"z.m{CHAIN - 1:04d}.H0.check"
    assert [e.name for e in graph.entry_points(f"z.m{CHAIN - 1:04d}.H0.check", "ValueError",
                                                0).items] == [f"z.m{CHAIN - 1:04d}.H0.check",
                                                              "z.use.go"]
    cycle = Graph([f for f in (read_calls(text.encode(), module_name(path)) for path, text in (
        ("cl/a.py", "from cl.b import B\n\n\nclass A(B):\n    pass\n"),
        ("cl/b.py", "from cl.a import A\n\n\nclass B(A):\n    pass\n"))) if f is not None])
    assert (cycle.mro("cl.a.A"), cycle.mro("cl.b.B")) == (["cl.a.A", "cl.b.B"], ["cl.b.B", "cl.a.A"])
