"""Message templates end to end: a real git repository, extract, records and manifest on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import CliRunner

from crawler.cli.commands import main
from crawler.pipeline import extract
from crawler.store import manifest_file, record_files, schemas
from tests.helpers.gitrepo import GitRepo

PACKAGE = Path(__file__).parents[1] / "packages" / "clspkg"


def test_class_defaults_and_exception_classes_on_disk(make_repo: Callable[[str], GitRepo],
                                                      tmp_path: Path) -> None:
    repo = make_repo("repo")
    for path in sorted(PACKAGE.glob("*.py")):
        repo.write(f"clspkg/{path.name}", path.read_bytes())
    repo.commit("package")
    result = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    records = [record_files.load_record(p) for p in record_files.iter_record_paths(result.folder)]
    by_function = {}
    for record in records:
        by_function.setdefault(record.site.function, []).append(record.site)
    (bad,) = by_function["bad"]
    assert bad.message.kind == "class_default"
    assert bad.message.template == "thing {name} is over the limit of {limit}"
    assert bad.message.defined_at == "clspkg/errors.py:7"
    assert bad.exception_qualname == "clspkg.errors.BadThing"
    assert {s.message.kind for s in by_function["templated_bare"]} == {"class_default"}
    assert "builtin_no_message" not in by_function

    manifest = yaml.safe_load((result.folder / manifest_file.MANIFEST).read_text(encoding="utf-8"))
    assert schemas.schema_problems(manifest, "manifest") == []
    names = [entry["qualname"] for entry in manifest["exception_classes"]]
    assert "clspkg.errors.Sub" in names and "clspkg.errors.NotAnError" not in names
    # two message-less raises became records; ValueError() stays counted without a message
    assert manifest["counts"]["without_message"] == 1
    assert manifest["counts"]["records"] == len(records)

    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "out")])
    assert validated.exit_code == 0, validated.output
    found = CliRunner().invoke(main, ["lookup", "thing 'x' is over the limit of 3",
                                      str(tmp_path / "out")])
    assert found.exit_code == 0 and "clspkg/api.py" in found.output


def test_a_raise_with_alternatives_is_one_record_per_template(make_repo: Callable[[str], GitRepo],
                                                              tmp_path: Path) -> None:
    repo = make_repo("repo")
    repo.write("m.py", "def f(flag):\n    if flag:\n        msg = 'one'\n    else:\n"
                       "        msg = 'two'\n    raise ValueError(msg)\n")
    repo.commit("alternatives")
    first = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    again = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    templates = sorted(r.site.message.template for r in first.merged.records)
    assert templates == ["one", "two"]
    assert again.files_written == 0  # deterministic: the same commit rewrites nothing


GPU_ERRORS = '''\
class GpuLibNotLinkedError(Exception):
    error_msg = (
        "JAX was not built with GPU support."
        " Please use a GPU-enabled JAX."
    )

    def __init__(self):
        super().__init__(self.error_msg)
'''
GPU_RNN = '''\
from .errors import GpuLibNotLinkedError


def lower(linked):
    if not linked:
        raise GpuLibNotLinkedError()
    raise ValueError()
'''


def test_a_class_default_raise_is_counted_once_per_file_and_listed_with_its_template(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    """A message-less raise whose class's __init__ composes the text becomes a record: its file
    counts it no more as a raise without a message (the totals are the files' sums, after an
    update too), and the class is listed with the template its record has."""
    repo = make_repo("repo")
    repo.write("gpu/__init__.py", "")
    repo.write("gpu/errors.py", GPU_ERRORS)
    repo.write("gpu/rnn.py", GPU_RNN)
    repo.commit("gpu")
    result = extract(str(repo.path), output_root=tmp_path / "out", jobs=1)
    (record,) = [record_files.load_record(p) for p in record_files.iter_record_paths(result.folder)]
    template = "JAX was not built with GPU support. Please use a GPU-enabled JAX."
    assert (record.site.path, record.site.message.template) == ("gpu/rnn.py", template)

    def counted() -> tuple[dict[str, int], int, dict[str, object]]:
        manifest = yaml.safe_load((result.folder / manifest_file.MANIFEST).read_text("utf-8"))
        assert schemas.schema_problems(manifest, "manifest") == []
        files = {path: entry["raises"][3] for path, entry in manifest["files"].items()}
        (listed,) = manifest["exception_classes"]
        return files, manifest["counts"]["without_message"], listed

    files, total, listed = counted()
    assert files == {"gpu/__init__.py": 0, "gpu/errors.py": 0, "gpu/rnn.py": 1} and total == 1
    assert (listed["qualname"], listed["template"], listed["template_from"],
            listed["defined_at"]) == ("gpu.errors.GpuLibNotLinkedError", template, "init",
                                      record.site.message.defined_at)
    assert record.site.message.defined_at == "gpu/errors.py:1"  # the class that composes it
    repo.write("gpu/__init__.py", "VERSION = 2\n")  # an update that reads rnn.py no more
    extract(str(repo.path), output_root=tmp_path / "out", jobs=1, ref=repo.commit("version"))
    assert counted()[:2] == (files, 1)
