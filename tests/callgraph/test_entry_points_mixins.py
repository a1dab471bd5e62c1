"""Calls a class's own hierarchy does not hold: a mixin's `self.m()` that a subclass takes from
another base, and a thread's `start` that runs its `run`. Each shape is a real library's
(pyyaml's loaders, the standard library's `socketserver`, paramiko's transport, redis-py's
pub/sub worker), cut down to the calls the pass reads; each has the shape it must not follow."""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers.entry_points import entries, graph_of
from tests.helpers.gitrepo import GitRepo

# pyyaml 6.0 (lib/yaml/{constructor,composer,loader,__init__}.py): `load` builds the loader
# class it is given and calls `get_single_data`, a constructor method that asks
# `self.get_single_node()`, which only the loader classes have, from `Composer`.
PYYAML = {
    "yaml/__init__.py": """\
        from .loader import SafeLoader, Loader
        def load(stream, Loader):
            loader = Loader(stream)
            try:
                return loader.get_single_data()
            finally:
                loader.dispose()
        def safe_load(stream):
            return load(stream, SafeLoader)
        """,
    "yaml/composer.py": """\
        class ComposerError(Exception):
            pass
        class Composer:
            def get_single_node(self):
                document = None
                if not self.check_event(StreamEndEvent):
                    document = self.compose_document()
                if not self.check_event(StreamEndEvent):
                    raise ComposerError("expected a single document in the stream")
                return document
        """,
    "yaml/constructor.py": """\
        class BaseConstructor:
            def get_single_data(self):
                node = self.get_single_node()
                if node is not None:
                    return self.construct_document(node)
                return None
        class SafeConstructor(BaseConstructor):
            pass
        """,
    "yaml/loader.py": """\
        from .composer import Composer
        from .constructor import BaseConstructor, SafeConstructor
        class SafeLoader(Composer, SafeConstructor):
            def __init__(self, stream):
                Composer.__init__(self)
        class Loader(Composer, BaseConstructor):
            def __init__(self, stream):
                Composer.__init__(self)
        """,
}


def test_a_mixins_self_call_reaches_what_a_subclass_takes_from_another_base(
        make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), PYYAML)
    names = [name for name, *_ in entries(graph, "yaml.composer.Composer.get_single_node")]
    assert "yaml.load" in names and "yaml.safe_load" in names
    chain = next(chain for name, chain, *_ in entries(graph, "yaml.composer.Composer.get_single_node")
                 if name == "yaml.load")
    assert chain == ("yaml.load", "yaml.constructor.BaseConstructor.get_single_data",
                     "yaml.composer.Composer.get_single_node")


# Python 3.11's socketserver.py: `ThreadingMixIn.process_request_thread` calls
# `self.finish_request`, which `BaseServer` defines; `ThreadingTCPServer` mixes them.
SOCKETSERVER = {
    "srv/__init__.py": """\
        class BaseServer:
            def finish_request(self, request, client_address):
                raise ValueError("no handler for %r" % (client_address,))
        class TCPServer(BaseServer):
            pass
        class ThreadingMixIn:
            def process_request_thread(self, request, client_address):
                self.finish_request(request, client_address)
                self.shutdown_request(request)
        class ThreadingTCPServer(ThreadingMixIn, TCPServer):
            pass
        class Lonely:
            def go(self):
                return self.finish_request(1, 2)
        """,
}


def test_a_mixed_in_method_reaches_the_servers_method(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("repo"), SOCKETSERVER)
    names = [name for name, *_ in entries(graph, "srv.BaseServer.finish_request")]
    assert "srv.ThreadingMixIn.process_request_thread" in names
    # a class that mixes nothing in, and whose family has no `finish_request`: no edge
    assert "srv.Lonely.go" not in names


