"""A real history of tagged releases to walk, and an output folder read as bytes."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gitrepo import GitRepo

TAGS = "v*"


def module_a(load: str, *, parse: str = "ValueError", check: bool = True, drop: bool = True,
             extra: bool = False) -> str:
    text = (f'def load(x):\n    if x < 0:\n        raise ValueError(f"{load}")\n    return x\n\n\n'
            f'def parse(z):\n    if z is None:\n        raise {parse}("odd gizmo value")\n    return z\n')
    if check:
        text += ('\n\ndef check(y):\n    if not y:\n        raise TypeError("empty input")\n'
                 '    return y\n')
    if drop:
        text += ('\n\ndef drop(w):\n    if w:\n        raise RuntimeError("dropped feature")\n'
                 '    return w\n')
    if extra:
        text += '\n\ndef extra(v):\n    if v:\n        raise OSError("new error")\n'
    return text


MODULE_B = 'def check(y):\n    if not y:\n        raise TypeError("empty input")\n    return y\n'


def build_history(path: Path) -> GitRepo:
    repo = GitRepo(path)
    repo.write("pkg/a.py", module_a("negative size {x}"))
    repo.commit("first release")
    repo.tag("v0.9.0", annotated=True)
    repo.write("pkg/a.py", module_a("size must be non-negative, got {x}", extra=True))
    repo.commit("reword; a new error")
    for name in ("v0.10.0rc1", "v-next", "nightly"):
        repo.tag(name)
    repo.write("pkg/a.py", module_a("size {x} is negative", check=False, drop=False, extra=True))
    repo.write("pkg/b.py", MODULE_B)
    repo.commit("reword again; check moves to b.py; drop goes")
    repo.tag("v0.10.0")
    repo.write("pkg/a.py", module_a("size {x} is negative", parse="TypeError", check=False,
                                    extra=True))
    repo.commit("drop comes back; parse raises TypeError")
    repo.tag("v0.11.0", annotated=True)
    repo.write("pkg/c.py", 'def later():\n    raise ValueError("unreleased error")\n')
    repo.commit("after the last release")
    return repo


def folder_bytes(out: Path) -> dict[str, bytes]:
    """Every file the walk wrote, by its path under the output root (lookup's cache aside: its
    bytes are the machine's)."""
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*"))
            if path.is_file() and path.name != "lookup.sqlite"}
