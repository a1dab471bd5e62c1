"""The repository-wide passes, after every file is parsed: from sites to the next records.

This package decides what a run's records are. Given every file's sites and the records
already in the folder, it settles what one file could not (class messages, factories, the
callers of a helper), gives each site its record by a one-to-one merge that carries every
annotation with its message, and derives related records, test evidence and release history.
Nothing here reads or writes a file.

The contract, in one example (as Babel's `Catalog.update` shows exact, fuzzy and obsolete
entries): version 1 of `load` raises three messages, each record carries an annotation;
version 2 swaps the two checks, rewords one message and drops the third.

>>> from dataclasses import replace
>>> from crawler.catalogue.merge import merge
>>> from crawler.parse.visitor import find_raise_sites
>>> from crawler.records import Annotation, Pin
>>> def sites(source):
...     return find_raise_sites("pkg/mod.py", source.encode(), "pkg.mod", None).sites
>>> v1 = '''def load(path, mode):
...     if mode not in "rw":
...         raise ValueError(f"unknown mode {mode}")
...     if not path:
...         raise ValueError("path must not be empty")
...     raise OSError("cannot load it")
... '''
>>> v2 = '''def load(path, mode):
...     if not path:
...         raise ValueError("path must not be empty")
...     if mode not in "rw":
...         raise ValueError(f"unknown file mode {mode}")
... '''
>>> pin = Pin("lib", "local", "local", "lib", "v1", "1" * 40)
>>> first = merge(pin, [], sites(v1)).records
>>> annotated = [replace(r, annotation=Annotation({"written_for": r.site.message.template,
...                                                "what_it_means": "a person's words"}))
...              for r in first]
>>> second = merge(replace(pin, ref="v2", sha="2" * 40), annotated, sites(v2))
>>> for record in sorted(second.records, key=lambda r: r.site.line):
...     print(record.id, record.status, record.site.line, repr(record.site.message.template),
...           second.matched_by.get(record.id), record.history.previous_template)
6f6ce7f92aa676e1 active 3 'path must not be empty' 1 None
5b16aebc1244f7ff needs_review 5 'unknown file mode {mode}' 4 unknown mode {mode}
f245c143d7f25cd1 removed 6 'cannot load it' None None
>>> all(r.annotation.data["what_it_means"] == "a person's words" for r in second.records)
True

The same key (step 1) keeps its record however far it moved; the reworded message is paired by
the best assignment (step 4: `reworded_in_place`, score 0.84) and waits for a person
(`needs_review`, `history.previous_template`); the message that went is `removed`, its
annotation kept. No record is deleted, none is paired twice. docs/design.md ("Identity and the
merge rules") gives every step.

Its modules: exception classes and class default messages (`classes`), how a class composes the
message a raise hands it into `str(exc)` (`classes.compose`, over the classes' order,
`classes.linearize`, and the digest of what composes a message, `classes.digest`), what a
raise's call of another module's name is: a class, or a factory or helper followed into it
(`factories`), a raise whose message is its function's parameter, given the texts its callers
pass (`callers`), a site's identity across runs (`identity`), holding back the files of broken
record files (`holdback`), regeneration by merging existing records with new sites (`merge`; the
keyed steps and the score in `pairing`, the best assignment in `best_pairs`, `pair_bounds` and
`assignment`) and the whole of one run's regeneration (`regenerate`), related records
(`related`), fitting test assertions to records as evidence (`evidence`, over the globs of
`globs`), the release history a `crawler history` walk gives each record (`releases`), and the
manifest built from the records (`manifest`).

For people, not runs: the likeliest successors of a removed record that carries an
annotation (`successors`), which `crawler check` lists and `crawler adopt` acts on.

May import: `crawler.records`, `crawler.errors`, `crawler.regexes` (a test's pattern runs
bounded), `crawler.parse` (names, templates and the visit's result type), `crawler.git`
(permalinks, the line map's type), `crawler.callgraph` (the callers that hand a raise its
message). Nothing here reads or writes a file.
Line budget: 4,850 lines.
"""
