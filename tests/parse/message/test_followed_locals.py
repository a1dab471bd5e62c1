"""Messages bound where the visitor's statement walk does not look: an `if` test's walrus, a
module constant bound to `"...".format`, a function defined inside the raise's function."""

from __future__ import annotations

from tests.helpers.visits import only, sites


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


GENERATOR = '''
def keystr(path):
    return "".join(str(k) for k in path)

def _prefix_error(key_path, prefix_tree, full_tree):
    if prefix_tree is None:
        return
    if type(prefix_tree) != type(full_tree):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\\n"
            f"    {name}{keystr(key_path)}")
        return
    if len(prefix_tree) != len(full_tree):
        ty = type(prefix_tree)
        yield lambda name: ValueError(f"different lengths of {ty.__name__} in {name}")
        return
    for k, t1, t2 in zip(prefix_tree, prefix_tree, full_tree):
        yield from _prefix_error((*key_path, k), t1, t2)

def prefix_errors(prefix_tree, full_tree):
    return list(_prefix_error((), prefix_tree, full_tree))
'''


def test_a_local_factory_taken_from_a_generator_of_lambdas_is_each_lambda_called() -> None:
    found = sites(GENERATOR + '''
def tree_map(f, tree, *rest):
    try:
        return [r2 := r for r in rest]
    except Exception as e:
        err = next(_prefix_error((), tree, r2), None)
        raise (err("tree_map tree") if err is not None else e) from None

def broadcast_prefix(prefix_tree, full_tree):
    try:
        tree_map(None, prefix_tree, full_tree)
    except ValueError:
        e, *_ = prefix_errors(prefix_tree, full_tree)
        raise e("broadcast_prefix prefix_tree") from None
''')
    assert [(s.exception_qualname, s.message.template) for s in found["tree_map"]] == [
        ("builtins.ValueError", "pytree structure error: different types at key path\n"
                                "    tree_map tree{keystr(key_path)}"),
        ("builtins.ValueError", "different lengths of {ty.__name__} in tree_map tree")]
    broadcast = found["broadcast_prefix"]
    assert [s.message.template for s in broadcast] == [
        "pytree structure error: different types at key path\n"
        "    broadcast_prefix prefix_tree{keystr(key_path)}",
        "different lengths of {ty.__name__} in broadcast_prefix prefix_tree"]
    assert broadcast[0].message.via == "pkg.mod.prefix_errors, pkg.mod._prefix_error"


def test_a_generator_that_yields_anything_but_lambdas_is_not_followed() -> None:
    site = only('''
def _errors(x):
    yield lambda name: ValueError(f"bad {name}")
    yield make_error(x)

def f(x):
    e, *_ = list(_errors(x))
    raise e("thing")
''')
    assert (site.message.kind, site.message.template) == ("dynamic", '{e("thing")}')


def test_a_default_filled_in_an_except_handler_is_read_before_its_raise() -> None:
    # alembic's `ScriptDirectory._catch_revision_errors`: a parameter defaulting to None is given
    # its text in the handler that raises it; the caller's text is the other definition
    found = sites('''
def catch(resolution=None):
    try:
        yield
    except KeyError as re:
        if resolution is None:
            resolution = "Can't locate revision identified by '%s'" % (re.argument)
        raise ValueError(resolution) from re
''')["catch"]
    assert sorted((s.message.kind, s.message.template) for s in found) == [
        ("dynamic", "{resolution}"),
        ("variable", "Can't locate revision identified by '{(re.argument)}'")]


def test_what_a_try_body_or_a_handlers_name_may_have_bound_is_not_guessed_at() -> None:
    found = sites('''
def body_binds(x):
    msg = "before"
    try:
        msg = "in body %s" % x
        x()
    except KeyError:
        raise ValueError(msg)


def handler_binds(x):
    msg = "before"
    try:
        x()
    except KeyError as msg:
        raise ValueError(msg)


def finally_after(x):
    msg = "before"
    try:
        x()
    except KeyError:
        msg = "handled"
    finally:
        raise ValueError(msg)
''')
    assert {name: [(s.message.kind, s.message.template) for s in group]
            for name, group in found.items()} == {
        "body_binds": [("dynamic", "{msg}")], "handler_binds": [("dynamic", "{msg}")],
        "finally_after": [("dynamic", "{msg}")]}