def test_a_mixin_whose_family_defines_the_method_keeps_its_own(
        make_repo: Callable[[str], GitRepo]) -> None:
    """Where the mixin's own bases define the method, the subclasses' other bases are not
    asked: overrides are found as before, and a sibling base's method of the same name is not
    taken for the mixin's call."""
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        class Other:
            def step(self):
                raise ValueError('the other base')
        class Mixin:
            def run(self):
                return self.step()
            def step(self):
                return 1
        class Both(Mixin, Other):
            pass
        """})
    assert [name for name, *_ in entries(graph, "pkg.Other.step")] == ["pkg.Other.step"]


# paramiko 3.4 (paramiko/transport.py): `Transport(threading.Thread)`; `start_client` calls
# `self.start()`, whose thread runs `Transport.run`, which reads the banner.
PARAMIKO = {
    "paramiko/__init__.py": "from paramiko.transport import Transport\n",
    "paramiko/transport.py": """\
        import threading
        class SSHException(Exception):
            pass
        class Transport(threading.Thread):
            def start_client(self, event=None, timeout=None):
                self.active = True
                self.start()
            def run(self):
                self._check_banner()
            def _check_banner(self):
                raise SSHException("Error reading SSH protocol banner")
        """,
}

# redis-py 5.0 (redis/client.py): `PubSub.run_in_thread` makes a `PubSubWorkerThread` and
# starts it; the worker's `run` gets messages, which raise on a closed connection.
REDIS = {
    "redis/__init__.py": "from redis.client import PubSub\n",
    "redis/client.py": """\
        import threading
        class PubSub:
            def run_in_thread(self, sleep_time=0.0):
                thread = PubSubWorkerThread(self, sleep_time)
                thread.start()
                return thread
            def get_message(self):
                raise RuntimeError("pubsub connection not set")
        class PubSubWorkerThread(threading.Thread):
            def __init__(self, pubsub, sleep_time):
                super().__init__()
                self.pubsub = pubsub
            def run(self):
                pubsub = self.pubsub
                pubsub.get_message()
        """,
}


def test_a_threads_start_runs_its_run(make_repo: Callable[[str], GitRepo]) -> None:
    graph = graph_of(make_repo("paramiko"), PARAMIKO)
    found = {name: (chain, stops) for name, chain, stops, _ in
             entries(graph, "paramiko.transport.Transport._check_banner")}
    assert found["paramiko.Transport.start_client"] == (
        ("paramiko.transport.Transport.start_client", "paramiko.transport.Transport.run",
         "paramiko.transport.Transport._check_banner"),
        "threading.Thread.start runs it in a new thread")
    graph = graph_of(make_repo("redis"), REDIS)
    names = [name for name, *_ in entries(graph, "redis.client.PubSub.get_message")]
    assert "redis.PubSub.run_in_thread" in names


def test_start_on_a_class_that_is_no_thread_reaches_no_run(make_repo: Callable[[str], GitRepo]) -> None:
    """A `start` of a class that is no thread, or one the class defines itself, is no thread's
    start: its `run` is reached only where something calls it."""
    graph = graph_of(make_repo("repo"), {"pkg/__init__.py": """\
        import threading
        class Job:
            def go(self):
                self.start()
            def run(self):
                raise ValueError('a job run')
        class Worker(threading.Thread):
            def start(self):
                self.ready = True
            def go(self):
                self.start()
            def run(self):
                raise ValueError('a worker run')
        """})
    assert entries(graph, "pkg.Job.run") == [("pkg.Job.run", ("pkg.Job.run",), None, None)]
    assert [name for name, *_ in entries(graph, "pkg.Worker.run")] == ["pkg.Worker.run"]


def test_bases_a_star_import_brings(make_repo: Callable[[str], GitRepo]) -> None:
    """pyyaml 6.0's `loader.py` names its bases as `from .composer import *` and the others
    bring them (`class SafeLoader(Composer, SafeConstructor)`); the standard library's
    `tkinter.simpledialog` so names `Toplevel`. A base the module neither binds nor takes from
    a star import is named as the module's, and is no class of the library."""
    starred = PYYAML["yaml/loader.py"].replace("import Composer", "import *")
    starred = starred.replace("import BaseConstructor, SafeConstructor", "import *")
    files = {**PYYAML, "yaml/loader.py": starred}
    assert files["yaml/loader.py"].count("import *") == 2
    graph = graph_of(make_repo("repo"), files)
    assert graph.mro("yaml.loader.SafeLoader")[1:] == [
        "yaml.composer.Composer", "yaml.constructor.SafeConstructor", "yaml.constructor.BaseConstructor"]
    names = [name for name, *_ in entries(graph, "yaml.composer.Composer.get_single_node")]
    assert "yaml.load" in names and "yaml.safe_load" in names
    graph = graph_of(make_repo("tk"), {
        "tk/__init__.py": "class Toplevel:\n    pass\n",
        "tk/dialog.py": "from tk import *\nclass Dialog(Toplevel, Widget):\n    pass\n"})
    assert graph.mro("tk.dialog.Dialog") == ["tk.dialog.Dialog", "tk.Toplevel", "tk.dialog.Widget"]
