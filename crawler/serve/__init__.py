"""What reads a finished output folder for people and programs: lookup, review and exports.

Owns `lookup` (a runtime message back to its records), `review` (the records whose annotation
needs a person's look: `crawler check`) and `export` (JSON Lines, JSON documents, SQLite for
datasette), whose formats are one module each: `export_data` (what they share), `export_json`,
`export_sqlite`, with `message_glob` (a regex as SQLite's GLOB) and `datasette_metadata`.
`sqlite_guard` bounds every query on a database the crawler did not write (in steps) and
checks that what it reads are plain tables.

May import: `crawler.records`, `crawler.errors`, `crawler.regexes` (records' regexes run
bounded), `crawler.store`, `crawler.catalogue`, `crawler.git.permalink`.
"""
