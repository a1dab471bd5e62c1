"""The repository-wide passes, after every file is parsed: from sites to the next records.

Owns exception classes and class default messages (`classes`), regeneration by merging existing
records with new sites (`merge`), related records (`related`) and fitting test assertions to
records as evidence (`evidence`).

May import: `crawler.records`, `crawler.errors`, `crawler.parse` (names and templates),
`crawler.git.permalink`.
"""
