-- Graph data: nodes, edges, name search index, ingest jobs, environment collection times. See docs/graph.md.
-- CONTRACT: `nodes` and `edges` are read by src/findings (analysis); names never change.

CREATE TABLE nodes (
  id                INTEGER PRIMARY KEY,           -- internal graph id (shortest-path node keys)
  objectid          TEXT NOT NULL UNIQUE,          -- the node's id from the payload (SID, GUID, any string)
  kind              TEXT NOT NULL,                 -- primary kind (first of `kinds`)
  kinds             TEXT NOT NULL,                 -- JSON array of all kinds (payload kinds, plus source kind if any)
  name              TEXT,                          -- properties.name as given, or NULL
  environment_id    TEXT,                          -- objectid of the owning environment, or NULL
  properties        TEXT NOT NULL DEFAULT '{}',    -- JSON object of the merged properties
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  environment_kind  TEXT                           -- set when the node IS an environment (Domain, AZTenant, extension kind)
);
CREATE INDEX nodes_kind_env ON nodes (kind, environment_id);
CREATE INDEX nodes_env ON nodes (environment_id);
CREATE INDEX nodes_name_nocase ON nodes (name COLLATE NOCASE);
CREATE INDEX nodes_objectid_nocase ON nodes (objectid COLLATE NOCASE);
CREATE INDEX nodes_environments ON nodes (environment_kind) WHERE environment_kind IS NOT NULL;

CREATE TABLE edges (
  id          INTEGER PRIMARY KEY,
  start_id    INTEGER NOT NULL,                  -- nodes.id
  end_id      INTEGER NOT NULL,                  -- nodes.id
  kind        TEXT NOT NULL,
  properties  TEXT NOT NULL DEFAULT '{}',        -- JSON object
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (start_id, kind, end_id)                -- also the outbound traversal index
);
CREATE INDEX edges_end_kind ON edges (end_id, kind, start_id);   -- inbound traversal
-- No index on kind alone: nothing reads edges by kind without an end, and every index slows ingest.

-- Substring search over names: FTS5 trigram index kept in step with nodes.name by triggers
-- (external content: the index stores trigrams only, the text stays in nodes).
CREATE VIRTUAL TABLE nodes_fts USING fts5 (name, content = 'nodes', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes WHEN new.name IS NOT NULL BEGIN
  INSERT INTO nodes_fts (rowid, name) VALUES (new.id, new.name);
END;
CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes WHEN old.name IS NOT NULL BEGIN
  INSERT INTO nodes_fts (nodes_fts, rowid, name) VALUES ('delete', old.id, old.name);
END;
CREATE TRIGGER nodes_fts_update AFTER UPDATE OF name ON nodes WHEN old.name IS NOT new.name BEGIN
  INSERT INTO nodes_fts (nodes_fts, rowid, name) SELECT 'delete', old.id, old.name WHERE old.name IS NOT NULL;
  INSERT INTO nodes_fts (rowid, name) SELECT new.id, new.name WHERE new.name IS NOT NULL;
END;

-- File-upload jobs (BloodHound's ingest jobs). Status codes are BloodHound's:
-- 1 running, 2 complete, 5 failed, 8 partially complete.
CREATE TABLE ingest_jobs (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id             TEXT NOT NULL,
  user_email_address  TEXT,
  status              INTEGER NOT NULL,
  status_message      TEXT NOT NULL DEFAULT '',
  start_time          TEXT NOT NULL,
  end_time            TEXT,
  last_ingest         TEXT,
  total_files         INTEGER NOT NULL DEFAULT 0,
  failed_files        INTEGER NOT NULL DEFAULT 0,
  nodes_received      INTEGER NOT NULL DEFAULT 0,  -- node elements in accepted files
  edges_received      INTEGER NOT NULL DEFAULT 0,  -- edge elements in accepted files
  nodes_changed       INTEGER NOT NULL DEFAULT 0,  -- rows inserted or actually changed
  edges_changed       INTEGER NOT NULL DEFAULT 0,
  unmatched_edges     INTEGER NOT NULL DEFAULT 0,  -- edges not written because an end matched no (single) node
  error_count         INTEGER NOT NULL DEFAULT 0,
  errors              TEXT NOT NULL DEFAULT '[]',  -- JSON array of {file, context, message}, first 100 only
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
CREATE INDEX ingest_jobs_user ON ingest_jobs (user_id);

-- Environments that received data in a job; turned into collection times when the job ends.
CREATE TABLE ingest_job_environments (
  job_id          INTEGER NOT NULL,
  environment_id  TEXT NOT NULL,
  PRIMARY KEY (job_id, environment_id)
) WITHOUT ROWID;

-- When each environment was last collected (an ingest job carrying its data ended).
CREATE TABLE environment_collections (
  environment_id  TEXT PRIMARY KEY,
  collected_at    TEXT NOT NULL,
  job_id          INTEGER NOT NULL
);
