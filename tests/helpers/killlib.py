"""A library to kill the crawler on: generated modules, and the commits that move it on.

`library(files, seed)` is a package of Python modules with every kind of raise the crawler reads
(literal, f-string, `.format`, `%`, concatenation, a variable, a class default, a prefixing
`__init__`, `raise ... from`, methods of nested classes, multi-line calls), a few modules far
larger than the rest, and test files whose assertions give evidence. `renamed` and `edited` move
any tree of `path: text` on the way upstream does: files renamed, messages reworded, functions
moved within and across files, lines inserted above raises, a file deleted, a file added. Both
are pure functions of their seed, so every run of a test builds the same commits.
"""

from __future__ import annotations

import ast
import random
import re

Tree = dict[str, str]

WORDS = ("value", "shape", "dtype", "axis", "index", "key", "mode", "size", "name", "level",
         "buffer", "token", "handle", "frame", "column", "offset", "weight", "scale")


def library(files: int, seed: int) -> Tree:
    """`files` modules in a dozen packages, three of them large, and a test file per package."""
    rng = random.Random(seed)
    tree: Tree = {}
    packages = [f"lib/pkg{p:02d}" for p in range(12)]
    for package in packages:
        tree[f"{package}/__init__.py"] = f'"""Package {package}."""\n'
    for index in range(files):
        package = packages[index % len(packages)]
        large = index in (7, 101, 133)
        text = module(index, 30 if large else rng.randint(1, 2), rng)
        tree[f"{package}/mod{index:03d}.py"] = text + (filler(index, 800) if large else "")
    for number, package in enumerate(packages):
        tree[f"tests/test_pkg{number:02d}.py"] = test_module(package, number, rng)
    return tree


def module(index: int, functions: int, rng: random.Random) -> str:
    """One module: its own error classes, then `functions` functions and a class of methods."""
    error = f"Mod{index:03d}Error"
    parts = [
        f'"""Module {index}: generated for the kill tests."""\n\nimport os\n\n\n',
        f"class {error}(ValueError):\n"
        f'    """Raised by module {index}."""\n\n\n',
        f"class {error}Prefixed(Exception):\n"
        f"    def __init__(self, message):\n"
        f'        super().__init__("mod{index:03d}: " + message)\n\n\n',
        f"class {error}Default(LookupError):\n"
        f'    message = "module {index} could not find what it looked for"\n\n'
        f"    def __init__(self, message=None):\n"
        f"        super().__init__(message or self.message)\n\n\n",
    ]
    for number in range(functions):
        parts.append(function(index, number, error, rng))
    if index % 3 == 0:
        parts.append(methods(index, error, rng))
    return "".join(parts)


def filler(index: int, count: int) -> str:
    """Code that raises nothing: what makes a module large without more records."""
    return "".join(f"\n\ndef helper{index}_{i}(x, scale={i}):\n    return x * scale + len(str(x))\n"
                   for i in range(count))


def function(index: int, number: int, error: str, rng: random.Random) -> str:
    """A function with one to three raises of kinds picked by `rng`."""
    name = f"f{index:03d}_{number:03d}"
    word, other = rng.sample(WORDS, 2)
    body = [f"def {name}({word}, {other}=None):\n", f'    """Check {word} ({index}.{number})."""\n']
    for count in range(rng.randint(1, 2)):
        body.append(f"    if {word} == {count}:\n")
        body.extend(f"        {line}\n" for line in _raise(index, number, count, word, other, error, rng))
    body.append(f"    return {word}\n\n\n")
    return "".join(body)


def _raise(index: int, number: int, count: int, word: str, other: str, error: str,
           rng: random.Random) -> list[str]:
    tag = f"{index}.{number}.{count}"
    kind = rng.randrange(10)
    if kind == 0:
        return [f'raise ValueError("{word} {tag} is not allowed here")']
    if kind == 1:
        return [f'raise TypeError(f"{word} {tag}: expected int, got {{type({word}).__name__}}")']
    if kind == 2:
        return [f'raise KeyError("{word} {tag} missing from %r (with %s)" % ({other}, {word}))']
    if kind == 3:
        return [f'raise RuntimeError("{tag}: cannot use {{}} with {{!r}}".format({word}, {other}))']
    if kind == 4:
        return [f'raise {error}("{word} {tag} out of range: " + str({word}))']
    if kind == 5:
        return [f'message = f"{tag} \\u00e9t\\u00e9 {{{word}!r}} and {{{other}}}"',
                f"raise {error}(message)"]
    if kind == 6:
        return [f'raise {error}Prefixed(f"{word} {tag} was {{{word}}}")']
    if kind == 7:
        return [f"raise {error}Default()"]
    if kind == 8:
        return ["try:", f"    os.stat({other})", "except OSError as exc:",
                f'    raise {error}(f"{tag}: cannot stat {{{other}!s}}") from exc']
    return ["raise ValueError(", f'    f"{word} {tag} spans lines: "',
            f'    f"{{{word}:>8}} / {{{other}}}"', ")"]


