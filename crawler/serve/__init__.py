"""What the site and API projects use: lookup of a runtime message, and exports.

Owns `lookup` (a message back to its records) and `export` (JSON Lines, JSON documents, SQLite
for datasette), both read from an output folder.

May import: `crawler.records`, `crawler.errors`, `crawler.store`, `crawler.git.permalink`.
"""
