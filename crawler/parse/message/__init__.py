r"""Message reading: how the expression a raise hands its exception becomes a `Template`.

This subpackage owns the reading of one message expression into literal text and placeholders,
exactly, and the regex that matches `str(exc)` as Python prints it for that exception class. A
placeholder is named by the exact source of its expression (conversion and format spec kept
out of the name). An expression that may give several texts gives one template for each,
never one guess; what cannot be read as text is still a template, of kind `dynamic`, with the
expression's source as its one placeholder.

The contract, in one example: an f-string, a `%` format, a conditional (two templates), a
`KeyError` (its message shown as a repr), an `OSError` with an errno, `ngettext`, and a call
it does not know (`dynamic`).

>>> import libcst as cst
>>> from crawler.parse.message.exception_call import call_templates
>>> def read(raise_statement, exception="builtins.ValueError"):
...     module = cst.parse_module(raise_statement + "\n")
...     call = module.body[0].body[0].exc
...     for t in call_templates(call, module, exception_qualname=exception):
...         print(t.kind, repr(t.template), t.placeholders, t.display, t.regex)
>>> read('raise ValueError(f"n must be positive, got {n!r}")')
fstring 'n must be positive, got {n}' ('n',) str ^n must be positive, got (?P<n>[\s\S]*?)$
>>> read('raise ValueError("expected %s, got %r" % (want, got))')
percent 'expected {want}, got {got}' ('want', 'got') str ^expected (?P<want>[\s\S]*?), got (?P<got>[\s\S]*?)$
>>> read('raise ValueError("too small" if n < 0 else "too large")')
literal 'too small' () str ^too small$
literal 'too large' () str ^too large$
>>> read('raise KeyError(f"no key {name}")', "builtins.KeyError")
fstring 'no key {name}' ('name',) repr ^['"]no key (?P<name>[\s\S]*?)['"]$
>>> read('raise OSError(errno.ENOENT, "no such file", path)', "builtins.OSError")
literal 'no such file' () errno ^\[Errno ([\s\S]*?)\] no such file: ([\s\S]*?)$
>>> read('raise ValueError(ngettext("one item", "{n} items", n).format(n=n))')
format 'one item' () str ^one item$
format '{n} items' ('n',) str ^(?P<n>[\s\S]*?) items$
>>> read('raise ValueError(describe(x))')
dynamic '{describe(x)}' ('describe(x)',) str ^([\s\S]*?)$

Within a function, names are followed through the assignments that reach the raise and the
module's own helpers and constants (see `crawler.parse`'s example); another module's
functions are joined later, by `crawler.catalogue.factories`.

Its modules: the call to templates and the regex for each display (`templates`), expressions to
runs of text (`reading`, over `pieces`, with text built across statements: loops, joined lists,
cut tails), the assignments that reach a statement (`flow`, with the walrus tests of `if`
statements), the module's helpers, factories and constants followed (`calls`, with what it reads
of a function statement and the factories a generator yields; a callee's text put in its
caller's terms by `substitution`, the types of attribute chains in `type_refs`), what a class
statement does to its message (`class_text`), and the calls of a file that pass text, for
`crawler.catalogue.callers` (`text_calls`). Every rule these apply is named once in `rules`, which
traces the rules a raise's reading went through when asked (`scripts/rule_use.py`), with the real
code each accepts and rejects beside it (`rule_examples.yaml`, read by one test harness).
"""
