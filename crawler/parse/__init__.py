"""What runs in worker processes: one file's bytes to its raise sites, classes and test assertions.

Owns the LibCST visitor (`visitor`: raise statements, the scope stack) over one statement walk
shared with the assertions' (`_walk`), exact lines from `ast` held to LibCST's (`_positions`), message
expressions to templates (`messages`, `reading`, over the runs of `pieces`), text built across
statements (`built`: what loops add, lists joined, cut tails), what a class statement does to its
message (`class_text`), the assignments that reach a raise (`flow`),
the module's own helpers, factories and constants a message is built through (`calls`, with a
callee's text put in its caller's terms by `substitution` and what it reads of function
statements in `function_facts`), nodes'
exact source text and the `if` tests a raise runs under (`_source`),
imports and qualified names (`names`), skeleton reads of changed files (`skeleton`, with
what a stub's records take from the functions and constants they follow: `followed`), the
assertions of test files (`assertions`) and the limited, recycled worker processes that run all of
it on untrusted source (`workers`, started from `_forkserver`).

May import: `crawler.records`, `crawler.errors`. Nothing here sees more than one file.
"""
