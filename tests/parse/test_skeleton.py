"""A changed file read as a skeleton gives exactly what a whole read gives.

Every test compares the two paths: `visit_file` of the new text with nothing known (LibCST parses
it all), and with what the previous version's results say (known functions stubbed, their
results taken back by `skeleton.fill`). They must be equal field for field: sites, pending
raises, classes, counts, exports, regions and context.
"""

from __future__ import annotations

import ast
import random
import sysconfig
from dataclasses import replace
from pathlib import Path

import pytest

from crawler import pipeline
from crawler.parse import positions as _positions
from crawler.parse import skeleton
from tests.helpers.gitrepo import GitRepo
from tests.helpers.visits import assert_same, both, visit

BASE = '''"""A module."""
import errors
from errors import BadThing


class Holder:
    """Holds things.

    At length.
    """

    limit = 3

    def __init__(self, n):
        if n < 0:
            raise ValueError(f"negative: {n}")
        self.n = n

    @property
    def size(self):
        if self.n > self.limit:
            raise BadThing(f"too big: {self.n}")
        return self.n

    def build(self):
        class Local(Exception):
            def __init__(self, what):
                super().__init__(f"local {what}")
        raise Local("x")


def check(value):
    if value is None:
        raise TypeError("value is None")
    if not value:
        raise errors.Empty("empty value %r" % (value,))


def other(key):
    raise KeyError(key)
'''


def test_functions_that_moved_keep_their_results_on_their_new_lines() -> None:
    new = BASE.replace("import errors\n", "import errors\n\n\n# three lines more\n")
    whole, part, stubbed = both(BASE, new)
    assert stubbed == 4  # size, build, check, other; never __init__
    assert_same(whole, part)
    assert [s.line for s in whole.sites] == [s.line + 3 for s in visit(BASE).sites]
    local = next(c for c in whole.classes if c.name == "Local")
    assert local.templates[0].defined_at == f"pkg/mod.py:{local.line + 2}"


def test_a_changed_function_is_parsed_and_the_others_are_not() -> None:
    new = BASE.replace('raise TypeError("value is None")', 'raise TypeError("value is missing")')
    whole, part, stubbed = both(BASE, new)
    assert stubbed == 3
    assert_same(whole, part)
    assert "value is missing" in [s.message.template for s in part.sites]


def test_a_changed_init_reaches_the_class_default() -> None:
    new = BASE.replace('f"negative: {n}"', 'f"below zero: {n}"')
    whole, part, _ = both(BASE, new)
    assert_same(whole, part)


SHOWN = '''class Shown(Exception):
    prefix = "usage"

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def format_message(self):
        return f"{self.prefix}: {self.message}"

    def __str__(self):
        return self.format_message()

    def show(self):
        return "shown"


def fail(x):
    raise Shown(f"bad {x}")
'''


def test_a_class_s_str_and_message_methods_are_never_stubbed() -> None:
    """The class pass reads them; a stub would lose what str(exc) shows."""
    new = SHOWN.replace('return "shown"', 'return "shown again"').replace("bad {x}", "bad: {x}")
    whole, part, stubbed = both(SHOWN, new)
    assert stubbed == 0  # show() changed, fail() changed; __init__, __str__, format_message kept
    assert_same(whole, part)
    moved = "# a line above\n" + SHOWN.replace('return "shown"', 'return "shown again"')
    whole, part, stubbed = both(SHOWN, moved)
    assert stubbed == 1  # fail() alone
    assert_same(whole, part)
    (shown,) = part.classes
    assert [slot.name for slot in shown.methods] == ["__str__()", "format_message()"]


@pytest.mark.parametrize("shadow", [
    "from mylib import TypeError\n",  # a builtin the unchanged `check` raises, shadowed
    "TypeError = KeyError\n",
    "class TypeError(Exception):\n    pass\n",
    "import other_errors as errors\n",  # `errors.Empty` now means another module
])
def test_a_name_that_now_resolves_otherwise_sends_its_functions_to_be_read_again(
        shadow: str) -> None:
    new = BASE.replace("class Holder:", f"{shadow}\n\nclass Holder:")
    whole, part, stubbed = both(BASE, new)
    assert 0 < stubbed < 4  # `check` is read again; the others are not
    assert_same(whole, part)
    before = [s.exception_qualname for s in visit(BASE).sites if s.function == "check"]
    after = [s.exception_qualname for s in whole.sites if s.function == "check"]
    assert len(before) == len(after) == 2 and before != after


