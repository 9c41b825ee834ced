-- Issue 27: POST /api/v2/clear-database (src/system/wipe.*, docs/graph.md "Clearing collected data").

-- One row per request that deletes graph data. The request's route records it (with its audit row and the
-- analysis run that follows it) in one batch; the Analyzer object (src/findings/analyzer.do.ts) works through
-- pending rows, oldest first, in chunks, before it claims an analysis run. Each chunk is one batch that
-- deletes a window of nodes with every edge touching them and moves the cursor, so a chunk is all or nothing
-- and an interrupted wipe resumes at its cursor.
CREATE TABLE database_wipes (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  requested_by        TEXT NOT NULL,                       -- users.id
  requested_at        TEXT NOT NULL,
  delete_all          INTEGER NOT NULL DEFAULT 0,          -- deleteCollectedGraphData: every node and edge
  delete_sourceless   INTEGER NOT NULL DEFAULT 0,          -- deleteSourceKinds contained 0
  source_kinds        TEXT NOT NULL DEFAULT '[]',          -- JSON array of source kind names (deleteSourceKinds' ids resolved)
  known_source_kinds  TEXT NOT NULL DEFAULT '[]',          -- every source kind name at request time: "sourceless" = none of them
  relationships       TEXT NOT NULL DEFAULT '[]',          -- deleteRelationships: JSON array of edge kinds
  status              TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'complete', 'failed')),
  phase               TEXT NOT NULL DEFAULT 'nodes' CHECK (phase IN ('nodes', 'edges', 'done')),
  node_cursor         INTEGER NOT NULL DEFAULT 0,          -- nodes with id <= cursor are done
  edge_cursor         INTEGER NOT NULL DEFAULT 0,          -- edges with id <= cursor are done (relationships phase)
  nodes_deleted       INTEGER NOT NULL DEFAULT 0,
  edges_deleted       INTEGER NOT NULL DEFAULT 0,
  attempts            INTEGER NOT NULL DEFAULT 0,
  error               TEXT,
  started_at          TEXT,
  completed_at        TEXT
);
CREATE INDEX database_wipes_open ON database_wipes (id) WHERE status IN ('pending', 'running');
