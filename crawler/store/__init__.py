"""What is on disk: records and manifests in YAML, schemas, atomic writes, the caches.

One job a module: YAML behind `safe_yaml` (dumps, and safe loads only); records and manifests to
plain data and back (`documents`) and to file text (`render`); the schemas (`schemas`: a
compiled check, then jsonschema to name a problem); atomic writes (`atomic`); the record files of a folder
(`record_files`) and its manifest (`manifest_file`); the content-addressed caches of visit
results and checked loads (`cache`), and record files whose annotation block alone was edited
(`annotation_edits`); what a run passes to the store (`context`); and one
repository's output folder: its lock, loading what it holds and writing it back (`repo_output`);
moving an annotation from one record to another by a person's decision (`adoption`); and a
folder held in memory across a walk's steps, written at journalled checkpoints (`held_folder`).

May import: `crawler.records`, `crawler.errors`, `crawler.parse` (the result types it caches).
"""
