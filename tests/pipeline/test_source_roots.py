"""A module is named as its users import it: below the folder its repository keeps code under.

`src/` at the top or one folder down, `lib/` at the top: the layouts of real repositories below.
A record's `exception_qualname` and its entry points carry these names, so a repository that
keeps its package under `lib/` must not have `lib.` in front of every name. Run as users type it:
the installed `crawler`, in a child process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from crawler.parse.module_names import module_name
from tests.helpers.entry_points import crawler
from tests.helpers.gitrepo import GitRepo


@pytest.mark.parametrize(("path", "module"), [
    # accepted: a source root, not part of the name
    ("src/click/core.py", "click.core"),  # pallets/click, and every src layout
    ("lib/sqlalchemy/orm/session.py", "sqlalchemy.orm.session"),  # sqlalchemy/sqlalchemy
    ("lib/yaml/scanner.py", "yaml.scanner"),  # yaml/pyyaml
    ("lib/yaml/__init__.py", "yaml"),
    ("hypothesis-python/src/hypothesis/core.py", "hypothesis.core"),  # HypothesisWorks/hypothesis
    ("backend/src/hatchling/builders/wheel.py", "hatchling.builders.wheel"),  # pypa/hatch
    # rejected: a package that happens to carry the name, or a namespace package
    ("jax/lib/xla_bridge.py", "jax.lib.xla_bridge"),  # jax-ml/jax: `jax.lib` is a package
    ("numpy/lib/_function_base_impl.py", "numpy.lib._function_base_impl"),  # numpy/numpy
    ("tests/lib/venv.py", "tests.lib.venv"),  # pypa/pip's test helpers
    ("src/poetry/console/application.py", "poetry.console.application"),  # python-poetry/poetry
    ("jax/_src/core.py", "jax._src.core"),
    ("src.py", "src"), ("lib.py", "lib"), ("setup.py", "setup"),
])
def test_a_module_is_named_below_its_source_root(path: str, module: str) -> None:
    assert module_name(path) == module


ERRORS = """\
class YAMLError(Exception):
    pass


class ScannerError(YAMLError):
    pass
"""

SCANNER = """\
from .error import ScannerError


class Scanner:
    def scan_plain(self, text):
        if not text:
            raise ScannerError(f"while scanning a plain scalar, found {text!r}")
        return text
"""

INIT = """\
from .scanner import Scanner


def safe_load(text):
    return Scanner().scan_plain(text)
"""


def test_a_lib_layout_names_its_exceptions_and_entry_points_without_lib(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib layout")
    for path, text in {"lib/yaml/__init__.py": INIT, "lib/yaml/error.py": ERRORS,
                       "lib/yaml/scanner.py": SCANNER, "setup.py": "PACKAGE_DIR = 'lib'\n"}.items():
        repo.write(path, text)
    repo.commit("first")
    summary = crawler("extract", str(repo.path), "-o", str(tmp_path / "out"),
                      "--cache-dir", str(tmp_path / "cache"))
    [path] = sorted((Path(str(summary["folder"])) / "errors").glob("*.yaml"))
    extracted = yaml.safe_load(path.read_text(encoding="utf-8"))["extracted"]

    assert extracted["path"] == "lib/yaml/scanner.py"  # the file as the repository has it
    assert extracted["exception_qualname"] == "yaml.error.ScannerError"
    assert [point["name"] for point in extracted["entry_points"]] == [  # both exported by `yaml`
        "yaml.Scanner.scan_plain", "yaml.safe_load"]
