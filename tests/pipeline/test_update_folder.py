"""Every file in a record folder is accounted for, by `extract` and `update` alike.

A record renamed by accident holds its site back until it is renamed back; a record deleted by
hand is remade with its id; a record broken by hand in a file that did not change is noticed.
Each case runs both commands on the same folder: they must agree (no flip-flop).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.catalogue.holdback import HELD_BACK
from crawler.cli.commands import main
from crawler.records import ACTIVE
from crawler.serve.review.checks import check_output, validate_output
from crawler.store import manifest_file, record_files, render
from tests.helpers.gitrepo import GitRepo
from tests.helpers.update_output import BASE, OTHER, POSITIVE, UNTOUCHED, Output


@pytest.fixture
def out(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> Output:
    repo = make_repo("lib")
    repo.write("lib/m.py", BASE)
    repo.write("lib/other.py", OTHER)
    repo.commit("first")
    output = Output(repo, tmp_path / "out", tmp_path / "cache")
    output.extract()
    return output


def files(out: Output) -> dict[str, bytes]:
    assert out.folder is not None
    return {p.name: p.read_bytes() for p in (out.folder / "errors").iterdir()}


def cli(out: Output, command: str, *extra: str) -> tuple[int, str]:
    run = CliRunner().invoke(main, [command, str(out.repo.path), "-o", str(out.root),
                                    "--cache-dir", str(out.cache), "-j", "1", *extra])
    return run.exit_code, run.output


RENAMED = {  # how a person's tools rename or copy a file, by accident
    "yml": "{id}.yml",
    "bak": "{id}.yaml.bak",
    "upper": "{ID}.yaml",
    "copy": "{id} (copy).yaml",
    "tilde": "{id}.yaml~",
}


@pytest.mark.parametrize("form", sorted(RENAMED))
def test_a_renamed_record_holds_its_site_until_it_is_renamed_back(out: Output, form: str) -> None:
    record = out.find(POSITIVE)
    block = out.annotate(record.id, "a person's words")
    renamed = out.path(record.id).with_name(RENAMED[form].format(id=record.id, ID=record.id.upper()))
    out.path(record.id).rename(renamed)
    before = files(out)
    for run in (out.extract, out.update):  # both hold the site back, both say the same
        result = run()
        assert result.problems == (f"{renamed}: a renamed copy of record {record.id}; rename it "
                                   f"to {record.id}.yaml (its site is held back until then)",)
        assert files(out) == before  # no new record took the site
        manifest = manifest_file.load_manifest(result.folder)
        assert manifest is not None
        assert ("lib/m.py", HELD_BACK) in {(s.path, s.reason) for s in manifest.skipped}
    _, _, problems = check_output(out.root)
    assert any(p.startswith(f"{renamed}:") for p in problems)
    assert any(p.startswith(f"{renamed}:") for p in validate_output(out.root)[1])
    renamed.rename(out.path(record.id))
    result = out.update() if form in ("yml", "upper", "tilde") else out.extract()
    assert result.problems == () and not result.merged.added
    again = out.find(POSITIVE)  # the only record of that site: the annotated one, active
    assert again.id == record.id and again.status == ACTIVE
    assert render.annotation_block(out.path(record.id).read_text(encoding="utf-8")) == block


def test_a_copy_beside_its_record_says_whether_it_is_the_same(out: Output) -> None:
    record = out.find(POSITIVE)
    copy = out.path(record.id).with_name(f"{record.id} (copy).yaml")
    shutil.copyfile(out.path(record.id), copy)
    code, output = cli(out, "update")
    assert code == 1 and f"{copy}: a renamed copy of record {record.id}; {record.id}.yaml holds " \
        "the same text: delete this copy" in output
    copy.write_text(copy.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    code, output = cli(out, "extract")
    assert code == 1 and f"{record.id}.yaml holds other text: keep what you want in" in output
    copy.unlink()
    before = files(out)
    assert out.update().problems == () and out.extract().problems == ()
    assert files(out) == before


def test_a_deleted_record_is_remade_with_its_id_by_update_and_extract(out: Output) -> None:
    record = out.find(UNTOUCHED)  # in a file no commit changes
    path = out.path(record.id)
    text = path.read_bytes()
    path.unlink()
    assert any(p.startswith(f"{path}: missing") for p in validate_output(out.root)[1])
    code, output = cli(out, "update", "--check")
    assert code == 1 and f"record {record.id} was missing from errors/; would be remade" in output
    assert not path.exists()
    for run in (out.update, out.extract):
        result = run()
        assert f"{out.folder}: record {record.id} was missing from errors/; remade from its site" \
            in result.notes
        assert path.read_bytes() == text and result.problems == ()
        path.unlink()
    code, _ = cli(out, "update")
    assert code == 0 and path.read_bytes() == text
    code, output = cli(out, "update", "--check")
    assert code == 0 and "up to date" in output


def test_a_record_broken_in_an_unchanged_file_is_noticed_by_both(out: Output) -> None:
    record = out.find(UNTOUCHED)
    path = out.path(record.id)
    broken = path.read_text(encoding="utf-8").replace("status: active", "status: [active")
    path.write_text(broken, encoding="utf-8")
    (path.parent / "notes.yaml").write_text("mine: true\n", encoding="utf-8")  # a stray too
    before = files(out)
    by_update, by_extract = out.update(), out.extract()
    assert by_update.problems == by_extract.problems and len(by_update.problems) == 2
    assert by_update.problems[0].startswith(f"{path}:")
    assert files(out) == before
    for code, output in (cli(out, "update", "--check"), cli(out, "update"), cli(out, "extract")):
        assert code == 1 and f"{path}:" in output


def test_an_update_checks_again_only_the_files_changed_since(
        out: Output, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file as the last run left it (same inode, size, times) is not read; one changed by
    hand is, even when its size and modification time were put back (its ctime moves)."""
    out.update()  # notes every file as good
    checked: list[str] = []
    real = record_files.verify_record
    monkeypatch.setattr(record_files, "verify_record",
                        lambda path, loads=None: checked.append(path.stem) or real(path, loads))
    assert out.update().problems == () and checked == []
    path = out.path(out.find(UNTOUCHED).id)
    before = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("status: active", "status: [ctive"),
                    encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    result = out.update()
    assert checked == [path.stem] and result.problems[0].startswith(f"{path}:")
