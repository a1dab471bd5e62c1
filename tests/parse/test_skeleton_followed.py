"""Files whose messages are followed into other functions stay skeleton reads, equal to whole ones.

A function followed into (helper, factory, method) is stubbed only where no text the skeleton
keeps names it (and it is undecorated); a stubbed caller keeps its stub only while each function
and constant it followed into is as it was, at the same distance, a stubbed one digested from the
lines it stands for (`crawler.parse.followed`). Every test holds the skeleton read equal to a
whole read.
"""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from crawler.parse import _source, visitor
from tests.helpers.visits import assert_same, both, known_of, visit

CASE = (Path(__file__).parent.parent / "cases" / "flow_helpers.py").read_text()

HELPED = '''MESSAGE = "a constant"


def _msg(x):
    return f"old text {x}"


def _error(x):
    return TypeError(f"bad {x}")


def caller(v):
    raise ValueError(_msg(v))


def maker(v):
    raise _error(v)


def constant():
    raise KeyError(MESSAGE)


class Holder:
    def fail(self, detail):
        return SyntaxError(f"cannot: {detail}")

    def run(self, token):
        raise self.fail(f"token {token}")


def other():
    raise KeyError("other")
'''


CONSTANT_CHANGED = HELPED.replace('"a constant"', '"another constant"')
MAKER_MOVED = HELPED.replace("def maker(v):", "\n\ndef maker(v):")
# the helper's `def` on the same line: only its decorator tells it changed
DECORATED = HELPED.replace("\n\n\ndef _msg(x):", "\n\n@functools.cache\ndef _msg(x):")


def _counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times LibCST parses a module or a skeleton, counted as it happens."""
    parses: list[int] = []
    parse = cst.parse_module
    monkeypatch.setattr(visitor.cst, "parse_module",
                        lambda *a, **k: parses.append(1) or parse(*a, **k))  # type: ignore[func-returns-value]
    return parses


@pytest.mark.parametrize(("new", "stubs"), [
    # eight may be stubbed: caller, maker, constant, Holder.run, other, and the helpers _msg,
    # _error and Holder.fail while no text the skeleton keeps names them
    (HELPED.replace("old text", "new text"), 6),  # the helper changed: its caller read again
    # the caller changed: read, and so is the helper its text names
    (HELPED.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))"), 6),
    (HELPED + "\n\ndef added(v):\n    raise ValueError(_msg(v))\n", 7),  # a new caller of a helper
    (CONSTANT_CHANGED, 7),
    (HELPED.replace("cannot: {detail}", "cannot do: {detail}"), 6),  # the method followed
    (HELPED.replace("return TypeError", "return ValueError"), 6),  # the factory changed
    # maker and constant moved away from their factory and constant: read again, and so is the
    # factory maker's text names
    (MAKER_MOVED, 5),
    # all moved alike: every caller stays stubbed, and every helper, digested from its lines
    ("# a line above\n" + HELPED, 8),
    # a decorator is part of the helper's text, though its lines start at `def`
    (DECORATED, 6),
], ids=["helper", "caller", "new caller", "constant", "method", "factory", "moved apart",
        "moved alike", "decorated helper"])
def test_a_file_with_followed_helpers_is_read_as_a_skeleton(
        new: str, stubs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    parses = _counted_parses(monkeypatch)
    whole, part, stubbed = both(HELPED, new)
    assert_same(whole, part)
    assert stubbed == stubs
    # the old version, the new one whole, its skeleton once; twice where a constant a stub
    # followed changed or moved apart from it, or a helper's decorator (only the read tells),
    # never a whole read
    rereads = new in (CONSTANT_CHANGED, MAKER_MOVED, DECORATED)
    assert len(parses) == 3 + rereads


def test_a_followed_function_is_digested_from_its_lines_not_written_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """LibCST's codegen of a whole function costs about as much as its parse: the digest of a
    function followed into is taken from its lines in the file (a decorator alone written out)."""
    written: list[str] = []
    node_code = _source.node_code  # every codegen of a read, LibCST's tokens without positions
    monkeypatch.setattr(_source, "node_code", lambda module, node, indent="": written.append(
        type(node).__name__) or node_code(module, node, indent))  # type: ignore[func-returns-value]
    new = HELPED.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))")
    whole, part, stubbed = both(HELPED, new)
    assert_same(whole, part)
    assert stubbed == 6
    assert written and "FunctionDef" not in written


def test_a_helper_named_only_by_stubbed_text_is_stubbed_and_one_named_by_read_text_is_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`_msg` is followed into by `caller` alone: stubbed while `caller` is, read once `caller`
    changes; the stubbed caller's dependency on it is answered from the lines the stub stands
    for, so neither is read again."""
    for new, helper_stubbed in [("# a line above\n" + HELPED, True),
                                (HELPED.replace("raise ValueError(_msg", "raise TypeError(_msg"),
                                 False)]:
        parses = _counted_parses(monkeypatch)
        before = visit(HELPED)
        part = visit(new, known_of(before))
        names = {region.name for region in part.stubbed}
        assert ("_msg" in names) is helper_stubbed
        assert ("caller" in names) is helper_stubbed
        assert len(parses) == 2  # the old version and the new one's skeleton: no stub put back
        whole, filled, _ = both(HELPED, new)
        assert_same(whole, filled)
        monkeypatch.undo()


