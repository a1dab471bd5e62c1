"""A whole run over a repository with a file that kills the parser: listed, and the rest written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.pipeline import extract
from crawler.store import manifest_file, safe_yaml
from tests.helpers.gitrepo import GitRepo

CRASHER = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n"


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.yaml"))}


def test_a_crashing_file_is_in_the_manifest_and_output_is_the_same_for_any_jobs(
        make_repo: Callable[[str], GitRepo], tmp_path: Path) -> None:
    repo = make_repo("lib")
    for i in range(12):
        repo.write(f"pkg/m{i}.py", f"def f():\n    raise ValueError('m{i} {{x}}')\n")
    repo.write("pkg/deep.py", CRASHER)
    repo.write("pkg/broken.py", "def f(:\n")
    repo.commit("files")
    outputs = []
    for jobs in (1, 2):
        result = extract(str(repo.path), output_root=tmp_path / f"out{jobs}", jobs=jobs)
        reasons = {s.path: s.reason for s in result.manifest.skipped}
        assert reasons == {"pkg/deep.py": "parser_crashed", "pkg/broken.py": "parse_failed"}
        assert result.manifest.counts.records == 12
        outputs.append(files(result.folder))
        manifest, _ = safe_yaml.load_yaml_file(result.folder / manifest_file.MANIFEST)
        assert "SIGSEGV" in next(s["detail"] for s in manifest["skipped"]
                                 if s["path"] == "pkg/deep.py")
    assert outputs[0] == outputs[1]
