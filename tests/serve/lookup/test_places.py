"""A pasted traceback's frames as evidence (`crawler.serve.lookup.places`): they decide between
records that print the same words, find a record whose message is only a variable, and what
nothing in the paste decides is told as a group; the installed `crawler lookup --json` says it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from crawler.catalogue.merge import merge
from crawler.parse.visitor import find_raise_sites
from crawler.records import Pin
from crawler.serve.lookup.paste import Frame
from crawler.serve.lookup.places import FUNCTION, LINE, NOWHERE, STACK, evidence_of, in_file
from crawler.serve.lookup.sources import LookupIndex
from tests.helpers.gitrepo import GitRepo
from tests.helpers.processes import child_env

CRAWLER = shutil.which("crawler") or "crawler"
PIN = Pin("lib", "local", "o", "n", "main", "a" * 40)
# two functions raise the same words; one raises a variable
LOADERS = b'''def load_json(path):
    raise ValueError("the file is empty or not a mapping")


def load_toml(path):
    raise ValueError("the file is empty or not a mapping")


def column(table, key):
    if key not in table:
        raise KeyError(key)
    return table[key]
'''


def index_of(path: str, source: bytes, bases: dict[str, tuple[str, ...]] | None = None
             ) -> LookupIndex:
    """The records of one module at `path` (its dotted name from the path), made ready for
    lookups."""
    module = path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__")
    sites = find_raise_sites(path, source, module.replace("/", "."), None).sites
    return LookupIndex(merge(PIN, [], sites).records, bases=bases)


@pytest.fixture(scope="module")
def index() -> LookupIndex:
    return index_of("src/tablekit/loaders.py", LOADERS)


def traceback(path: str, line: int, function: str, last: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "C:\\Users\\me\\app.py", line 9, in <module>\n    main()\n'
            f'  File "{path}", line {line}, in {function}\n    raise ...\n{last}\n')


def test_a_frame_path_is_the_record_file_by_its_end_whatever_the_prefix() -> None:
    assert in_file("src/tablekit/loaders.py", "/home/u/.venv/lib/python3.12/site-packages/"
                   "tablekit/loaders.py")
    assert in_file("src/tablekit/loaders.py", "C:\\Python311\\Lib\\site-packages\\TableKit\\"
                   "Loaders.py")  # Windows: no case
    assert in_file("src/tablekit/loaders.py", "tablekit/loaders.py")  # Sentry's short paths
    assert not in_file("src/tablekit/loaders.py", "/home/u/project/loaders.py")  # the name only
    assert not in_file("src/tablekit/loaders.py", "/home/u/otherkit/loaders.py")
    assert in_file("six.py", "/usr/lib/python3/dist-packages/six.py")  # a top-level module


def test_what_the_frames_say_of_a_record() -> None:
    deep = (Frame("app.py", 3, "<module>"), Frame("/x/tablekit/api.py", 20, "read"),
            Frame("/x/tablekit/loaders.py", 2, "load_json"))
    assert evidence_of("src/tablekit/loaders.py", "load_json", 2, deep) == LINE
    assert evidence_of("src/tablekit/loaders.py", "load_json", 7, deep) == FUNCTION
    assert evidence_of("src/tablekit/api.py", "Reader.read", 21, deep, deep[-1]) == STACK
    assert evidence_of("src/tablekit/loaders.py", "load_toml", 6, deep) == NOWHERE


def test_the_traceback_decides_between_sites_that_print_the_same_words(index: LookupIndex
                                                                       ) -> None:
    message = "ValueError: the file is empty or not a mapping"
    for line, function in ((2, "load_json"), (6, "load_toml")):
        answer = index.answer(traceback("/venv/site-packages/tablekit/loaders.py", line,
                                        function, message))
        assert answer.found and answer.group == 1
        first = answer.matches[0]
        assert (first.wording.qualname, first.where, first.rank, first.tie) == (
            function, LINE, 1, False)
    # a release whose lines differ: the function still decides
    answer = index.answer(traceback("tablekit/loaders.py", 40, "load_toml", message))
    assert answer.matches[0].wording.qualname == "load_toml"
    assert answer.matches[0].where == FUNCTION


def test_what_nothing_decides_is_told_as_a_group(index: LookupIndex) -> None:
    answer = index.answer("ValueError: the file is empty or not a mapping")
    assert answer.found and answer.group == 2
    assert [(m.rank, m.tie) for m in answer.matches] == [(1, True), (1, True)]
    assert {m.wording.qualname for m in answer.matches} == {"load_json", "load_toml"}


def test_a_message_that_is_only_a_variable_is_found_by_its_line(index: LookupIndex) -> None:
    pasted = traceback("D:\\env\\lib\\site-packages\\tablekit\\loaders.py", 11, "column",
                       "KeyError: 'price'")
    answer = index.answer(pasted)
    assert answer.found
    first = answer.matches[0]
    assert (first.wording.qualname, first.kind, first.where) == ("column", "place", LINE)
    # another release's line in the same function, which has no other such raise: still it
    moved = index.answer(traceback("tablekit/loaders.py", 30, "column", "KeyError: 'p'"))
    assert moved.found and (moved.matches[0].kind, moved.matches[0].where) == ("place", FUNCTION)
    # without the frame, in another function, or of another class: nothing to go by
    assert not index.answer("KeyError: 'price'").found
    assert not index.answer(traceback("tablekit/loaders.py", 11, "columns", "KeyError: 'p'")).found
    assert not index.answer(traceback("tablekit/loaders.py", 11, "column",
                                      "ValueError: 'p'")).found


def test_a_class_held_in_a_variable_is_found_by_its_place() -> None:
    source = b'''import contextlib


@contextlib.contextmanager
def mapped_errors():
    try:
        yield
    except OSError as exc:
        mapped_exc = TIMEOUTS.get(type(exc), TransportError)
        raise mapped_exc(str(exc)) from exc
'''
    index = index_of("src/netkit/transport.py", source)
    pasted = traceback("/venv/lib/netkit/transport.py", 55, "mapped_errors",
                       "netkit.ReadTimeout: The read operation timed out")
    answer = index.answer(pasted)
    assert answer.found
    assert (answer.matches[0].kind, answer.matches[0].kinship) == ("place", "variable")


def test_a_traceback_cut_before_its_message_is_read_by_its_frames_and_raise_line() -> None:
    source = b'''def setupmethod(f):
    def wrapper_func(self, *args):
        if self.started:
            raise AssertionError("A setup function was called after the first request was "
                                 "handled. This usually indicates a bug in the application.")
        return f(self, *args)
    return wrapper_func
'''
    index = index_of("src/webkit/app.py", source)
    pasted = ("Traceback (most recent call last):\n"
              '  File "/usr/lib/python2.7/site-packages/cors/extension.py", line 103, in init\n'
              "    app.after_request(after)\n"
              '  File "/usr/lib/python2.7/site-packages/webkit/app.py", line 55, in wrapper_func\n'
              "    raise AssertionError('A setup function was called after")
    answer = index.answer(pasted)
    assert answer.found
    first = answer.matches[0]
    assert (first.wording.qualname, first.where) == ("setupmethod.<locals>.wrapper_func", FUNCTION)


def test_the_installed_lookup_says_the_group_and_the_place(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "tablekit")
    repo.write("src/tablekit/loaders.py", LOADERS.decode())
    repo.commit("loaders")
    done = subprocess.run([CRAWLER, "extract", "tablekit", "-o", "out", "-q"], cwd=tmp_path,
                          env=child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    def lookup(paste: str, *options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CRAWLER, "lookup", paste, "out", *options], cwd=tmp_path,
                              env=child_env(), capture_output=True, text=True, timeout=120)

    tied = lookup("ValueError: the file is empty or not a mapping")
    assert tied.returncode == 0
    assert tied.stdout.startswith("printed by 2 raise sites, which nothing in the paste tells "
                                  "apart"), tied.stdout
    said = json.loads(lookup("ValueError: the file is empty or not a mapping", "--json").stdout)
    assert said["group"] == 2 and said["says"].startswith("printed by 2 raise sites")
    placed = json.loads(lookup(traceback("/venv/tablekit/loaders.py", 11, "column",
                                         "KeyError: 'price'"), "--json").stdout)
    assert placed["exit"] == 0 and placed["group"] == 1
    first = placed["matches"][0]
    assert (first["qualname"], first["match"], first["where"]) == ("column", "place", "line")
    text = lookup(traceback("/venv/tablekit/loaders.py", 6, "load_toml",
                            "ValueError: the file is empty or not a mapping")).stdout
    assert "the traceback names its line" in text.splitlines()[0]


def test_a_class_of_the_library_finds_its_only_raise_whose_message_is_a_variable() -> None:
    source = b'''class NotRegistered(KeyError):
    """The task is not registered."""


class Registry(dict):
    def __missing__(self, key):
        raise NotRegistered(key)


class Other(dict):
    def __missing__(self, key):
        raise KeyError(key)
'''
    index = index_of("src/taskkit/registry.py", source,
                     {"NotRegistered": ("KeyError",), "Registry": ("dict",)})
    answer = index.answer("celery 3.0 - NotRegistered: 'app.tasks.send_mail'")
    assert answer.found
    first = answer.matches[0]
    assert (first.wording.qualname, first.kind) == ("Registry.__missing__", "class")
    # Python's own classes are raised everywhere: no answer by the class alone
    assert not index.answer("KeyError: 'app.tasks.send_mail'").found


def test_an_exception_repr_in_a_log_line_is_read() -> None:
    index = index_of("src/taskkit/amqp.py", b'''def as_task(args):
    if not isinstance(args, (list, tuple)):
        raise TypeError("task args must be a list or tuple")
''')
    logged = ("[2012-08-08 12:59:08,057: ERROR/MainProcess] Task mail.send[2ef4] raised "
              "exception: TypeError('task args must be a list or tuple',)")
    answer = index.answer(logged)
    assert answer.found and answer.matches[0].wording.qualname == "as_task"


def test_a_class_raised_with_words_elsewhere_is_no_answer_by_itself() -> None:
    source = b'''class GraphError(Exception):
    pass


def tree(msg):
    raise GraphError(msg)


def check(graph):
    raise GraphError("Graph must be connected.")
'''
    index = index_of("src/graphkit/errors.py", source, {"GraphError": ("Exception",)})
    answer = index.answer("GraphError: the edge a-b is not in the graph.")
    # another raise of the class has words, and none fits: the class points nowhere
    assert not answer.found
    assert "tree" not in [m.wording.qualname for m in answer.matches]
    # two raises of a class, each of a variable: both listed as one group, neither picked
    index = index_of("src/graphkit/reg.py", b'''class NotRegistered(KeyError):
    pass


def unregister(name):
    raise NotRegistered(name)


def missing(key):
    raise NotRegistered(key)
''', {"NotRegistered": ("KeyError",)})
    answer = index.answer("NotRegistered: 'app.tasks.send'")
    assert not answer.found
    assert [(m.wording.qualname, m.rank, m.kind) for m in answer.matches] == [
        ("unregister", 1, "class"), ("missing", 1, "class")]


def test_a_message_quoted_in_a_title_is_read_without_its_quotes() -> None:
    index = index_of("src/graphkit/frozen.py", b'''def frozen(*args):
    raise GraphError("Frozen graph can't be modified")
''')
    answer = index.answer('python2 compatibility: "GraphError: Frozen graph can\'t be modified"')
    assert answer.found and answer.matches[0].wording.qualname == "frozen"


GETATTR = b'''def __getattr__(name):
    raise AttributeError(f"module {__name__} has no attribute {name}")


def to_sparse(graph):
    import scipy.sparse as sp
    return sp.coo_array(graph)


def check_sizes(sizes, d, s, k):
    raise ValueError(f"conflicting sizes for dimension {d}: length {sizes[d]} on the data "
                     f"but length {s} on coordinate {k}")
'''


def test_the_last_frame_says_where_it_was_raised() -> None:
    index = index_of("src/graphkit/__init__.py", GETATTR)
    # scipy's module raised it inside graphkit's to_sparse: not graphkit's __getattr__
    pasted = ("Traceback (most recent call last):\n"
              '  File "/home/u/app.py", line 3, in <module>\n    m = gk.to_sparse(g)\n'
              '  File "/venv/lib/graphkit/__init__.py", line 7, in to_sparse\n'
              "    return sp.coo_array(graph)\n"
              "AttributeError: module scipy.sparse has no attribute coo_array\n")
    answer = index.answer(pasted)
    assert not answer.found and answer.matches[0].wording.qualname == "__getattr__"
    # a whole traceback with no catalogued frame: Python raised it
    python = ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
              "AttributeError: module graphkit has no attribute layout\n")
    assert not index.answer(python).found
    # an older release's function name, whose source line shows the raise's words: it
    renamed = ("Traceback (most recent call last):\n"
               '  File "/venv/lib/graphkit/__init__.py", line 80, in _infer_sizes\n'
               "    'coordinate %r' % (d, sizes[d], s, k))\n"
               "ValueError: conflicting sizes for dimension 'x': length 3 on the data but "
               "length 2 on coordinate 'x'\n")
    answer = index.answer(renamed)
    assert answer.found and answer.matches[0].wording.qualname == "check_sizes"


# click 7.0 and 7.1 (`_unicodefun.py`): one abort, worded with the 7.x docs' URL in one function
# and the unversioned URL in its renamed successor
ABORTS = b'''def _verify_python3_env():
    raise RuntimeError("Python 3 was configured to use ASCII. Consult "
                       "https://docs.example.org/en/7.x/python3/ for mitigation steps.")


def _verify_python_env():
    raise RuntimeError("Python 3 was configured to use ASCII. Consult "
                       "https://docs.example.org/python3/ for mitigation steps.")
'''


def test_the_words_decide_before_the_place_where_they_differ() -> None:
    """A template whose own regex fits the paste comes before one that fits it only with its
    URL read alike, even at the function the frame names: the characters tell them apart (the
    frame is an older release's name for the function that printed these words)."""
    index = index_of("src/clickish/_unicodefun.py", ABORTS)
    message = ("RuntimeError: Python 3 was configured to use ASCII. Consult "
               "https://docs.example.org/python3/ for mitigation steps.")
    # the frame's source line is the raise's last line, as Python prints it
    pasted = ("Traceback (most recent call last):\n"
              '  File "/venv/site-packages/clickish/_unicodefun.py", line 3, in '
              "_verify_python3_env\n"
              '    "https://docs.example.org/python3/ for mitigation steps.")\n' + message)
    answer = index.answer(pasted)
    assert answer.found
    first, second = answer.matches[:2]
    assert (first.wording.qualname, first.loose, first.where) == ("_verify_python_env", False,
                                                                  NOWHERE)
    assert (second.wording.qualname, second.loose, second.where) == ("_verify_python3_env",
                                                                     True, FUNCTION)
    # the same words at both: the frame decides
    same = message.replace("/python3/", "/en/7.x/python3/")
    answer = index.answer(traceback("/venv/site-packages/clickish/_unicodefun.py", 2,
                                    "_verify_python3_env", same))
    assert answer.matches[0].wording.qualname == "_verify_python3_env"


# httpx's shape (httpx/_transports/default.py): the transport's errors re-raised as the
# library's own classes through a variable; no raise names ReadTimeout or ConnectError, and
# RemoteProtocolError is named by one raise with other words
TRANSPORT = b'''import contextlib


class TransportError(Exception):
    pass


class ReadTimeout(TransportError):
    pass


class RemoteProtocolError(TransportError):
    pass


@contextlib.contextmanager
def map_errors():
    try:
        yield
    except OSError as exc:
        mapped_exc = MAPPING.get(type(exc), TransportError)
        message = str(exc)
        raise mapped_exc(message) from exc


def handle_request(request):
    with map_errors():
        return send(request)


def redirect_url(location):
    raise RemoteProtocolError(f"Invalid URL in location header: {location}.")
'''
TRANSPORT_BASES = {"TransportError": ("Exception",), "ReadTimeout": ("TransportError",),
                   "RemoteProtocolError": ("TransportError",)}


def test_a_class_no_raise_names_is_raised_through_a_variable() -> None:
    index = index_of("src/netkit/transport.py", TRANSPORT, TRANSPORT_BASES)
    # the title of an issue (httpx's `httpx.ReadTimeout: The read operation timed out`): the
    # words are another library's, the class only the variable raise can raise
    answer = index.answer("netkit.ReadTimeout: The read operation timed out")
    assert answer.verdict == "closest"  # listed, not trusted: nothing says which raise
    first = answer.matches[0]
    assert (first.wording.qualname, first.kind, first.kinship) == ("map_errors", "class",
                                                                  "variable")
    # a class one raise names with other words: the variable raise is listed before it
    answer = index.answer("netkit.RemoteProtocolError: Server disconnected without sending "
                          "a response.")
    assert answer.matches[0].wording.qualname == "map_errors"
    # the words of the raise that names it: that raise, and the variable one is not listed
    answer = index.answer("RemoteProtocolError: Invalid URL in location header: //x.")
    assert answer.found and [m.wording.qualname for m in answer.matches] == ["redirect_url"]
    # Python's own class is raised everywhere: the variable raise is not its answer
    assert "map_errors" not in [m.wording.qualname
                                for m in index.answer("TimeoutError: timed out").matches]
    # the traceback names the raise's function: the answer
    pasted = traceback("/venv/lib/netkit/transport.py", 23, "map_errors",
                       "netkit.ReadTimeout: The read operation timed out")
    assert index.answer(pasted).found


def test_a_factory_of_a_class_raises_that_class() -> None:
    # pydantic's shape: `raise PydanticUndefinedAnnotation.from_name_error(e)`
    source = b'''class Undefined(NameError):
    @classmethod
    def from_name_error(cls, error):
        return cls(error.name)


class Other(Exception):
    pass


def field_schema(name):
    try:
        return lookup(name)
    except NameError as e:
        raise Undefined.from_name_error(e) from e
'''
    bases = {"Undefined": ("NameError",), "Other": ("Exception",)}
    index = index_of("src/schemakit/fields.py", source, bases)
    listed = index.answer("schemakit.Undefined: name 'Model' is not defined").matches
    assert [m.wording.qualname for m in listed][:1] == ["field_schema"]
    # the factory makes an Undefined: no answer for another class
    other = index.answer("schemakit.Other: name 'Model' is not defined").matches
    assert "field_schema" not in [m.wording.qualname for m in other]


def test_a_frame_of_the_repository_is_never_not_from_here() -> None:
    # httpx's cut traceback: the deepest frame of the library (handle_request) raises
    # nothing; the frame above it, the context manager's, re-raises what passes through it
    index = index_of("src/netkit/transport.py", TRANSPORT, TRANSPORT_BASES)
    pasted = ("Traceback (most recent call last):\n"
              '  File "D:\\Python310\\lib\\site-packages\\netkit\\transport.py", line 20, in '
              "map_errors\n    yield\n"
              '  File "D:\\Python310\\lib\\site-packages\\netkit\\transport.py", line 27, in '
              "handle_request\n    return send(request)\n"
              '  File "D:\\Python310\\lib\\site-packages\\wirekit\\http11.py", line 186')
    answer = index.answer(pasted)
    assert answer.verdict == "closest"
    assert [(m.wording.qualname, m.where) for m in answer.matches] == [("map_errors", STACK)]


def test_the_raises_of_the_function_a_frame_names_are_tried_on_a_cut_message() -> None:
    # networkx's shape: `NetworkXNoPath: No pat`, the page's copy cut inside the message; the
    # last frame names multi_source_dijkstra, whose raise's run of words the paste does not
    # hold whole, and two other functions print words like them
    source = b'''class NoPath(Exception):
    pass


def bidirectional(G, source, target):
    raise NoPath(f"No path between {source} and {target}.")


def shortest(G, source, target):
    raise NoPath(f"No path between {source} and {target}.")


def multi_source(G, sources, target):
    if not sources:
        raise ValueError("sources must not be empty")
    raise NoPath(f"No path to {target}.")
'''
    # and more raises share its two words than lookup tries for closeness
    source += "".join(f'\n\ndef pat_{n}(x):\n    raise ValueError(f"no pat {n} here: {{x}}")\n'
                      for n in range(60)).encode()
    index = index_of("src/graphkit/weighted.py", source, {"NoPath": ("Exception",)})
    pasted = ("Traceback (most recent call last):\n"
              '  File "C:\\hostedtoolcache\\Python\\2.7.18\\lib\\site-packages\\graphkit\\'
              'weighted.py", line 738, in multi_source\n'
              "NoPath: No pat")
    answer = index.answer(pasted)
    assert not answer.found  # five letters say little
    first = answer.matches[0]
    assert (first.wording.qualname, first.wording.exception, first.where) == (
        "multi_source", "NoPath", FUNCTION)


def test_a_raise_found_by_its_place_alone_is_not_kept_for_shared_words() -> None:
    # jax's shape: the last frame of the library is matmul, which called into filtered
    # internals; the words are another function's raise, matmul's raises only share some
    source = b'''def matmul(a, b):
    if a.ndim < 1:
        raise ValueError(f"matmul input operand {a} must have ndim at least 1")
    return dot_general(a, b)


def dot_general_rule(lhs, rhs):
    raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                    f"got {lhs} and {rhs}.")
'''
    # and more raises share its words than lookup tries for closeness: matmul's raise is
    # tried for its place alone
    source += "".join(f'\n\ndef rule_{n}(x):\n    raise TypeError(f"op {n} requires the same '
                      f'shape, got {{x}}")\n' for n in range(60)).encode()
    index = index_of("jax/_src/numpy/tensor_contractions.py", source)
    pasted = ("Traceback (most recent call last):\n"
              '  File "/home/user/project/t.py", line 3, in <module>\n    f(x)\n'
              '  File "/home/user/.venv/lib/python3.11/site-packages/jax/_src/numpy/'
              'tensor_contractions.py", line 269, in matmul\n    out = lax.dot_general(\n'
              "TypeError: dot_general requires contracting dimensions to have the same shape, "
              "got (3,) and (4,).\n")
    first = index.answer(pasted).matches[0]
    assert first.wording.qualname == "dot_general_rule"


STORE = b'''class Store:
    def _execute(self, subcommand, data_input):
        raise StoreError(f"{self.program} not installed or not available in PATH")
'''


AUTH = b'''def _resolve_authconfig_credstore(config, registry):
    raise AuthError(f"Credentials store error: {registry}")
'''


def test_a_last_frame_in_another_packages_python_file_is_where_it_was_raised() -> None:
    # docker-py's credentials store, whose words docker-pycreds (another package, its
    # `dockerpycreds/store.py`) prints too: the last frame is where Python raised it
    sites = [*find_raise_sites("docker/credentials/store.py", STORE,
                               "docker.credentials.store", None).sites,
             *find_raise_sites("docker/auth.py", AUTH, "docker.auth", None).sites]
    index = LookupIndex(merge(PIN, [], sites).records)
    pasted = ("Traceback (most recent call last):\n"
              '  File "site-packages\\docker\\auth.py", line 126, in _resolve_authconfig_credstore\n'
              '  File "site-packages\\dockerpycreds\\store.py", line 70, in _execute\n'
              "dockerpycreds.errors.StoreError: docker-credential-desktop not installed or not "
              "available in PATH")
    answer = index.answer(pasted)
    assert not answer.found and answer.matches[0].wording.qualname == "Store._execute"
    # the record's own file, moved within its package since the user's release: the answer
    moved = pasted.replace("dockerpycreds\\store.py", "docker\\store.py")
    assert index.answer(moved).found
    # frames left out where the raise was (`[...]`), or a template's frame put last (jinja's
    # `<unknown>`): the last frame is not where Python raised it, and takes nothing away
    for last in ('[...]', '  File "<unknown>", line 8, in template'):
        cut = pasted.replace('  File "site-packages\\dockerpycreds\\store.py", line 70, in _execute',
                             last)
        assert index.answer(cut).found, last


# pymongo split `pymongo/srv_resolver.py` into `synchronous/` and `asynchronous/` copies: both
# raise `ConfigurationError(str(exc))` in `_SrvResolver._resolve_uri`
RESOLVER = b'''class ConfigurationError(Exception):
    pass


class _SrvResolver:
    def _resolve_uri(self, encapsulate_errors):
        try:
            return self.query()
        except Exception as exc:
            raise ConfigurationError(str(exc)) from None
'''
# from github.com/MrMKN/PROFESSOR-BOT/issues/78, a heroku log's column cut off
SITE = "/app/.heroku/python/lib/python3.10/site-packages/pymongo/srv_resolver.py"
HEROKU = (f'  File "{SITE}", line 101, in _get_srv_response_and_hosts\n'
          "    results = self._resolve_uri(encapsulate_errors)\n"
          f'  File "{SITE}", line 97, in _resolve_uri\n'
          "    raise ConfigurationError(str(exc))\n"
          "pymongo.errors.ConfigurationError: The DNS query name does not exist: "
          "_mongodb._tcp.example.net.\n")


def test_a_function_in_a_file_moved_within_its_package_finds_its_raises_as_a_group() -> None:
    records = []
    for copy in ("synchronous", "asynchronous"):
        path = f"pymongo/{copy}/srv_resolver.py"
        sites = find_raise_sites(path, RESOLVER, f"pymongo.{copy}.srv_resolver", None).sites
        records.extend(merge(PIN, [], sites).records)
    index = LookupIndex(records, bases={"ConfigurationError": ("Exception",)})
    answer = index.answer(HEROKU)
    assert answer.found and answer.group == 2  # nothing in the paste tells the copies apart
    assert {(m.wording.path, m.kind, m.where, m.tie) for m in answer.matches[:2]} == {
        ("pymongo/synchronous/srv_resolver.py", "place", FUNCTION, True),
        ("pymongo/asynchronous/srv_resolver.py", "place", FUNCTION, True)}
    # another package's file of the same name is no moved file of this one
    elsewhere = HEROKU.replace("site-packages/pymongo/", "site-packages/motor/")
    assert not index.answer(elsewhere).found


def test_a_raise_whose_function_called_what_raised_is_no_place_answer() -> None:
    # werkzeug's `_get_current_object` raises `RuntimeError(unbound_message)` in three
    # branches; in the traceback of github.com/pallets/werkzeug/issues/2132 it called flask's
    # `_lookup_req_object`, the last frame, which raised flask's own words
    source = b'''class LocalProxy:
    def __init__(self, local, unbound_message=None):
        def _get_current_object():
            if local is None:
                raise RuntimeError(unbound_message)
            try:
                return local()
            except LookupError:
                raise RuntimeError(unbound_message) from None

        self._get_current_object = _get_current_object
'''
    index = index_of("src/werkzeug/local.py", source)
    frames = ('  File "/usr/local/lib/python3.7/site-packages/werkzeug/local.py", line 544, '
              'in _get_current_object\n    return self.__local()\n'
              '  File "/usr/local/lib/python3.7/site-packages/flask/globals.py", line 37, in '
              '_lookup_req_object\n    raise RuntimeError(_request_ctx_err_msg)\n')
    pasted = f"Traceback (most recent call last):\n{frames}RuntimeError: Working outside of " \
             "request context.\n"
    assert not index.answer(pasted).found
    # the same frames ending in werkzeug's function: the group of its raises
    own = pasted.replace(frames.split("\n", 2)[2], "")
    answer = index.answer(own)
    assert answer.found and answer.group == 2
