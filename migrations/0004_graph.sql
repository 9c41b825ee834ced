-- Graph data: nodes, edges, ingest jobs, environment collection times. See docs/graph.md.
-- CONTRACT: `nodes` and `edges` are read by src/findings (analysis); names never change.

CREATE TABLE nodes (
  id              INTEGER PRIMARY KEY,           -- internal graph id (shortest-path node keys)
  objectid        TEXT NOT NULL UNIQUE,          -- the node's id from the payload (SID, GUID, any string)
  kind            TEXT NOT NULL,                 -- primary kind (first of `kinds`)
  kinds           TEXT NOT NULL,                 -- JSON array of all kinds (payload kinds, plus source kind if any)
  name            TEXT,                          -- properties.name as given, or NULL
  environment_id  TEXT,                          -- objectid of the owning environment, or NULL
  properties      TEXT NOT NULL DEFAULT '{}',    -- JSON object of the merged properties
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX nodes_kind_env ON nodes (kind, environment_id);
CREATE INDEX nodes_env ON nodes (environment_id);
CREATE INDEX nodes_name_nocase ON nodes (name COLLATE NOCASE);
CREATE INDEX nodes_objectid_nocase ON nodes (objectid COLLATE NOCASE);

CREATE TABLE edges (
  id          INTEGER PRIMARY KEY,
  start_id    INTEGER NOT NULL,                  -- nodes.id
  end_id      INTEGER NOT NULL,                  -- nodes.id
  kind        TEXT NOT NULL,
  properties  TEXT NOT NULL DEFAULT '{}',        -- JSON object
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (start_id, kind, end_id)                -- also the outbound index (start_id, kind, end_id)
);
CREATE INDEX edges_end_kind ON edges (end_id, kind, start_id);   -- inbound traversal
CREATE INDEX edges_kind ON edges (kind);
