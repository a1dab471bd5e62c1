"""An output folder read as a person reads it, and the library the update tests change."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from crawler import pipeline
from crawler.records import (
    ErrorRecord,
)
from crawler.store import record_files, render
from tests.helpers.gitrepo import GitRepo

BASE = '''\
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    return x


class Loader:
    def load(self, path):
        if not path:
            raise FileNotFoundError("no path given")
        raise NotImplementedError(f"cannot load {path}")
'''
OTHER = '''\
def other():
    raise RuntimeError("an untouched raise in an untouched file")
'''
BLOCK = '''\
annotation:
  # Written by hand. The crawler must keep this comment and this layout.
  written_for: {written_for}
  what_it_means: |
    {meaning}
  solutions:
  - Read the message.   # a trailing comment
  example_fix: null
  defensive_patterns: []
  prevention: []
  when_it_happens: null
  related: []
'''


@dataclass
class Output:
    """One repository's output folder, driven through the library like the CLI does."""

    repo: GitRepo
    root: Path
    cache: Path
    folder: Path | None = None

    def extract(self) -> pipeline.RunResult:
        result = pipeline.extract(str(self.repo.path), ref=self.repo.head(), output_root=self.root,
                                  cache_dir=self.cache, jobs=1)
        self.folder = result.folder
        return result

    def update(self, **kwargs: object) -> pipeline.RunResult:
        return pipeline.update(str(self.repo.path), ref=self.repo.head(), output_root=self.root,
                               cache_dir=self.cache, jobs=1, **kwargs)  # type: ignore[arg-type]

    def path(self, record_id: str) -> Path:
        assert self.folder is not None
        return self.folder / record_files.ERRORS_DIR / f"{record_id}.yaml"

    def records(self) -> dict[str, ErrorRecord]:
        assert self.folder is not None
        return {r.id: r for r in pipeline.load_existing(self.folder)}

    def find(self, template: str, status: str | None = None) -> ErrorRecord:
        found = [r for r in self.records().values() if r.site.message.template == template
                 and (status is None or r.status == status)]
        assert len(found) == 1, (template, found)
        return found[0]

    def annotate(self, record_id: str, meaning: str, written_for: str | None = None) -> str:
        """Write an annotation block by hand, comments and all; return its exact text."""
        path = self.path(record_id)
        text = path.read_text(encoding="utf-8")
        template = written_for or record_files.load_record(path).site.message.template
        block = BLOCK.format(written_for=json.dumps(template), meaning=meaning)
        old = render.annotation_block(text)
        assert old is not None
        path.write_text(text.replace(old, block), encoding="utf-8")
        return block

    def snapshot(self) -> dict[str, bytes]:
        assert self.folder is not None
        return {p.name: p.read_bytes() for p in (self.folder / record_files.ERRORS_DIR).glob("*.yaml")}

    def assert_annotations(self, expected: dict[str, str]) -> None:
        """Each annotated id holds exactly its block; every other record holds no annotation."""
        for record_id, record in self.records().items():
            block = render.annotation_block(self.path(record_id).read_text(encoding="utf-8"))
            if record_id in expected:
                assert block == expected[record_id], record_id
            else:
                assert record.annotation.is_empty, record_id


POSITIVE = "x must be positive, got {x}"
UNTOUCHED = "an untouched raise in an untouched file"
