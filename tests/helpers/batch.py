"""Repositories for batch runs: a small tree, the modules that fill it, the statuses a batch gives."""

from __future__ import annotations

from pathlib import Path

from crawler.batch.driver import BatchResult
from tests.helpers.gitrepo import GitRepo

MODULE = '''\
class {name}Error(Exception):
    pass


def check_{name}(value, limit):
    if value > limit:
        raise {name}Error(f"{name}: {{value}} is over the limit {{limit}}")
    if value < 0:
        raise ValueError("{name}: negative values are not allowed")
    return value
'''


def fill(repo: GitRepo, name: str, modules: int) -> None:
    for i in range(modules):
        repo.write(f"{name}/mod{i}.py", MODULE.format(name=f"{name.title()}{i}"))
    repo.write(f"tests/test_{name}.py", "def test():\n    raise AssertionError('not catalogued')\n")
    repo.commit("add modules")




def tree(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "lookup.sqlite"}  # lookup's cache: the machine's bytes


def statuses(result: BatchResult) -> list[str]:
    return [r.status for r in result.results]
