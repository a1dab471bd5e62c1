-- The SQLite export (crawler export --format sqlite): schema version 2, also in meta and
-- PRAGMA user_version. Served as it is by datasette (with the <db>.metadata.json written
-- beside it) or read by any SQLite client; docs/site.md says what each table is for.
-- Rows are inserted in a fixed order (repo, then id), so the same records give the same file.
-- JSON columns hold arrays or objects as JSON text. Every link is a foreign key with an index.

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE repositories (
  repo TEXT PRIMARY KEY,          -- the identity: the https web URL, or local/<root>/<folder>
  web_url TEXT,                   -- null for a repository on no known forge
  forge TEXT,                     -- github | gitlab | bitbucket | gitea: the permalinks' shape
  host TEXT NOT NULL,             -- host/owner/name: the folder under the output root
  owner TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,           -- a network address as given, else the identity (never a path)
  ref TEXT NOT NULL,
  commit_sha TEXT NOT NULL,       -- the pin of the last run; evidence lines are at this commit
  reachable INTEGER NOT NULL,
  crawler_version TEXT NOT NULL,
  files INTEGER NOT NULL,
  parsed INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  records INTEGER NOT NULL,       -- active and needs_review
  removed INTEGER NOT NULL,
  annotated INTEGER NOT NULL      -- records with anything written in their annotation
);

CREATE TABLE exception_classes (
  repo TEXT NOT NULL REFERENCES repositories(repo),
  name TEXT NOT NULL,             -- the qualified name when known, else the exception as written
  exception TEXT NOT NULL,        -- the last part of the name, as a traceback prints it
  qualname TEXT,
  records INTEGER NOT NULL,       -- active and needs_review records raising it
  removed INTEGER NOT NULL,
  PRIMARY KEY (repo, name)
);

-- One row per record, compact: no snippet and no JSON document (see `documents`, `pages`).
CREATE TABLE records (
  id TEXT PRIMARY KEY,
  repo TEXT NOT NULL REFERENCES repositories(repo),
  status TEXT NOT NULL,
  exception_class TEXT NOT NULL,  -- exception_classes.name: one spelling per class, for facets
  exception TEXT NOT NULL,        -- as the code writes it
  exception_name TEXT NOT NULL,   -- the class's own name, as a traceback line starts
  template TEXT NOT NULL,
  kind TEXT NOT NULL,
  placeholders TEXT NOT NULL,     -- JSON array
  regex TEXT NOT NULL,
  literal_words TEXT NOT NULL,    -- the template's literal text only: what full-text search reads
  glob TEXT,                      -- the regex as a GLOB pattern (null: a regex of another shape)
  literal_length INTEGER NOT NULL,-- characters of literal text: the more, the surer a match
  path TEXT NOT NULL,
  line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  col INTEGER NOT NULL,
  class TEXT,
  function TEXT,
  qualname TEXT NOT NULL,
  factory INTEGER NOT NULL,
  argument TEXT,
  defined_at TEXT,
  cause TEXT,
  condition TEXT,
  url TEXT,                       -- the permalink, pinned to commit_sha
  commit_sha TEXT NOT NULL,       -- the commit the site was read at
  snippet_line INTEGER NOT NULL,
  mark_at INTEGER,                -- where the raise's last line ends in the snippet (characters)
  first_seen TEXT NOT NULL,
  removed_in TEXT,
  previous_template TEXT,
  annotated INTEGER NOT NULL,
  evidence_count INTEGER NOT NULL,
  related_count INTEGER NOT NULL,
  FOREIGN KEY (repo, exception_class) REFERENCES exception_classes(repo, name)
);
CREATE INDEX records_repo ON records(repo, status);
CREATE INDEX records_exception_class ON records(repo, exception_class);
CREATE INDEX records_path ON records(path);

-- The whole record as JSON, as the json export writes it (the snippet is read from here).
CREATE TABLE documents (
  record_id TEXT PRIMARY KEY REFERENCES records(id),
  document TEXT NOT NULL
);

CREATE TABLE annotations (
  record_id TEXT PRIMARY KEY REFERENCES records(id),
  is_empty INTEGER NOT NULL,
  written_for TEXT,
  what_it_means TEXT,
  when_it_happens TEXT,
  example_fix TEXT,
  solutions TEXT NOT NULL,        -- JSON array
  defensive_patterns TEXT NOT NULL,
  prevention TEXT NOT NULL,
  related TEXT NOT NULL,
  data TEXT NOT NULL              -- the whole annotation as JSON, extra slots included
);

