"""Lookup: what a user pasted, back to the raise sites that print it, ranked, trusted or not.

This subpackage owns reading a paste in the forms people paste it (`paste`: a message, a
traceback with chained exceptions, pytest's `E` lines, IPython, Rich, logging prefixes), what
a traceback's frames say of each record's place (`places`), the candidates by literal text
(`literal_text`; the folder's `lookup.sqlite` in `index`), fitting each record's wordings to
it (`matching`: the record's regex, a loose fit with whitespace and URLs left out, or shared
words), past wordings after `crawler history` and the order and the verdict (`ranking`), and
the three places records are read from, which rank alike (`sources`: an output folder, an
SQLite export, records in memory).

The contract, in one example: three records of one module; a paste that the template explains
is `found` with what its placeholder took; the same cut short with `...` is an exact prefix;
a message the catalogue does not print exactly gets only the closest, not trusted; an
unrelated one gets nothing.

>>> from crawler.catalogue.merge import merge
>>> from crawler.parse.visitor import find_raise_sites
>>> from crawler.records import Pin
>>> from crawler.serve.lookup.sources import LookupIndex
>>> source = b'''def load(path, mode):
...     if not path:
...         raise ValueError("path must not be empty")
...     if mode not in "rw":
...         raise ValueError(f"unknown file mode {mode!r}; use r or w")
...     raise KeyError(path)
... '''
>>> pin = Pin("lib", "local", "local", "lib", "v1", "1" * 40)
>>> records = merge(pin, [], find_raise_sites("pkg/mod.py", source, "pkg.mod", None).sites).records
>>> index = LookupIndex(records)
>>> def ask(paste):
...     answer = index.answer(paste)
...     print(answer.verdict)
...     for m in answer.matches:
...         print(m.rank, m.kind, m.wording.line, m.confident, m.explained, m.coverage, m.score,
...               m.kinship, m.captures)
>>> ask("ValueError: unknown file mode 'x'; use r or w")
found
1 exact 5 True 0.885 1.0 1.039 same {'mode': "'x'"}
>>> ask('''Traceback (most recent call last):
...   File "app.py", line 3, in <module>
...   File "/venv/lib/python3.12/site-packages/pkg/mod.py", line 5, in load
... ValueError: unknown file mode 'a'; use r o...''')
found
1 exact prefix 5 True 0.875 0.913 0.975 same {}
>>> ask("ValueError: path must be set")
closest
1 closest 3 False 0.769 0.556 0.745 same {}
>>> ask("TypeError: something else entirely")
none

`explained` is the share of the paste the template's literal text accounts for, `coverage` the
share of the template the paste shows; the score is their harmonic mean plus 0.1 for the same
exception class. docs/design.md ("How lookup ranks") gives the thresholds and the order.
"""
