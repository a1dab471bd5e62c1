"""Messages read through the module's helpers, factories and constants, and where that stops."""

from __future__ import annotations

import pytest

from tests.helpers.visits import assert_same, both, only, sites


def test_a_factory_gets_literal_arguments_and_names_the_others_by_the_callers_source() -> None:
    site = only('''
def _shape_error(name, shape, *, hint=""):
    return TypeError(f"{name} got shape {shape!r}{hint} ({len(shape)} dims)")

def f(s):
    raise _shape_error("reshape", s.shape)
''')
    assert site.message.template == "reshape got shape {s.shape} ({len(s.shape)} dims)"
    assert site.exception_qualname == "builtins.TypeError"
    assert (site.exception, site.factory) == ("_shape_error", True)  # built by a call, no class
    assert site.message.via == "pkg.mod._shape_error"
    assert site.message.defined_at == "pkg/mod.py:2"


def test_an_argument_of_a_helper_of_a_helper_is_named_in_the_raises_terms() -> None:
    site = only('''
def _inner(what, n):
    return f"{what}: {n}"

def _outer(x, y):
    return _inner(y, len(x))

def f(a, b):
    raise ValueError(_outer(a, b))
''')
    assert site.message.template == "{b}: {len(a)}"
    assert site.message.via == "pkg.mod._outer, pkg.mod._inner"


@pytest.mark.parametrize("shadow", [
    "def f(_msg):\n    raise ValueError(_msg(1))\n",  # a parameter
    "def f():\n    _msg = str\n    raise ValueError(_msg(1))\n",  # a local
    "def f():\n    for _msg in (str,):\n        raise ValueError(_msg(1))\n",  # a loop target
    "def _msg(x):\n    return 'twice'\n\ndef f():\n    raise ValueError(_msg(1))\n",  # redefined
    "def f():\n    raise ValueError(_msg(1))\n\ndef g():\n    global _msg\n",  # rebound elsewhere
])
def test_a_name_the_module_may_not_mean_is_not_followed(shadow: str) -> None:
    site = only("def _msg(x):\n    return f'helper {x}'\n\n" + shadow)
    assert site.message.kind == "dynamic"
    assert site.message.via is None


def test_calls_are_followed_four_deep_and_no_further() -> None:
    chain = "".join(f"def _h{i}(x):\n    return _h{i + 1}(x)\n\n" for i in range(1, 5))
    four = only(chain.replace("return _h4(x)", "return f'deep {x}'") + "def f(v):\n"
                "    raise ValueError(_h1(v))\n")
    assert four.message.template == "deep {v}"
    five = only(chain + "def _h5(x):\n    return f'deep {x}'\n\ndef f(v):\n"
                "    raise ValueError(_h1(v))\n")
    assert five.message.kind == "dynamic"


def test_a_module_constant_as_is_with_format_and_percent() -> None:
    found = sites('''
PLAIN = "plain text"
FORMAT = "bad {} here"
PERCENT = "bad %s there"

def f():
    raise ValueError(PLAIN)

def g(x):
    raise ValueError(FORMAT.format(x))

def h(x):
    raise ValueError(PERCENT % x)
''')
    assert [found[n][0].message.template for n in "fgh"] == [
        "plain text", "bad {x} here", "bad {x} there"]
    assert [found[n][0].message.defined_at for n in "fgh"] == [
        "pkg/mod.py:2", "pkg/mod.py:3", "pkg/mod.py:4"]


def test_a_constant_bound_in_a_branch_or_twice_is_not_followed() -> None:
    for module in ("import sys\nif sys:\n    C = 'a'\nelse:\n    C = 'b'\n",
                   "C = 'a'\nC = 'b'\n", "C = 'a'\nfor C in 'b':\n    pass\n"):
        assert only(module + "def f():\n    raise ValueError(C)\n").message.kind == "dynamic"


def test_a_factory_that_is_not_read_is_dynamic_and_says_why() -> None:
    site = only('''
def make(kind):
    return LOOKUP[kind]()

def f():
    raise make("a")
''')
    assert site.message.kind == "dynamic"
    assert site.message.template == '{make("a")}'
    assert site.factory
    assert site.message.reason is not None and "pkg.mod.make" in site.message.reason


def test_a_class_passed_as_a_parameter_keeps_its_argument_and_says_so() -> None:
    site = only("def f(exc_type, msg='m'):\n    raise exc_type(f'bad {msg}')\n")
    assert (site.message.template, site.factory) == ("bad {msg}", False)
    assert site.message.reason == "`exc_type` is an exception class passed as a parameter"


def test_a_lower_case_class_of_the_module_is_no_factory() -> None:
    site = only("class error(Exception):\n    pass\n\ndef f():\n    raise error('x')\n")
    assert (site.factory, site.message.template, site.message.reason) == (False, "x", None)


def test_a_method_called_on_self_is_followed() -> None:
    site = only('''
class Parser:
    def fail(self, detail):
        return SyntaxError("cannot parse: " + detail)

    def f(self):
        raise self.fail("eof")
''')
    assert site.message.template == "cannot parse: eof"
    assert site.message.via == "pkg.mod.Parser.fail"


HELPED = '''
def _msg(x):
    return f"old text {x}"


def caller(v):
    raise ValueError(_msg(v))


def other():
    raise KeyError("other")
'''


@pytest.mark.parametrize("new", [
    HELPED.replace("old text", "new text"),  # the helper changed, its caller did not
    HELPED.replace("raise ValueError(_msg(v))", "raise TypeError(_msg(v))"),  # the reverse
])
def test_a_file_that_follows_a_helper_is_read_as_a_skeleton_on_update(new: str) -> None:
    whole, part, stubbed = both(HELPED, new)
    assert stubbed == 1  # `other`; the caller is read again when its helper changed
    assert_same(whole, part)


def test_an_attribute_that_is_no_method_here_keeps_its_argument() -> None:
    site = only("class C:\n    def f(self, source):\n        raise source.error('bad input')\n")
    assert (site.factory, site.message.template) == (True, "bad input")
    assert site.message.reason is not None and "source.error" in site.message.reason


def test_a_function_read_in_vain_is_not_named_among_those_followed() -> None:
    site = only('''
def find(x):
    return [x]

def leaked(name, found):
    return Exception(f"Leaked {name}: {found}")

def f(t):
    found = find(t)
    raise leaked("trace", found)
''')
    assert site.message.template == "Leaked trace: {found}"
    assert site.message.via == "pkg.mod.leaked"