def test_a_raised_name_is_each_exception_made_on_a_path_to_it() -> None:
    # paramiko's `AuthHandler.wait_for_response`: the transport's exception, or one made here;
    # aiohttp's `HttpPayloadParser.feed_data`: one of several made under `if`s, raised once
    found = sites('''
def wait_for_response(transport):
    while True:
        if not transport.is_active():
            e = transport.get_exception()
            if (e is None) or issubclass(e.__class__, EOFError):
                e = AuthenticationException("Authentication failed.")
            raise e


def feed(line, limit):
    exc = None
    if len(line) > limit:
        exc = LineTooLong("Got more than %d bytes when reading" % limit)
    elif not line:
        exc = BadStatusLine("empty line")
    if exc is not None:
        raise exc


def rethrow():
    try:
        pass
    except OSError as e:
        raise e
''')
    assert {name: sorted((s.exception, s.message.template) for s in group)
            for name, group in found.items()} == {
        "wait_for_response": [("AuthenticationException", "Authentication failed.")],
        "feed": [("BadStatusLine", "empty line"),
                 ("LineTooLong", "Got more than {limit} bytes when reading")]}


# A local read inside an f-string's placeholder, its one text known where it is read, is that
# text: the shapes of setuptools' `pyprojecttoml.validate`, scipy's sparse matmul checks and
# numpy's `_parse_size` (the corpus run: 126 records of 19 libraries, and 6 of jax, gained
# their text so, each read and judged better).
def test_a_local_in_an_fstring_placeholder_is_its_one_text() -> None:
    setuptools = only('''
def validate(config, filepath):
    try:
        return check(config)
    except JsonSchemaValueException as ex:
        summary = f"configuration error: {ex.summary}"
        if ex.name.strip("`") != "project":
            _logger.debug(summary)
        error = f"invalid pyproject.toml config: {ex.name}."
        raise ValueError(f"{error}\\n{summary}") from None
''', "validate")
    assert setuptools.message.template == (
        "invalid pyproject.toml config: {ex.name}.\nconfiguration error: {ex.summary}")
    scipy = only('''
def _matmul_vector(self, other, N):
    err_prefix = "matmul: dimension mismatch with signature"
    if other.shape[0] != N:
        raise ValueError(f"{err_prefix} (n,k={N}),(k={other.shape[0]},)->(n,)")
''', "_matmul_vector")
    assert scipy.message.template == (
        "matmul: dimension mismatch with signature (n,k={N}),(k={other.shape[0]},)->(n,)")
    numpy = only('''
def _parse_size(size_str):
    env_var = "NPY_AVAILABLE_MEM"
    try:
        return int(size_str)
    except ValueError as exc:
        raise ValueError(f"Invalid environment variable {env_var}: {exc}")
''', "_parse_size")
    assert numpy.message.template == "Invalid environment variable NPY_AVAILABLE_MEM: {exc}"


def test_a_local_not_made_as_text_or_with_several_texts_stays_a_placeholder() -> None:
    # scipy's csr index check: `i += M` is a number's sum, no concatenation
    index = only('''
def _get_intXslice(self, i, M):
    i = int(i)
    if i < 0:
        i += M
    if i < 0 or i >= M:
        raise IndexError(f"index ({i}) out of range")
''', "_get_intXslice")
    assert index.message.template == "index ({i}) out of range"
    # a tuple's `+` (scipy's `_polyint` builds its shape text as an f-string, which is read)
    shape = only('''
def _reshape(a, N, b):
    ok_shape = a + (N,) + b
    raise ValueError(f"Data must be of shape {ok_shape}")
''', "_reshape")
    assert shape.message.template == "Data must be of shape {ok_shape}"
    # two texts reach the raise: the placeholder stands for either
    either = only('''
def f(x):
    if x:
        what = "a list"
    else:
        what = "a tuple"
    raise TypeError(f"expected {what}, got {x}")
''')
    assert either.message.template == "expected {what}, got {x}"
