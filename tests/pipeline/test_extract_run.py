"""The whole run on real git repositories: pinning, fields, skip rules, determinism, schemas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.errors import RefError, SourceError
from crawler.parse.module_names import module_name
from crawler.pipeline import extract
from crawler.pipeline.selection import is_test_path
from crawler.records import ErrorRecord, ExtractOptions
from crawler.store import record_files, safe_yaml, schemas
from tests.helpers.gitrepo import GitRepo

LIB = '''\
class Parser:
    def parse(self, text):
        if not text:
            raise ValueError("empty input")
        raise SyntaxError(f"cannot parse {text!r} at {self.pos}")


def check(x):
    raise TypeError(
        "expected an int, "
        "got something else"
    )
'''


def records_in(folder: Path) -> list[ErrorRecord]:
    return [record_files.load_record(path) for path in record_files.iter_record_paths(folder)]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "lookup.sqlite"}  # lookup's cache: the machine's bytes


@pytest.fixture
def library(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("lib")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", LIB)
    repo.write("tests/test_core.py", "def test():\n    raise AssertionError('in a test')\n")
    repo.write("pkg/test_inline.py", "raise ValueError('a test module')\n")
    repo.write("pkg/conftest.py", "raise ValueError('conftest')\n")
    repo.write("pkg/broken.py", "def f(:\n    raise ValueError('never parsed')\n")
    repo.write("docs/conf.py", "raise RuntimeError('docs')\n")
    repo.commit("first")
    repo.tag("v1.0")
    return repo


def test_extract_writes_exact_records(library: GitRepo, tmp_path: Path) -> None:
    result = extract(str(library.path), output_root=tmp_path / "out", jobs=1)
    assert result.pin.sha == library.head()
    # issue 14: a local repository without a network origin is named by its first commit
    assert result.folder == tmp_path / "out" / "local" / library.head()[:12] / "lib"
    records = {r.site.message.template: r for r in records_in(result.folder)}
    assert set(records) == {"empty input", "cannot parse {text} at {self.pos}",
                            "expected an int, got something else", "docs"}
    parse = records["cannot parse {text} at {self.pos}"]
    assert (parse.site.path, parse.site.line, parse.site.end_line) == ("pkg/core.py", 5, 5)
    assert (parse.site.class_name, parse.site.function) == ("Parser", "parse")
    assert parse.site.qualname == "Parser.parse"
    assert parse.site.message.placeholders == ("text", "self.pos")
    assert parse.commit == library.head() and parse.url is None
    assert records["empty input"].site.condition == "not text"
    assert records["expected an int, got something else"].site.end_line == 12
    manifest = result.manifest
    skipped = {s.path: s.reason for s in manifest.skipped}
    assert skipped == {"tests/test_core.py": "test_file", "pkg/test_inline.py": "test_file",
                       "pkg/conftest.py": "test_file", "pkg/broken.py": "parse_failed"}
    assert manifest.counts.files == 7 and manifest.counts.parsed == 3 and manifest.counts.records == 4
    assert {f.path for f in manifest.files} == {"pkg/__init__.py", "pkg/core.py", "docs/conf.py"}


def test_every_file_written_validates(library: GitRepo, tmp_path: Path) -> None:
    result = extract(str(library.path), output_root=tmp_path, jobs=1)
    for path in sorted(result.folder.rglob("*.yaml")):
        data, _ = safe_yaml.load_yaml_file(path)
        kind = "manifest" if path.name == "manifest.yaml" else "record"
        assert schemas.schema_problems(data, kind) == [], path


def test_output_is_deterministic_and_a_rerun_writes_nothing(library: GitRepo, tmp_path: Path) -> None:
    first = extract(str(library.path), output_root=tmp_path / "a", jobs=1)
    second = extract(str(library.path), output_root=tmp_path / "b", jobs=2)
    assert snapshot(first.folder) == snapshot(second.folder)
    again = extract(str(library.path), output_root=tmp_path / "a", jobs=1)
    assert again.files_written == 0


def test_include_exclude_and_tests(library: GitRepo, tmp_path: Path) -> None:
    options = ExtractOptions(include=("pkg/*",), exclude=("pkg/broken.py",), include_tests=True)
    result = extract(str(library.path), output_root=tmp_path, options=options, jobs=1)
    templates = sorted(r.site.message.template for r in records_in(result.folder))
    assert "a test module" in templates and "conftest" in templates and "docs" not in templates
    reasons = {s.path: s.reason for s in result.manifest.skipped}
    assert reasons["docs/conf.py"] == "not_included" and reasons["pkg/broken.py"] == "excluded"


def test_pins_tags_branches_short_shas_and_commits_off_branch(library: GitRepo, tmp_path: Path) -> None:
    first = library.head()
    library.write("pkg/core.py", LIB.replace("empty input", "no input"))
    second = library.commit("second")
    library.branch("feature", first)
    for ref, sha in (("v1.0", first), ("feature", first), (first[:8], first), ("HEAD", second),
                     ("main", second)):
        result = extract(str(library.path), ref=ref, output_root=tmp_path / ref, jobs=1, dry_run=True)
        assert (result.pin.sha, result.pin.ref) == (sha, ref)
    # a commit on no branch or tag
    library.write("pkg/core.py", LIB.replace("empty input", "dangling"))
    dangling = library.commit("dangling")
    library.git("reset", "-q", "--hard", second)
    result = extract(str(library.path), ref=dangling, output_root=tmp_path / "d", jobs=1)
    assert result.pin.sha == dangling and not result.pin.reachable
    assert any(r.site.message.template == "dangling"
               for r in records_in(result.folder))


def test_work_tree_is_never_read(library: GitRepo, tmp_path: Path) -> None:
    library.write("pkg/core.py", "raise ValueError('uncommitted')\n")
    library.write("pkg/untracked.py", "raise ValueError('untracked')\n")
    status = library.git("status", "--porcelain")
    result = extract(str(library.path), output_root=tmp_path, jobs=1)
    templates = {r.site.message.template for r in records_in(result.folder)}
    assert "uncommitted" not in templates and "untracked" not in templates
    assert library.git("status", "--porcelain") == status


def test_a_rename_keeps_ids(library: GitRepo, tmp_path: Path) -> None:
    first = extract(str(library.path), output_root=tmp_path, jobs=1)
    library.write("pkg/core.py", "\n\n" + LIB)  # lines move; identity does not
    library.commit("lines moved")
    second = extract(str(library.path), output_root=tmp_path, jobs=1)
    assert {r.id for r in first.merged.records} == {r.id for r in second.merged.records}
    assert len(second.merged.moved) == 3 and not second.merged.added


def test_bad_sources_and_refs(library: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(RefError):
        extract(str(library.path), ref="no-such-tag", output_root=tmp_path)
    with pytest.raises(SourceError):
        extract(str(tmp_path / "nothing-here"), output_root=tmp_path)


@pytest.mark.parametrize(
    ("path", "is_test"),
    [("tests/a.py", True), ("pkg/test/a.py", True), ("test_a.py", True), ("a_test.py", True),
     ("conftest.py", True), ("typing_tests/baseline.py", True), ("pkg/unit_tests/a.py", True),
     ("pkg/testing/a.py", False), ("pkg/contest.py", False), ("latest.py", False),
     ("pkg/latests/a.py", False), ("pkg/_src/internal_test_util/a.py", False)],
)
def test_test_paths(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_module_names() -> None:
    assert module_name("src/pkg/mod.py") == "pkg.mod"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("setup.py") == "setup"
