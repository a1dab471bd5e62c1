"""What is on disk: records and manifests in YAML, schemas, atomic writes, the caches.

Owns YAML in and out with the safe loader only (`emit`), the quick schema check (`_quickschema`),
the per-blob result cache (`cache`) and the cache of checked loads (`_loadcache`), and one
repository's output folder: its lock, loading what it holds and writing it back (`repo_output`).

May import: `crawler.records`, `crawler.errors`, `crawler.parse` (the result types it caches),
`crawler.catalogue`.
"""