def test_a_new_import_or_function_that_changes_no_lookup_stubs_everything_known() -> None:
    new = BASE.replace("import errors\n", "import errors\nimport json\n") + (
        "\n\ndef added():\n    raise RuntimeError('new')\n")
    whole, part, stubbed = both(BASE, new)
    assert stubbed == 4
    assert_same(whole, part)


def test_line_breaks_and_docstrings() -> None:
    crlf = BASE.replace("\n", "\r\n")
    whole, part, stubbed = both(crlf, crlf.replace('"""A module."""', '"""A module, edited."""'))
    assert stubbed == 4
    assert_same(whole, part)
    # the file's line break changed: every function's text changed, nothing is stubbed
    whole, part, stubbed = both(BASE, crlf)
    assert stubbed == 0
    assert_same(whole, part)


def test_identical_functions_are_paired_in_order() -> None:
    twice = "class A:\n    if X:\n        def f(self):\n            raise ValueError('same')\n" \
            "    else:\n        def f(self):\n            raise ValueError('same')\n"
    whole, part, stubbed = both(twice, "\n\n" + twice.replace("class A:", "class A:\n    y = 1"))
    assert stubbed == 2
    assert_same(whole, part)


@pytest.mark.parametrize("new", [
    b"# -*- coding: latin-1 -*-\n" + BASE.encode(),  # declared otherwise: read whole
    b"\xef\xbb\xbf" + BASE.encode(),  # a BOM
    BASE.replace("def other(key):", "def other[T](key: T):").encode(),  # PEP 695
    BASE.replace("def other(key):", "def other(key):\n    x = f'{f\"{key}\"}'").encode(),
])
def test_files_a_skeleton_cannot_stand_for_are_read_whole_or_stay_exact(new: bytes) -> None:
    whole, part, _ = both(BASE, new)
    assert_same(whole, part)


# PEP 701 (Python 3.12) f-strings, which this interpreter's `ast` refuses: the statements that
# hold them are read by LibCST alone, and the others keep `ast`'s lines and can be stubbed.
NEWER = 'def newer(d):\n    raise KeyError(f"{d["key"]} is missing")\n\n\n'
NEWER_METHOD = '    def newer(self, d):\n        raise KeyError(f"{d["k"]}")\n\n'


@pytest.mark.parametrize(("old", "new", "stubs"), [
    (BASE + NEWER, "# one line more\n" + BASE + NEWER, 4),  # moved: all stubbed but `newer`
    (BASE + NEWER, BASE.replace('"value is None"', '"value is none"') + NEWER, 3),
    (BASE + NEWER, BASE + NEWER.replace("is missing", "is absent"), 4),  # `newer` changed
    (NEWER + BASE, NEWER + BASE.replace("def other(key):", "def other(key):\n    key += 1"), 3),
    (BASE.replace("    limit = 3\n", "    limit = 3\n" + NEWER_METHOD),  # in a class: the
     "\n" + BASE.replace("    limit = 3\n", "    limit = 3\n" + NEWER_METHOD), 2),  # class whole
], ids=["moved", "another changed", "it changed", "first", "in a class"])
def test_newer_syntax_in_some_statements_still_reads_the_others_as_a_skeleton(
        old: str, new: str, stubs: int) -> None:
    with pytest.raises(SyntaxError):
        ast.parse(new)
    whole, part, stubbed = both(old, new)
    assert whole.failure is None and whole.sites
    assert stubbed == stubs
    assert_same(whole, part)


def test_an_old_function_text_found_where_it_is_no_function_is_not_taken_back() -> None:
    """Inside a docstring, decorated anew, grown at its end, moved to another class."""
    check = BASE[BASE.index("def check(value):"):BASE.index("def other(key):")]
    cases = [
        BASE.replace('"""A module."""', '"""A module.\n\n' + check + '"""'),  # a copy in a docstring
        BASE.replace("def check(value):", "@cache\ndef check(value):"),
        BASE.replace('raise errors.Empty("empty value %r" % (value,))\n',
                     'raise errors.Empty("empty value %r" % (value,))\n    return value\n'),
        BASE.replace("    @property\n    def size(self):", "class Other:\n    @property\n"
                     "    def size(self):"),
    ]
    for new in cases:
        whole, part, stubbed = both(BASE, new)
        assert stubbed < 4
        assert_same(whole, part)


