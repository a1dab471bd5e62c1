-- The SQLite export (crawler export --format sqlite): schema version 1, also in meta and
-- PRAGMA user_version. Served as it is by datasette or read by any SQLite client.
-- Rows are inserted in a fixed order (repo, then id), so the same records give the same file.
-- JSON columns hold arrays or objects as JSON text.

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE repositories (
  repo TEXT PRIMARY KEY,          -- the web URL, or local/owner/name
  host TEXT NOT NULL,
  owner TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  ref TEXT NOT NULL,
  commit_sha TEXT NOT NULL,       -- the pin of the last run; evidence lines are at this commit
  reachable INTEGER NOT NULL,
  crawler_version TEXT NOT NULL,
  files INTEGER NOT NULL,
  parsed INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  records INTEGER NOT NULL,       -- active and needs_review
  removed INTEGER NOT NULL
);

CREATE TABLE records (
  id TEXT PRIMARY KEY,
  repo TEXT NOT NULL REFERENCES repositories(repo),
  status TEXT NOT NULL,
  exception TEXT NOT NULL,
  exception_qualname TEXT,
  template TEXT NOT NULL,
  kind TEXT NOT NULL,
  placeholders TEXT NOT NULL,     -- JSON array
  regex TEXT NOT NULL,
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
  url TEXT,
  commit_sha TEXT NOT NULL,       -- the commit the site was read at
  snippet_line INTEGER NOT NULL,
  snippet TEXT NOT NULL,
  first_seen TEXT NOT NULL,
  removed_in TEXT,
  previous_template TEXT,
  evidence_count INTEGER NOT NULL,
  document TEXT NOT NULL          -- the whole record as JSON, as the json export writes it
);
CREATE INDEX records_repo ON records(repo, status);
CREATE INDEX records_exception ON records(exception);

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

CREATE TABLE exception_classes (
  repo TEXT NOT NULL REFERENCES repositories(repo),
  name TEXT NOT NULL,             -- the qualname when known, else the exception as written
  exception TEXT NOT NULL,        -- the last part of the name
  qualname TEXT,
  records INTEGER NOT NULL,       -- active and needs_review records raising it
  removed INTEGER NOT NULL,
  PRIMARY KEY (repo, name)
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
  related_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (record_id, position)
);

-- Full-text indexes over the templates and the annotations (external content: the tables above).
CREATE VIRTUAL TABLE records_fts USING fts5(
  template, exception, qualname, path, content="records"
);
CREATE VIRTUAL TABLE annotations_fts USING fts5(
  what_it_means, when_it_happens, example_fix, solutions, content="annotations"
);

-- One row per record with its annotation's main slots, for listing pages.
CREATE VIEW errors AS
SELECT r.id, r.repo, r.status, r.exception, r.template, r.path, r.line, r.url,
       r.evidence_count, a.what_it_means, a.when_it_happens
FROM records AS r LEFT JOIN annotations AS a ON a.record_id = r.id;