def methods(index: int, error: str, rng: random.Random) -> str:
    """A class with a nested class, each method raising."""
    word = rng.choice(WORDS)
    return (
        f"class Holder{index:03d}:\n"
        f"    class Inner:\n"
        f"        def check(self, {word}):\n"
        f"            if not {word}:\n"
        f'                raise {error}(f"inner {index}: {word} is empty: {{{word}!r}}")\n\n'
        f"    def get(self, {word}):\n"
        f"        if {word} is None:\n"
        f'            raise AttributeError("holder {index} has no {word}")\n'
        f"        return {word}\n"
    )


def test_module(package: str, number: int, rng: random.Random) -> str:
    """Tests that assert on messages of the package's modules: evidence for their records."""
    dotted = package.replace("/", ".")
    lines = ["import pytest\n\n", f"import {dotted}\n\n\n"]
    for case in range(rng.randint(2, 5)):
        index = number + 12 * rng.randrange(8)
        lines.append(f"def test_{case}():\n"
                     f'    with pytest.raises(ValueError, match="is not allowed here"):\n'
                     f"        {dotted}.mod{index:03d}.f{index:03d}_000(0)\n\n\n")
    return "".join(lines)


# ---------------------------------------------------------------- moving upstream


def renamed(tree: Tree, seed: int, share: float = 0.05) -> Tree:
    """Some modules renamed (git sees renames), one of them edited a little as well."""
    rng = random.Random(seed)
    paths = sorted(p for p in tree if _library_module(p))
    moved = rng.sample(paths, max(2, int(len(paths) * share)))
    out = {p: t for p, t in tree.items() if p not in moved}
    for number, path in enumerate(sorted(moved)):
        folder, _, name = path.rpartition("/")
        text = tree[path]
        if number == 0:
            text = "# moved here from " + folder + "\n" + text
        out[f"{folder}/moved/{name}"] = text
    return out


RAISE_TEXT = re.compile(r"(raise\s+\w+\(\s*f?)([\"'])(?=[^\"'\n])")


def edited(tree: Tree, seed: int, share: float = 0.05) -> Tree:
    """Messages reworded, functions moved within and across files, lines inserted, one file
    deleted and one added: what a few weeks of upstream commits do to a library."""
    rng = random.Random(seed)
    out = dict(tree)
    paths = sorted(p for p in out if _library_module(p))
    count = max(2, int(len(paths) * share))
    for path in rng.sample(paths, count):  # reworded: the first message of each raise line
        out[path] = RAISE_TEXT.sub(r"\1\2reworded: ", out[path], count=rng.randint(1, 3))
    for path in rng.sample(paths, count):  # lines inserted above every raise of the file
        out[path] = "# a comment\n# and another\n" + out[path]
    for path in rng.sample(paths, count):  # a function moved to the end of its own file
        text, piece = _cut_function(out[path], rng)
        if piece:
            out[path] = text.rstrip("\n") + "\n\n\n" + piece
    pairs = rng.sample(paths, 2 * count)
    for source, target in zip(pairs[::2], pairs[1::2]):  # moved to another file
        text, piece = _cut_function(out[source], rng)
        if piece:
            out[source] = text
            out[target] = out[target].rstrip("\n") + "\n\n\n" + piece
    for path in rng.sample(sorted(p for p in out if _library_module(p)), 2):
        del out[path]  # deleted, with its records: they become removed
    for number in range(2):  # added: a copy of a module under a new name, messages and all
        source = rng.choice(sorted(p for p in out if _library_module(p)))
        folder = source.rpartition("/")[0]
        out[f"{folder}/added{number}.py"] = "# added upstream\n" + out[source]
    return out


def _cut_function(text: str, rng: random.Random) -> tuple[str, str]:
    """The text without one top-level function that raises, and that function's lines."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text, ""
    found = [node for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list
             and any(isinstance(n, ast.Raise) for n in ast.walk(node)) and node.end_lineno]
    if not found:
        return text, ""
    node = rng.choice(found)
    lines = text.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno
    piece = "".join(lines[start:end])
    return "".join(lines[:start] + lines[end:]), piece if piece.endswith("\n") else piece + "\n"


def _library_module(path: str) -> bool:
    name = path.rpartition("/")[2]
    return (path.endswith(".py") and not name.startswith(("test_", "__init__"))
            and not path.startswith("tests/") and "/test/" not in f"/{path}")
