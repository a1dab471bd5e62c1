"""The repository-wide passes, after every file is parsed: from sites to the next records.

Owns exception classes and class default messages (`classes`), which unknown callees a raise
calls are classes of the repository (`factories`), a site's identity across runs
(`identity`), holding back the files of broken record files (`holdback`), regeneration by
merging existing records with new sites (`merge`) and the whole of one run's regeneration
(`regenerate`), related records (`related`), fitting test assertions to records as evidence
(`evidence`), and the manifest built from the records (`manifest`).

May import: `crawler.records`, `crawler.errors`, `crawler.parse` (names, templates and the
visit's result type), `crawler.git.permalink`. Nothing here reads or writes a file.
"""