STATIC = HELPED + '''

class Shapes:
    @staticmethod
    def _shape(x):
        return f"bad shape {x}"

    def check(self, x):
        raise ValueError(self._shape(x))
'''


def test_a_decorated_helper_followed_into_is_never_stubbed() -> None:
    """A stub has no decorator, so it would start at the decorator's line, not the `def` line a
    followed function's line is counted from: its caller's stub would be refused, and the
    skeleton parsed again."""
    new = STATIC.replace('raise KeyError("other")', 'raise KeyError("other one")')
    before = visit(STATIC)
    part = visit(new, known_of(before))
    names = {region.name for region in part.stubbed}
    assert "_shape" not in names and {"check", "caller", "_msg"} <= names
    whole, filled, _ = both(STATIC, new)
    assert_same(whole, filled)
    (site,) = [s for s in whole.sites if s.function == "check"]
    assert site.message.template == "bad shape {x}"


def test_a_renamed_helper_sends_its_caller_to_be_read_again() -> None:
    new = HELPED.replace("_msg", "_message")
    whole, part, stubbed = both(HELPED, new)
    assert_same(whole, part)
    assert stubbed == 6  # caller (its text changed) and the renamed helper (new text) read
    (site,) = [s for s in part.sites if s.function == "caller"]
    assert site.message.template == "old text {v}" and site.message.via == "pkg.mod._message"


