"""The `crawler` command line: options, the configuration file, what each command prints, exit codes.

This package owns everything a user types and reads: the click group and the commands that
run on a repository (`commands`: `extract`, `update`, `history`, `batch`), those that read a
finished folder (`folder_commands`: `validate`, `lookup`, `check`, `adopt`, `export`), what
every command shares (`common`: exit codes, one-line errors, progress bars), what every command
prints through (`terminal`: catalogue text made safe on a terminal, `one_line`; a standard
output whose reader went away, `quiet_stdout`; the exit code of an interrupt), options two
commands share (`options`), `crawler.toml` and `[tool.crawler]` (`config`), and what each
command reports, as lines or JSON (`summaries`). It is the only package that prints or exits: a
`CrawlerError` from below becomes one line on stderr and exit 1, a usage error exit 2, Ctrl-C
130, SIGTERM 143, never a Traceback. The installed entry point is `entry:main`, which answers
`crawler lookup MESSAGE [OUTPUT]` without loading click (`fast_lookup`) and hands every other
command line to `commands.main` before anything is read or printed.

The contract, in one example (a local repository `lib`, output in `out`):

    $ crawler extract lib -o out --name acme/lib
    local/acme/lib @ b784c291eb1f (HEAD): 3 records (3 added, 0 moved, 0 changed, 0 removed,
    0 revived) from 1 of 1 files, 0 skipped; 4 files written to out/local/acme/lib in 3.6s
    $ echo $?
    0
    $ crawler lookup "ValueError: path must be set" out
    no template explains this message; the closest (~):
    ~ 4ca6959e74317970  ValueError  local/acme/lib pkg/mod.py:3  (#1 closest, ...)
        path must not be empty
    $ echo $?
    1
    $ crawler extract lib --commit=--upload-pack=x -o out --name acme/lib
    Error: [lib] refused commit '--upload-pack=x': it begins with '-', which git would read as an option
    $ echo $?
    1

The first summary is one line on a terminal (wrapped here). What a command finds is its
output, on standard output, one line each; notes and errors go to standard error.

May import: `crawler.batch`, `crawler.pipeline`, `crawler.serve`, `crawler.store`,
`crawler.parse`, `crawler.git` (the cache folder's place, for `check`), `crawler.records`,
`crawler.errors`: the command line is the top; nothing imports it but `crawler.__main__`.
Line budget: 2,100 lines.
"""
