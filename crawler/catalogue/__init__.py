"""The repository-wide passes, after every file is parsed: from sites to the next records.

Owns exception classes and class default messages (`classes`), how a class composes the
message a raise hands it into `str(exc)` (`composing`, over the classes' order and the digest
of what composes a message in `class_order`), what a raise's call of another
module's name is: a class, or a factory or helper followed into it (`factories`), a site's
identity across runs (`identity`), holding back the files of broken record files (`holdback`), regeneration by
merging existing records with new sites (`merge`; scoring and the best assignment in `pairing`,
`best_pairs` and `assignment`) and the whole of one run's regeneration
(`regenerate`), related records (`related`), fitting test assertions to records as evidence
(`evidence`), and the manifest built from the records (`manifest`).

For people, not runs: the likeliest successors of a removed record that carries an
annotation (`successors`), which `crawler check` lists and `crawler adopt` acts on.

May import: `crawler.records`, `crawler.errors`, `crawler.regexes` (a test's pattern runs
bounded), `crawler.parse` (names, templates and the visit's result type),
`crawler.git.permalink`, `crawler.git.diff` (the line map's type). Nothing here reads or
writes a file.
"""
