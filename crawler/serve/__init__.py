"""What reads a finished output folder for people and programs: lookup, review and exports.

This package owns the read side. It takes the folders that `extract`, `update` and `history`
wrote and answers from them, writing no record: `lookup` (a runtime message or a traceback
back to the raise sites that print it), `review` (what `crawler check` lists for a person and
what `crawler validate` finds), and `export` (JSON Lines, a JSON folder, SQLite for datasette).
`sqlite_guard` bounds every query on a database the crawler did not write (in steps) and checks
that what it reads are plain tables. Each subpackage's docstring has a worked example of its
own contract (`crawler.serve.lookup`'s is a doctest).

The contract, in one example: after a module's message was reworded from `unknown mode
{mode}` to `unknown file mode {mode}` and `crawler update` ran, a user pastes what their
program printed. A template that explains the paste is the answer (exit 0), with what each
placeholder took; a paste no template explains gets the closest, marked `~`, and exit 1:

    $ crawler lookup "ValueError: unknown file mode 'x'" out
    = 90467943a1b39c99  ValueError  local/acme/lib pkg/mod.py:5  (#1 exact, explains 83% of the paste, ...)
        unknown file mode {mode}
        mode = "'x'"
    $ crawler lookup "ValueError: path must be set" out
    no template explains this message; the closest (~):
    ~ 4ca6959e74317970  ValueError  local/acme/lib pkg/mod.py:3  (#1 closest, explains 77% of the paste, ...)
        path must not be empty

(Each match's line ends `shows 100% of the template)` and `shows 56% of the template)`.)

May import: `crawler.records`, `crawler.errors`, `crawler.regexes` (records' regexes run
bounded), `crawler.store`, `crawler.catalogue` (past wordings, successors), `crawler.callgraph`
(the public names an annotation may mention), `crawler.parse` (names and positions read
off an annotation's code), `crawler.git` (permalinks).
Line budget: 6,260 lines.
"""
