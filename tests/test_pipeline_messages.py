"""Message templates end to end: a real git repository, extract, records and manifest on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import CliRunner

from crawler.cli import main
from crawler.pipeline import extract
from crawler.store import manifest_file, record_files, schemas
from tests.gitrepo import GitRepo

PACKAGE = Path(__file__).parent / "packages" / "clspkg"


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