def test_a_stub_a_fresh_function_follows_into_is_put_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`other` was followed into by nothing; a new caller now reads it, so it must be real."""
    old = HELPED.replace('raise KeyError("other")', 'return "other text"')
    new = old + "\n\ndef added():\n    raise ValueError(other())\n"
    parses = _counted_parses(monkeypatch)
    whole, part, stubbed = both(old, new)
    assert_same(whole, part)
    assert stubbed == 7
    assert len(parses) == 4  # the skeleton read twice: `other` put back after the first
    (site,) = [s for s in part.sites if s.function == "added"]
    assert site.message.template == "other text"


def test_a_global_statement_in_an_unchanged_function_is_seen_by_the_skeleton() -> None:
    old = HELPED + "\n\ndef rebinds():\n    global _msg\n    _msg = None\n"
    new = old.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))")
    whole, part, stubbed = both(old, new)
    assert_same(whole, part)
    assert stubbed == 7  # all but the changed caller and `rebinds`, which holds the `global`


@pytest.mark.parametrize("statement", ["global _msg", "if True: global _msg",
                                       "pass; global _msg", "pass;\\\n    global _msg"])
def test_every_way_of_writing_a_global_statement_keeps_the_function_whole(statement: str) -> None:
    old = HELPED + f"\n\ndef rebinds():\n    {statement}\n    _msg = None\n"
    new = old.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))")
    part = visit(new, known_of(visit(old)))
    assert "rebinds" not in {region.name for region in part.stubbed}
    whole, filled, _ = both(old, new)
    assert_same(whole, filled)


def test_the_word_global_in_a_docstring_or_a_comment_does_not_keep_a_function_whole() -> None:
    old = HELPED + ('\n\ndef mentions(x):\n    """Sets the global state."""\n'
                    "    x.update(1)  # global: a comment\n    return x\n")
    new = old.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))")
    part = visit(new, known_of(visit(old)))
    assert "mentions" in {region.name for region in part.stubbed}
    whole, filled, _ = both(old, new)
    assert_same(whole, filled)


def test_an_exposed_function_carried_from_a_stub_follows_its_helper_s_change() -> None:
    """`make` is exposed to other modules through `_fmt`: a stub of it cannot carry old text."""
    old = 'def _fmt(x):\n    return f"old {x}"\n\n\ndef make(x):\n    return _fmt(x)\n\n\n' \
          'def other():\n    raise KeyError("k")\n'
    whole, part, _ = both(old, old.replace("old {x}", "new {x}"))
    assert_same(whole, part)
    (make,) = [f for f in part.exposed if f.qualname == "pkg.mod.make"]
    assert make.texts[0].runs[0].text == "new "


# PEP 701 (Python 3.12) f-strings, which this interpreter's `ast` refuses: the statements that
# hold them are read by LibCST alone, the others by `ast`, one by one.
NEWER_FIRST = 'D = {"k": 1}\nEARLY = f"{D["k"]}"\n\n\n' + HELPED
NEWER_BESIDE = HELPED.replace('MESSAGE = "a constant"',
                              'EARLY = f"{MESSAGE2["k"]}"; MESSAGE = (\n    "a constant")')


@pytest.mark.parametrize(("old", "line"), [(NEWER_FIRST, 5), (HELPED, 1), (NEWER_BESIDE, 1)],
                         ids=["below newer syntax", "whole tree", "beside newer syntax"])
def test_a_followed_constant_has_its_own_line_however_ast_read_the_file(
        old: str, line: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of some statements counts the statements it lacks, so a skeleton need not ask
    whether `ast` reads the whole file: it is read once, never whole."""
    new = old.replace("raise KeyError(MESSAGE)", "raise LookupError(MESSAGE)")
    parses = _counted_parses(monkeypatch)
    whole, part, stubbed = both(old, new)
    assert_same(whole, part)
    (site,) = [s for s in whole.sites if s.function == "constant"]
    assert site.message.defined_at == f"pkg/mod.py:{line}"
    assert stubbed == 7 and len(parses) == 3


def test_a_lone_carriage_return_in_a_file_ast_refuses_sends_a_follower_to_a_whole_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `ast`'s tree of the whole file, a lone CR leaves a whole read no tree at all (no
    constant's line): the skeleton, which has one, is not taken."""
    # a lone CR inside a function the skeleton stubs: the skeleton has none
    old = HELPED.replace('    raise KeyError("other")', '    pass\r    raise KeyError("other")')
    new = 'D = {"k": 1}\nEARLY = f"{D["k"]}"\n\n\n' + old
    parses = _counted_parses(monkeypatch)
    whole, part, _ = both(old, new)
    assert_same(whole, part)
    (site,) = [s for s in whole.sites if s.function == "constant"]
    assert site.message.defined_at is None
    assert len(parses) == 4  # the old version, the new one whole, its skeleton, then whole


def _function_names(text: str) -> list[str]:
    return sorted({line.split("(")[0][4:] for line in text.splitlines() if line.startswith("def ")})


def _followed_edit(text: str, rng: random.Random) -> str:
    """One edit a week makes to code that follows helpers."""
    names = _function_names(text)
    kind = rng.randrange(6)
    name = rng.choice(names)
    if kind == 0:  # a helper's or caller's text edited
        return text.replace(f"def {name}(", f"def {name}(\n    _edited=None,", 1) \
            if rng.random() < 0.3 else text.replace('f"', 'f"edited ', 1 + rng.randrange(3))
    if kind == 1:  # a new caller of an unchanged helper
        helper = rng.choice(["_msg", "_inner", "_shape_error", "_built", "_two_ways", "_outer"])
        call = {"_shape_error": "_shape_error('x', s)", "_built": "_built('k', s)",
                "_two_ways": "_two_ways(True, s)", "_outer": "_outer(s, 2)"}.get(helper,
                                                                                f"{helper}(s)")
        raised = call if helper in ("_shape_error", "_built", "_two_ways") else f"ValueError({call})"
        return text + f"\n\ndef added_{rng.randrange(99)}(s='v'):\n    raise {raised}\n"
    if kind == 2:  # a helper renamed, its callers with it
        old = rng.choice(["_msg", "_inner", "_outer", "_built"])
        return text.replace(f"{old}(", f"{old}_renamed(")
    if kind == 3:  # lines inserted above a function
        return text.replace(f"\ndef {name}(", f"\n\n# moved\ndef {name}(", 1)
    if kind == 4:  # a constant edited
        return text.replace('"a module constant"', '"a constant, edited"')
    return text.replace(f"def {name}(", f"def {name}_gone(", 1)  # a function renamed