def test_a_skeleton_has_the_lines_and_line_map_it_claims() -> None:
    text = BASE
    lines = skeleton.split_lines(text)
    regions = skeleton.outline(ast.parse(text), lines)
    assert [r.name for r in regions if r.kind == skeleton.FUNCTION] == [
        "size", "build", "check", "other"]
    assert [r.line for r in regions if r.kind == skeleton.STRING] == [1, 7]
    built = skeleton.build(lines, skeleton.place(lines, regions))
    assert built is not None
    stub_lines = built.text.splitlines()
    assert len(stub_lines) == len(built.real_line)
    for number, real in enumerate(built.real_line, start=1):
        line = stub_lines[number - 1]
        if line.strip() not in ('""', "def size(): ...", "def build(): ...", "def check(): ...",
                                "def other(): ..."):
            assert line == text.splitlines()[real - 1]
    ast.parse(built.text)


def _edits(text: str, rng: random.Random) -> str | None:
    """One to three edits that a week upstream makes: lines moved, a raise added, names shadowed."""
    for _ in range(rng.randint(1, 3)):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not functions:
            return None
        lines = text.splitlines(keepends=True)
        function = rng.choice(functions)
        kind = rng.random()
        if kind < 0.1:
            lines.insert(0, rng.choice(["import some_module as _m\n", "TypeError = KeyError\n",
                                        "from elsewhere import ValueError\n"]))
        elif kind < 0.5:
            at = function.body[0].lineno - 1
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            lines.insert(at, f"{indent}if _flag: raise ValueError('edited')\n")
        else:
            first = min([d.lineno for d in function.decorator_list] + [function.lineno])
            lines.insert(first - 1, "\n" * rng.randint(1, 3))
        text = "".join(lines)
    return text