CREATE TABLE evidence (
  record_id TEXT NOT NULL REFERENCES records(id),
  position INTEGER NOT NULL,
  path TEXT NOT NULL,
  line INTEGER NOT NULL,
  test TEXT NOT NULL,
  form TEXT NOT NULL,
  "check" TEXT NOT NULL,
  exception TEXT NOT NULL,
  pattern TEXT NOT NULL,
  fits INTEGER NOT NULL,
  url TEXT,                       -- pinned to repositories.commit_sha
  PRIMARY KEY (record_id, position)
);

CREATE TABLE related (
  record_id TEXT NOT NULL REFERENCES records(id),
  position INTEGER NOT NULL,
  related_id TEXT NOT NULL REFERENCES records(id),
  reason TEXT NOT NULL,
  PRIMARY KEY (record_id, position)
);
CREATE INDEX related_related_id ON related(related_id);

-- The public calls that reach a record's raise (extracted.entry_points), most public first.
CREATE TABLE entry_points (
  record_id TEXT NOT NULL REFERENCES records(id),
  position INTEGER NOT NULL,
  name TEXT NOT NULL,             -- as users import it: click.Context.invoke
  chain TEXT NOT NULL,            -- JSON array of qualified names, the entry point's first
  depth INTEGER NOT NULL,         -- calls from the entry point to the raise's function
  stops TEXT,                     -- the call a static reader cannot follow that the chain crosses
  caught_by TEXT,                 -- the library's function that catches it on this chain
  PRIMARY KEY (record_id, position)
);
CREATE INDEX entry_points_name ON entry_points(name);

-- Full-text indexes (external content: the tables above). Templates by their literal words
-- only, so that no placeholder's source text is a word a search can hit.
CREATE VIRTUAL TABLE records_fts USING fts5(
  literal_words, exception_class, path, content="records"
);
CREATE VIRTUAL TABLE annotations_fts USING fts5(
  what_it_means, when_it_happens, example_fix, solutions, content="annotations"
);

-- What one error page shows, one row per record (crawler/serve/export_pages.py fills it): a
-- table, so that datasette links each listed row to its own page, /<db>/pages/<id>. Listings
-- show snippet_short (the raise's last line and 2 lines either side); the row page the whole snippet.
CREATE TABLE pages (
  id TEXT PRIMARY KEY REFERENCES records(id),
  title TEXT NOT NULL,            -- the exception's name and the template, as a traceback prints
  template TEXT NOT NULL,
  permalink TEXT,                 -- records.url
  location TEXT NOT NULL,         -- path:line
  qualname TEXT NOT NULL,
  exception TEXT NOT NULL,        -- records.exception_class (qualified)
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  snippet_short TEXT,             -- the raise's last line (marked) and 2 lines either side
  snippet TEXT,                   -- the enclosing function; the raise's last line ends '  # <- raised here'
  what_it_means TEXT,
  when_it_happens TEXT,
  solutions TEXT,                 -- JSON arrays, as in annotations
  example_fix TEXT,
  defensive_patterns TEXT,
  prevention TEXT,
  related_errors TEXT,            -- the annotation's related slot
  evidence TEXT,                  -- one line per test: test (path:line): check pattern
  related_records TEXT,           -- one line per related record: id (reason): title
  entry_points TEXT,              -- the first few, one a line: name: chain (a -> b), stops, caught_by
  repo TEXT NOT NULL,
  path TEXT NOT NULL,
  line INTEGER NOT NULL,
  snippet_line INTEGER NOT NULL,
  annotated INTEGER NOT NULL,
  evidence_count INTEGER NOT NULL,
  related_count INTEGER NOT NULL,
  commit_sha TEXT NOT NULL,
  first_seen TEXT NOT NULL,
  removed_in TEXT,
  record_rowid INTEGER NOT NULL   -- records_fts's rowid: datasette's search on this table
);

-- One row per record with its annotation's main slots, for listing pages (schema 1's view).
CREATE VIEW errors AS
SELECT r.id, r.repo, r.status, r.exception_class AS exception, r.template, r.path, r.line,
       r.url, r.evidence_count, a.what_it_means, a.when_it_happens, r.rowid AS record_rowid
FROM records AS r LEFT JOIN annotations AS a ON a.record_id = r.id;