@pytest.mark.parametrize("seed", range(12))
def test_followed_helpers_under_random_edits_read_the_same_both_ways(seed: int) -> None:
    rng = random.Random(seed)
    old = CASE
    for _ in range(3):  # three weeks, each against the one before
        new = old
        for _ in range(rng.randint(1, 3)):
            new = _followed_edit(new, rng)
        whole, part, stubbed = both(old, new, path="pkg/flow_helpers.py")
        assert_same(whole, part)
        assert stubbed > 0  # 6 to 14 of its functions, by seed and week
        old = new


@pytest.mark.parametrize("seed", range(3))
def test_helper_names_are_found_as_the_word_pattern_finds_them(seed: int) -> None:
    """`_names_in` searches by `str.find`; it finds what `\\b(?:names)\\b` finds."""
    import re

    from crawler.parse.followed import _names_in

    rng = random.Random(seed)
    letters = ["a", "b", "_", "1", " ", ".", "(", "é", "٣", "\n", "ab", "a_b"]
    for _ in range(20_000):
        text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 12)))
        names = {"".join(rng.choice("ab_é") for _ in range(rng.randint(1, 3)))
                 for _ in range(rng.randint(1, 3))}
        names = {name for name in names if name.isidentifier()}
        if not names:
            continue
        pattern = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
        assert _names_in(text, names) == set(re.findall(rf"\b(?:{pattern})\b", text))


UNFOLLOWED = HELPED + '''

@functools.cache
def shown(x):
    return f"shown {x}"


async def later(x):
    return f"later {x}"
'''


def test_a_stub_of_a_function_calls_never_follows_is_not_followed_and_stays(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """New functions call a decorated and an `async` function. A whole read does not follow
    into either (`calls._followable`); their undecorated stubs are not followed either, so they
    stay stubbed and the skeleton is parsed once (jax's `lax.py` was parsed twice a week for
    four `@export` functions)."""
    new = UNFOLLOWED + '''

def added(v):
    raise ValueError(shown(v))


def awaited(v):
    raise ValueError(later(v))
'''
    parses = _counted_parses(monkeypatch)
    whole, part, _ = both(UNFOLLOWED, new)
    assert_same(whole, part)
    assert len(parses) == 3  # the old version, the new one whole, its skeleton once
    stubbed = visit(new, known_of(visit(UNFOLLOWED))).stubbed
    assert {"shown", "later"} <= {region.name for region in stubbed}
    (site,) = [s for s in part.sites if s.function == "added"]
    assert site.message.kind == "dynamic"  # `shown` is not followed: whole or stubbed


@pytest.mark.parametrize(("head", "unfollowed"), [
    ("@export", True), ("@functools.cache", True), ("@partial(jit, static_argnums=0)", True),
    ("@ property  # a comment", True), ("async def f(x):", True),
    ("@staticmethod", False), ("@classmethod  # plain", False), ("@(staticmethod)", False),
    ("@partial(jit,", False), ('@tag("#1")', False), ("def f(x):", False),
])
def test_a_function_is_unfollowable_by_its_first_line_only_where_the_line_tells(
        head: str, unfollowed: bool) -> None:
    """False where the line does not settle it (a plain decorator, one that goes on): the stub
    is then followed, and put back, as before."""
    from crawler.parse.skeleton import FUNCTION, Region, unfollowable

    assert unfollowable(Region(FUNCTION, (), "f", "0", 1, 3, f"{head}\ndef f(x):")) is unfollowed
