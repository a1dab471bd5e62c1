r"""What is on disk: records and manifests in YAML, schemas, atomic writes, the caches, the lock.

This package owns every byte the crawler keeps: one repository's output folder (its lock, its
record files named by id only, its manifest written last), the caches, and how a record
becomes text. The annotation block belongs to people: a rewrite carries it over as the exact
text it had in the file, comments and all; a record whose text would not change is not written.

The contract, in one example: a record is written, a person fills its annotation (with a
comment), the code moves, and the rewrite keeps the person's block byte for byte.

>>> import tempfile
>>> from dataclasses import replace
>>> from pathlib import Path
>>> from crawler.catalogue.merge import merge
>>> from crawler.parse.visitor import find_raise_sites
>>> from crawler.records import Pin
>>> from crawler.store.record_files import load_record, record_path, write_record
>>> def sites(source):
...     return find_raise_sites("pkg/mod.py", source, "pkg.mod", None).sites
>>> pin = Pin("lib", "local", "local", "lib", "v1", "1" * 40)
>>> v1 = b'def load(path):\n    raise ValueError("path must not be empty")\n'
>>> record, = merge(pin, [], sites(v1)).records
>>> scratch = tempfile.TemporaryDirectory()
>>> folder = Path(scratch.name)
>>> write_record(folder, record)
True
>>> path = record_path(folder, record.id)
>>> path.relative_to(folder).as_posix()
'errors/6f6ce7f92aa676e1.yaml'
>>> text = path.read_text()
>>> _ = path.write_text(text.replace("  what_it_means: null\n",
...                                  "  what_it_means: |  # a person's words\n    The path was empty.\n"))
>>> moved, = sites(b'import os\n\ndef load(path):\n    raise ValueError("path must not be empty")\n')
>>> again, = merge(replace(pin, sha="2" * 40), [load_record(path)], [moved]).records
>>> again.id == record.id, again.site.line
(True, 4)
>>> write_record(folder, again)
True
>>> text = path.read_text()
>>> print(text[text.index("annotation:"):text.index("history:")], end="")
annotation:
  written_for: null
  what_it_means: |  # a person's words
    The path was empty.
  solutions: []
  example_fix: null
  defensive_patterns: []
  prevention: []
  when_it_happens: null
  related: []
>>> write_record(folder, again)  # the same text: not written again
False
>>> scratch.cleanup()

One job a module: YAML behind `safe_yaml` (dumps, and safe loads only); records and manifests to
plain data and back (`documents`) and to file text (`render`); the schemas (`schemas`: a
compiled check, then jsonschema to name a problem); atomic writes (`atomic`); the record files of a folder
(`record_files`) and its manifest (`manifest_file`); the content-addressed caches: the table
and checked loads of record files (`cache`), files' visit results and test files' assertions
(`parse_cache`, apart because it needs the parser's types), and record files whose annotation
block alone was edited (`annotation_edits`); what a run passes to the store (`context`); and one
repository's output folder: its lock, loading what it holds and writing it back (`repo_output`);
moving an annotation from one record to another by a person's decision (`adoption`); and a
folder held in memory across a walk's steps, written at journalled checkpoints (`held_folder`).

May import: `crawler.records`, `crawler.errors`, `crawler.parse` (the result types it caches).
Line budget: 3,900 lines.
"""