@pytest.mark.slow
def test_stdlib_files_with_random_edits_read_the_same_both_ways() -> None:
    """Real code nobody here wrote: 80 modules of this interpreter's standard library."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(7)
    files = sorted(p for p in stdlib.glob("*.py"))
    compared = stubbed_files = 0
    for path in rng.sample(files, min(80, len(files))):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = _edits(text, rng)
        if new is None:
            continue
        whole, part, stubbed = both(text, new, path=path.name)
        if whole.failure is not None:
            continue
        assert_same(whole, part)
        compared += 1
        stubbed_files += stubbed > 0
    assert compared >= 60 and stubbed_files >= 40, (compared, stubbed_files)


def _with_newer_syntax(text: str, seed: int) -> str | None:
    """`text` with a raise in PEP 701 syntax at the top of one function, chosen by `seed`."""
    functions = [n for n in ast.walk(ast.parse(text))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.body[0].lineno > n.lineno]
    if not functions:
        return None
    function = random.Random(seed).choice(functions)
    lines = text.splitlines(keepends=True)
    at = min([d.lineno for d in getattr(function.body[0], "decorator_list", ())]
             + [function.body[0].lineno]) - 1
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f'{indent}if _flag: raise ValueError(f"{{_flag["key"]}} is wrong")\n')
    return "".join(lines)


@pytest.mark.slow
def test_stdlib_files_with_newer_syntax_read_the_same_every_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A PEP 701 raise put in one function of 20 stdlib modules, before and after an edit."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(11)
    compared = stubbed_files = 0
    for path in rng.sample(sorted(stdlib.glob("*.py")), 60):
        try:
            text = path.read_text(encoding="utf-8")
            edited = _edits(text, rng)
        except (UnicodeDecodeError, SyntaxError):
            continue
        old = _with_newer_syntax(text, compared)
        new = _with_newer_syntax(edited, compared) if edited is not None else None
        if old is None or new is None:
            continue
        whole, part, stubbed = both(old, new, path=path.name)
        if whole.failure is not None:
            continue
        assert_same(whole, part)
        with monkeypatch.context() as patched:
            patched.setattr(_positions, "_tree_by_statement", lambda module, text: None)
            slow = visit(new, path=path.name)  # PositionProvider over the whole file
        assert replace(whole, regions=()) == replace(slow, regions=())
        compared += 1
        stubbed_files += stubbed > 0
        if compared == 20:
            break
    assert compared == 20 and stubbed_files >= 12, (compared, stubbed_files)


def test_update_reads_only_the_changed_functions_and_writes_what_a_full_run_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/errors.py", "class Empty(Exception):\n    pass\n")
    repo.write("pkg/mod.py", BASE)
    first = repo.commit("first")
    repo.write("pkg/mod.py", BASE.replace("import errors\n", "import errors\n\n\n")
               .replace("    if not value:", "    if value == 0:\n        raise ValueError('zero')\n"
                        "    if not value:"))
    repo.commit("second")
    filled: list[str] = []
    fill = skeleton.fill
    monkeypatch.setattr(skeleton, "fill", lambda *a: filled.append("x") or fill(*a))
    run = dict(output_root=tmp_path / "out", cache_dir=tmp_path / "cache", jobs=1,
               evidence=False)
    pipeline.extract(str(repo.path), ref=first, **run)  # type: ignore[arg-type]
    update = pipeline.update(str(repo.path), ref="HEAD", output_root=tmp_path / "out",
                             cache_dir=tmp_path / "cache", jobs=1)
    assert filled == ["x"]  # pkg/mod.py was read as a skeleton
    assert update.parsed == 1
    pipeline.extract(str(repo.path), ref="HEAD", output_root=tmp_path / "full",
                     cache_dir=tmp_path / "other-cache", jobs=1, evidence=False)
    ours = {p.name: p.read_text() for p in (tmp_path / "out").rglob("errors/*.yaml")}
    full = {p.name: p.read_text() for p in (tmp_path / "full").rglob("errors/*.yaml")}
    assert set(ours) == set(full)
    for name in ours:  # records of sites that did not change keep their first commit
        assert _without_commits(ours[name]) == _without_commits(full[name])


def _without_commits(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if not line.lstrip().startswith(("commit:", "url:", "first_seen:"))]


def test_docstrings_that_open_alike_are_found_with_one_digest_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Numpy style: hundreds of docstrings open on a bare quote line; no quadratic search."""
    methods = "".join(f'    def m{i}(self):\n        """\n        Summary {i}.\n        """\n'
                      f"        if self.x:\n            raise ValueError('m{i}')\n\n"
                      for i in range(300))
    old = f'class A:\n    """\n    A class.\n    """\n\n{methods}'
    new = "import os\n\n" + old.replace("raise ValueError('m7')", "raise ValueError('m7!')")
    lines = skeleton.split_lines(new)
    known = skeleton.outline(ast.parse(old), skeleton.split_lines(old))
    counted: list[int] = []
    real_digest = skeleton.digest
    monkeypatch.setattr(skeleton, "digest",
                        lambda *args: counted.append(1) or real_digest(*args))  # type: ignore[func-returns-value]
    placed = skeleton.place(lines, known)
    assert len(placed) == len(known) - 1  # all but the function that changed
    assert len(counted) <= 2 * len(known)
    monkeypatch.undo()
    whole, part, stubbed = both(old, new, path="pkg/numpy_style.py")
    assert stubbed == 299
    assert_same(whole, part)


@pytest.mark.parametrize("seed", range(3))
def test_lines_split_without_the_pattern_are_the_pattern_s(seed: int) -> None:
    """With no carriage return, `split_lines` and `line_texts` split by `str.split`; they
    give what the line patterns give, with every kind of line break and none at the end."""
    import re

    rng = random.Random(seed)
    for _ in range(20_000):
        text = "".join(rng.choice(["a", " ", "\n", "\n", "\r", "\r\n", "\f", "\x0b", "\u2028"])
                       for _ in range(rng.randint(0, 10)))
        lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
        assert skeleton.split_lines(text) == lines
        assert skeleton.line_texts(text) == re.split(r"\r\n|\r|\n", text)
        # made from the line texts a caller already has, and not changing them
        texts = skeleton.line_texts(text)
        assert skeleton.split_lines(text, texts) == lines and texts == re.split(r"\r\n|\r|\n", text)
