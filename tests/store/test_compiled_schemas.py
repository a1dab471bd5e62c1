"""The record and manifest schemas' compiled checks, written into the package by
`scripts/compile_schemas.py`: made from today's schemas, used while they are, and set aside for a
check compiled at run time when a schema was edited without writing them again."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import fastjsonschema
import pytest

from crawler.store import schemas
from scripts import compile_schemas
from tests.helpers.processes import ROOT


@pytest.fixture
def fresh_checks() -> Iterator[None]:
    schemas._compiled.cache_clear()
    yield
    schemas._compiled.cache_clear()


@pytest.mark.parametrize("name", compile_schemas.COMPILED)
def test_the_written_check_was_made_from_todays_schema(name: str) -> None:
    assert schemas.compiled_digest(name) == schemas.digest(name), \
        f"{name}.schema.json changed: run python -m scripts.compile_schemas"
    # its code is not compared with what today's fastjsonschema would write (a release may
    # write it otherwise): tests/store/test_schema_check.py holds its answers to jsonschema's


@pytest.mark.parametrize("name", compile_schemas.COMPILED)
def test_a_check_uses_the_written_module(name: str, fresh_checks: None) -> None:
    assert schemas._compiled(name).__module__ == f"crawler.schemas.{name}_check"


def test_an_edited_schema_is_checked_by_code_compiled_from_it(
        monkeypatch: pytest.MonkeyPatch, fresh_checks: None) -> None:
    edited = {**schemas.schema("manifest"), "maxProperties": 1}
    monkeypatch.setattr(schemas, "schema", lambda name: edited)
    monkeypatch.setattr(schemas, "digest", lambda name: "0" * 64)
    check = schemas._compiled("manifest")
    assert check.__module__ != "crawler.schemas.manifest_check"
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({"schema_version": 1, "crawler_version": "x"})  # two keys: the edit's bound


def test_the_scripts_check_passes_today_and_fails_on_an_edited_schema(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ran = subprocess.run([sys.executable, "-m", "scripts.compile_schemas", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    monkeypatch.setattr(schemas, "digest", lambda name: "0" * 64)
    assert compile_schemas.main(["--check"]) == 1
    assert "record_check.py, manifest_check.py" in capsys.readouterr().out


def test_a_module_an_older_fastjsonschema_cannot_import_gives_way_to_a_compiled_check(
        monkeypatch: pytest.MonkeyPatch, fresh_checks: None) -> None:
    # fastjsonschema 2.16 (the oldest release allowed) has no JsonSchemaValuesException, which the
    # written modules import
    def older(name: str) -> object:
        raise ImportError(f"cannot import name 'JsonSchemaValuesException' ({name})")

    monkeypatch.setattr(schemas.importlib, "import_module", older)
    check = schemas._compiled("record")
    assert check.__module__ != "crawler.schemas.record_check"
    assert not schemas.quick_valid({"schema_version": 1}, "record")
