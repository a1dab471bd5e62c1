"""Messages bound where the visitor's statement walk does not look: an `if` test's walrus, a
module constant bound to `"...".format`, a function defined inside the raise's function."""

from __future__ import annotations

from tests.parse.test_calls import only, sites


def test_a_walrus_in_the_if_test_binds_the_message_its_body_raises() -> None:
    site = only('''
def _check(name, dtype):
    if isinstance(dtype, int):
        return f"Cannot interpret '{dtype}' as a data type in {name}"

def f(dtype):
    if (m := _check("zeros", dtype)): raise TypeError(m)
''')
    assert site.message.template == "Cannot interpret '{dtype}' as a data type in zeros"
    assert site.message.kind == "variable"


def test_an_elif_or_else_branch_reads_the_walrus_of_the_tests_before_it() -> None:
    found = sites('''
def f(x):
    if x:
        pass
    elif not (k := f"bad value {x}"):
        raise ValueError(k)
    else:
        raise ValueError(k + " seen")
''')["f"]
    assert [s.message.template for s in found] == ["bad value {x}", "bad value {x} seen"]


def test_a_walrus_not_surely_run_or_one_walked_back_over_is_not_guessed_at() -> None:
    behind_or = only('''
def f(x):
    if x or (m := "text here"):
        raise ValueError(m)
''')
    assert (behind_or.message.kind, behind_or.message.template) == ("dynamic", "{m}")
    rebound = only('''
def f(x):
    m = "old text"
    if (m := f"new text {x}"):
        pass
    raise ValueError(m)
''')
    assert (rebound.message.kind, rebound.message.template) == ("dynamic", "{m}")


def test_a_module_constant_bound_to_a_format_method_is_its_text_formatted() -> None:
    found = sites('''
_too_many = """The function {} was called with {} arguments,
but must be called with one.""".format

class C:
    def __call__(self, *extra):
        raise TypeError(_too_many(self.name, len(extra) + 1))

def g(_too_many):
    raise TypeError(_too_many(1, 2))
''')
    (call,) = found["__call__"]
    assert call.message.template == ("The function {self.name} was called with "
                                     "{len(extra) + 1} arguments,\nbut must be called with one.")
    assert (call.message.via, call.message.defined_at) == ("pkg.mod._too_many", "pkg/mod.py:2")
    (shadowed,) = found["g"]  # a parameter of that name is no constant
    assert shadowed.message.kind == "dynamic"


def test_a_join_whose_separator_is_chosen_reads_one_template_per_separator() -> None:
    found = sites('''
import os

def f(prim, param):
    msg = f"invalid {prim} param, required:"
    param_str = str(param)
    sep = os.linesep if "\\n" in param_str else " "
    msg = sep.join([msg, param_str])
    raise TypeError(msg)
''')["f"]
    assert [s.message.template for s in found] == [
        "invalid {prim} param, required:{os.linesep}{param_str}",
        "invalid {prim} param, required: {param_str}"]
